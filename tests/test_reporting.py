"""What a person sees of a run, rendered in-process: numbers and foreign
text, the measurement table at 80 columns, the live progress at 80 columns,
the plain progress lines, and the facts both renderers share."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import msgspec
from results import candidate_result
from rich.console import Console

from aioeval.analysis.runs import load_run, read_tally, tally
from aioeval.events import GenerationUpdate, ResultReady, RunFinished, RunStarted
from aioeval.reporting.facts import build_facts, fact_rows, peak_open
from aioeval.reporting.html import render_html
from aioeval.reporting.progress import RunProgress, Seen, progress_every
from aioeval.reporting.terminal import measurement_table, print_run_end
from aioeval.reporting.text import clean, value
from aioeval.types import CandidateResult, DatasetInfo, Measurement, Summary

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-_]")


def _m(name: str, v: float, unit: str, klass: str = "environmental") -> Measurement:
    return Measurement(name=name, value=v, unit=unit, klass=klass, official=False)  # type: ignore[arg-type]


ENDPOINT_MEASUREMENTS = [
    Measurement(
        name="human-eval.pass_at_1",
        value=0.4268,
        unit="fraction",
        klass="deterministic",
        official=True,
    ),
    _m("human-eval.total_tokens", 299245.0, "tokens", "deterministic"),
    _m("human-eval.retry_count", 73.0, "count"),
    _m("human-eval.retry_overhead_ms", 1234.567, "ms"),
    _m("human-eval.rate_limited_count", 12.0, "count"),
    _m("human-eval.generation_latency_p50_ms", 812.5, "ms"),
    _m("human-eval.generation_latency_p99_ms", 4021.25, "ms"),
]


def _summary(measurements: list[Measurement], **kw: object) -> Summary:
    return Summary(
        benchmark="human-eval",
        dataset=DatasetInfo(name="openai_humaneval", version="1.0.3", digest="d" * 64, size=164),
        measurements=measurements,
        **kw,  # type: ignore[arg-type]
    )


def _render(renderable: object, width: int = 80, terminal: bool = False) -> list[str]:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None)
    console.print(renderable)
    return buf.getvalue().splitlines()


def test_clean_strips_escapes_and_controls() -> None:
    hostile = "\x1b[31mquota\x1b[0m exceeded\x07\r\n\x1b]0;pwned\x07 for org\x00 \u2028x"
    assert clean(hostile) == "quota exceeded for org x"
    assert clean("a" * 50, limit=10) == "a" * 9 + "…"


def test_whole_numbers_print_as_integers_with_separators() -> None:
    by_name = {m.name.split(".")[1]: value(m) for m in ENDPOINT_MEASUREMENTS}
    assert by_name["total_tokens"] == "299,245"
    assert by_name["retry_count"] == "73"
    assert by_name["pass_at_1"] == "0.4268"
    assert by_name["retry_overhead_ms"] == "1,234.57"
    assert value(_m("x.cost_usd", 0.01675, "USD")) == "0.0168"


def test_measurement_table_at_80_columns_never_cuts_a_name() -> None:
    lines = _render(measurement_table(_summary(ENDPOINT_MEASUREMENTS), 80))
    text = "\n".join(lines)
    assert max(len(line) for line in lines) <= 80
    for m in ENDPOINT_MEASUREMENTS:
        assert m.name in text
    assert "…" not in text
    assert "299,245 tokens" in text and " 73 count" in text
    assert "deterministic" in text and "official" in text  # full columns fit here


def test_long_names_abbreviate_the_class_column_deliberately() -> None:
    long = [*ENDPOINT_MEASUREMENTS, _m("humaneval-plus-team.generation_latency_p50_ms", 1.5, "ms")]
    lines = _render(measurement_table(_summary(long), 80))
    text = "\n".join(lines)
    assert max(len(line) for line in lines) <= 80
    for m in long:
        assert m.name in text
    assert "det*" in text and "env" in text
    assert "det = deterministic, env = environmental; * = official" in text


def _result(pid: str, i: int, status: str = "passed", **kw: object) -> CandidateResult:
    return candidate_result(pid, i, status, **kw)


def test_samples_of_one_request_count_as_one_http_request() -> None:
    """n = 4 per request: 8 samples, 2 requests; the first request took 3
    attempts (two 429s, split over its samples as generation splits them)."""
    rows = []
    for p, (start, attempts, limited) in enumerate([(100.0, 3, [1, 1, 0, 0]), (100.5, 1, [0] * 4)]):
        for i in range(4):
            rows.append(
                _result(
                    f"HumanEval/{p}",
                    i,
                    attempts=attempts,
                    rate_limited=limited[i],
                    retry_count=limited[i],
                    gen_started_at=start,
                    gen_finished_at=start + 1.0,
                )
            )
    t = tally("human-eval", rows)
    assert [s.samples for s in t.spans] == [4, 4]
    assert sum(s.attempts for s in t.spans) == 4
    assert sum(s.rate_limited for s in t.spans) == 2
    assert peak_open(t.spans) == 2


def test_peak_open_counts_overlap_only() -> None:
    t = tally(
        "human-eval",
        [
            _result("A", 0, gen_started_at=0.0, gen_finished_at=1.0),
            _result("B", 0, gen_started_at=1.0, gen_finished_at=2.0),  # starts as A ends
            _result("C", 0, gen_started_at=1.5, gen_finished_at=3.0),
        ],
    )
    assert peak_open(t.spans) == 2


def _write_run(path: Path, results: list[CandidateResult], summary: Summary) -> None:
    path.mkdir()
    (path / "results.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in results))
    (path / "summary.json").write_bytes(msgspec.json.encode(summary))


def test_terminal_and_html_print_the_same_facts(tmp_path: Path) -> None:
    """Server failures (first message per cause, cleaned) and every fact row
    read the same in the terminal summary and the HTML report."""
    results = [
        _result("HumanEval/0", 0),
        _result(
            "HumanEval/1",
            0,
            "infra_error",
            reason="HTTP 400: \x1b[31mquota exceeded\x1b[0m for org-7 (client error)",
            infra_cause="generation:status",
        ),
        _result(
            "HumanEval/1",
            1,
            "infra_error",
            reason="HTTP 400: other",
            infra_cause="generation:status",
        ),
    ]
    summary = _summary(
        ENDPOINT_MEASUREMENTS,
        counts={"passed": 1, "infra_error": 2},
        candidates=3,
        complete=False,
        incomplete={"generation:status": 2},
        notes=["pass@k for k = 10 left out: the smallest n here is 2"],
    )
    _write_run(tmp_path / "r", results, summary)
    run = load_run(tmp_path / "r")
    t = read_tally(run)
    facts = build_facts(run, t)
    buf = io.StringIO()
    print_run_end(facts, Console(file=buf, width=80, color_system=None))
    terminal = buf.getvalue()
    assert "failed: generation:status: 2 samples; first: HTTP 400: quota exceeded for org-7" in (
        " ".join(terminal.split())
    )
    assert "\x1b" not in terminal and "other" not in terminal  # first occurrence only
    assert "note: pass@k for k = 10 left out" in terminal
    page = render_html(run, t, facts=facts)
    for row in fact_rows(facts):
        assert row.text.replace("&", "&amp;").replace("'", "&#x27;") in page, row


def _events(progress: RunProgress, gen: bool) -> None:
    progress(RunStarted(benchmark="human-eval", total=32_800, out_dir="/tmp/runs/he-1"))
    if gen:
        progress(
            GenerationUpdate(
                done=1_300,
                in_flight=16,
                rate_limited=3,
                retries=5,
                failed=0,
                samples=1_250,
                concurrency=16,
                rate_rpm=600.0,
            )
        )
    for i in range(1_234):
        progress(ResultReady(result=_result("HumanEval/1", i, "passed" if i % 3 else "failed")))


def test_live_progress_fits_80_columns_and_names_its_times() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    progress = RunProgress(console, live=True)
    try:
        _events(progress, gen=True)
        view = progress._view
        assert view is not None and hasattr(view, "progress")
        frame = _render(view.progress.get_renderable(), 80, terminal=True)
    finally:
        progress.stop()
    text = "\n".join(frame)
    assert max(len(ANSI.sub("", line)) for line in frame) <= 80, text
    assert "…" not in text  # wrapped, never cut
    assert "1,234/32,800" in text and "1,250/32,800" in text
    assert "remaining" in text and "elapsed" in text
    assert (
        "429s 3" in text
        and "in flight 16/16" in text
        and "600 rpm" in text
        and "passed 822 (66.6%)" in text
    )
    start = buf.getvalue()
    assert "journal: /tmp/runs/he-1/results.jsonl" in start
    assert "aioeval run --resume /tmp/runs/he-1" in start


def test_plain_line_has_done_total_rate_pass_rate_and_429s() -> None:
    now = [0.0]
    seen = Seen(clock=lambda: now[0])
    seen.update(RunStarted(benchmark="human-eval", total=10, out_dir="o"))
    for i in range(4):
        seen.update(ResultReady(result=_result("A", i, "passed" if i else "failed")))
    seen.update(
        GenerationUpdate(done=5, in_flight=2, rate_limited=7, retries=1, failed=0, concurrency=8)
    )
    now[0] = 2.0
    assert seen.line() == (
        "human-eval: 4/10 judged (40%) · 2.0/s · passed 75.0% · 429s 7 · retries 1 · "
        "failed 0 · in flight 2/8 · elapsed 0:00:02"
    )


class _Watched(io.StringIO):
    """Sets ``two_lines`` once two progress lines were written."""

    def __init__(self) -> None:
        super().__init__()
        self.two_lines = threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.getvalue().count("judged") >= 2:
            self.two_lines.set()
        return n


def test_plain_lines_come_periodically_and_once_at_the_end() -> None:
    buf = _Watched()
    console = Console(file=buf, width=80, color_system=None)
    progress = RunProgress(console, live=False, every_s=0.01)
    progress(RunStarted(benchmark="human-eval", total=2, out_dir="o"))
    progress(ResultReady(result=_result("A", 0)))
    assert buf.two_lines.wait(60), buf.getvalue()
    progress(ResultReady(result=_result("A", 1)))
    progress(RunFinished(summary=_summary([])))
    progress.stop()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "journal: o/results.jsonl"
    assert lines[1] == "if interrupted, continue with: aioeval run --resume o"
    assert "1/2 judged" in lines[2] and "1/2 judged" in lines[3]  # before the second verdict
    assert all(re.match(r"human-eval: [12]/2 judged", line) for line in lines[2:-1])
    assert lines[-1].startswith("human-eval: 2/2 judged (100%)") and lines[-1].endswith("· done")
    assert "\x1b" not in buf.getvalue()


def test_progress_interval_from_the_environment() -> None:
    assert progress_every({}) == 10.0
    assert progress_every({"AIOEVAL_PROGRESS_EVERY": "2.5"}) == 2.5
    assert progress_every({"AIOEVAL_PROGRESS_EVERY": "soon"}) == 10.0
    assert progress_every({"AIOEVAL_PROGRESS_EVERY": "0"}) == 10.0
