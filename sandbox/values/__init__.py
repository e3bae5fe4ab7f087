"""What a strict job's two ends exchange: values (`wire`, read by `plain`,
`plaincall`, `stdvalues` and `described`) and the test's process state
handed to the candidate's child (`world`, `patches`, `logtap`).

Imports `isolation` and the shared modules; nothing of `process` or
`strict` (tests/test_layers.py checks it).
"""
