"""HumanEval: `suite`, and datasets in HumanEval's format (`data`).

Imports the shared `base` and the engine's contracts; never another
benchmark's folder (tests/test_layers.py checks it).
"""
