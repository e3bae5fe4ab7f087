"""Strict scoring's trusted side: the verifier (`verifier`, the entry point,
and `session`, one check's conversation), the test's view of the
candidate's objects (`handles`), the test's code, clocks and random state.

The top room: imports every other room and the shared modules
(tests/test_layers.py checks that none imports it).
"""
