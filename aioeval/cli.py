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

import anyio
import msgspec
from rich.console import Console

from . import _cli_args
from ._termination import EXIT_STATUS, Terminated, until_sigterm
from .config import RunConfig, build_config, load_config
from .errors import AioevalError, ConfigError
from .reporting.progress import RunProgress, run_progress
from .reporting.show import show_report, show_run_end
from .run.evaluate import RunSpec, evaluate
from .types import Summary


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
    if args.command in ("report", "compare", "list", "serve"):
        commands = {"report": _report, "compare": _compare, "list": _list, "serve": _serve}
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
    progress = run_progress(err, quiet=args.quiet)
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


def _interrupted(progress: RunProgress, err: Console, what: str, status: int) -> int:
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


def _serve(args: argparse.Namespace, out: Console) -> int:
    from .service import ServeLimits
    from .service.http import serve

    token = _serve_token(args)
    cfg = _config(args)
    limits = ServeLimits(
        max_body_mb=args.max_body_mb,
        max_memory_mb=args.max_memory_mb,
        max_connections=args.max_connections,
        header_timeout_s=args.header_timeout_s,
        body_timeout_s=args.body_timeout_s,
        max_problem_kb=args.max_problem_kb,
        max_field_kb=args.max_field_kb,
        problems_mb=args.problems_mb,
    )
    err = Console(stderr=True)

    def ready(url: str) -> None:
        out.print(f"aioeval: serving on {url} (SIGTERM drains)", highlight=False)
        if token is None:
            err.print(
                f"aioeval: warning: serving without a token (--no-token): anyone who can "
                f"reach {url} can run code in its sandbox",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        elif not args.token_env:
            out.print(
                f"aioeval: token {token} (send 'Authorization: Bearer <token>')", highlight=False
            )

    async def main() -> None:
        await serve(
            cfg,
            host=args.host,
            port=args.port,
            token=token,
            limits=limits,
            allow_hosts=args.allow_host,
            on_ready=ready,
        )

    options = {"use_uvloop": True} if importlib.util.find_spec("uvloop") else {}
    anyio.run(main, backend_options=options)
    return 0


def _serve_token(args: argparse.Namespace) -> str | None:
    """The bearer token: from ``--token-env``, none with ``--no-token``,
    else a new random one (printed when serving starts)."""
    import os
    import secrets

    if args.no_token:
        return None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            raise ConfigError(f"--token-env {args.token_env}: that variable is not set")
        return token
    return secrets.token_urlsafe(32)


def _list(args: argparse.Namespace, out: Console) -> int:
    from .catalog import collect, print_catalog

    catalog = anyio.run(collect)
    if args.json:
        sys.stdout.write(msgspec.json.encode(catalog).decode() + "\n")
    else:
        print_catalog(catalog, out)
    return 0


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
