"""What the CLI prints after a run and for ``aioeval report``: each reads
the run folder once into `RunFacts` and hands the same facts to the
terminal and, when asked, to the HTML file."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from aioeval.analysis.partial import load_any_run
from aioeval.analysis.runs import RunDir, Tally, load_run, read_tally
from aioeval.reporting.facts import RunFacts, build_facts
from aioeval.reporting.html import write_report
from aioeval.reporting.terminal import print_run_end, print_run_report


def load_facts(path: Path | str, *, partial_ok: bool = False) -> tuple[RunDir, Tally, RunFacts]:
    """Read the run folder (summary, run.json, one pass over the journal)."""
    if partial_ok:
        run, tally = load_any_run(path)
    else:
        run = load_run(path)
        tally = read_tally(run)
    return run, tally, build_facts(run, tally)


def show_run_end(out_dir: str, console: Console) -> None:
    """After ``aioeval run|score``: measurements, counts, endpoint traffic,
    failures with the server's own words, notes."""
    _, _, facts = load_facts(out_dir)
    print_run_end(facts, console)


def show_report(run_dir: str, html: str | None, console: Console) -> None:
    """``aioeval report RUN_DIR [--html FILE]``; a run without summary.json
    (interrupted or still running) is shown from its journal, marked partial."""
    run, tally, facts = load_facts(run_dir, partial_ok=True)
    print_run_report(facts, console)
    if html:
        size = write_report(run, html, tally, facts)
        console.print(f"wrote {html} ({size:,} bytes)", highlight=False, markup=False)
