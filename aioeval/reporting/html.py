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

Building the figures (`build_figures`) is pure; `render_html` only formats.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import html
import math
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

import msgspec

from aioeval.analysis.runs import ProblemTally, RunDir, Span, Tally, read_tally
from aioeval.errors import InputError
from aioeval.metrics import mean_pass_at_k, percentile

CANDIDATE_CHARS = 2000
REASON_CHARS = 600
TIMELINE_BUCKETS = 120
HIST_BINS = 40


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


def natural_key(text: str) -> str:
    """Sort key that puts HumanEval/9 before HumanEval/10."""
    return re.sub(r"\d+", lambda m: m.group().zfill(12), text)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cut(text: str, limit: int) -> str:
    return (
        text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    )


# ---------------------------------------------------------------- figures


def curve_ks(smallest_n: int) -> list[int]:
    """k values for the pass@k curve: every k up to 20, then ~12 per decade."""
    ks = set(range(1, min(smallest_n, 20) + 1))
    k = 20.0
    while k < smallest_n:
        k *= 10 ** (1 / 12)
        ks.add(min(round(k), smallest_n))
    return sorted(ks)


def pass_at_k_curve(counts: dict[str, tuple[int, int]]) -> tuple[list[int], list[float]]:
    if not counts:
        return [], []
    smallest = min(n for n, _ in counts.values())
    ks = curve_ks(smallest)
    return ks, [mean_pass_at_k(counts.values(), k) for k in ks]


def histogram(
    values: Sequence[float], bins: int = HIST_BINS
) -> tuple[list[float], list[int], bool]:
    """Bin centres, counts, and whether the bins are log-spaced (they are
    when the values span more than 20x, so both tails stay visible)."""
    if not values:
        return [], [], False
    lo, hi = min(values), max(values)
    if hi <= lo:
        return [lo], [len(values)], False
    log = lo > 0 and hi / lo > 20
    if log:
        a, b = math.log(lo), math.log(hi)
        edges = [math.exp(a + (b - a) * i / bins) for i in range(bins + 1)]
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    counts = [0] * bins
    for v in values:
        counts[min(max(bisect.bisect_right(edges, v) - 1, 0), bins - 1)] += 1
    centres = [
        math.sqrt(edges[i] * edges[i + 1]) if log else (edges[i] + edges[i + 1]) / 2
        for i in range(bins)
    ]
    return centres, counts, log


PCTS = (50.0, 90.0, 95.0, 99.0, 100.0)


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    s = sorted(values)
    out = {f"p{q:g}": percentile(s, q) for q in PCTS[:-1]}
    out["max"] = s[-1]
    out["mean"] = math.fsum(s) / len(s)
    return out


class Timeline(msgspec.Struct, frozen=True, kw_only=True):
    """Endpoint traffic per time bucket; 429s and retries are counted in the
    bucket of the sample's first request (the journal has no finer times)."""

    t: list[float]
    requests: list[int]
    rate_limited: list[int]
    retries: list[int]
    in_flight: list[int]
    step_s: float


def timeline(spans: Sequence[Span], buckets: int = TIMELINE_BUCKETS) -> Timeline | None:
    if not spans:
        return None
    t0 = min(s.started for s in spans)
    t1 = max(max(s.finished, s.started) for s in spans)
    step = max((t1 - t0) / buckets, 1e-3)
    nb = max(1, min(buckets, math.ceil((t1 - t0) / step) or 1))
    req, rl, rt = [0] * nb, [0] * nb, [0] * nb
    for s in spans:
        i = min(int((s.started - t0) / step), nb - 1)
        req[i] += s.attempts
        rl[i] += s.rate_limited
        rt[i] += s.retries
    starts = sorted(s.started for s in spans)
    ends = sorted(s.finished for s in spans)
    mids = [t0 + (i + 0.5) * step for i in range(nb)]
    flight = [bisect.bisect_right(starts, m) - bisect.bisect_right(ends, m) for m in mids]
    return Timeline(
        t=[round((m - t0), 3) for m in mids],
        requests=req,
        rate_limited=rl,
        retries=rt,
        in_flight=flight,
        step_s=step,
    )


class Figures(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the charts draw; also embedded as the page's JSON data."""

    passk_k: list[int]
    passk: list[float]
    problem_ids: list[str]
    problem_rates: list[float]
    wall_bins: list[float]
    wall_counts: list[int]
    wall_log: bool
    wall_pct: dict[str, float]
    gen_pct: dict[str, float]
    gen_curve_q: list[float]
    gen_curve_ms: list[float]
    timeline: Timeline | None


def build_figures(t: Tally) -> Figures:
    counts = t.pass_counts()
    ks, curve = pass_at_k_curve(counts)
    ranked = sorted(
        ((p.c / p.n, p.problem_id) for p in t.problems.values() if p.n), key=lambda x: (-x[0], x[1])
    )
    centres, hist, log = histogram(t.wall_ms)
    gen_sorted = sorted(t.gen_latency_ms)
    qs = [float(q) for q in range(101)] if gen_sorted else []
    return Figures(
        passk_k=ks,
        passk=curve,
        problem_ids=[pid for _, pid in ranked],
        problem_rates=[r for r, _ in ranked],
        wall_bins=centres,
        wall_counts=hist,
        wall_log=log,
        wall_pct=percentiles(t.wall_ms),
        gen_pct=percentiles(t.gen_latency_ms),
        gen_curve_q=qs,
        gen_curve_ms=[percentile(gen_sorted, q) for q in qs],
        timeline=timeline(t.spans),
    )


# ---------------------------------------------------------------- markup

CSS = """
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1f2328;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;background:#f6f8fa;user-select:none}
table.sortable th[data-dir=asc]::after{content:" ▲"}table.sortable th[data-dir=desc]::after{content:" ▼"}
pre{white-space:pre;margin:.25rem 0;font-size:.8rem;max-height:16rem;max-width:44rem;overflow:auto;background:#f6f8fa;padding:.25rem}
code{word-break:break-all}#problems td:nth-child(6){min-width:14rem}
.empty{color:#656d76;font-style:italic}.bad{color:#b42318;font-weight:bold}.ok{color:#1a7f37}
.chart{min-height:40px}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function byId(id) { return document.getElementById(id); }
  function size(node) { return Math.max(320, Math.min(1000, node.clientWidth || 900)); }
  function plot(id, opts, cols) {
    var node = byId(id);
    if (!node || !cols[0].length) { return; }
    opts.width = size(node);
    opts.height = 280;
    opts.scales = opts.scales || {};
    opts.scales.x = opts.scales.x || {};
    opts.scales.x.time = false;
    new uPlot(opts, cols, node);
  }
  var bars = uPlot.paths.bars({ size: [0.9, 40] });
  function pct(u, v) { return v == null ? "" : (v * 100).toFixed(1) + "%"; }
  plot("chart-passk", {
    axes: [{ label: "k", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }, { label: "pass@k", values: function (u, vs) { return vs.map(function (v) { return (v * 100).toFixed(0) + "%"; }); } }],
    scales: { y: { range: [0, 1] } },
    series: [{ label: "k" }, { label: "pass@k", stroke: "#2563eb", width: 2, value: pct, points: { show: true } }]
  }, [data.passk_k, data.passk]);
  var ids = data.problem_ids;
  plot("chart-problems", {
    axes: [{ label: "problems, best to worst" }, { label: "pass rate" }],
    scales: { y: { range: [0, 1] } },
    series: [{ label: "problem", value: function (u, v) { return v == null ? "" : ids[v]; } },
             { label: "pass rate", fill: "#93c5fd", stroke: "#2563eb", paths: bars, points: { show: false }, value: pct }]
  }, [ids.map(function (_, i) { return i; }), data.problem_rates]);
  plot("chart-wall", {
    axes: [{ label: "sandbox wall time (ms)" + (data.wall_log ? ", log scale" : "") }, { label: "candidates" }],
    scales: { x: data.wall_log ? { distr: 3, log: 10 } : {} },
    series: [{ label: "ms" }, { label: "candidates", fill: "#fcd34d", stroke: "#b45309", paths: bars, points: { show: false } }]
  }, [data.wall_bins, data.wall_counts]);
  plot("chart-gen", {
    axes: [{ label: "percentile" }, { label: "generation latency (ms)" }],
    series: [{ label: "percentile" }, { label: "latency ms", stroke: "#7c3aed", width: 2 }]
  }, [data.gen_curve_q, data.gen_curve_ms]);
  var tl = data.timeline;
  if (tl) {
    plot("chart-timeline", {
      axes: [{ label: "seconds since the first request" }, { label: "per " + tl.step_s.toFixed(2) + " s" }],
      series: [{ label: "t (s)" },
               { label: "requests", stroke: "#2563eb" },
               { label: "429s", stroke: "#dc2626" },
               { label: "retries", stroke: "#d97706" },
               { label: "in flight", stroke: "#059669", width: 2 }]
    }, [tl.t, tl.requests, tl.rate_limited, tl.retries, tl.in_flight]);
  }
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent; }
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        heads.forEach(function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var r = x < y ? -1 : x > y ? 1 : 0;
          return dir === "asc" ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.setAttribute("data-ready", "1");
})();
"""


def _csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def _kv_table(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _num(x: float, digits: int = 2) -> str:
    return f"{x:,.{digits}f}"


def _facts(run: RunDir, t: Tally) -> str:
    s, info = run.summary, run.info
    d = s.dataset
    counts = ", ".join(f"{k} {v}" for k, v in s.counts.items() if v) or "none"
    if s.complete:
        complete = '<span class="ok">complete</span>'
    else:
        causes = ", ".join(f"{k}: {v}" for k, v in s.incomplete.items())
        complete = f'<span class="bad">INCOMPLETE</span> (infra_error: {_esc(causes)})'
    rows = [
        ("benchmark", _esc(s.benchmark)),
        ("platform / mode", _esc(f"{s.platform or '?'} / {info.mode if info else '?'}")),
        ("model", _esc(s.model or "—")),
        ("samples file", _esc(info.samples if info and info.samples else "—")),
        ("dataset", _esc(f"{d.name} {d.version}, {d.size} problems")),
        ("dataset digest", f"<code>{_esc(d.digest)}</code>"),
        ("scoring", _esc(s.scoring or "—")),
        ("isolation layers", _esc(", ".join(s.isolation) or "none recorded (no execution)")),
        ("layers missing", _esc(", ".join(s.missing) or "none")),
        ("completeness", complete),
        ("candidates", _esc(f"{s.candidates}: {counts}")),
        ("executions", _esc(f"{s.executions} (saved by dedup: {s.executions_saved})")),
        ("started / finished", _esc(f"{s.started_at} / {s.finished_at} ({s.wall_s:.1f} s)")),
    ]
    if t.candidates != s.candidates:
        rows.append(
            (
                "journal",
                f'<span class="bad">{_esc(f"results.jsonl has {t.candidates} lines, summary says {s.candidates}")}</span>',
            )
        )
    if t.duplicates:
        dup = f"{t.duplicates} lines repeat an earlier (problem, sample); counts may be off"
        rows.append(("journal", f'<span class="bad">{_esc(dup)}</span>'))
    rows += [("note", _esc(n)) for n in s.notes]
    return _kv_table(rows)


def _measurements(run: RunDir) -> str:
    rows = []
    for m in run.summary.measurements:
        value = f"{m.value:.4f}" if m.unit == "fraction" else _num(m.value)
        rows.append(
            f"<tr><td>{_esc(m.name)}</td><td class=num>{_esc(value)}</td><td>{_esc(m.unit)}</td>"
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
    cells = "".join(f"<td class=num>{_num(v)}</td>" for v in p.values())
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
    ordered = sorted(t.problems.values(), key=lambda p: natural_key(p.problem_id))
    rows = "".join(_problem_row(p) for p in ordered)
    return (
        '<table class="sortable" id="problems"><thead><tr><th>problem</th><th>samples</th>'
        "<th>passed</th><th>pass rate</th><th>infra_error</th><th>first failing verdict</th>"
        f"<th>failing candidate</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _timeline_table(tl: Timeline) -> str:
    total = sum(tl.requests)
    return _kv_table(
        [
            ("requests (attempts)", str(total)),
            ("429 answers", str(sum(tl.rate_limited))),
            ("retries", str(sum(tl.retries))),
            ("peak in flight", str(max(tl.in_flight))),
            ("duration", f"{tl.t[-1] + tl.step_s / 2:.1f} s"),
        ]
    )


def render_html(run: RunDir, t: Tally, figures: Figures | None = None) -> str:
    fig = figures or build_figures(t)
    s = run.summary
    lib = _asset("uPlot.iife.min.js")
    if "</script" in lib.lower():  # would end the inline element early
        raise RuntimeError("bundled chart library contains '</script'")
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {_csp_hash(lib)} {_csp_hash(SCRIPT)}; base-uri 'none'; form-action 'none'"
    )
    passk_rows = "".join(
        f"<tr><td class=num>{k}</td><td class=num>{v:.4f}</td></tr>"
        for k, v in zip(fig.passk_k, fig.passk, strict=True)
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
    tl = (
        '<div class="chart" id="chart-timeline"></div>' + _timeline_table(fig.timeline)
        if fig.timeline
        else '<p class="empty">no endpoint data</p>'
    )
    parts: list[str] = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(csp)}">',
        '<meta name=viewport content="width=device-width,initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>aioeval report: {_esc(s.benchmark)}</title>",
        f"<style>{_asset('uPlot.min.css')}{CSS}</style></head><body>",
        f"<h1>aioeval report: {_esc(s.benchmark)}</h1>",
        "<h2>Run</h2>",
        _facts(run, t),
        '<h2 id="measurements">Measurements</h2>',
        _measurements(run),
        "<h2>pass@k over k</h2>",
        '<div class="chart" id="chart-passk"></div>',
        "<details><summary>values</summary><table><thead><tr><th>k</th><th>pass@k</th></tr>"
        f"</thead><tbody>{passk_rows}</tbody></table></details>",
        '<h2 id="problems-section">Per-problem pass rate</h2>',
        '<div class="chart" id="chart-problems"></div>',
        "<p>Click a column header to sort. Candidates and reasons are model output, shown as text.</p>",
        _problems(t),
        '<h2 id="sandbox-latency">Sandbox latency</h2>',
        wall,
        '<h2 id="generation-latency">Generation latency</h2>',
        gen,
        '<h2 id="timeline">Rate-limit timeline</h2>',
        "<p>Requests, 429s and retries are counted at the sample's first request; "
        "in flight is sampled at each bucket's midpoint.</p>",
        tl,
        f'<script type="application/json" id="report-data">{script_json(fig)}</script>',
        f"<script>{lib}</script>",
        f"<script>{SCRIPT}</script>",
        "</body></html>\n",
    ]
    return "".join(parts)


def write_report(run: RunDir, path: str) -> int:
    """Render and write the file; returns its size in bytes."""
    data = render_html(run, read_tally(run)).encode("utf-8")
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the report: {exc.strerror}") from None
    return len(data)
