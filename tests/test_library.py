"""The engine as a library inside an already running event loop."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import msgspec
import pytest

import aioeval
from aioeval.config import load_config
from aioeval.events import Event, ResultReady, RunFinished, RunStarted

pytestmark = pytest.mark.anyio


def test_public_api_is_pinned() -> None:
    assert sorted(aioeval.__all__) == sorted(
        [
            "AioevalError",
            "Busy",
            "CandidateResult",
            "ConfigError",
            "DatasetError",
            "DatasetInfo",
            "EndpointError",
            "Error",
            "Event",
            "Executor",
            "Failed",
            "GenerationUpdate",
            "IncompleteRunError",
            "InfraError",
            "InputError",
            "LocalPool",
            "Measurement",
            "Passed",
            "ResultReady",
            "RunConfig",
            "RunFinished",
            "RunHandle",
            "RunSpec",
            "RunStarted",
            "SandboxError",
            "SandboxPool",
            "Scorer",
            "Summary",
            "Timeout",
            "UnknownProblem",
            "Verdict",
            "evaluate",
            "load_config",
            "open_run",
            "pass_at_k",
        ]
    )
    for name in aioeval.__all__:
        assert hasattr(aioeval, name)


def test_only_aioeval_is_a_new_top_level_name(tmp_path: Path) -> None:
    code = (
        "import importlib.util as u\n"
        "assert u.find_spec('aioeval') is not None\n"
        "assert u.find_spec('aioeval.sandbox') and u.find_spec('aioeval.suites')\n"
        "for name in ('sandbox', 'suites', 'fixtures'):\n"
        "    assert u.find_spec(name) is None, name\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


async def test_evaluate_in_running_loop_with_events(tmp_path: Path) -> None:
    events: list[Event] = []
    spec = aioeval.RunSpec(
        benchmark="human-eval",
        config=load_config(overrides=["params.execute=true", "params.limit=6"]),
        out_dir=str(tmp_path / "run"),
    )
    summary = await aioeval.evaluate(spec, on_event=events.append)
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.value == 1.0
    assert isinstance(events[0], RunStarted) and events[0].total == 6
    assert sum(isinstance(e, ResultReady) for e in events) == 6
    assert isinstance(events[-1], RunFinished)


async def test_open_run_streams_results(tmp_path: Path) -> None:
    spec = aioeval.RunSpec(
        benchmark="human-eval",
        config=load_config(overrides=["params.execute=true", "params.limit=4"]),
        out_dir=str(tmp_path / "run"),
    )
    seen = []
    async with aioeval.open_run(spec) as run:
        async for result in run:
            seen.append(result.problem_id)
    assert sorted(seen) == [f"HumanEval/{i}" for i in range(4)]
    assert run.summary is not None and run.summary.candidates == 4


async def test_cancelling_the_caller_kills_the_sandboxes(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        "".join(
            f'{{"task_id": "HumanEval/{i}", "completion": "    import time\\n    time.sleep(30)\\n"}}\n'
            for i in range(4)
        )
    )
    cfg = load_config(overrides=["params.timeout_s=20"])
    spec = aioeval.RunSpec(
        benchmark="human-eval", config=cfg, out_dir=str(tmp_path / "r"), samples=str(samples)
    )
    started: list[RunStarted] = []

    def on_event(event: Event) -> None:
        if isinstance(event, RunStarted):
            started.append(event)

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: aioeval.evaluate(spec, on_event=on_event))
        # Cancel once the sandboxes are up and, where candidates get a uid
        # of their own, once one of them runs: never before.
        with anyio.fail_after(60):
            while not (started and _candidate_running(started[0])):
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    # No process of ours (templates or candidates) may survive the cancel.
    with anyio.move_on_after(30):
        while _descendants(os.getpid()):
            await anyio.sleep(0.01)
    mine = _descendants(os.getpid())
    assert mine == [], mine


def _candidate_running(started: RunStarted) -> bool:
    if "unprivileged-uid" not in started.layers:
        return True
    return any(_uid(pid) not in (None, os.getuid()) for pid in _descendants(os.getpid()))


def _uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return None


def _descendants(root: int) -> list[int]:
    out: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as fh:
                    kids = [int(x) for x in fh.read().split()]
            except OSError:
                continue
            out += kids
            stack += kids
    return out


def test_no_error_is_dropped_from_a_task_group() -> None:
    """An interrupt leaves as itself, a lone error as itself, several
    together as one EngineErrors (an AioevalError) holding every one."""
    from aioeval.errors import EndpointError, EngineErrors, SandboxError
    from aioeval.run.group_errors import engine_error

    one = SandboxError("pool down")
    assert engine_error(BaseExceptionGroup("g", [one])) is one
    interrupt = KeyboardInterrupt()
    mixed = BaseExceptionGroup("g", [one, BaseExceptionGroup("h", [interrupt])])
    assert engine_error(mixed) is interrupt
    two = EndpointError("refused")
    both = engine_error(BaseExceptionGroup("g", [one, ExceptionGroup("h", [two])]))
    assert isinstance(both, EngineErrors) and isinstance(both, aioeval.AioevalError)
    assert list(both.exceptions) == [one, two]
    assert "pool down" in str(both) and "refused" in str(both)


def test_open_run_can_yield_every_event() -> None:
    """One loop sees the run start, each result, and the summary last."""

    async def go() -> list[object]:
        cfg = load_config(overrides=["params.execute=true", "params.limit=3"])
        seen: list[object] = []
        with tempfile.TemporaryDirectory() as out:
            spec = aioeval.RunSpec(
                benchmark="human-eval", platform="llm-mock", config=cfg, out_dir=out + "/r"
            )
            async with aioeval.open_run(spec, events=True) as run:
                async for event in run:
                    seen.append(event)
            assert run.summary is not None
        return seen

    seen = anyio.run(go)
    assert isinstance(seen[0], RunStarted) and isinstance(seen[-1], RunFinished)
    results = [e.result for e in seen if isinstance(e, ResultReady)]
    assert sorted(r.problem_id for r in results) == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert seen[-1].summary.counts["passed"] == 3  # type: ignore[attr-defined]


def test_leaving_open_run_early_still_sets_the_summary(tmp_path: Path) -> None:
    """A caller that stops reading and leaves the block normally gets the
    whole run and its summary; one that leaves by an exception cancels it."""

    async def go() -> tuple[aioeval.Summary | None, aioeval.Summary | None]:
        cfg = load_config(overrides=["params.execute=true", "params.limit=4"])
        spec = aioeval.RunSpec(
            benchmark="human-eval", platform="llm-mock", config=cfg, out_dir=str(tmp_path / "a")
        )
        async with aioeval.open_run(spec) as run:
            async for _ in run:
                break
        finished = run.summary
        spec = msgspec.structs.replace(spec, out_dir=str(tmp_path / "b"))
        with pytest.raises(RuntimeError, match="stop"):
            async with aioeval.open_run(spec) as other:
                raise RuntimeError("stop")
        return finished, other.summary

    finished, cancelled = anyio.run(go)
    assert finished is not None and finished.counts["passed"] == 4
    assert len((tmp_path / "a" / "results.jsonl").read_text().splitlines()) == 4
    assert cancelled is None
