"""``aioeval`` command line: argv -> config -> one library call -> printing.

Exit status: 0 when a run completed (whatever the score); 2 with a one-line
reason for bad config, bad input files, bad flags or a refused endpoint; 3
when the run finished but some samples are infra_error (incomplete); 130 on
Ctrl-C and 143 on SIGTERM (journal closed, sandboxes gone, resume hint
printed).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from . import _cli_args
from ._termination import EXIT_STATUS, Terminated, until_sigterm
from .config import RunConfig, build_config, load_config
from .errors import AioevalError, ConfigError
from .events import Event, GenerationUpdate, ResultReady, RunStarted
from .reporting.terminal import print_summary
from .run.evaluate import RunSpec, evaluate
from .types import Summary


class _RateColumn(ProgressColumn):
    """Items per second of a task (generation or execution)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "-/s", style="progress.data.speed")


class _Progress:
    """Renders library events with rich, on stderr, only for a terminal."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self.progress: Progress | None = None
        self.task: Any = None
        self.passed = 0
        self.done = 0
        self.gen = ""
        self.out_dir = ""
        self.total = 0
        self.executions = 0
        self.gen_task: Any = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.out_dir = event.out_dir
            for w in event.warnings:
                self.console.print(f"[yellow]warning:[/] {w}")
            if self.enabled:
                self.progress = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    _RateColumn(),
                    TextColumn("{task.fields[info]}"),
                    TimeRemainingColumn(),
                    console=self.console,
                    transient=True,
                )
                self.progress.start()
                self.total = event.total
                self.task = self.progress.add_task(event.benchmark, total=event.total, info="")
                self.console.print(
                    f"journal: {event.out_dir}/results.jsonl "
                    f"(if interrupted: aioeval run --resume {event.out_dir})",
                    highlight=False,
                )
        elif isinstance(event, ResultReady):
            self.done += 1
            self.passed += event.result.status == "passed"
            r = event.result
            self.executions += r.wall_ms is not None and not r.cached
            if self.progress is not None:
                info = f"executed {self.executions} · passed {self.passed} ({self.passed / self.done:.1%})"
                self.progress.update(self.task, advance=1, info=info)
        elif isinstance(event, GenerationUpdate):
            self.gen = (
                f"requests {event.done} · in flight {event.in_flight}/{event.concurrency} · "
                f"429s {event.rate_limited} · retries {event.retries} · failed {event.failed}"
            )
            if self.progress is not None:
                if self.gen_task is None:
                    self.gen_task = self.progress.add_task("generate", total=self.total, info="")
                self.progress.update(
                    self.gen_task, completed=event.samples + event.failed, info=self.gen
                )

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _config(args: argparse.Namespace) -> RunConfig:
    overrides = _cli_args.overrides(args)
    if getattr(args, "resume", None) and not args.config:
        return _resume_config(args, overrides)
    return load_config(args.config, overrides)


def _resume_config(args: argparse.Namespace, overrides: list[str]) -> RunConfig:
    """With --resume, the journaled run's own config and names are the base."""
    from .run import rundir

    stored = rundir.read_record(Path(args.resume))
    args.benchmark = args.benchmark or stored.benchmark
    if args.platform is None:
        args.platform = stored.platform or "llm-mock"
    if getattr(args, "samples", None) is None and stored.samples:
        args.samples = stored.samples
    return build_config(dict(stored.config), str(Path(args.resume) / rundir.RUN), overrides)


def main(argv: list[str] | None = None) -> int:
    args = _cli_args.parse(argv)
    err = Console(stderr=True)
    out = Console()
    if args.command in ("report", "compare", "list"):
        commands = {"report": _report, "compare": _compare, "list": _list}
        try:
            return commands[args.command](args, out)
        except AioevalError as exc:
            err.print(f"aioeval: error: {exc}", highlight=False, markup=False, soft_wrap=True)
            return 2
    try:
        cfg = _config(args)
        resume = getattr(args, "resume", None)
        if not args.benchmark:
            raise ConfigError("--benchmark is required (or --resume DIR)")
        spec = RunSpec(
            benchmark=args.benchmark,
            # run without --platform: target.mode decides (see run.modes)
            platform=args.platform if args.command == "run" else "llm-mock",
            config=cfg,
            out_dir=resume or args.out,
            samples=getattr(args, "samples", None),
            resume=bool(resume),
        )
    except AioevalError as exc:
        err.print(f"aioeval: error: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 2
    progress = _Progress(err, enabled=err.is_terminal and not args.quiet)
    try:
        summary = _run_async(lambda: evaluate(spec, on_event=progress))
    except AioevalError as exc:
        progress.stop()
        err.print(f"aioeval: error: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        return _interrupted(progress, err, "interrupted", 130)
    except Terminated:
        return _interrupted(progress, err, "terminated (SIGTERM)", EXIT_STATUS)
    progress.stop()
    if not args.quiet:
        print_summary(summary, progress.out_dir, out)
    if summary.missing:
        err.print(
            "aioeval: warning: this run lacked isolation layers: "
            f"{', '.join(summary.missing)} (see summary.json)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if not summary.complete:
        causes = ", ".join(f"{k}={v}" for k, v in summary.incomplete.items())
        err.print(
            f"aioeval: run incomplete: {summary.counts.get('infra_error', 0)} samples are infra_error "
            f"({causes}); see {progress.out_dir}/results.jsonl",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        return 3
    return 0


def _interrupted(progress: _Progress, err: Console, what: str, status: int) -> int:
    """The run was cancelled and cleaned up: say where its results are."""
    progress.stop()
    where = progress.out_dir or "the output folder"
    err.print(
        f"aioeval: {what}; results so far are journaled in {where}; "
        f"continue with: aioeval run --resume {where}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return status


def _run_async(fn: Callable[[], Awaitable[Summary]]) -> Summary:
    async def runner() -> Summary:
        return await until_sigterm(fn)

    options = {"use_uvloop": True} if importlib.util.find_spec("uvloop") else {}
    return anyio.run(runner, backend_options=options)


def _list(args: argparse.Namespace, out: Console) -> int:
    from .catalog import collect, print_catalog

    catalog = anyio.run(collect)
    if args.json:
        sys.stdout.write(msgspec.json.encode(catalog).decode() + "\n")
    else:
        print_catalog(catalog, out)
    return 0


def _report(args: argparse.Namespace, out: Console) -> int:
    from .analysis.runs import load_run
    from .reporting.html import write_report
    from .reporting.terminal import print_run_report

    run = load_run(args.run_dir)
    print_run_report(run, out)
    if args.html:
        size = write_report(run, args.html)
        out.print(f"wrote {args.html} ({size:,} bytes)", highlight=False, markup=False)
    return 0


def _compare(args: argparse.Namespace, out: Console) -> int:
    from .analysis.compare import compare_runs, print_comparison, to_json
    from .analysis.stats import DEFAULT_RESAMPLES, DEFAULT_SEED

    comparison = compare_runs(
        args.run_a,
        args.run_b,
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        resamples=DEFAULT_RESAMPLES if args.resamples is None else args.resamples,
    )
    if args.json:
        sys.stdout.write(to_json(comparison).decode() + "\n")
    else:
        print_comparison(comparison, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
