"""results.jsonl as an append-only journal.

Durability choice: every record is encoded and handed to the kernel with a
single ``write(2)`` on an ``O_APPEND`` descriptor as soon as it exists (no
user-space buffer), before the caller reports it done, so a ``kill -9`` of
the engine loses only candidates still in flight. ``fsync`` runs at most
every ``sync_every_s`` seconds and at close, bounding what a power cut can
take to that window (plus one flush) without paying a disk flush per
candidate. A flush can take long on a busy disk, so it never runs on the
event loop: the periodic one runs in the journal's own worker thread while
writing goes on (its error, if any, is raised by the next write or by
close), and `aclose` does the final one in a worker thread too.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
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
        self._flusher: ThreadPoolExecutor | None = None
        self._flush: Future[None] | None = None

    def write(self, record: msgspec.Struct) -> None:
        """Append one record (a result, or a generation in generations.jsonl);
        it is in the kernel's hands when this returns."""
        self._raise_flush_error()
        view = memoryview(self._enc.encode(record) + b"\n")
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        now = time.monotonic()
        if now - self._last_sync >= self._sync_every and self._flush is None:
            self._last_sync = now
            if self._flusher is None:
                self._flusher = ThreadPoolExecutor(1, thread_name_prefix="aioeval-journal")
            self._flush = self._flusher.submit(os.fsync, self._fd)

    def _raise_flush_error(self) -> None:
        """Collect a finished background flush; a failed one fails this call."""
        if self._flush is not None and self._flush.done():
            flush, self._flush = self._flush, None
            flush.result()

    def close(self) -> None:
        """Wait for a flush under way, flush the rest, close. Blocks: from the
        event loop, use `aclose`."""
        if self._fd < 0:
            return
        try:
            if self._flush is not None:
                self._flush.result()
            os.fsync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = -1
            self._flush = None
            if self._flusher is not None:
                self._flusher.shutdown()

    async def aclose(self) -> None:
        """`close` in a worker thread, even when the caller is cancelled (the
        journal is flushed either way)."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.close)

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Journal:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


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
