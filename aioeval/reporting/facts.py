"""The facts of one run, worked out once and shown by every renderer.

`build_facts` folds summary.json, run.json and the journal's tally into a
`RunFacts`; `fact_rows` turns it into labelled lines of text. The terminal
(end of a run, ``aioeval report``) and the HTML report print those same
rows, so a count can never differ between them. Pure: no I/O here.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from aioeval.analysis.partial import expected_samples
from aioeval.analysis.runs import RunDir, Span, Tally
from aioeval.config import RunConfig, decode_config
from aioeval.errors import ConfigError
from aioeval.reporting.text import clean, count, duration
from aioeval.types import Summary

Tone = Literal["", "good", "warn", "bad"]
FAILURE_CHARS = 240
"""Characters of a server's message shown per failure cause."""


class Traffic(msgspec.Struct, frozen=True, kw_only=True):
    """What generation asked of the endpoint, from the journal."""

    requests: int
    """HTTP requests (samples asked for together with ``n`` are one request)."""
    attempts: int
    """HTTP attempts, retries included."""
    samples: int
    """Samples those requests were for."""
    per_request: int
    """Most samples asked for in one request (``n``)."""
    rate_limited: int
    retries: int
    peak_open: int
    """Most requests open at once, each from its first send to its final
    answer (backoff waits included)."""
    max_concurrency: int | None
    """The configured cap on requests in flight (None: unknown)."""


class FailureCause(msgspec.Struct, frozen=True, kw_only=True):
    cause: str
    count: int
    first: str
    """The first failure's reason, control characters and escapes removed."""


class RunFacts(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    partial: bool
    summary: Summary
    mode: str
    samples_file: str | None
    journal_lines: int
    journal_repeats: int
    """Journal lines repeating an earlier (problem, sample)."""
    expected: int | None
    """Samples planned (partial runs of known size), else None."""
    traffic: Traffic | None
    failures: list[FailureCause]


class Row(msgspec.Struct, frozen=True):
    label: str
    text: str
    tone: Tone = ""


def _config(run: RunDir) -> RunConfig | None:
    if run.info is None:
        return None
    try:
        return decode_config(dict(run.info.config))
    except ConfigError:
        return None  # written by another version: its limits are not shown


def peak_open(spans: list[Span]) -> int:
    """Most spans open at one instant (one that ends as another starts does
    not overlap it)."""
    edges = sorted([(s.started, 1) for s in spans] + [(s.finished, -1) for s in spans])
    peak = level = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


def traffic(t: Tally, cfg: RunConfig | None) -> Traffic | None:
    if not t.spans:
        return None
    return Traffic(
        requests=len(t.spans),
        attempts=sum(s.attempts for s in t.spans),
        samples=sum(s.samples for s in t.spans),
        per_request=max(s.samples for s in t.spans),
        rate_limited=sum(s.rate_limited for s in t.spans),
        retries=sum(s.retries for s in t.spans),
        peak_open=peak_open(t.spans),
        max_concurrency=cfg.target.rate_limit.max_concurrency if cfg is not None else None,
    )


def build_facts(run: RunDir, t: Tally) -> RunFacts:
    cfg = _config(run)
    info = run.info
    return RunFacts(
        path=str(run.path),
        partial=run.partial,
        summary=run.summary,
        mode=info.mode if info is not None and info.mode else "?",
        samples_file=info.samples if info is not None else None,
        journal_lines=t.candidates,
        journal_repeats=t.duplicates,
        expected=expected_samples(info, cfg) if run.partial and info and cfg else None,
        traffic=traffic(t, cfg),
        failures=[
            FailureCause(cause=k, count=c.count, first=clean(c.first, FAILURE_CHARS))
            for k, c in t.causes.items()
        ],
    )


def counts_text(s: Summary) -> str:
    counts = ", ".join(f"{k} {count(v)}" for k, v in s.counts.items() if v) or "none"
    return f"{count(s.candidates)} ({counts})"


def state(f: RunFacts) -> Row:
    s = f.summary
    if f.partial:
        of = f" of {count(f.expected)}" if f.expected else ""
        return Row(
            "state",
            f"PARTIAL: {count(s.candidates)}{of} samples journaled, no summary.json yet "
            "(interrupted or still running)",
            "bad",
        )
    if not s.complete:
        causes = ", ".join(f"{k}: {count(v)}" for k, v in s.incomplete.items())
        return Row("state", f"INCOMPLETE (infra_error: {causes})", "bad")
    return Row("state", "complete", "good")


def traffic_rows(tr: Traffic) -> list[Row]:
    cap = f" (max_concurrency {tr.max_concurrency})" if tr.max_concurrency else ""
    return [
        Row(
            "endpoint",
            f"{count(tr.requests)} HTTP requests ({count(tr.attempts)} attempts) for "
            f"{count(tr.samples)} samples, up to {tr.per_request} per request",
        ),
        Row(
            "rate limits",
            f"{count(tr.rate_limited)} answers 429, {count(tr.retries)} retries, "
            f"peak {count(tr.peak_open)} requests open at once{cap}",
            "warn" if tr.rate_limited else "",
        ),
    ]


def outcome_rows(f: RunFacts) -> list[Row]:
    """What happened: the rows printed at the end of a run, and the second
    half of the report."""
    s = f.summary
    rows = [Row("candidates", counts_text(s)), *extraction_rows(s)]
    if s.executions or s.executions_saved:
        saved = count(s.executions_saved)
        rows.append(Row("executions", f"{count(s.executions)} (saved by dedup: {saved})"))
    if f.traffic is not None:
        rows += traffic_rows(f.traffic)
    rows += [
        Row(
            f"failed: {x.cause}",
            f"{count(x.count)} samples; first: {x.first or '(no message)'}",
            "bad",
        )
        for x in f.failures
    ]
    if s.missing:
        rows.append(Row("layers missing", ", ".join(s.missing), "warn"))
    if s.verifier_missing:
        rows.append(Row("tests' layers missing", ", ".join(s.verifier_missing), "warn"))
    if f.journal_lines != s.candidates:
        rows.append(
            Row(
                "journal",
                f"results.jsonl has {count(f.journal_lines)} lines, "
                f"summary.json counts {count(s.candidates)}",
                "bad",
            )
        )
    if f.journal_repeats:
        rows.append(
            Row(
                "journal",
                f"{count(f.journal_repeats)} lines repeat an earlier "
                "(problem, sample); counts may be off",
                "bad",
            )
        )
    rows += [Row("note", clean(n, 2000)) for n in s.notes]
    return rows


def extraction_rows(s: Summary) -> list[Row]:
    """How programs were taken from the answers, with the answers where no
    code was found first (so "no code" is not read as "wrong code")."""
    if not s.extraction:
        return []
    none = s.extraction.get("none", 0)
    text = f"{count(none)} of {count(sum(s.extraction.values()))} answers had no code we could find"
    kinds = ", ".join(f"{k} {count(v)}" for k, v in s.extraction.items() if k != "none")
    return [
        Row("code found", text + (f" (taken as: {kinds})" if kinds else ""), "warn" if none else "")
    ]


def both_rows(s: Summary) -> list[Row]:
    """With ``scoring: both``: how many answers the two scorings judged
    differently (results.jsonl has each one's ``official_status``)."""
    if s.disagreements is None:
        return []
    text = f"{count(s.disagreements)} of {count(s.candidates)} answers judged differently"
    return [Row("strict vs official", text + " (official_status in results.jsonl)")]


def fact_rows(f: RunFacts) -> list[Row]:
    """Every fact of the report, in reading order: what was run, on what,
    under which isolation, whether it is whole, then what happened."""
    s = f.summary
    d = s.dataset
    when = f"{s.started_at} / {s.finished_at or '-'} ({duration(s.wall_s)} elapsed)"
    return [
        Row("benchmark", s.benchmark),
        Row("platform / mode", f"{s.platform or '?'} / {f.mode}"),
        Row("model", s.model or "-"),
        Row("samples file", f.samples_file or "-"),
        Row("dataset", f"{d.name} {d.version}, {count(d.size)} problems"),
        Row("dataset digest", d.digest or "-"),
        Row("scoring", s.scoring or "-"),
        *both_rows(s),
        Row("isolation layers", ", ".join(s.isolation) or "none recorded (no execution)"),
        *(
            [Row("tests' isolation", ", ".join(s.verifier_isolation))]
            if s.verifier_isolation
            else []
        ),
        state(f),
        Row("started / finished", when),
        *outcome_rows(f),
    ]
