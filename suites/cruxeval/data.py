"""CRUXEval problems: the bundled fixture, a local file, or the pinned upstream
file downloaded once, verified and cached.

The full dataset is not on PyPI, so it is fetched from
``<base URL>/data/cruxeval.jsonl`` at one pinned commit and accepted only if
its sha256 matches; the verified bytes are kept in the user cache directory
(``$AIOEVAL_CACHE_DIR`` overrides it) and reused without any network. Nothing
unverified is ever written to the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

import msgspec

from aioeval.errors import DatasetError, InputError
from aioeval.types import Problem

from ..base import CACHE_ENV as CACHE_ENV  # re-exported: the variable that moves the cache
from ..base import cache_dir, jsonl_rows, write_atomic
from ..base import fixture_problems as bundled

PINNED_COMMIT = "190faf16d175b5847b0af05d937872b1fb395942"
PINNED_SHA256 = "8368b81047dc5014e4caf5a2f97604eff7644e0ecd7415e3ceeb184bbc2e0c96"
PINNED_PATH = "data/cruxeval.jsonl"
DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/facebookresearch/cruxeval/{PINNED_COMMIT}"
PINNED_VERSION = f"cruxeval@{PINNED_COMMIT[:12]}"
FIXTURE = "cruxeval_problems.jsonl"
FIXTURE_VERSION = "aioeval-fixture-1"
DOWNLOAD_TIMEOUT_S = 120.0


class _Row(msgspec.Struct):
    code: str
    input: str
    output: str
    id: str


def parse_problems(data: bytes, source: str) -> list[Problem]:
    """Problems from CRUXEval JSONL bytes; errors name ``source:line``."""
    decoder = msgspec.json.Decoder(_Row)
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, decoder):
        if row.id in seen:
            raise InputError(f"{source}:{lineno}: duplicate id {row.id!r}")
        seen.add(row.id)
        problems.append(
            Problem(id=row.id, fields={"code": row.code, "input": row.input, "output": row.output})
        )
    if not problems:
        raise InputError(f"{source}: no problems found")
    return problems


def read_problems(path: str | Path) -> tuple[list[Problem], str]:
    """A local dataset file and its version label (the pinned one if it is
    byte-identical to the pinned upstream file)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read dataset: {exc.strerror}") from None
    sha = hashlib.sha256(data).hexdigest()
    version = PINNED_VERSION if sha == PINNED_SHA256 else f"local-sha256:{sha[:16]}"
    return parse_problems(data, str(path)), version


def fixture_problems() -> list[Problem]:
    return bundled(FIXTURE, parse_problems)


def cached_path(directory: Path | None = None) -> Path:
    return (directory or cache_dir()) / "cruxeval" / f"cruxeval-{PINNED_COMMIT[:12]}.jsonl"


def dataset_url(base_url: str | None) -> str:
    """The file's URL: ``base/data/cruxeval.jsonl``, or ``base`` itself if it
    already names a .jsonl file."""
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    return base if base.endswith(".jsonl") else f"{base}/{PINNED_PATH}"


def _read_verified(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == PINNED_SHA256 else None


async def _download(url: str) -> bytes:
    import aiohttp  # only here: a scoring run never downloads

    hint = "; pass a local copy with --dataset PATH (params.dataset_path)"
    timeout = aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT_S)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url) as resp,
        ):
            if resp.status != 200:
                raise DatasetError(f"cannot download CRUXEval from {url}: HTTP {resp.status}{hint}")
            return await resp.read()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        reason = str(exc) or type(exc).__name__
        raise DatasetError(f"cannot download CRUXEval from {url}: {reason}{hint}") from None


async def fetch_pinned(base_url: str | None = None, directory: Path | None = None) -> bytes:
    """The pinned dataset bytes: from the cache if present and intact, else
    downloaded, verified against the pinned sha256, then cached."""
    path = cached_path(directory)
    data = _read_verified(path)
    if data is not None:
        return data
    url = dataset_url(base_url)
    data = await _download(url)
    got = hashlib.sha256(data).hexdigest()
    if got != PINNED_SHA256:
        raise DatasetError(
            f"{url}: sha256 mismatch (expected {PINNED_SHA256}, got {got}); nothing was cached"
        )
    # A read-only cache is not fatal: the verified bytes are still good.
    with contextlib.suppress(OSError):
        write_atomic(path, data)
    return data


async def load_pinned(base_url: str | None = None, directory: Path | None = None) -> list[Problem]:
    data = await fetch_pinned(base_url, directory)
    return parse_problems(data, dataset_url(base_url))
