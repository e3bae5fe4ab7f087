"""CRUXEval data: parsing, the bundled fixture, and the pinned download served
by a real aiohttp server on 127.0.0.1 (download, checksum failure, cache
reuse with the server gone, no network)."""

from __future__ import annotations

import ast
import hashlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from aioeval.config import Params
from aioeval.errors import DatasetError, InputError
from aioeval.suites import get_suite
from aioeval.suites.cruxeval import data as crux_data

pytestmark = pytest.mark.anyio


class FileServer:
    """Serves ``body`` at /<commit>/data/cruxeval.jsonl and counts requests."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.hits = 0
        self.runner: web.AppRunner | None = None
        self.base = ""

    async def _handle(self, request: web.Request) -> web.Response:
        self.hits += 1
        return web.Response(body=self.body, content_type="application/octet-stream")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get(f"/{crux_data.PINNED_COMMIT}/data/cruxeval.jsonl", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.base = f"http://{host}:{port}/{crux_data.PINNED_COMMIT}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


@pytest.fixture
async def server(shared_data: Path) -> AsyncIterator[FileServer]:
    srv = FileServer((shared_data / "cruxeval" / "cruxeval.jsonl").read_bytes())
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


def _cache_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file()]


async def test_download_verifies_caches_and_reuses_offline(
    server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(crux_data.CACHE_ENV, str(tmp_path / "cache"))
    suite = get_suite("cruxeval-o", Params(dataset_url=server.base))
    ds = await suite.load(mode="score")
    assert ds.size == 800 and ds.name == "cruxeval"
    assert ds.version == crux_data.PINNED_VERSION
    assert server.hits == 1
    cached = crux_data.cached_path(tmp_path / "cache")
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == crux_data.PINNED_SHA256

    await server.stop()  # the network is gone: the cache must be enough
    again = await get_suite("cruxeval-i", Params(dataset_url=server.base)).load(mode="endpoint")
    assert again.digest == ds.digest
    assert server.hits == 1


async def test_checksum_failure_caches_nothing(server: FileServer, tmp_path: Path) -> None:
    server.body = server.body.replace(b"sample_0", b"sample_X", 1)
    with pytest.raises(DatasetError, match="sha256 mismatch") as info:
        await crux_data.fetch_pinned(server.base, tmp_path)
    assert server.base in str(info.value) and "nothing was cached" in str(info.value)
    assert _cache_files(tmp_path) == []


async def test_corrupt_cache_is_downloaded_again(server: FileServer, tmp_path: Path) -> None:
    path = crux_data.cached_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"truncated")
    data = await crux_data.fetch_pinned(server.base, tmp_path)
    assert hashlib.sha256(data).hexdigest() == crux_data.PINNED_SHA256
    assert server.hits == 1 and path.read_bytes() == data


async def test_full_file_url_is_accepted(server: FileServer, tmp_path: Path) -> None:
    url = server.base + "/data/cruxeval.jsonl"
    assert crux_data.dataset_url(url) == url
    problems = await crux_data.load_pinned(url, tmp_path)
    assert len(problems) == 800


async def test_no_network_names_the_url_and_the_alternative(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again on exit: nothing listens there
    base = f"http://127.0.0.1:{port}/x"
    with pytest.raises(DatasetError) as info:
        await crux_data.fetch_pinned(base, tmp_path)
    message = str(info.value)
    assert f"{base}/data/cruxeval.jsonl" in message
    assert "--dataset" in message
    assert "\n" not in message
    assert _cache_files(tmp_path) == []


async def test_http_error_is_a_dataset_error(server: FileServer, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="HTTP 404"):
        await crux_data.fetch_pinned(server.base + "-wrong", tmp_path)


def test_default_url_is_the_pinned_commit() -> None:
    assert crux_data.dataset_url(None) == (
        "https://raw.githubusercontent.com/facebookresearch/cruxeval/"
        "190faf16d175b5847b0af05d937872b1fb395942/data/cruxeval.jsonl"
    )


def test_local_file_takes_precedence(shared_data: Path) -> None:
    problems, version = crux_data.read_problems(shared_data / "cruxeval" / "cruxeval.jsonl")
    assert len(problems) == 800 and version == crux_data.PINNED_VERSION
    assert problems[0].id == "sample_0" and set(problems[0].fields) == {"code", "input", "output"}


async def test_dataset_path_beats_fixture_and_download(tmp_path: Path) -> None:
    local = tmp_path / "mine.jsonl"
    local.write_text('{"code": "def f(x):\\n    return x", "input": "1", "output": "1", "id": "a"}')
    params = Params(dataset_path=str(local), dataset_url="http://127.0.0.1:9/unused")
    for mode in ("reference", "score", "endpoint"):
        ds = await get_suite("cruxeval-i", params).load(mode=mode)
        assert [p.id for p in ds.problems] == ["a"]
        assert ds.version.startswith("local-sha256:")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"code": "x", "input": "1", "output": "1"}\n', r"bad\.jsonl:1: .*id"),
        (b'{"code": "x", "input": "1", "output": "1", "id": "a"}\nnot json\n', r"bad\.jsonl:2:"),
        (
            b'{"code": "x", "input": "1", "output": 1, "id": "a"}\n',
            r"bad\.jsonl:1: .*output",
        ),
        (
            b'{"code": "x", "input": "1", "output": "1", "id": "a"}\n'
            b'{"code": "y", "input": "1", "output": "1", "id": "a"}\n',
            r"bad\.jsonl:2: duplicate id 'a'",
        ),
        (b"\n\n", r"bad\.jsonl: no problems found"),
    ],
)
def test_bad_dataset_file_is_named(tmp_path: Path, content: bytes, message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    with pytest.raises(InputError, match=message):
        crux_data.read_problems(bad)


def test_missing_dataset_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"nope\.jsonl: cannot read dataset"):
        crux_data.read_problems(tmp_path / "nope.jsonl")


def test_fixture_is_varied_and_self_consistent() -> None:
    problems = crux_data.fixture_problems()
    assert len(problems) >= 20
    kinds: set[str] = set()

    def walk(v: object) -> None:
        kinds.add(type(v).__name__)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif isinstance(v, list | tuple | set):
            for x in v:
                walk(x)
        if isinstance(v, int | float) and not isinstance(v, bool) and v < 0:
            kinds.add("negative")

    for p in problems:
        walk(ast.literal_eval(p.fields["output"]))
        walk(ast.literal_eval(f"({p.fields['input']},)"))
    assert {"str", "list", "dict", "set", "tuple", "float", "int", "negative"} <= kinds
