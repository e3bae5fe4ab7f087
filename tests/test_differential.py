"""Differential test: generated problems of every ordinary shape (see
``shapes``), honest right and wrong answers, scored in the strict and the
official model through the real engine. No honest answer's verdict may
depend on the model; the official model must judge every answer as drawn.
The full sweep is ``bench/differential.py``."""

from __future__ import annotations

from pathlib import Path

import shapes


def test_strict_and_official_agree_on_every_shape(tmp_path: Path) -> None:
    cases = shapes.cases(seed=0, per_shape=3)
    assert len(shapes.SHAPES) >= 30
    result = shapes.sweep(cases, tmp_path)
    assert result.miscast(cases) == []
    assert result.disagreements() == {}
    statuses = {s for s, _ in result.strict.values()}
    assert {"passed", "failed"} <= statuses
    assert len(result.strict) == sum(len(c.answers) for c in cases) >= 250
