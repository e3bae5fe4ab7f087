"""The engine embedded in a live aiohttp application: an evaluation runs
inside a web handler on the application's own event loop, and when the
handler is cancelled (the client went away) the evaluation is cancelled
with it, leaving no stray processes."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import msgspec
import pytest
from aiohttp import web

from aioeval import Event, RunSpec, evaluate
from aioeval.config import decode_config
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers

PROBLEMS = load_problems()


def children() -> set[int]:
    """Live (non-zombie) direct children of this process."""
    me = str(os.getpid())
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and fields[0] != "Z":
            out.add(int(entry))
    return out


class App:
    """A tiny service: POST /evaluate runs one evaluation and returns its summary."""

    def __init__(self, model_url: str, out_root: Path, **params: Any) -> None:
        self.model_url = model_url
        self.out_root = out_root
        self.params = params
        self.loops: set[int] = set()
        self.started = anyio.Event()
        self.ended: list[str] = []
        self.done = anyio.Event()
        self.runs = 0

    def on_event(self, event: Event) -> None:
        self.loops.add(id(asyncio.get_running_loop()))
        self.started.set()

    async def handle(self, request: web.Request) -> web.Response:
        self.loops.add(id(asyncio.get_running_loop()))
        self.runs += 1
        cfg = decode_config(
            {
                "target": {"endpoint": self.model_url, "model": "fake-model"},
                "params": {"allow_code_execution": True, **self.params},
            }
        )
        spec = RunSpec(
            benchmark="human-eval",
            platform="llm-endpoint",
            config=cfg,
            out_dir=str(self.out_root / f"run{self.runs}"),
        )
        try:
            summary = await evaluate(spec, on_event=self.on_event)
        except BaseException as exc:
            self.ended.append(type(exc).__name__)
            raise
        finally:
            self.done.set()
        self.ended.append("finished")
        return web.json_response(msgspec.to_builtins(summary))

    async def serve(self) -> AsyncIterator[str]:
        app = web.Application()
        app.router.add_post("/evaluate", self.handle)
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        try:
            yield f"http://127.0.0.1:{runner.addresses[0][1]}/evaluate"
        finally:
            await runner.cleanup()


@pytest.mark.anyio
async def test_evaluation_inside_a_handler_shares_the_loop(tmp_path: Path) -> None:
    answers = human_eval_answers(PROBLEMS[:3], wrong={"HumanEval/2"})
    async with FakeOpenAI(FakeConfig(), answers) as fake:
        app = App(fake.url, tmp_path, limit=3, n_samples=2)
        async for url in app.serve():
            async with aiohttp.ClientSession() as http, http.post(url) as resp:
                assert resp.status == 200
                summary = await resp.json()
    assert summary["counts"]["passed"] == 4 and summary["counts"]["failed"] == 2
    assert app.ended == ["finished"]
    assert app.loops == {id(asyncio.get_running_loop())}


@pytest.mark.anyio
async def test_client_going_away_cancels_the_evaluation_cleanly(tmp_path: Path) -> None:
    before = children()
    slow = FakeConfig(latency_s=(0.2, 0.3))
    async with FakeOpenAI(slow, human_eval_answers(PROBLEMS[:40])) as fake:
        app = App(fake.url, tmp_path, limit=40, n_samples=4)
        async for url in app.serve():
            async with aiohttp.ClientSession() as http:

                async def call(url: str) -> None:
                    async with http.post(url) as resp:
                        await resp.read()

                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, url)
                    with anyio.fail_after(30):
                        await app.started.wait()  # the sandbox pool is up
                        while fake.served < 2:
                            await anyio.sleep(0.01)
                    templates = children() - before
                    assert templates, "the sandbox templates should be running"
                    tg.cancel_scope.cancel()  # the client hangs up mid-run
            with anyio.fail_after(30):
                await app.done.wait()
            assert app.ended == ["CancelledError"]
            # the app itself is still serving after the cancelled evaluation
            async with aiohttp.ClientSession() as http:
                async with http.get(url.replace("/evaluate", "/nope")) as resp:
                    assert resp.status == 404
        served = fake.served
    assert served < 40 * 4
    assert not (templates & children()), "sandbox templates outlived the cancelled run"
    for pid in templates:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
