"""LiveCodeBench-style problems: `suite`, the problems (`data`), the
trusted checks (`checks`) and the child's wrapper (`child`, sent as text).

Imports the shared `base` and the engine's contracts; never another
benchmark's folder (tests/test_layers.py checks it).
"""
