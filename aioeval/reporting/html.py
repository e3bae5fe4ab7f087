"""One self-contained HTML file for a finished run (``aioeval report --html``).

Self-contained means no network request at all: the chart library (uPlot,
MIT, ~50 KB, bundled in ``aioeval/reporting/assets`` with its licence), its CSS, the
data and the page script are all inline, fonts are the system's, and a
Content-Security-Policy with ``default-src 'none'`` plus the SHA-256 of each
inline script forbids anything else, so even a mistake here cannot fetch or
run something.

Model output, verdict reasons and problem ids are untrusted text. In markup
they go through `html.escape`; inside the inline JSON data block `<`, `>`,
`&` and U+2028/U+2029 become ``\\uXXXX`` escapes (`script_json`), so no
string can close the script element or start markup. The page still reads
without JavaScript: every figure behind a chart is also in a table.

The run's facts (counts, endpoint traffic, failures, notes) come from the
same `RunFacts` rows the terminal prints, so the two always agree. Building
the figures (`aioeval.reporting.figures`) is pure; `render_html` only
formats. The page's CSS and script are asset files next to the chart library.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from functools import cache
from importlib import resources

import msgspec

from aioeval.analysis.runs import ProblemTally, RunDir, Tally, natural_key, read_tally
from aioeval.errors import InputError
from aioeval.reporting.facts import Row, RunFacts, build_facts, fact_rows, traffic_rows
from aioeval.reporting.figures import Figures, Timeline, build_figures
from aioeval.reporting.text import value

__all__ = ["build_figures", "render_html", "script_json", "write_report"]

CANDIDATE_CHARS = 2000
REASON_CHARS = 600
_TONES = {"": "", "good": "ok", "warn": "warn", "bad": "bad"}


@cache
def _asset(name: str) -> str:
    return resources.files("aioeval.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def script_json(obj: object) -> str:
    """JSON safe to place inside an inline <script> element.

    Outside strings JSON never contains these characters, so replacing them
    by their escapes keeps the value identical when parsed.
    """
    raw = msgspec.json.encode(obj).decode("utf-8")
    return (
        raw.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cut(text: str, limit: int) -> str:
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


def _csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def _rows_table(rows: Sequence[Row]) -> str:
    """The facts as the terminal prints them, one row each."""
    body = "".join(
        f'<tr><th>{_esc(r.label)}</th><td class="{_TONES[r.tone]}">{_esc(r.text)}</td></tr>'
        for r in rows
    )
    return f"<table class=facts>{body}</table>"


def _measurements(run: RunDir) -> str:
    rows = []
    for m in run.summary.measurements:
        rows.append(
            f"<tr><td>{_esc(m.name)}</td><td class=num>{_esc(value(m))}</td><td>{_esc(m.unit)}</td>"
            f"<td>{_esc(m.klass)}</td><td>{'yes' if m.official else 'no'}</td></tr>"
        )
    if not rows:
        return '<p class="empty">no measurements</p>'
    return (
        "<table><thead><tr><th>measurement</th><th>value</th><th>unit</th><th>class</th>"
        f"<th>official</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _pct_table(p: dict[str, float]) -> str:
    head = "".join(f"<th>{_esc(k)}</th>" for k in p)
    cells = "".join(f"<td class=num>{v:,.2f}</td>" for v in p.values())
    return f"<table><thead><tr>{head}</tr></thead><tbody><tr>{cells}</tr></tbody></table>"


def _problem_row(p: ProblemTally) -> str:
    rate = p.c / p.n if p.n else 0.0
    f = p.failure
    if f is None:
        fail = '<td data-v=""></td><td></td>'
    else:
        reason = _esc(_cut(f.reason, REASON_CHARS)) or '<span class="empty">(no reason)</span>'
        tail = (
            f"<details><summary>output tail</summary><pre>{_esc(_cut(f.output_tail, REASON_CHARS))}</pre></details>"
            if f.output_tail
            else ""
        )
        fail = (
            f"<td data-v={_esc(f.status)}><b>{_esc(f.status)}</b> (sample {f.sample_index}): {reason}{tail}</td>"
            f"<td><pre>{_esc(_cut(f.candidate, CANDIDATE_CHARS))}</pre></td>"
        )
    return (
        f"<tr><td data-v={_esc(natural_key(p.problem_id))}>{_esc(p.problem_id)}</td><td class=num>{p.n}</td><td class=num>{p.c}</td>"
        f"<td class=num data-v={rate:.6f}>{rate:.1%}</td><td class=num>{p.infra}</td>{fail}</tr>"
    )


def _problems(t: Tally) -> str:
    """The long per-problem table, last and collapsible (open by default)."""
    ordered = sorted(t.problems.values(), key=lambda p: natural_key(p.problem_id))
    rows = "".join(_problem_row(p) for p in ordered)
    return (
        f"<details open><summary>{len(ordered):,} problems (click to fold)</summary>"
        "<p>Click a column header to sort. Candidates and reasons are model output, shown as text.</p>"
        '<table class="sortable" id="problems"><thead><tr><th>problem</th><th>samples</th>'
        "<th>passed</th><th>pass rate</th><th>infra_error</th><th>first failing verdict</th>"
        f"<th>failing candidate</th></tr></thead><tbody>{rows}</tbody></table></details>"
    )


def _timeline(fig: Figures, facts: RunFacts) -> str:
    if fig.timeline is None or facts.traffic is None:
        return '<p class="empty">no endpoint data</p>'
    tl: Timeline = fig.timeline
    return (
        '<div class="chart" id="chart-timeline"></div>'
        + _rows_table(
            [*traffic_rows(facts.traffic), Row("duration", f"{tl.t[-1] + tl.step_s / 2:.1f} s")]
        )
        + "<p>A request is open from its first send to its final answer, backoff waits "
        "included, so the peak of open requests can exceed what was in flight at once.</p>"
    )


def _sections(fig: Figures) -> tuple[str, str, str]:
    passk_rows = "".join(
        f"<tr><td class=num>{k}</td><td class=num>{v:.4f}</td></tr>"
        for k, v in zip(fig.passk_k, fig.passk, strict=True)
    )
    passk = (
        '<div class="chart" id="chart-passk"></div>'
        "<details><summary>values</summary><table><thead><tr><th>k</th><th>pass@k</th></tr>"
        f"</thead><tbody>{passk_rows}</tbody></table></details>"
    )
    wall = (
        '<div class="chart" id="chart-wall"></div>' + _pct_table(fig.wall_pct)
        if fig.wall_pct
        else '<p class="empty">no sandbox executions recorded (replayed run)</p>'
    )
    gen = (
        '<div class="chart" id="chart-gen"></div>' + _pct_table(fig.gen_pct)
        if fig.gen_pct
        else '<p class="empty">no generation data (not an endpoint run)</p>'
    )
    return passk, wall, gen


def render_html(
    run: RunDir, t: Tally, figures: Figures | None = None, facts: RunFacts | None = None
) -> str:
    """The page: facts and measurements, the charts, then the long
    per-problem table (collapsible)."""
    fig = figures or build_figures(t)
    facts = facts or build_facts(run, t)
    s = run.summary
    lib, script = _asset("uPlot.iife.min.js"), _asset("report.js")
    if "</script" in lib.lower() + script.lower():  # would end the inline element early
        raise RuntimeError("a bundled script contains '</script'")
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {_csp_hash(lib)} {_csp_hash(script)}; base-uri 'none'; form-action 'none'"
    )
    passk, wall, gen = _sections(fig)
    title = f"aioeval report: {_esc(s.benchmark)}"
    partial = (
        '<p class="bad">PARTIAL RUN: no summary.json yet; the figures cover the samples '
        "journaled so far.</p>"
        if facts.partial
        else ""
    )
    parts: list[str] = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(csp)}">',
        '<meta name=viewport content="width=device-width,initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>{title}</title>",
        f"<style>{_asset('uPlot.min.css')}{_asset('report.css')}</style></head><body>",
        f"<h1>{title}{' (partial)' if facts.partial else ''}</h1>",
        partial,
        "<h2>Run</h2>",
        _rows_table(fact_rows(facts)),
        '<h2 id="measurements">Measurements</h2>',
        _measurements(run),
        "<h2>pass@k over k</h2>",
        passk,
        '<h2 id="problems-chart">Per-problem pass rate</h2>',
        '<div class="chart" id="chart-problems"></div>',
        '<h2 id="sandbox-latency">Sandbox latency</h2>',
        wall,
        '<h2 id="generation-latency">Generation latency</h2>',
        gen,
        '<h2 id="timeline">Rate-limit timeline</h2>',
        "<p>HTTP attempts, 429s and retries are counted at their request's first send; "
        "open requests are sampled at each bucket's midpoint.</p>",
        _timeline(fig, facts),
        '<h2 id="problems-section">Per-problem table</h2>',
        _problems(t),
        f'<script type="application/json" id="report-data">{script_json(fig)}</script>',
        f"<script>{lib}</script>",
        f"<script>{script}</script>",
        "</body></html>\n",
    ]
    return "".join(parts)


def write_report(
    run: RunDir, path: str, tally: Tally | None = None, facts: RunFacts | None = None
) -> int:
    """Render and write the file; returns its size in bytes."""
    t = tally or read_tally(run)
    data = render_html(run, t, facts=facts).encode("utf-8")
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the report: {exc.strerror}") from None
    return len(data)
