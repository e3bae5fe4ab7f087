"""SIGTERM (and Ctrl-C) stop a real `aioeval` process cleanly: the journal is
whole, the resume hint is printed, the exit status says which signal, and no
process of the run outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import orjson
import pytest

from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult

QUICK = 2
SLEEPERS = 6


def _samples(path: Path) -> None:
    """Two quick passes, then candidates that sleep far past any test."""
    rows = []
    for i, p in enumerate(load_problems()[: QUICK + SLEEPERS]):
        body = (
            p.fields["canonical_solution"]
            if i < QUICK
            else "    import time\n    time.sleep(600)\n"
        )
        rows.append({"task_id": p.id, "completion": body})
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def _wait_for(condition: object, what: str, timeout_s: float = 120.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of a live process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """Every process below ``root`` now, with its start time (pid reuse)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: dict[int, int] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        st = _stat(pid)
        if st is not None:
            out[pid] = st[1]
        todo.extend(children.get(pid, []))
    return out


def _alive(pid: int, started: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == started and st[0] not in ("Z", "X")


@pytest.mark.parametrize(
    ("sig", "status", "said"),
    [(signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_signal_mid_run_closes_the_journal_and_leaves_no_process(
    tmp_path: Path, sig: signal.Signals, status: int, said: str
) -> None:
    samples, out = tmp_path / "samples.jsonl", tmp_path / "run"
    _samples(samples)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "aioeval", "score", "--benchmark", "human-eval"),
            *("--samples", str(samples), "--out", str(out), "--quiet"),
            *("--set", "params.workers=2", "--set", "params.timeout_s=600"),
            *("--set", "params.sandbox.wall_timeout_s=600"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        journal = out / "results.jsonl"
        _wait_for(
            lambda: journal.exists() and journal.read_bytes().count(b"\n") >= QUICK, "a verdict"
        )
        tree = _descendants(proc.pid)
        assert len(tree) >= 2, "the sandbox slots should be running"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"aioeval: {said}; results so far are journaled in {out}; "
        f"continue with: aioeval run --resume {out}"
    )
    # The journal is whole: every line a verdict, the quick ones passed, none
    # of the sleepers given a verdict it did not earn.
    data = journal.read_bytes()
    assert data.endswith(b"\n")
    results = [msgspec.json.decode(line, type=CandidateResult) for line in data.splitlines()]
    assert [r.status for r in results] == ["passed"] * QUICK
    assert not (out / "summary.json").exists()
    # Nothing the run started is left (a zombie awaiting its reaper is not running).
    _wait_for(lambda: not any(_alive(pid, t) for pid, t in tree.items()), "the run's processes", 30)
    assert os.path.exists(out / "run.json")
