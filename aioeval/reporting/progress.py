"""Progress of a running evaluation, rendered from the library's events.

Two renderings of the same counts (`Seen`):

- on a terminal, a live display (rich) that fits 80 columns: one bar per
  stage with counts, rate and the time *remaining*, and under each bar a
  line of details with the time *elapsed*;
- without one (output to a file, a pipe, a CI log), plain lines: one every
  ``AIOEVAL_PROGRESS_EVERY`` seconds (default 10) and one at the end, each
  with done/total, rate, pass rate and, for endpoint runs, 429s.

Both print the journal path and the resume command when the run starts,
so an interrupted run can always be continued. Output goes to stderr; the
results table goes to stdout.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Column
from rich.text import Text

from aioeval.events import Event, GenerationUpdate, ResultReady, RunFinished, RunStarted
from aioeval.reporting.text import count, duration

DEFAULT_EVERY_S = 10.0
EVERY_ENV = "AIOEVAL_PROGRESS_EVERY"
"""Seconds between plain progress lines when output is not a terminal."""


class Seen:
    """What the run has reported so far; pure bookkeeping of events."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.benchmark = ""
        self.out_dir = ""
        self.total = 0
        self.done = 0
        self.passed = 0
        self.executed = 0
        self.started = clock()
        self.gen: GenerationUpdate | None = None
        self.finished = False

    def update(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.benchmark, self.out_dir, self.total = event.benchmark, event.out_dir, event.total
            self.started = self.clock()
        elif isinstance(event, ResultReady):
            r = event.result
            self.done += 1
            self.passed += r.status == "passed"
            self.executed += r.wall_ms is not None and not r.cached
        elif isinstance(event, GenerationUpdate):
            self.gen = event
        elif isinstance(event, RunFinished):
            self.finished = True

    def elapsed(self) -> float:
        return max(0.0, self.clock() - self.started)

    def rate(self) -> float:
        t = self.elapsed()
        return self.done / t if t > 0 else 0.0

    def pass_rate(self) -> str:
        return f"{self.passed / self.done:.1%}" if self.done else "-"

    def line(self) -> str:
        """One plain progress line."""
        pct = f" ({self.done / self.total:.0%})" if self.total else ""
        parts = [
            f"{self.benchmark}: {count(self.done)}/{count(self.total)} judged{pct}",
            f"{self.rate():,.1f}/s",
            f"passed {self.pass_rate()}",
        ]
        g = self.gen
        if g is not None:
            parts += [
                f"429s {count(g.rate_limited)}",
                f"retries {count(g.retries)}",
                f"failed {count(g.failed)}",
                f"in flight {g.in_flight}/{g.concurrency}",
            ]
        parts.append(f"elapsed {duration(self.elapsed())}")
        return " · ".join(parts)


def start_lines(seen: Seen) -> list[str]:
    d = seen.out_dir
    return [
        f"journal: {d}/results.jsonl",
        f"if interrupted, continue with: aioeval run --resume {d}",
    ]


class RunProgress:
    """The CLI's event hook. ``live``: a rich display (a terminal);
    otherwise plain lines every ``every_s`` seconds and at the end."""

    def __init__(
        self, console: Console, *, live: bool, quiet: bool = False, every_s: float = DEFAULT_EVERY_S
    ) -> None:
        self.console = console
        self.seen = Seen()
        self.quiet = quiet
        self._view: _Live | _Lines | None = None
        self._make: Callable[[], _Live | _Lines] = (
            (lambda: _Live(console, self.seen))
            if live
            else (lambda: _Lines(console, self.seen, every_s))
        )

    @property
    def out_dir(self) -> str:
        return self.seen.out_dir

    def __call__(self, event: Event) -> None:
        self.seen.update(event)
        if isinstance(event, RunStarted):
            for w in event.warnings:
                self.console.print(f"[yellow]warning:[/] {w}")
            if not self.quiet:
                for line in start_lines(self.seen):
                    self._print(line)
                self._view = self._make()
        if self._view is not None:
            self._view.refresh()

    def _print(self, line: str) -> None:
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def stop(self) -> None:
        """End the display; plain output ends with a last line."""
        if self._view is not None:
            self._view.stop()
            self._view = None


class _Count(ProgressColumn):
    def render(self, task: Task) -> Text:
        total = count(int(task.total)) if task.total is not None else "?"
        return Text(f"{count(int(task.completed))}/{total}", style="progress.download")


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "-/s", style="progress.data.speed")


class _Remaining(ProgressColumn):
    """Says which time it shows: remaining while running, taken once done."""

    max_refresh = 0.5

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text(f"took {duration(task.finished_time or 0.0)}", style="progress.elapsed")
        left = task.time_remaining
        shown = duration(left) if left is not None else "-:--:--"
        return Text(f"remaining {shown}", style="progress.remaining")


class _TwoLines(Progress):
    """Each task as a bar line, then a line of details (``task.fields['info']``)."""

    def get_renderables(self) -> Iterable[RenderableType]:
        for task in self.tasks:
            yield self.make_tasks_table([task])
            info = task.fields.get("info", "")
            if info:
                yield Text(f"  {info}", style="dim", overflow="fold")


class _Live:
    def __init__(self, console: Console, seen: Seen) -> None:
        self.seen = seen
        bar = max(10, min(40, console.width - 52))
        self.progress = _TwoLines(
            TextColumn("[bold]{task.description}", table_column=Column(width=9, no_wrap=True)),
            BarColumn(bar_width=bar),
            _Count(),
            _Rate(),
            _Remaining(),
            console=console,
            transient=True,
        )
        self.progress.start()
        self.gen_task: Any = None
        self.task = self.progress.add_task("judged", total=seen.total, info="")

    def refresh(self) -> None:
        s, g = self.seen, self.seen.gen
        if g is not None:
            if self.gen_task is None:
                self.gen_task = self.progress.add_task("generated", total=s.total, info="")
            pace = f" · {g.rate_rpm:,.0f} rpm" if g.rate_rpm else ""
            info = (
                f"requests {count(g.done)} · in flight {g.in_flight}/{g.concurrency} · "
                f"429s {count(g.rate_limited)} · retries {count(g.retries)} · "
                f"failed {count(g.failed)}{pace}"
            )
            self.progress.update(self.gen_task, completed=g.samples + g.failed, info=info)
        info = (
            f"passed {count(s.passed)} ({s.pass_rate()}) · executed {count(s.executed)} · "
            f"elapsed {duration(s.elapsed())}"
        )
        self.progress.update(self.task, completed=s.done, info=info)

    def stop(self) -> None:
        self.progress.stop()


class _Lines:
    """Plain lines from a timer thread, so a stalled run still reports."""

    def __init__(self, console: Console, seen: Seen, every_s: float) -> None:
        self.console, self.seen, self.every_s = console, seen, every_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="aioeval-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stopped.wait(self.every_s):
            self._print(self.seen.line())

    def _print(self, line: str) -> None:
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def refresh(self) -> None:
        pass

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        end = "done" if self.seen.finished else "stopped"
        self._print(f"{self.seen.line()} · {end}")


def progress_every(environ: dict[str, str] | None = None) -> float:
    """Seconds between plain lines: ``$AIOEVAL_PROGRESS_EVERY`` if it is a
    positive number, else the default."""
    raw = (environ if environ is not None else os.environ).get(EVERY_ENV, "")
    try:
        every = float(raw)
    except ValueError:
        return DEFAULT_EVERY_S
    return every if every > 0 else DEFAULT_EVERY_S


def run_progress(console: Console, *, quiet: bool) -> RunProgress:
    """The hook the CLI passes to `evaluate`: live on a terminal, plain lines
    otherwise, only warnings with ``quiet``."""
    return RunProgress(console, live=console.is_terminal, quiet=quiet, every_s=progress_every())
