"""What a person sees from the CLI, end to end through real subprocesses:
an 80-column terminal (a pty), output to pipes (plain progress lines), an
endpoint whose server fails with its own message, `aioeval report` on a run
without summary.json, and the notes a run leaves."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import anyio
import pytest
from aiohttp import web

from aioeval.suites.human_eval.suite import load_problems

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-_=>]")
PROBLEMS = load_problems()
NAMES = ("human-eval.pass_at_1", "human-eval.avg_latency_ms")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**env, "COLUMNS": "80", **extra}


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aioeval", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(**env),
    )


def _execute_run(out: Path, limit: int = 10) -> list[str]:
    return [
        "run",
        "--benchmark",
        "human-eval",
        "--platform",
        "llm-mock",
        "--set",
        "params.execute=true",
        "--set",
        f"params.limit={limit}",
        "--out",
        str(out),
    ]


def test_without_a_tty_progress_is_plain_lines(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = _cli(*_execute_run(out), AIOEVAL_PROGRESS_EVERY="0.05")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.splitlines()
    assert err[0] == f"journal: {out}/results.jsonl"
    assert err[1] == f"if interrupted, continue with: aioeval run --resume {out}"
    assert re.fullmatch(
        r"human-eval: 10/10 judged \(100%\) · [\d,.]+/s · passed 100\.0% · "
        r"elapsed \d:\d\d:\d\d · done",
        err[-1],
    ), err[-1]
    for line in err[2:-1]:  # the periodic ones, however many the machine's speed allowed
        assert re.match(r"human-eval: \d+/10 judged", line), line
    assert "\x1b" not in proc.stderr + proc.stdout
    wide = [line for line in proc.stdout.splitlines() if len(line) > 80 and str(out) not in line]
    assert not wide, wide  # only lines naming the run folder are kept whole for copying
    for name in NAMES:
        assert name in proc.stdout
    assert "cost_usd" not in proc.stdout and "…" not in proc.stdout
    assert "candidates: 10 (passed 10)" in proc.stdout


def _pty_run(args: list[str]) -> tuple[int, str]:
    """Run the CLI on a pseudo-terminal 80 columns wide; its whole output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "aioeval", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=_env(TERM="xterm-256color"),
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError as exc:  # EIO: every copy of the slave is closed
            if exc.errno != errno.EIO:
                raise
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def test_on_an_80_column_terminal_nothing_is_cut(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, raw = _pty_run(_execute_run(out))
    assert code == 0, raw
    visible = [ANSI.sub("", part) for part in re.split(r"[\r\n]", raw)]
    # Lines naming the run folder are printed whole for copying (the terminal wraps them).
    wide = [v for v in visible if len(v) > 80 and str(out) not in v]
    assert not wide, wide
    text = "\n".join(visible)
    assert f"journal: {out}/results.jsonl" in text
    assert f"aioeval run --resume {out}" in text
    assert re.search(r"judged .*10/10", text) or "remaining" in text  # the live display drew
    for name in NAMES:
        assert name in text
    assert "…" not in text


# ---------------------------------------------------------------- endpoint

FAILING = "HumanEval/1"
HOSTILE = "\x1b[31mquota exceeded\x1b[0m for org-7\x07\x1b]0;pwned\x07"


class _Server:
    """A minimal OpenAI-compatible server on 127.0.0.1: canonical answers,
    ``n`` choices per request, and a 400 carrying terminal escapes for one
    problem's prompt."""

    def __init__(self) -> None:
        self.requests = 0
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model"}]})

    async def chat(self, request: web.Request) -> web.Response:
        self.requests += 1
        body: dict[str, Any] = await request.json()
        text = body["messages"][-1]["content"]
        problem = next(p for p in PROBLEMS if p.fields["prompt"] in text)
        if problem.id == FAILING:
            return web.json_response({"error": {"message": HOSTILE}}, status=400)
        answer = f"```python\n{problem.fields['prompt']}{problem.fields['canonical_solution']}```"
        n = int(body.get("n", 1))
        return web.json_response(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                    for i in range(n)
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50 * n},
            }
        )

    async def __aenter__(self) -> _Server:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.chat)
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_endpoint_failures_and_traffic_in_terminal_and_html(tmp_path: Path) -> None:
    out, page = tmp_path / "run", tmp_path / "report.html"
    async with _Server() as server:
        cfg = tmp_path / "endpoint.yaml"
        cfg.write_text(
            json.dumps(
                {
                    "target": {"mode": "runtime", "endpoint": server.url, "model": "fake-model"},
                    "params": {"allow_code_execution": True, "limit": 4, "n_samples": 3},
                }
            )
        )
        cmd = [sys.executable, "-m", "aioeval", "run", "--benchmark", "human-eval"]
        cmd += ["--platform", "llm-endpoint", "--config", str(cfg), "--out", str(out)]
        proc = await anyio.run_process(cmd, env=_env(), check=False)
    stdout, stderr = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 3, stderr  # 3 samples have no verdict
    assert "\x1b" not in stdout + stderr and "\x07" not in stdout
    flat = " ".join(stdout.split())
    assert "failed: generation:400: 3 samples; first: HumanEval/1 sample 0" in flat
    assert "HTTP 400: quota exceeded for org-7 (" in flat and "pwned" not in flat
    requests = f"{server.requests} HTTP requests ({server.requests} attempts) for 12 samples"
    assert f"endpoint: {requests}, up to 3 per request" in flat
    assert server.requests == 4  # one request of n = 3 per problem
    assert "human-eval.total_tokens" in stdout and "cost_usd" not in stdout  # no price set
    assert all(len(line) <= 80 or str(out) in line for line in stdout.splitlines())

    report = _cli("report", str(out), "--html", str(page))
    assert report.returncode == 0, report.stderr
    assert requests in " ".join(report.stdout.split())
    html = page.read_text()
    assert requests in html and "quota exceeded for org-7" in html and "\x1b" not in html
    assert "peak" in html and "(max_concurrency 16)" in html
    # the charts come before the long per-problem table, which can be folded
    assert (
        html.index('id="chart-passk"')
        < html.index('id="chart-timeline"')
        < html.index('id="problems"')
    )
    assert re.search(r"<details open><summary>[^<]*problems", html)


def test_report_on_a_run_without_summary_is_partial(tmp_path: Path) -> None:
    out = tmp_path / "run"
    made = _cli(*_execute_run(out, limit=5), "--quiet")
    assert made.returncode == 0, made.stderr
    (out / "summary.json").unlink()  # as a run killed before its end leaves it
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[:4]) + lines[4][:40])  # cut mid-write
    page = tmp_path / "partial.html"
    proc = _cli("report", str(out), "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert f"run {out} (PARTIAL)" in flat
    assert "PARTIAL: 4 of 5 samples journaled, no summary.json yet" in flat
    assert "human-eval.pass_at_1" in proc.stdout and "candidates 4 (passed 4)" in flat
    assert "dropping a truncated final record" in proc.stderr
    html = page.read_text()
    assert "(partial)" in html and "PARTIAL: 4 of 5 samples journaled" in html

    (out / "results.jsonl").unlink()
    empty = _cli("report", str(out))
    assert empty.returncode == 2
    assert empty.stderr.count("\n") == 1 and "has not journaled a verdict yet" in empty.stderr


def test_notes_reach_the_terminal(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    rows = []
    for p in PROBLEMS[:2]:
        good = {"task_id": p.id, "completion": p.fields["canonical_solution"]}
        rows += [good, good, {"task_id": p.id, "completion": "    return None\n"}]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored"
    proc = _cli(
        "score",
        "--benchmark",
        "human-eval",
        "--samples",
        str(samples),
        "--set",
        "params.k=[1,5]",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert "note: pass@k for k = 5 left out" in flat and "the smallest n here is 3" in flat
    assert "note: samples file: 2 samples repeat an earlier sample of the same problem" in flat
    notes = json.loads((out / "summary.json").read_text())["notes"]
    assert any(n.startswith("samples file: 2 samples repeat") for n in notes)
    assert "human-eval.pass_at_1" in proc.stdout
