"""Processes that fork one confined child per job, and what runs in the
child: the template (`worker`, its entry point, and `template`), the child
(`harness`, and `serve` for a strict job), the verdict read from how the
child ended (`verdict`), and the fork-per-job machinery the template shares
with the verifier.

Imports `values`, `isolation` and the shared modules; nothing of `strict`
(tests/test_layers.py checks it).
"""
