"""The warm scorer and ``aioeval serve``: real pools, a real HTTP server on
127.0.0.1, a real ``aioeval serve`` process for the drain on SIGTERM."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import anyio
import pytest
from hostcheck import candidate_uids, descendants, processes_of
from servecheck import ADD

import aioeval
from aioeval.errors import InputError
from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Outcome
from aioeval.service import Busy, Scorer, ServeLimits, UnknownProblem
from aioeval.service.http import Service
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.executors import GatedExecutor

pytestmark = pytest.mark.anyio

PROBLEMS = load_problems()
SLEEPER = "    import time\n    time.sleep(60)\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _config(*overrides: str) -> aioeval.RunConfig:
    return aioeval.load_config(overrides=["params.workers=1", *overrides])


async def test_verdicts_by_id_and_by_problem() -> None:
    canonical = PROBLEMS[0].fields["canonical_solution"]
    async with Scorer(_config()) as scorer:
        right = await scorer.score("human-eval", "HumanEval/0", canonical)
        wrong = await scorer.score("human-eval", "HumanEval/0", "    return True\n")
        fenced = await scorer.score("human-eval", ADD, "```python\n    return a + b\n```")
        own = await scorer.score("human-eval", ADD, "    return a - b\n")
        with pytest.raises(UnknownProblem, match="HumanEval/999"):
            await scorer.score("human-eval", "HumanEval/999", canonical)
        with pytest.raises(UnknownProblem, match="unknown benchmark"):
            await scorer.score("nope", "x", canonical)
        with pytest.raises(InputError, match="test"):
            await scorer.score("human-eval", {"prompt": "def f():\n", "entry_point": "f"}, "")
    assert (right.status, wrong.status) == ("passed", "failed")
    assert fenced.status == "passed" and own.status == "failed"
    assert fenced.problem_id.startswith("problem@")


async def test_concurrent_copies_run_once_and_the_cache_is_bounded() -> None:
    canonical = PROBLEMS[1].fields["canonical_solution"]
    async with Scorer(_config(), cache=2) as scorer:
        results: list[aioeval.CandidateResult] = []

        async def one() -> None:
            results.append(await scorer.score("human-eval", "HumanEval/1", canonical))

        async with anyio.create_task_group() as tg:
            for _ in range(6):
                tg.start_soon(one)
        assert [r.status for r in results] == ["passed"] * 6
        assert scorer.executed == 1 and sum(r.cached for r in results) == 5
        for i in range(5):  # three more distinct answers push the first out
            await scorer.score("human-eval", "HumanEval/1", canonical + f"\n# {i}\n")
        assert len(scorer._done) == 2
        again = await scorer.score("human-eval", "HumanEval/1", canonical)
    assert not again.cached and scorer.executed == 7


async def test_a_full_queue_refuses_or_waits() -> None:
    gated = GatedExecutor(
        lambda _task: Outcome(id=0, status="passed", wall_ms=1.0, cpu_ms=1.0), size=1
    )
    canonical = PROBLEMS[0].fields["canonical_solution"]
    cfg = _config("params.sandbox.isolation=minimal", "params.scoring=official")
    async with Scorer(cfg, queue=1, executor=gated) as scorer:
        async with anyio.create_task_group() as tg:
            for i in range(2):  # one executing, one queued: full
                tg.start_soon(scorer.score, "human-eval", "HumanEval/0", canonical + f"#{i}\n")
            with anyio.fail_after(10):
                while scorer.running + scorer.waiting < 2:
                    await anyio.sleep(0.005)
            with pytest.raises(Busy, match="busy"):
                await scorer.score("human-eval", "HumanEval/0", canonical + "#x\n", wait=False)
            gated.gate.set()
        result = await scorer.score("human-eval", "HumanEval/0", canonical, wait=False)
    assert result.status == "passed" and gated.executed == 3


async def test_a_cancelled_caller_cancels_only_its_own_job() -> None:
    """One slot: a caller whose answer sleeps is cancelled; its processes are
    killed at once, and the caller queued behind it gets its verdict."""
    canonical = PROBLEMS[0].fields["canonical_solution"]
    async with Scorer(_config()) as scorer:
        pool = scorer.pool
        assert isinstance(pool, LocalPool)
        scope = anyio.CancelScope()
        honest: list[aioeval.CandidateResult] = []

        async def sleeper() -> None:
            with scope:
                await scorer.score("human-eval", "HumanEval/0", SLEEPER)

        async def queued() -> None:
            honest.append(await scorer.score("human-eval", "HumanEval/0", canonical))

        with anyio.fail_after(40):  # far less than the sleeper's 60 s
            async with anyio.create_task_group() as tg:
                tg.start_soon(sleeper)
                while scorer.running < 1:
                    await anyio.sleep(0.005)
                uids = candidate_uids(pool)
                tg.start_soon(queued)
                while scorer.running < 2:  # admitted, waiting for the one slot
                    await anyio.sleep(0.005)
                scope.cancel()
        assert [r.status for r in honest] == ["passed"]
        assert processes_of(uids) == []


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Scorer]]:
    async with Scorer(_config()) as scorer:
        service = Service(scorer, token="s3cret", limits=ServeLimits(max_body_mb=0.05))
        try:
            yield await service.start("127.0.0.1", 0), scorer
        finally:
            await service.aclose()


async def _post(url: str, body: Any, token: str | None = "s3cret") -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as http, http.post(url, data=data, headers=headers) as r:
        return r.status, await r.json()


async def test_http_answers_rows_and_one_line_errors(server: tuple[str, Scorer]) -> None:
    url, scorer = server
    canonical = PROBLEMS[2].fields["canonical_solution"]
    item = {"benchmark": "human-eval", "problem_id": "HumanEval/2", "completion": canonical}
    status, row = await _post(url + "/v1/score", item)
    assert status == 200 and row["status"] == "passed" and row["problem_id"] == "HumanEval/2"
    assert {"reason", "cpu_ms", "wall_ms", "cached"} <= set(row)
    batch = {"items": [item, {"benchmark": "human-eval", "problem": ADD, "completion": "x"}]}
    status, body = await _post(url + "/v1/score", batch)
    assert status == 200 and [r["status"] for r in body["results"]] == ["passed", "failed"]
    cases = [
        (b"{bad", 400, "malformed"),
        ({"benchmark": "human-eval", "completion": "x"}, 400, "exactly one of"),
        ({**item, "problem_id": "HumanEval/999"}, 404, "no problem"),
        ({**item, "benchmark": "nope"}, 404, "unknown benchmark"),
        ({**item, "completion": "x" * 100_000}, 413, "size limit"),
        ({**item, "extra": 1}, 400, "extra"),
    ]
    for body, code, words in cases:
        status, answer = await _post(url + "/v1/score", body)
        assert status == code and words in answer["error"], (body, answer)
        assert "\n" not in answer["error"]
    status, answer = await _post(url + "/v1/score", item, token="wrong")
    assert status == 401 and "token" in answer["error"]
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "/healthz") as r:
            assert r.status == 200 and (await r.json())["slots"] == 1
        async with http.get(url + "/metrics", headers={"Authorization": "Bearer s3cret"}) as r:
            text = await r.text()
    assert 'aioeval_verdicts_total{status="passed"} 2' in text
    assert 'aioeval_http_responses_total{code="404"} 2' in text
    assert (
        "aioeval_score_seconds_count 2" in text and scorer.executed == 1
    )  # "x" is no code: failed, not run


def test_serve_drains_on_sigterm(tmp_path: Any) -> None:
    """``aioeval serve`` on a free port: a request in flight when SIGTERM
    arrives still gets its verdict, a new one is turned away, and the
    process exits 0 leaving no sandbox process behind."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aioeval",
            "serve",
            "--port",
            str(port),
            "--set",
            "params.workers=1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "serving on http://127.0.0.1:" in line, (line, proc.stderr and proc.stderr.read())
        token = proc.stdout.readline().split()[2]  # "aioeval: token <token> (...)"
        url = f"http://127.0.0.1:{port}"
        auth = {"Authorization": f"Bearer {token}"}
        spawned: list[int] = []
        slow = "    import time\n    time.sleep(1.5)\n    return False\n"

        async def go() -> tuple[int, Any, int]:
            item = {"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": slow}
            box: list[tuple[int, Any]] = []

            async def in_flight() -> None:
                box.append(await _post(url + "/v1/score", item, token=token))

            async with anyio.create_task_group() as tg:
                tg.start_soon(in_flight)
                async with aiohttp.ClientSession() as http:
                    with anyio.fail_after(30):
                        while True:
                            async with http.get(url + "/metrics", headers=auth) as r:
                                if "aioeval_in_flight 1" in await r.text():
                                    break
                            await anyio.sleep(0.01)
                    spawned.extend(descendants(proc.pid))  # its templates, verifiers
                    proc.send_signal(signal.SIGTERM)
                    with anyio.fail_after(30):
                        while True:
                            async with http.get(url + "/healthz") as r:
                                if r.status == 503:
                                    break
                            await anyio.sleep(0.01)
                    async with http.post(url + "/v1/score", json=item, headers=auth) as r:
                        late = r.status
            return (*box[0], late)

        status, row, late = anyio.run(go)
        assert status == 200 and row["status"] == "failed"
        assert late == 503
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert spawned  # a template and a verifier, at least
    assert not [pid for pid in spawned if _alive(pid)], spawned


def _alive(pid: int) -> bool:
    """A live process (a zombie has exited; its parent reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("victim", ["template", "verifier"])
async def test_a_process_killed_mid_call_still_gives_the_verdict(victim: str) -> None:
    """The slot's template or verifier is killed while a call runs: the slot
    is replaced, the job retried there once, and the caller gets the
    answer's own verdict, not infra_error."""
    slow_wrong = "    import time\n    time.sleep(0.5)\n    return True\n"
    async with Scorer(_config()) as scorer:
        pool = scorer.pool
        assert isinstance(pool, LocalPool)
        await scorer.score("human-eval", "HumanEval/0", PROBLEMS[0].fields["canonical_solution"])
        slot = pool._slots[0]
        pid = slot.ready.pid if victim == "template" else slot.verifier.proc.pid  # type: ignore[union-attr]
        box: list[aioeval.CandidateResult] = []

        async def call() -> None:
            box.append(await scorer.score("human-eval", "HumanEval/0", slow_wrong))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(20):
                while scorer.running < 1:
                    await anyio.sleep(0.005)
            await anyio.sleep(0.1)  # the child is in its sleep
            os.kill(pid, signal.SIGKILL)
        assert [r.status for r in box] == ["failed"], box
        again = await scorer.score("human-eval", "HumanEval/0", "    return True\n")
        assert again.status == "failed" and pool.infra_retries >= 1


async def test_callers_cancelled_at_random_points_leave_nothing() -> None:
    """Forty callers, half of them cancelled at random moments: no candidate
    process is left, no slot is lost, and every caller that was not
    cancelled gets the verdict its answer deserves."""
    import random

    canonical = PROBLEMS[0].fields["canonical_solution"]
    async with Scorer(_config("params.workers=2")) as scorer:
        pool = scorer.pool
        assert isinstance(pool, LocalPool)
        verdicts: dict[int, str] = {}

        async def caller(i: int, cancel_after: float | None) -> None:
            text = (canonical if i % 2 else "    return True\n") + f"\n# {i}\n"
            with anyio.CancelScope() as scope:
                if cancel_after is not None:
                    scope.deadline = anyio.current_time() + cancel_after
                verdicts[i] = (await scorer.score("human-eval", "HumanEval/0", text)).status

        rng = random.Random()
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(caller, i, rng.uniform(0, 0.3) if i % 4 < 2 else None)
        uids = candidate_uids(pool)
        assert processes_of(uids) == []
        kept = [i for i in range(40) if i % 4 >= 2]
        assert all(verdicts[i] == ("passed" if i % 2 else "failed") for i in kept), verdicts
        assert len(pool._idle) == pool.size  # every slot back
        after = await scorer.score("human-eval", "HumanEval/0", canonical)
    assert after.status == "passed"


async def test_an_optional_journal_keeps_every_verdict(tmp_path: Any) -> None:
    path = tmp_path / "verdicts.jsonl"
    canonical = PROBLEMS[0].fields["canonical_solution"]
    async with Scorer(_config(), journal=path) as scorer:
        await scorer.score("human-eval", "HumanEval/0", canonical)
        await scorer.score("human-eval", "HumanEval/0", "    return True\n")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["passed", "failed"]


async def test_leaving_score_many_early_cancels_only_its_own_items() -> None:
    """``break`` out of ``score_many`` (and an exception in the loop body):
    the caller's task goes on, the items not yet yielded are cancelled, and
    another caller's verdict arrives as usual."""
    canonical = PROBLEMS[0].fields["canonical_solution"]
    cfg = _config("params.sandbox.wall_timeout_s=120")
    async with Scorer(cfg) as scorer:
        other: list[aioeval.CandidateResult] = []

        async def other_caller() -> None:
            other.append(await scorer.score("human-eval", "HumanEval/1", "    return []\n"))

        items = [("human-eval", "HumanEval/0", canonical)]
        items += [("human-eval", "HumanEval/0", SLEEPER + f"# {i}\n") for i in range(3)]
        async with anyio.create_task_group() as tg:
            tg.start_soon(other_caller)
            seen = [r.status async for r in _first(scorer.score_many(items))]
            with pytest.raises(ZeroDivisionError):
                async for _ in scorer.score_many(items[:2]):
                    raise ZeroDivisionError
            await anyio.sleep(0)  # the caller's own task is not cancelled
            with anyio.fail_after(60):  # far less than the sleepers' 3 x 60 s
                while scorer.running or scorer.waiting or not other:
                    await anyio.sleep(0.01)
        after = await scorer.score("human-eval", "HumanEval/0", canonical)
    assert seen == ["passed"] and after.status == "passed"
    assert [r.status for r in other] == ["failed"]


async def _first(results: AsyncIterator[aioeval.CandidateResult]) -> AsyncIterator[Any]:
    async for result in results:
        yield result
        break


async def test_score_many_in_aclosing_cancels_at_once() -> None:
    canonical = PROBLEMS[0].fields["canonical_solution"]
    async with Scorer(_config("params.sandbox.wall_timeout_s=120")) as scorer:
        items = [("human-eval", "HumanEval/0", canonical), ("human-eval", "HumanEval/0", SLEEPER)]
        async with contextlib.aclosing(scorer.score_many(items)) as results:
            async for result in results:
                assert result.status == "passed"
                break
        assert scorer.running == 0 and scorer.waiting == 0


@pytest.mark.anyio
async def test_the_scorer_takes_the_program_from_a_chat_answer_and_says_how() -> None:
    """As in runs: the program is taken from the answer (`extraction` says
    how), and an answer with no code is failed without running anything."""
    problem = {
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    }
    chat = "Sure:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n```python\nprint(add(1, 2))\n```\n"
    async with Scorer(aioeval.load_config(overrides=["params.workers=1"])) as scorer:
        taken = await scorer.score("human-eval", problem, chat)
        prose = await scorer.score("human-eval", problem, "I cannot help with that.")
        executed = scorer.executed
    assert taken.status == "passed" and taken.extraction == "block", taken
    assert prose.status == "failed" and prose.reason == "no code in the answer", prose
    assert prose.extraction == "none" and executed == 1
