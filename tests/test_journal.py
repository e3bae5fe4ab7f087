"""The results journal: each record is in the file the moment `write`
returns, disk flushes never run on the event loop's thread, a failed
background flush is not lost, and closing flushes even when cancelled."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import msgspec
import pytest

from aioeval.run.journal import Journal


class Rec(msgspec.Struct):
    i: int


def recording_fsync(
    monkeypatch: pytest.MonkeyPatch, fail_first: bool = False
) -> list[threading.Thread]:
    """Replace os.fsync with one that notes the thread it runs on."""
    threads: list[threading.Thread] = []
    real: Callable[[int], None] = os.fsync

    def fsync(fd: int) -> None:
        threads.append(threading.current_thread())
        if fail_first and len(threads) == 1:
            raise OSError(errno.EIO, "injected flush failure")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return threads


@pytest.mark.anyio
async def test_writes_are_visible_at_once_and_flushes_stay_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = recording_fsync(monkeypatch)
    path = tmp_path / "results.jsonl"
    loop_thread = threading.current_thread()
    async with Journal(path, sync_every_s=0.0) as journal:
        for i in range(50):
            journal.write(Rec(i=i))
            # handed to the kernel before write returns: a kill -9 now keeps it
            assert path.read_bytes().count(b"\n") == i + 1
    assert threads, "flushes were due on every write"
    assert loop_thread not in threads  # periodic ones and the final one
    assert path.read_bytes().splitlines()[-1] == b'{"i":49}'


def test_a_failed_background_flush_is_raised_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = recording_fsync(monkeypatch, fail_first=True)
    journal = Journal(tmp_path / "results.jsonl", sync_every_s=0.0)
    journal.write(Rec(i=0))
    with pytest.raises(OSError, match="injected flush failure"):
        journal.close()
    assert threads and threads[0] is not threading.current_thread()
    journal.close()  # closed anyway: a second close is a no-op


@pytest.mark.anyio
async def test_aclose_flushes_even_when_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = recording_fsync(monkeypatch)
    journal = Journal(tmp_path / "results.jsonl")
    journal.write(Rec(i=1))
    with anyio.CancelScope() as scope:
        scope.cancel()
        await journal.aclose()
    assert len(threads) == 1 and threads[0] is not threading.current_thread()
    with pytest.raises(OSError):
        journal.write(Rec(i=2))  # closed
