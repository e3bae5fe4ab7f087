"""The isolation layers: each a small detect-and-set-up step a template
(or the verifier) takes once (namespaces, mounts, cgroups, Landlock, seccomp,
views of /dev and /proc, the work directory), the cheap half each child
applies, and what is killed and reset between jobs (reaper, marks, fairness).

The lowest room: imports only the sandbox's shared modules (`protocol`,
`frames`); tests/test_layers.py checks it.
"""
