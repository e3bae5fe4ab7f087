"""The sandbox inventory (docs/sandbox-inventory.md) names a test for every
row, and every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "sandbox-inventory.md"


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_row_names_tests_that_exist() -> None:
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| ")][1:]
    assert len(rows) >= 30
    for row in rows:
        named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", row.split("|")[-2])
        assert named, f"a row without a test: {row}"
        for path, name in named:
            assert name in _tests_in(ROOT / path), f"{path}::{name} does not exist"
