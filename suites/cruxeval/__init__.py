"""CRUXEval-O and CRUXEval-I: `suite`, the problems (`data`) and the
answer rules (`answers`).

Imports the shared `base` and the engine's contracts; never another
benchmark's folder (tests/test_layers.py checks it).
"""
