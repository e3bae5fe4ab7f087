"""Terminal rendering of a run (rich); the library itself never prints.

Readable at 80 columns: measurement names are never cut (their column
does not wrap; when the table would not fit, the class column is
abbreviated, deliberately, with a legend), and long values wrap at spaces.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from aioeval.reporting.facts import Row, RunFacts, fact_rows, outcome_rows, state
from aioeval.reporting.text import value
from aioeval.types import Measurement, Summary

STYLES = {"": "", "good": "green", "warn": "yellow", "bad": "bold red"}
_SHORT_CLASS = {"deterministic": "det", "environmental": "env"}
_LEGEND = "class: det = deterministic, env = environmental; * = official"


def _title(summary: Summary) -> str:
    d = summary.dataset
    return f"{summary.benchmark} · {d.name} {d.version} · {d.size:,} problems"


def _shown(m: Measurement) -> str:
    """Value and unit together; a fraction needs no unit."""
    return value(m) if m.unit == "fraction" else f"{value(m)} {m.unit}"


def _fits(summary: Summary, width: int) -> bool:
    name = max((len(m.name) for m in summary.measurements), default=11)
    val = max((len(_shown(m)) for m in summary.measurements), default=5)
    # measurement, value with unit, class ("environmental"), official ("official"),
    # and between columns a rule with one space either side.
    return name + val + 13 + 8 + 3 * 3 <= width


def measurement_table(summary: Summary, width: int = 80) -> Table:
    """Every measurement, value and unit together (``299,245 tokens``).
    When the full class and official columns would not fit, they become one
    short column (``det*``) with a legend, so no name is ever cut."""
    short = not _fits(summary, width)
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        caption=_LEGEND if short else None,
        caption_justify="left",
    )
    longest = max((len(m.name) for m in summary.measurements), default=11)
    table.add_column("measurement", min_width=longest, overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("class", no_wrap=True)
    if not short:
        table.add_column("official", no_wrap=True)
    for m in summary.measurements:
        if short:
            mark = "*" if m.official else ""
            table.add_row(m.name, _shown(m), _SHORT_CLASS.get(m.klass, m.klass) + mark)
        else:
            table.add_row(m.name, _shown(m), m.klass, "yes" if m.official else "")
    if not summary.measurements:
        table.add_row("(none)", *[""] * (2 if short else 3))
    return table


def _text(row: Row) -> Text:
    return Text(row.text, style=STYLES[row.tone])


def facts_table(facts: RunFacts) -> Table:
    """What was run, on which data, under which isolation, whether it is
    whole, and what happened: the facts a reader needs before trusting the
    measurements."""
    title = f"run {facts.path}" + (" (PARTIAL)" if facts.partial else "")
    table = Table(title=Text(title), title_justify="left", show_header=False, box=box.SIMPLE)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for row in fact_rows(facts):
        table.add_row(row.label, _text(row))
    return table


def print_run_end(facts: RunFacts, console: Console) -> None:
    """After ``aioeval run|score``: the measurements, then what happened."""
    console.print(Text(_title(facts.summary), style="bold"))
    console.print(measurement_table(facts.summary, console.width))
    for row in outcome_rows(facts):
        line = Text(f"{row.label}: ", style="bold")
        line.append_text(_text(row))
        console.print(line)
    if facts.summary.isolation:
        console.print(Text(f"isolation: {', '.join(facts.summary.isolation)}"))
    if not facts.summary.complete:
        console.print(_text(state(facts)))
    out = facts.path
    # Paths are printed whole (the terminal wraps them), so they can be copied.
    console.print(
        f"results: {out}/results.jsonl  summary: {out}/summary.json",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def print_run_report(facts: RunFacts, console: Console) -> None:
    """``aioeval report RUN_DIR``: the run's facts, then every measurement."""
    console.print(facts_table(facts))
    console.print(Text(_title(facts.summary), style="bold"))
    console.print(measurement_table(facts.summary, console.width))
