"""What this installation can run, for ``aioeval list``: benchmarks (each
with its datasets and default k), platforms and executors, read from the
registries so the list cannot drift from what ``run`` accepts.

Listing never touches the network: a dataset that live runs download on
first use is shown from the local cache, or marked as not downloaded yet.
"""

from __future__ import annotations

import importlib.metadata

import msgspec
from rich.console import Console

from aioeval.config import Params
from aioeval.errors import DatasetError
from aioeval.executors import REGISTRY as EXECUTORS
from aioeval.run.modes import PLATFORMS
from aioeval.suites import REGISTRY as SUITES
from aioeval.suites.base import Mode, Suite

_NO_NETWORK = "http://127.0.0.1:9"
"""Download base URL while listing: a closed local port, so a dataset that is
not cached fails at once instead of being fetched."""

_PLATFORMS = {
    "llm-mock": "a bundled pre-scored fixture, or the reference answers",
    "llm-endpoint": "an OpenAI-compatible server (target.endpoint, target.model)",
}

_EXECUTORS = {
    "local": "sandbox slots on this machine",
    "ray": "sandbox slots on Ray actors",
}

_OPTIONAL = {"ray": "ray"}
"""Executors that need an extra: the extra's name, also its distribution's."""


class DatasetEntry(msgspec.Struct, frozen=True, kw_only=True):
    used_by: str
    name: str | None
    version: str | None
    size: int | None
    note: str = ""


class BenchmarkEntry(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    default_k: list[int]
    datasets: list[DatasetEntry]


class NamedEntry(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    description: str
    available: bool = True
    note: str = ""


class Catalog(msgspec.Struct, frozen=True, kw_only=True):
    benchmarks: list[BenchmarkEntry]
    platforms: list[NamedEntry]
    executors: list[NamedEntry]


_SOURCES: tuple[tuple[str, Mode], ...] = (
    ("llm-mock", "replay"),
    ("execute", "reference"),
    ("endpoint/score", "endpoint"),
)


async def collect() -> Catalog:
    benchmarks = []
    for name, factory in SUITES.items():
        suite = factory(Params(dataset_url=_NO_NETWORK))
        datasets = [await _dataset(suite, used_by, mode) for used_by, mode in _SOURCES]
        benchmarks.append(
            BenchmarkEntry(name=name, default_k=list(suite.default_k), datasets=datasets)
        )
    platforms = [NamedEntry(name=p, description=_PLATFORMS.get(p, "")) for p in PLATFORMS]
    return Catalog(benchmarks=benchmarks, platforms=platforms, executors=_executors())


async def _dataset(suite: Suite, used_by: str, mode: Mode) -> DatasetEntry:
    try:
        data = await suite.load(mode=mode)
    except DatasetError:
        return DatasetEntry(
            used_by=used_by,
            name=None,
            version=None,
            size=None,
            note="not downloaded yet: fetched and verified on first use",
        )
    size = data.full_size or data.size
    return DatasetEntry(used_by=used_by, name=data.name, version=data.version, size=size)


def _executors() -> list[NamedEntry]:
    out = []
    for name in EXECUTORS:
        extra = _OPTIONAL.get(name)
        available = extra is None or _installed(extra)
        out.append(
            NamedEntry(
                name=name,
                description=_EXECUTORS.get(name, ""),
                available=available,
                note="" if available else f"needs the {extra} extra",
            )
        )
    return out


def _installed(distribution: str) -> bool:
    # Not importlib.util.find_spec: a stray folder of that name in the working
    # directory (Ray's own /tmp/ray) would count as the package.
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def print_catalog(catalog: Catalog, console: Console) -> None:
    """Plain lines that fit 80 columns and read the same in a log file."""
    lines = [
        "benchmarks: default k, then problems and dataset per data source",
        "(llm-mock: the replayed fixture; execute: llm-mock with params.execute;",
        " endpoint/score: live runs and aioeval score, unless --dataset)",
    ]
    width = max([12, *(len(b.name) for b in catalog.benchmarks)])
    for bench in catalog.benchmarks:
        lines.append(f"  {bench.name:<{width}} default k {', '.join(map(str, bench.default_k))}")
        for d in bench.datasets:
            size = "?" if d.size is None else f"{d.size:,}"
            what = d.note if d.name is None else f"{d.name}  {d.version}"
            lines.append(f"    {d.used_by:<15}{size:>5}  {what}")
    for title, entries in (("platforms", catalog.platforms), ("executors", catalog.executors)):
        lines.append(f"{title}:")
        for e in entries:
            note = f" ({e.note})" if e.note else ""
            lines.append(f"  {e.name:<13} {e.description}{note}")
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
