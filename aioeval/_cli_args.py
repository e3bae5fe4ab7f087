"""The command line's grammar: subcommands, flags, help, and what the
shortcut flags mean as config overrides.

Each subcommand documents only the flags it has, with one example in its
epilog. A usage error is one line naming the flag, like every other error.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import NoReturn

from .errors import ConfigError
from .suites import BENCHMARKS

RUN_EXAMPLE = """\
example:
  aioeval run --benchmark human-eval --platform llm-endpoint --config endpoint.yaml \\
      --model my-model --limit 20 --set params.n_samples=10

--platform llm-mock replays a bundled pre-scored fixture (no model, no network);
add --set params.execute=true to run the reference answers in the sandbox.
"""

SCORE_EXAMPLE = """\
example:
  aioeval score --benchmark human-eval --samples samples.jsonl --set 'params.k=[1,10]'

Samples: human-eval JSONL ({"task_id", "completion"} per line) or CRUXEval
generations JSON ({"sample_0": ["...", ...], ...}).
"""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (the problem and where help is), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _version() -> str:
    try:
        return importlib.metadata.version("aioeval")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _config_flags(p: argparse.ArgumentParser) -> None:
    _config_source(p)
    p.add_argument(
        "--out", metavar="DIR", help="output directory (default: a new folder under ./runs/)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or table")


def _config_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML config (target/params)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. params.n_samples=10 (repeatable)",
    )
    p.add_argument("--dataset", metavar="FILE", help="a local dataset file (params.dataset_path)")


def _add_run(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser(
        "run",
        help="evaluate a model (or the bundled fixture)",
        description="Evaluate a model, or replay the bundled fixture, on a benchmark.",
        epilog=RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--benchmark", choices=BENCHMARKS, help="required unless --resume")
    run.add_argument(
        "--platform",
        choices=("llm-mock", "llm-endpoint"),
        help="llm-mock (default) or llm-endpoint (an OpenAI-compatible server)",
    )
    run.add_argument(
        "--model", metavar="NAME", help="model name sent to the endpoint (target.model)"
    )
    run.add_argument(
        "--limit", type=_positive, metavar="N", help="only the first N problems (params.limit)"
    )
    _config_flags(run)
    run.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the run journaled in DIR (its config is reused; --set may adjust it)",
    )
    # The seed's command line passes --domain llm; accepted, not advertised.
    run.add_argument("--domain", choices=("llm",), default="llm", help=argparse.SUPPRESS)


def _add_score(sub: argparse._SubParsersAction[_Parser]) -> None:
    score = sub.add_parser(
        "score",
        help="score candidates produced elsewhere",
        description="Execute and score candidates produced elsewhere.",
        epilog=SCORE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--benchmark", choices=BENCHMARKS, required=True)
    score.add_argument(
        "--samples",
        metavar="FILE",
        required=True,
        help="human-eval JSONL or CRUXEval generations JSON",
    )
    _config_flags(score)


SERVE_EXAMPLE = """\
example:
  aioeval serve --port 8321                  # prints a new bearer token
  curl -s localhost:8321/v1/score -H "Authorization: Bearer $TOKEN" \\
      -H 'Content-Type: application/json' \\
      -d '{"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": "..."}'

Safe by default: a bearer token (generated and printed unless --token-env
names one; --no-token serves without), Host and Origin checked (a web page
cannot reach it), JSON bodies only, and every byte and second a caller may
hold bounded (the limits below).
"""


def _add_serve(sub: argparse._SubParsersAction[_Parser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="score answers over HTTP from a warm, shared sandbox pool",
        description="Serve POST /v1/score, GET /healthz and GET /metrics until SIGTERM.",
        epilog=SERVE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8321, help="port (default 8321; 0: any free)")
    token = serve.add_mutually_exclusive_group()
    token.add_argument(
        "--token-env", metavar="NAME", help="require 'Authorization: Bearer' with $NAME's value"
    )
    token.add_argument(
        "--no-token",
        action="store_true",
        help="serve without a token: anyone who can reach the port can run code in the sandbox",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also accept requests whose Host is NAME (IP literals and localhost always are)",
    )
    _add_serve_limits(serve)
    _config_source(serve)


def _add_serve_limits(serve: argparse.ArgumentParser) -> None:
    limits = serve.add_argument_group("limits")
    for flag, kind, default, what in (
        ("--max-body-mb", _positive_number, 8.0, "largest request body"),
        (
            "--max-memory-mb",
            _positive_number,
            256.0,
            "request bytes held at once, all requests together",
        ),
        ("--max-connections", _positive, 512, "open connections"),
        (
            "--header-timeout-s",
            _positive_number,
            10.0,
            "time for a request's headers (and idle keep-alive)",
        ),
        ("--body-timeout-s", _positive_number, 30.0, "time for a request's body"),
        ("--max-problem-kb", _positive, 64, "largest caller problem, as JSON"),
        ("--max-field-kb", _positive, 16, "largest field of a caller problem, as JSON"),
        ("--problems-mb", _positive, 64, "caller problems kept for reuse, as JSON"),
    ):
        metavar = flag.rsplit("-", 1)[-1].upper()
        limits.add_argument(
            flag, type=kind, default=default, metavar=metavar, help=f"{what} (default {default})"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="aioeval", description="Execution-scored code benchmarks, fast and safe.")
    parser.add_argument("--version", action="version", version=f"aioeval {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(sub)
    _add_score(sub)
    _add_serve(sub)
    listing = sub.add_parser(
        "list", help="benchmarks (dataset, size, default k), platforms and executors"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    report = sub.add_parser("report", help="show a run, finished or not (table; --html for a file)")
    report.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by run/score")
    report.add_argument("--html", metavar="FILE", help="also write one self-contained HTML file")
    compare = sub.add_parser("compare", help="paired comparison of two runs on the same dataset")
    compare.add_argument("run_a", metavar="RUN_A", help="baseline run folder")
    compare.add_argument("run_b", metavar="RUN_B", help="run folder compared against RUN_A")
    compare.add_argument("--json", action="store_true", help="print one JSON object")
    compare.add_argument("--seed", type=int, default=None, help="bootstrap seed")
    compare.add_argument("--resamples", type=int, default=None, help="bootstrap resamples")
    return parser


def overrides(args: argparse.Namespace) -> list[str]:
    """``--set`` assignments, then the shortcut flags as assignments (values
    JSON-quoted, so a model called ``1.5`` or a path with ``: `` stays a
    string). Shortcuts come last: a flag beats the config file."""
    out = list(args.overrides)
    if getattr(args, "model", None) is not None:
        out.append(f"target.model={json.dumps(args.model)}")
    if getattr(args, "limit", None) is not None:
        out.append(f"params.limit={args.limit}")
    if args.dataset is not None:
        out.append(f"params.dataset_path={json.dumps(str(dataset_file(args.dataset)))}")
    return out


def dataset_file(flag: str) -> Path:
    """``--dataset``'s file, absolute (so a resume from any directory finds
    it); a path that is not a readable file is an error naming the flag."""
    path = Path(flag).expanduser()
    if not path.exists():
        raise ConfigError(f"--dataset {flag}: no such file")
    if not path.is_file():
        raise ConfigError(f"--dataset {flag}: not a file")
    return path.resolve()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(sys.argv[1:] if argv is None else argv)
