"""The summary of a run that has none yet: interrupted, or still running.

``aioeval report`` on such a folder works from what is on disk: run.json
(what was asked for) and the journal (the verdicts so far). The figures are
computed exactly as the run's own summary would compute them (`RunStats`),
over the samples journaled so far, and are never official: a run cut short
covers an unknown part of its dataset.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from aioeval.analysis.runs import RunDir, Tally, iter_results, load_run, read_tally, tally
from aioeval.config import RunConfig, decode_config
from aioeval.errors import ConfigError, InputError
from aioeval.run.rundir import RESULTS, RUN, SUMMARY, RunRecord, read_record
from aioeval.run.summary import RunStats, k_notes
from aioeval.suites import get_suite
from aioeval.types import STATUSES, DatasetInfo, Summary


def load_any_run(path: Path | str) -> tuple[RunDir, Tally]:
    """A run directory and its tally, finished or not. A folder with run.json
    but no summary.json is read from its journal, once, and marked partial."""
    path = Path(path)
    if not path.is_dir() or (path / SUMMARY).exists() or not (path / RUN).exists():
        run = load_run(path)
        return run, read_tally(run)
    record = read_record(path)
    if not (path / RESULTS).is_file():
        raise InputError(f"{path}: the run has not journaled a verdict yet (no {RESULTS})")
    try:
        cfg = decode_config(dict(record.config), str(path / RUN))
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    t = tally(record.benchmark, iter_results(path / RESULTS), scoring=cfg.params.scoring)
    assert t.stats is not None
    summary = provisional_summary(record, cfg, t.stats, t.last_finished)
    return RunDir(path=path, summary=summary, info=record, partial=True), t


def provisional_summary(
    record: RunRecord, cfg: RunConfig, stats: RunStats, last_finished: float
) -> Summary:
    """summary.json as it would read if the run ended now (marked partial)."""
    suite = get_suite(record.benchmark, cfg.params)
    started = record.resumed_at[-1] if record.resumed_at else record.started_at
    t0, last = _epoch(started), last_finished
    return Summary(
        benchmark=record.benchmark,
        dataset=record.dataset or DatasetInfo(name="?", version="?", digest="", size=0),
        measurements=stats.measurements(cfg, suite, comparable=False),
        platform=record.platform,
        complete=False,
        counts={s: stats.counts.get(s, 0) for s in STATUSES},
        incomplete=dict(stats.infra_causes),
        candidates=stats.candidates,
        executions=stats.executions,
        executions_saved=stats.cached,
        scoring=cfg.params.scoring,
        model=cfg.target.model if record.platform == "llm-endpoint" else None,
        started_at=started,
        finished_at=_iso(last) if last else "",
        wall_s=round(max(0.0, last - t0), 3) if last and t0 else 0.0,
        notes=[_partial_note(record, cfg, stats.candidates), *k_notes(stats, cfg, suite)],
    )


def expected_samples(record: RunRecord, cfg: RunConfig) -> int | None:
    """Samples the run set out to judge, when run.json tells (endpoint and
    reference runs); None when only the finished run knows (replay, score)."""
    if record.dataset is None:
        return None
    if record.mode == "endpoint":
        return record.dataset.size * cfg.params.n_samples
    if record.mode == "reference":
        return record.dataset.size
    return None


def _partial_note(record: RunRecord, cfg: RunConfig, journaled: int) -> str:
    expected = expected_samples(record, cfg)
    of = f" of the {expected:,} planned" if expected else ""
    return (
        f"partial: no {SUMMARY} yet (the run was interrupted or is still running); "
        f"figures cover the {journaled:,}{of} samples journaled so far and are not official"
    )


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.UTC).isoformat(timespec="seconds")


def _epoch(iso: str) -> float:
    try:
        return _dt.datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return 0.0
