"""Score HumanEval-format answers through the real engine, read the verdicts.

The differential tests (`test_faithful` and the subject files beside it,
`shapes.sweep`, `test_verdict_order`) all do the same thing: write a set of
problems and answers, score it in one run (``aioeval score`` as a library
call: the real pipeline, sandbox and verifier), and key each answer's
result by its problem and position. One helper does it for all of them, so
a run's settings are the same wherever a verdict is compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import anyio
import msgspec

import aioeval
from aioeval.types import CandidateResult

Verdicts = dict[tuple[str, int], CandidateResult]
"""A run's results by (problem id, sample index)."""


def write_set(
    tmp: Path, problems: Iterable[Mapping[str, object]], samples: Iterable[Mapping[str, object]]
) -> None:
    """``tmp/problems.jsonl`` (a HumanEval-format dataset) and
    ``tmp/samples.jsonl`` (``{"task_id", "completion"}`` per answer)."""
    (tmp / "problems.jsonl").write_text("".join(json.dumps(p) + "\n" for p in problems))
    (tmp / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))


def score(tmp: Path, scoring: str, *overrides: str, timeout_s: float = 3) -> Verdicts:
    """The answers `write_set` wrote, scored ``scoring`` in one run (results
    in ``tmp/<scoring>``), every answer executed (no dedup). Raises if the
    run did not finish every answer."""
    cfg = aioeval.load_config(
        overrides=[
            f"params.scoring={scoring}",
            f"params.timeout_s={timeout_s:g}",
            "params.dedup=false",
            f"params.dataset_path={tmp / 'problems.jsonl'}",
            *overrides,
        ]
    )
    spec = aioeval.RunSpec(
        benchmark="human-eval",
        config=cfg,
        samples=str(tmp / "samples.jsonl"),
        out_dir=str(tmp / scoring),
    )
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    if not summary.complete:
        raise RuntimeError(f"the {scoring} run is incomplete")
    return {(r.problem_id, r.sample_index): r for r in read_results(tmp / scoring)}


def read_results(out: Path) -> list[CandidateResult]:
    """The rows of ``out/results.jsonl``, in the order they were written."""
    dec = msgspec.json.Decoder(CandidateResult)
    return [dec.decode(line) for line in (out / "results.jsonl").read_bytes().splitlines()]
