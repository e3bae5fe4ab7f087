"""``aioeval`` command line: argv -> config -> one library call -> printing.

Exit status: 0 when a run completed (whatever the score); 2 with a one-line
reason for bad config, bad input files or a refused endpoint; 3 when the run
finished but some samples are infra_error (incomplete); 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from .config import RunConfig, load_config
from .errors import AioevalError, ConfigError
from .reporting.progress import run_progress
from .reporting.show import show_report, show_run_end
from .run.evaluate import RunSpec, evaluate
from .suites import BENCHMARKS
from .types import Summary


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", choices=BENCHMARKS, help="required unless --resume")
    p.add_argument("--config", help="YAML config (target/params)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. params.limit=10 (repeatable)",
    )
    p.add_argument("--out", help="output directory (default: a new folder under ./runs/)")
    p.add_argument("--dataset", help="local dataset file (sets params.dataset_path)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aioeval", description="Execution-scored code benchmarks, fast and safe."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="evaluate a model (or the bundled fixture)")
    _common(run)
    run.add_argument("--platform", default=None, choices=("llm-mock", "llm-endpoint"))
    run.add_argument(
        "--domain", default="llm", choices=("llm",), help="accepted for the seed's CLI"
    )
    run.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run journaled in DIR (its config is reused; --set may adjust it)",
    )
    score = sub.add_parser("score", help="score candidates produced elsewhere")
    _common(score)
    score.add_argument(
        "--samples", required=True, help="human-eval JSONL or CRUXEval generations JSON"
    )
    report = sub.add_parser("report", help="show a finished run (table; --html for a file)")
    report.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by run/score")
    report.add_argument("--html", metavar="FILE", help="also write one self-contained HTML file")
    compare = sub.add_parser("compare", help="paired comparison of two runs on the same dataset")
    compare.add_argument("run_a", metavar="RUN_A", help="baseline run folder")
    compare.add_argument("run_b", metavar="RUN_B", help="run folder compared against RUN_A")
    compare.add_argument("--json", action="store_true", help="print one JSON object")
    compare.add_argument("--seed", type=int, default=None, help="bootstrap seed")
    compare.add_argument("--resamples", type=int, default=None, help="bootstrap resamples")
    return parser


def _config(args: argparse.Namespace) -> RunConfig:
    overrides = list(args.overrides)
    if args.dataset:
        overrides.append(f"params.dataset_path={args.dataset}")
    if getattr(args, "resume", None) and not args.config:
        return _resume_config(args, overrides)
    return load_config(args.config, overrides)


def _resume_config(args: argparse.Namespace, overrides: list[str]) -> RunConfig:
    """With --resume, the journaled run's own config and names are the base."""
    from .config import _set_dotted, decode_config
    from .run import rundir

    stored = rundir.read_record(Path(args.resume))
    args.benchmark = args.benchmark or stored.benchmark
    if args.platform is None:
        args.platform = stored.platform or "llm-mock"
    if getattr(args, "samples", None) is None and stored.samples:
        args.samples = stored.samples
    raw = dict(stored.config)
    for assignment in overrides:
        _set_dotted(raw, assignment)
    return decode_config(raw, str(Path(args.resume) / rundir.RUN))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    err = Console(stderr=True)
    out = Console()
    if args.command in ("report", "compare"):
        try:
            return _report(args, out) if args.command == "report" else _compare(args, out)
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
            platform=getattr(args, "platform", None) or "llm-mock",
            config=cfg,
            out_dir=resume or args.out,
            samples=getattr(args, "samples", None),
            resume=bool(resume),
        )
    except AioevalError as exc:
        err.print(f"aioeval: error: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 2
    progress = run_progress(err, quiet=args.quiet)
    try:
        summary = _run_async(lambda: evaluate(spec, on_event=progress))
    except AioevalError as exc:
        progress.stop()
        err.print(f"aioeval: error: {exc}", highlight=False, markup=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        progress.stop()
        where = progress.out_dir or "the output folder"
        err.print(
            f"aioeval: interrupted; results so far are journaled in {where}; "
            f"continue with: aioeval run --resume {where}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        return 130
    progress.stop()
    if not args.quiet:
        show_run_end(progress.out_dir, out)
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


def _run_async(fn: Callable[[], Any]) -> Summary:
    async def runner() -> Summary:
        return await fn()  # type: ignore[no-any-return]

    try:
        import uvloop  # noqa: F401

        return anyio.run(runner, backend_options={"use_uvloop": True})
    except ImportError:
        return anyio.run(runner)


def _report(args: argparse.Namespace, out: Console) -> int:
    show_report(args.run_dir, args.html, out)
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
