"""Continuing a run from its journal (``aioeval run --resume DIR``).

A run directory holds run.json (what was run), results.jsonl (verdicts) and,
for endpoint runs, generations.jsonl (every completion as soon as it
arrived, so nothing paid for is lost). Resuming:

- refuses a run whose identity differs (benchmark, platform, dataset digest,
  model, sampling parameters...), naming the first differing field;
- keeps every journaled verdict except infra_error ones (those samples are
  tried again) and drops a truncated final line (the crash case);
- moves the infra_error verdicts it drops to superseded.jsonl first, so
  what generation spent on them (429s, retries, retry overhead, tokens)
  stays in the run's totals after any number of resumes;
- re-executes completions that were generated but never judged, and only
  generates what was never generated.

The journal is compacted (rewritten atomically) before new records are
appended, so the final results.jsonl holds each (problem, sample) once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from aioeval.errors import ConfigError
from aioeval.run import rundir
from aioeval.run.journal import Journal, read_lines, read_results, rewrite_journal
from aioeval.run.rundir import RunRecord
from aioeval.types import Candidate, CandidateResult, DatasetInfo

log = logging.getLogger("aioeval.run.resume")

# Config fields that change what a run measures; any difference refuses a resume.
IDENTITY_FIELDS = (
    "target.endpoint",
    "target.model",
    "target.api",
    "params.n_samples",
    "params.limit",
    "params.temperature",
    "params.top_p",
    "params.max_tokens",
    "params.stop",
    "params.seed",
    "params.prompt",
    "params.scoring",
    "params.timeout_s",
    "params.execute",
    "params.dataset_path",
)


def _identity(r: CandidateResult) -> tuple[str, int, float | None, float | None]:
    """Tells one journaled verdict from another of the same sample."""
    return (r.problem_id, r.sample_index, r.gen_started_at, r.finished_at)


def spent_on_generation(r: CandidateResult) -> bool:
    """A superseded verdict whose generation accounting would otherwise be
    lost: generation gave up. (A sandbox infra_error's completion is in
    generations.jsonl and is judged again with its accounting.)"""
    return (r.infra_cause or "").startswith("generation:")


class GenerationRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One line of generations.jsonl: a completion before it is judged."""

    candidate: Candidate


def _lookup(tree: dict[str, Any], dotted: str) -> Any:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def check_identity(stored: RunRecord, current: RunRecord, run_dir: Path) -> None:
    """Raise ConfigError naming the first field where the runs differ."""
    for key in ("benchmark", "platform", "mode"):
        x, y = getattr(stored, key), getattr(current, key)
        if x != y:
            raise ConfigError(f"{run_dir}: cannot resume: {key} is {x!r} in the journal, {y!r} now")
    a, b = stored.dataset, current.dataset
    if a is None or b is None or a.digest != b.digest:
        raise ConfigError(
            f"{run_dir}: cannot resume: dataset digest differs "
            f"({_short_id(a)} in the journal, {_short_id(b)} now)"
        )
    for field in IDENTITY_FIELDS:
        x, y = _lookup(stored.config, field), _lookup(current.config, field)
        if x != y:
            raise ConfigError(
                f"{run_dir}: cannot resume: {field} is {x!r} in the journal, {y!r} now"
            )


def _short_id(d: DatasetInfo | None) -> str:
    return "none" if d is None else f"{d.version} {d.digest[:12]}"


class ResumeState:
    """What a previous attempt left: verdicts to keep and completions to judge."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        if not (run_dir / rundir.RUN).exists():
            raise ConfigError(f"{run_dir}: nothing to resume (no {rundir.RUN})")
        self.stored = rundir.read_record(run_dir)
        self.done: set[tuple[str, int]] = set()
        self.kept = 0
        self.dropped_infra = 0
        self.pending: dict[tuple[str, int], Candidate] = {}

    def compact(
        self,
        on_kept: Callable[[CandidateResult], None],
        on_superseded: Callable[[CandidateResult], None] = lambda _r: None,
    ) -> None:
        """Rewrite results.jsonl keeping final verdicts, each passed to
        ``on_kept``; every verdict superseded so far whose generation
        accounting counts (`spent_on_generation`) goes to ``on_superseded``."""
        self._supersede(on_superseded)
        seen: set[tuple[str, int]] = set()

        def final() -> Iterator[CandidateResult]:
            for r in read_results(self.run_dir / rundir.RESULTS):
                key = (r.problem_id, r.sample_index)
                if r.status == "infra_error":
                    self.dropped_infra += 1
                    continue
                if key in seen:
                    continue
                seen.add(key)
                self.kept += 1
                on_kept(r)
                yield r

        rewrite_journal(self.run_dir / rundir.RESULTS, final())
        self.done = seen

    def _supersede(self, on_superseded: Callable[[CandidateResult], None]) -> None:
        """Append the infra_error verdicts about to be dropped to
        superseded.jsonl, durably, before results.jsonl is rewritten (a
        crash in between appends them again: they are told apart, not
        counted twice)."""
        path = self.run_dir / rundir.SUPERSEDED
        known: set[tuple[str, int, float | None, float | None]] = set()
        for r in read_results(path):
            if _identity(r) not in known:
                known.add(_identity(r))
                if spent_on_generation(r):
                    on_superseded(r)
        journal: Journal | None = None
        try:
            for r in read_results(self.run_dir / rundir.RESULTS):
                if r.status != "infra_error" or _identity(r) in known:
                    continue
                journal = journal or Journal(path)
                journal.write(r)
                known.add(_identity(r))
                if spent_on_generation(r):
                    on_superseded(r)
        finally:
            if journal is not None:
                journal.close()

    def load_pending(self) -> None:
        """Completions journaled but not judged (endpoint runs)."""
        path = self.run_dir / rundir.GENERATIONS
        for rec in read_lines(path, msgspec.json.Decoder(GenerationRecord)):
            key = (rec.candidate.problem_id, rec.candidate.sample_index)
            if key not in self.done:
                self.pending[key] = rec.candidate
