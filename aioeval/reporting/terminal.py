"""Terminal rendering of a summary (rich); the library itself never prints."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aioeval.analysis.runs import RunDir
from aioeval.types import Summary


def summary_table(summary: Summary) -> Table:
    d = summary.dataset
    title = (
        f"{summary.benchmark} · {d.name} {d.version} · {d.size} problems · digest {d.digest[:12]}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("measurement")
    table.add_column("value", justify="right")
    table.add_column("unit")
    table.add_column("class")
    table.add_column("official")
    for m in summary.measurements:
        value = f"{m.value:.4f}" if m.unit == "fraction" else f"{m.value:,.2f}"
        table.add_row(m.name, value, m.unit, m.klass, "yes" if m.official else "")
    return table


def print_summary(summary: Summary, out_dir: str, console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(summary))
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.items() if v)
    console.print(f"candidates {summary.candidates}: {counts}")
    if summary.executions_saved:
        console.print(f"executions saved by dedup: {summary.executions_saved}")
    if summary.isolation:
        console.print(f"isolation: {', '.join(summary.isolation)}")
    if summary.missing:
        console.print(f"[bold yellow]isolation layers missing:[/] {', '.join(summary.missing)}")
    if not summary.complete:
        causes = ", ".join(f"{k}: {v}" for k, v in summary.incomplete.items())
        console.print(f"[bold red]INCOMPLETE RUN[/] ({causes})")
    console.print(f"results: {out_dir}/results.jsonl  summary: {out_dir}/summary.json")


def run_table(run: RunDir) -> Table:
    """What was run, on which data, under which isolation, and whether it is
    complete: the facts a reader needs before trusting the measurements."""
    s, info = run.summary, run.info
    d = s.dataset
    table = Table(title=Text(f"run {run.path}"), title_justify="left", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    counts = ", ".join(f"{k} {v}" for k, v in s.counts.items() if v) or "none"
    if s.complete:
        complete = Text("complete", style="green")
    else:
        causes = ", ".join(f"{k}: {v}" for k, v in s.incomplete.items())
        complete = Text(f"INCOMPLETE (infra_error: {causes})", style="bold red")
    rows: list[tuple[str, Text]] = [
        ("benchmark", Text(s.benchmark)),
        ("platform / mode", Text(f"{s.platform or '?'} / {info.mode if info else '?'}")),
        ("model", Text(s.model or "-")),
        ("samples file", Text(info.samples if info and info.samples else "-")),
        ("dataset", Text(f"{d.name} {d.version}, {d.size} problems")),
        ("dataset digest", Text(d.digest)),
        ("scoring", Text(s.scoring or "-")),
        ("isolation layers", Text(", ".join(s.isolation) or "none recorded (no execution)")),
        (
            "layers missing",
            Text(", ".join(s.missing) or "none", style="yellow" if s.missing else ""),
        ),
        ("completeness", complete),
        ("candidates", Text(f"{s.candidates}: {counts}")),
        ("executions", Text(f"{s.executions} (saved by dedup: {s.executions_saved})")),
        ("started / finished", Text(f"{s.started_at} / {s.finished_at} ({s.wall_s:.1f} s)")),
    ]
    rows += [("note", Text(n)) for n in s.notes]
    for name, value in rows:
        table.add_row(name, value)
    return table


def print_run_report(run: RunDir, console: Console | None = None) -> None:
    """``aioeval report RUN_DIR``: the run's facts, then every measurement."""
    console = console or Console()
    console.print(run_table(run))
    console.print(summary_table(run.summary))
