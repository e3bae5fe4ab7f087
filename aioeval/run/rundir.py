"""The run directory: the one place that names its files and types run.json.

``--out DIR`` holds:

- ``run.json``: what was run (`RunRecord`), written before the first verdict;
- ``results.jsonl``: the journal of verdicts, one line per candidate;
- ``generations.jsonl``: endpoint runs only, every completion on arrival;
- ``summary.json``: the measurements, written when the run ends.

Readers (resume, report, compare) go through the names and types here.
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from aioeval.errors import ConfigError, InputError
from aioeval.types import DatasetInfo

T = TypeVar("T")

RUN = "run.json"
RESULTS = "results.jsonl"
GENERATIONS = "generations.jsonl"
SUMMARY = "summary.json"
SUPERSEDED = "superseded.jsonl"
"""Verdicts a resume replaced, kept for the run's generation accounting."""


class RunRecord(msgspec.Struct, frozen=True, kw_only=True):
    """run.json: what was asked for. Unknown fields are ignored when read, so
    newer writers stay readable."""

    benchmark: str
    platform: str = ""
    mode: str = ""
    samples: str | None = None
    """Score runs: the samples file, as an absolute path (a resume may start
    from any working directory)."""
    dataset: DatasetInfo | None = None
    config: dict[str, Any] = {}
    """The run's configuration (it never holds an API key itself)."""
    started_at: str = ""
    resumed_at: list[str] = []


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def default_out_dir(benchmark: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{benchmark}-{stamp}-{secrets.token_hex(2)}"


def create(out_dir: str | None, benchmark: str) -> Path:
    """A fresh run directory (refusing one that already holds a run)."""
    out = Path(out_dir) if out_dir else default_out_dir(benchmark)
    results = out / RESULTS
    if results.exists() and results.stat().st_size > 0:
        raise ConfigError(f"{out}: already holds a run ({RESULTS}); choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create output directory: {exc.strerror}") from None
    return out


def write_json_atomic(path: Path, obj: object) -> None:
    """Readers never see a half-written file: write aside, then rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(obj), indent=2) + b"\n")
    os.replace(tmp, path)


def read_json(path: Path, type_: type[T], missing: str) -> T:
    """A JSON file of the run decoded as ``type_``; a one-line error naming
    the file otherwise (``missing`` when it does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(missing) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.DecodeError as exc:
        raise InputError(f"{path}: {exc}") from None


def read_record(run_dir: Path) -> RunRecord:
    """run.json of ``run_dir``; a one-line error naming the file otherwise."""
    return read_json(run_dir / RUN, RunRecord, f"{run_dir}: not a run directory (no {RUN})")
