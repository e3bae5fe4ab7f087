"""results.jsonl as an append-only journal.

Durability choice: every record is encoded and handed to the kernel with a
single ``write(2)`` on an ``O_APPEND`` descriptor as soon as it exists (no
user-space buffer), so a ``kill -9`` of the engine loses only candidates
still in flight. ``fsync`` runs at most every ``sync_every_s`` seconds and at
close, bounding what a power cut can take to that window without paying a
disk flush per candidate.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from aioeval.errors import InputError
from aioeval.types import CandidateResult

log = logging.getLogger("aioeval.run.journal")


class Journal:
    def __init__(self, path: Path, *, sync_every_s: float = 5.0) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._enc = msgspec.json.Encoder()
        self._sync_every = sync_every_s
        self._last_sync = time.monotonic()
        self.lines = 0

    def write(self, record: msgspec.Struct) -> None:
        """Append one record (a result, or a generation in generations.jsonl)."""
        view = memoryview(self._enc.encode(record) + b"\n")
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self.lines += 1
        now = time.monotonic()
        if now - self._last_sync >= self._sync_every:
            os.fsync(self._fd)
            self._last_sync = now

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_lines(path: Path, decoder: msgspec.json.Decoder[Any]) -> Iterator[Any]:
    """Stream a JSONL journal. A truncated final line (a crash mid-write: the
    only line that can lack its newline) is skipped with a warning; a bad
    line anywhere else is an error naming FILE:LINE. A missing file is empty."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield decoder.decode(line)
            except msgspec.DecodeError as exc:
                if not line.endswith(b"\n"):
                    log.warning(
                        "%s:%d: dropping a truncated final record (crash mid-write)", path, lineno
                    )
                    return
                raise InputError(f"{path}:{lineno}: corrupt journal line: {exc}") from None


def rewrite_journal(path: Path, results: Iterable[CandidateResult]) -> None:
    """Replace a journal with ``results`` atomically (temp file, fsync,
    rename), so a crash mid-rewrite leaves the old journal whole. ``results``
    may stream from the file being replaced."""
    tmp = path.with_name(path.name + ".rewrite")
    enc = msgspec.json.Encoder()
    with tmp.open("wb") as out:
        for r in results:
            out.write(enc.encode(r) + b"\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def read_results(path: Path) -> Iterator[CandidateResult]:
    """The verdicts of a results.jsonl journal, streamed."""
    return read_lines(path, msgspec.json.Decoder(CandidateResult))
