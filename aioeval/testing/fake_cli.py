"""The fake OpenAI server's command line: ``python -m aioeval.fake_openai``.

Its own module so that the server (`fake_openai`) holds no argument parsing;
the ``aioeval.fake_openai`` shim runs `main`.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import sys
from typing import get_args

from .fake_answers import Answerer, human_eval_answers
from .fake_limits import Dialect
from .fake_openai import FakeConfig, FakeOpenAI


async def _serve(args: argparse.Namespace) -> None:
    answer: Answerer | None = None
    if args.human_eval:
        from aioeval.suites.human_eval.suite import load_problems

        answer = human_eval_answers(load_problems())
    lo, _, hi = args.latency.partition(",")
    every = {kind: n for kind, n in (("503", args.fail_every), ("drop", args.drop_every)) if n}
    cfg = FakeConfig(
        latency_s=(float(lo or 0), float(hi or lo or 0)),
        rpm=args.rpm,
        burst=args.burst,
        tpm=args.tpm,
        tpm_counts=args.tpm_counts,
        max_parallel=args.max_parallel,
        hints=args.hints,
        honour_n=not args.ignore_n,
        fault_every=every,
    )
    fake = FakeOpenAI(cfg, answer)
    await fake.start(args.port)
    try:
        print(fake.url, flush=True)
        await asyncio.Event().wait()
    finally:
        await fake.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m aioeval.fake_openai --port 8000 --human-eval --rpm 600``"""
    p = argparse.ArgumentParser(prog="python -m aioeval.fake_openai")
    p.add_argument("--port", type=int, default=0, help="default: a free port")
    p.add_argument("--rpm", type=float, default=None, help="requests per minute")
    p.add_argument("--burst", type=float, default=None, help="request bucket capacity")
    p.add_argument("--tpm", type=float, default=None, help="tokens per minute")
    p.add_argument("--tpm-counts", choices=("usage", "max_tokens"), default="usage")
    p.add_argument("--max-parallel", type=int, default=None, help="parallel cap (429 beyond)")
    p.add_argument("--hints", choices=get_args(Dialect), default="openai")
    p.add_argument("--latency", default="0", help="seconds, or a range lo,hi")
    p.add_argument("--fail-every", type=int, default=0, help="every Nth request answers 503")
    p.add_argument("--drop-every", type=int, default=0, help="every Nth request is dropped")
    p.add_argument("--ignore-n", action="store_true")
    p.add_argument("--human-eval", action="store_true", help="answer with canonical solutions")
    args = p.parse_args(argv)
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        print(
            f"{p.prog}: port {args.port} on 127.0.0.1 is already in use; "
            "choose another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
