"""HumanEval+ and MBPP+ (EvalPlus): `suite`, the datasets (`data`), the
trusted test (`harness`, sent as text) and the reference outputs (`truth`).

Imports the shared `base` and the engine's contracts; never another
benchmark's folder (tests/test_layers.py checks it).
"""
