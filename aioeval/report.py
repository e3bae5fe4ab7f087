"""Terminal rendering of a summary (rich); the library itself never prints."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .types import Summary


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
    if not summary.complete:
        causes = ", ".join(f"{k}: {v}" for k, v in summary.incomplete.items())
        console.print(f"[bold red]INCOMPLETE RUN[/] ({causes})")
    console.print(f"results: {out_dir}/results.jsonl  summary: {out_dir}/summary.json")
