"""MBPP-style problems: `suite` and the problems (`data`).

Imports the shared `base` and the engine's contracts; never another
benchmark's folder (tests/test_layers.py checks it).
"""
