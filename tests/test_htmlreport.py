"""The HTML report: escaping, self-containment, size, and a real browser.

The browser test drives Debian's headless Chromium over the DevTools
protocol (aiohttp's websocket client, 127.0.0.1 only) and checks that the
page loads with no console error, no exception, no dialog and no network
request, that the charts were drawn, and that hostile model output is shown
as text without running. A negative control page proves the probe would
notice each of those.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from aiohttp import web
from results import candidate_result

from aioeval.analysis.runs import load_run, read_tally
from aioeval.reporting.html import build_figures, render_html, script_json, write_report
from aioeval.types import CandidateResult, DatasetInfo, Measurement, Summary

HOSTILE = "</script><script>alert(1)</script>"
HOSTILE_ID = "HumanEval/</script><script>document.title='pwned'</script>"
HOSTILE_REASON = "<img src=x onerror=\"document.title='pwned'\"> & \u2028 done"
TITLE = "aioeval report: human-eval"


def _result(pid: str, i: int, status: str, t0: float | None = None, **kw: Any) -> CandidateResult:
    fields: dict[str, Any] = dict(
        reason="AssertionError" if status != "passed" else "",
        candidate="    return sorted(xs)\n" * 8,
        wall_ms=2.0 + (i * 7919 % 997) / 10,
        cpu_ms=1.5,
    )
    if t0 is not None:
        start = t0 + i * 0.05
        retries = 1 if i % 7 == 0 else 0
        fields.update(
            latency_ms=200.0 + (i * 37 % 300),
            attempts=1 + retries,
            retry_count=retries,
            rate_limited=retries,
            gen_started_at=start,
            gen_finished_at=start + 0.2 + (i * 37 % 300) / 1000,
            prompt_tokens=100,
            completion_tokens=50,
        )
    fields.update(kw)
    return candidate_result(pid, i, status, **fields)


def make_run(
    path: Path,
    problems: int,
    samples: int,
    *,
    endpoint: bool,
    hostile: bool = False,
    long_failures: bool = False,
) -> Path:
    """A run directory written the way the engine writes one. With
    ``long_failures`` each problem's first failure carries 10,000-character
    texts made of characters that grow when escaped: the report's worst case."""
    path.mkdir(parents=True)
    t0 = 1_800_000_000.0 if endpoint else None
    counts = {"passed": 0, "failed": 0}
    with (path / "results.jsonl").open("wb") as fh:
        for p in range(problems):
            first_failure = True
            for s in range(samples):
                status = "passed" if (p * 31 + s * 17) % 100 < (p * 13 % 100) else "failed"
                counts[status] += 1
                extra: dict[str, Any] = {}
                if long_failures and status == "failed" and first_failure:
                    first_failure = False
                    extra = dict(
                        candidate="<" * 10_000, reason="&" * 10_000, output_tail='"' * 10_000
                    )
                r = _result(f"HumanEval/{p}", s, status, t0 if t0 is None else t0 + p, **extra)
                fh.write(msgspec.json.encode(r) + b"\n")
        if hostile:
            for r in (
                _result("HumanEval/evil", 0, "failed", candidate=HOSTILE, reason=HOSTILE_REASON),
                _result(HOSTILE_ID, 0, "failed", candidate=HOSTILE, output_tail=HOSTILE),
            ):
                counts["failed"] += 1
                fh.write(msgspec.json.encode(r) + b"\n")
    summary = Summary(
        benchmark="human-eval",
        dataset=DatasetInfo(name="synthetic", version="1", digest="f" * 64, size=problems),
        measurements=[
            Measurement(
                name="human-eval.pass_at_1",
                value=0.5,
                unit="fraction",
                klass="deterministic",
                official=True,
            ),
            Measurement(
                name="human-eval.avg_latency_ms",
                value=50.0,
                unit="ms",
                klass="environmental",
                official=False,
            ),
        ],
        platform="llm-endpoint" if endpoint else "llm-mock",
        counts=counts,
        candidates=sum(counts.values()),
        isolation=["rlimits", "process-group"],
        model=HOSTILE if hostile else None,
    )
    (path / "summary.json").write_bytes(msgspec.json.encode(summary))
    return path


def test_script_json_cannot_break_out() -> None:
    value = {"s": HOSTILE + HOSTILE_REASON + "<!-- \u2029", "n": [1, 2.5]}
    text = script_json(value)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == value


def test_hostile_text_is_escaped_everywhere(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path / "r", 3, 2, endpoint=True, hostile=True))
    page = render_html(run, read_tally(run))
    assert page.count("<script") == 3  # data block, chart library, page script
    assert "<img" not in page
    assert HOSTILE not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "default-src 'none'" in html.unescape(page)
    assert "no endpoint data" not in page


def test_sections_without_endpoint_data(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path / "r", 4, 3, endpoint=False))
    page = render_html(run, read_tally(run))
    assert "no endpoint data" in page
    assert "no generation data" in page
    fig = build_figures(read_tally(run))
    assert fig.passk_k == [1, 2, 3]
    assert fig.timeline is None and fig.gen_pct == {}


def test_timeline_figures(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path / "r", 2, 10, endpoint=True))
    tl = build_figures(read_tally(run)).timeline
    assert tl is not None
    # 20 samples, every 7th of each problem's 10 retried once after a 429.
    assert sum(tl.requests) == 20 + 4
    assert sum(tl.rate_limited) == 4 and sum(tl.retries) == 4
    assert max(tl.in_flight) >= 1


def test_size_of_a_164_by_200_run(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path / "big", 164, 200, endpoint=True, long_failures=True))
    assert run.summary.candidates == 32_800
    out = tmp_path / "big.html"
    size = write_report(run, str(out))
    assert size == out.stat().st_size
    assert size < 5 * 1024 * 1024, f"{size:,} bytes"


def test_cli_report_on_a_real_replay_run(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "aioeval.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    run = tmp_path / "mock"
    made = cli("run", "--benchmark", "human-eval", "--platform", "llm-mock", "--out", str(run))
    assert made.returncode == 0, made.stderr
    html_path = tmp_path / "mock.html"
    proc = cli("report", str(run), "--html", str(html_path))
    assert proc.returncode == 0, proc.stderr
    assert "human-eval.pass_at_1" in proc.stdout and "complete" in proc.stdout
    page = html_path.read_text()
    assert "no endpoint data" in page and "HumanEval/1" in page
    missing = cli("report", str(tmp_path / "absent"))
    assert missing.returncode == 2 and "no such run directory" in missing.stderr


# ---------------------------------------------------------------- browser


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium not installed (apt-get install -y chromium; .ci/run installs it)")


@contextlib.contextmanager
def _browser(tmp_path: Path) -> Iterator[str]:
    """Start headless Chromium; yield its browser-level DevTools websocket URL."""
    profile = tmp_path / "profile"
    log = (tmp_path / "chromium.log").open("wb")
    proc = subprocess.Popen(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start: {(tmp_path / 'chromium.log').read_text()}")
            time.sleep(0.05)
        port, ws_path = port_file.read_text().splitlines()[:2]
        yield f"ws://127.0.0.1:{port}{ws_path}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group we created for it
            proc.wait()
        log.close()


class Page:
    """One page target over a flattened DevTools session; records what the
    page did: requests, console errors, exceptions, dialogs."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.session: str | None = None
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.loaded = asyncio.Event()
        self.tasks: set[asyncio.Future[dict[str, Any]]] = set()

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        msg: dict[str, Any] = {"id": self.ids, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            msg["sessionId"] = self.session
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.ids] = fut
        await self.ws.send_str(json.dumps(msg))
        reply = await asyncio.wait_for(fut, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})  # type: ignore[no-any-return]

    async def pump(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data:
                self.waiting.pop(data["id"]).set_result(data)
                continue
            method, p = data.get("method"), data.get("params", {})
            if method == "Network.requestWillBeSent":
                self.requests.append(p["request"]["url"])
            elif method == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                self.errors.append(f"console: {p['args']}")
            elif method == "Runtime.exceptionThrown":
                self.errors.append(f"exception: {p['exceptionDetails']}")
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                self.errors.append(f"log: {p['entry']['text']}")
            elif method == "Page.javascriptDialogOpening":
                self.dialogs.append(p["message"])
                self.tasks.add(
                    asyncio.ensure_future(self.call("Page.handleJavaScriptDialog", accept=True))
                )
            elif method == "Page.loadEventFired":
                self.loaded.set()

    async def eval(self, expr: str) -> Any:
        res = await self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return res["result"].get("value")


@contextlib.asynccontextmanager
async def open_page(ws_url: str, url: str) -> AsyncIterator[Page]:
    async with aiohttp.ClientSession() as http, http.ws_connect(ws_url, max_msg_size=0) as ws:
        page = Page(ws)
        pump = asyncio.ensure_future(page.pump())
        try:
            target = await page.call("Target.createTarget", url="about:blank")
            attached = await page.call(
                "Target.attachToTarget", targetId=target["targetId"], flatten=True
            )
            page.session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                await page.call(f"{domain}.enable")
            await page.call("Page.navigate", url=url)
            await asyncio.wait_for(page.loaded.wait(), 60)
            await page.eval("new Promise(r => requestAnimationFrame(() => r(1)))")
            yield page
        finally:
            pump.cancel()


async def _serve_counter() -> tuple[web.AppRunner, list[str], int]:
    hits: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="x")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, hits, port


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    _chromium()
    run = load_run(make_run(tmp_path / "r", 12, 4, endpoint=True, hostile=True))
    report = tmp_path / "report.html"
    write_report(run, str(report))

    async def check(ws_url: str) -> None:
        runner, hits, port = await _serve_counter()
        try:
            # Negative control: markup that runs, logs an error and fetches.
            control = tmp_path / "control.html"
            control.write_text(
                "<title>t</title><script>document.title='pwned';console.error('boom');"
                f"new Image().src='http://127.0.0.1:{port}/leak';alert(1)</script>"
            )
            async with open_page(ws_url, control.as_uri()) as page:
                await page.eval("new Promise(r => setTimeout(() => r(1), 300))")
                assert await page.eval("document.title") == "pwned"
                assert page.errors and page.dialogs
                assert any(u.startswith("http://127.0.0.1") for u in page.requests)

            async with open_page(ws_url, report.as_uri()) as page:
                assert page.errors == []
                assert page.dialogs == []
                assert page.requests in ([], [report.as_uri()])
                assert await page.eval("document.title") == TITLE
                assert await page.eval("document.body.getAttribute('data-ready')") == "1"
                assert await page.eval("document.scripts.length") == 3
                assert await page.eval("document.images.length") == 0
                assert await page.eval("document.querySelectorAll('canvas').length") >= 5
                text = await page.eval("document.body.innerText")
                assert HOSTILE in text and HOSTILE_ID in text
                assert "<img src=x onerror=" in text
                # Sorting: click "pass rate" twice (descending), best problem first.
                rates = await page.eval(
                    "(() => { const th = document.querySelectorAll('#problems th')[3];"
                    " th.click(); th.click();"
                    " return [...document.querySelectorAll('#problems tbody tr')]"
                    ".map(r => Number(r.cells[3].dataset.v)); })()"
                )
                assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]
                assert page.errors == []
            assert hits == ["/leak"]  # only the control page reached the server
        finally:
            await runner.cleanup()

    with _browser(tmp_path) as ws_url:
        asyncio.run(check(ws_url))
