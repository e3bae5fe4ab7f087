"""A problem's own code is as untrusted as an answer: datasets come from the
internet, and RL setups send model-written tests. Each test here brings a
problem whose code (a HumanEval test, the imports of a signature-only
prompt, MBPP's setup code and asserts) tries what a hostile author would:
write a file in a host directory, read the engine's secrets from its
environment or from ``/proc/<pid>/environ``, open a TCP connection to a port
on 127.0.0.1, and change the interpreter so that a later check of someone
else passes a wrong answer. Through the real `Scorer`, a real ``aioeval
serve`` on 127.0.0.1 and ``aioeval score --dataset``, every layer on.

The probe reports what it managed in the check's reason, so a probe that
got somewhere cannot hide it; the host directory and the listening port are
also checked from outside.

Run inside the safety net (``tests/safety_net.sh``), as CI does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from servecheck import JSON, config, post, serving

from aioeval.service import Scorer

pytestmark = pytest.mark.anyio

SECRET = f"aioeval-secret-{uuid.uuid4().hex}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Host:
    """What the probe aims at: a host directory, a listening port, a secret
    in the engine's environment."""

    def __init__(self, tmp: Path) -> None:
        self.dir = tmp / "host"
        self.dir.mkdir()
        self.dir.chmod(0o777)  # writable by anyone who can reach it at all
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]

    def probe(self, indent: str = "") -> str:
        """Statements that try each attack and leave what worked in ``BAD``."""
        code = f"""
            import os, socket
            BAD = []
            try:
                with open({str(self.dir / "pwned")!r}, "w") as fh:
                    fh.write("x")
                BAD.append("wrote a host file")
            except OSError:
                pass
            if {SECRET!r} in repr(dict(os.environ)):
                BAD.append("the engine's environment")
            for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
                try:
                    with open("/proc/" + pid + "/environ", "rb") as fh:
                        if {SECRET!r}.encode() in fh.read():
                            BAD.append("environ of pid " + pid)
                except OSError:
                    pass
            for port in ({self.port},):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                    BAD.append("connected to " + str(port))
                except OSError:
                    pass
            if os.geteuid() == 0:
                BAD.append("root")
            """
        return textwrap.indent(textwrap.dedent(code), indent)

    def reached(self) -> list[str]:
        """What the probe did that shows from outside."""
        out = [p.name for p in self.dir.iterdir()]
        try:
            conn, _ = self.listener.accept()
            conn.close()
            out.append("a connection")
        except BlockingIOError:
            pass
        return out


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    monkeypatch.setenv("AIOEVAL_TEST_SECRET", SECRET)
    h = Host(tmp_path)
    try:
        yield h
    finally:
        h.listener.close()


def _humaneval_in_test(host: Host) -> dict[str, str]:
    return {
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n"
        + host.probe("    ")
        + "    assert not BAD, 'BAD: ' + ', '.join(BAD)\n"
        + "    assert candidate(2, 3) == 5\n",
    }


def _humaneval_in_prompt(host: Host) -> dict[str, str]:
    """A signature-only prompt: of it, the verifier runs the import lines,
    and one of them carries the probe."""
    return {
        "prompt": f"import os; exec({host.probe()!r})\n\ndef add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n"
        "    assert not BAD, 'BAD: ' + ', '.join(BAD)\n"
        "    assert candidate(2, 3) == 5\n",
    }


def _mbpp(host: Host) -> dict[str, object]:
    return {
        "task_id": 9001,
        "text": "Add two numbers.",
        "code": "def add(a, b):\n    return a + b\n",
        "test_setup_code": host.probe(),
        "test_list": ["assert not BAD, 'BAD: ' + ', '.join(BAD)", "assert add(2, 3) == 5"],
    }


RIGHT = {"human-eval": "    return a + b\n", "mbpp": "def add(a, b):\n    return a + b\n"}


@pytest.mark.parametrize("where", ["test", "prompt", "mbpp"])
async def test_problem_code_reaches_nothing_of_the_host_through_the_scorer(
    host: Host, where: str
) -> None:
    benchmark = "mbpp" if where == "mbpp" else "human-eval"
    problem = {"test": _humaneval_in_test, "prompt": _humaneval_in_prompt, "mbpp": _mbpp}[where]
    async with Scorer(config()) as scorer:
        result = await scorer.score(benchmark, problem(host), RIGHT[benchmark])
    assert result.status == "passed", result.reason
    assert host.reached() == []


async def test_problem_code_reaches_nothing_of_the_host_through_serve(host: Host) -> None:
    async with serving() as (url, _):
        port = int(url.rsplit(":", 1)[1])
        problem = _humaneval_in_test(host)
        # The server's own port is a target too.
        problem["test"] = problem["test"].replace(f"({host.port},)", f"({host.port}, {port})")
        item = {"benchmark": "human-eval", "problem": problem, "completion": RIGHT["human-eval"]}
        status, answer = await post(url, item, JSON)
    assert status == 200, answer
    assert answer["status"] == "passed", answer["reason"]
    assert host.reached() == []


def test_problem_code_in_a_dataset_file_reaches_nothing_of_the_host(
    host: Host, tmp_path: Path
) -> None:
    problem = {"task_id": "Hostile/0", **_humaneval_in_test(host)}
    (tmp_path / "problems.jsonl").write_text(json.dumps(problem) + "\n")
    sample = {"task_id": "Hostile/0", "completion": RIGHT["human-eval"]}
    (tmp_path / "samples.jsonl").write_text(json.dumps(sample) + "\n")
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "aioeval", "score", "--benchmark", "human-eval"]
    argv += ["--samples", str(tmp_path / "samples.jsonl"), "--dataset"]
    argv += [str(tmp_path / "problems.jsonl"), "--out", str(out), "--quiet"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "passed", row["reason"]
    assert host.reached() == []


POISON = {
    "replaces exec": "import builtins\nbuiltins.exec = lambda *a, **k: None\n",
    "replaces AssertionError": "import builtins\nbuiltins.AssertionError = KeyboardInterrupt\n",
    "patches the check's module": "import sys\nsys.modules['__main__'].__dict__.clear()\n",
    "leaves a thread": "import threading, time\n"
    "threading.Thread(target=lambda: time.sleep(60), daemon=True).start()\n",
    "leaves a child": "import os\nif os.fork() == 0:\n    import time\n    time.sleep(60)\n",
}


@pytest.mark.parametrize("how", list(POISON))
async def test_a_problem_that_poisons_its_check_changes_no_later_verdict(how: str) -> None:
    """One slot, three checks in order: a poisoning problem (its own verdict
    is its author's), then someone else's problem with a wrong answer and
    with a right one. They are judged as they would be alone."""
    poisoner = {
        "prompt": "def one():\n",
        "entry_point": "one",
        "test": POISON[how] + "def check(candidate):\n    assert candidate() == 1\n",
    }
    other = {
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    }
    async with Scorer(config()) as scorer:
        await scorer.score("human-eval", poisoner, "    return 1\n")
        wrong = await scorer.score("human-eval", other, "    return a - b\n")
        right = await scorer.score("human-eval", other, "    return a + b\n")
    assert wrong.status == "failed", wrong
    assert right.status == "passed", right.reason


async def test_checks_of_one_slot_run_one_after_another_in_fresh_processes() -> None:
    """What a check leaves in its process is gone for the next (each is a
    fresh child): a module-level counter in the test sees 1 every time."""
    problem = {
        "prompt": "def add(a, b):\n",
        "entry_point": "add",
        "test": "import sys\n"
        "sys._aioeval_seen = getattr(sys, '_aioeval_seen', 0) + 1\n"
        "def check(candidate):\n"
        "    assert sys._aioeval_seen == 1, sys._aioeval_seen\n"
        "    assert candidate(2, 3) == 5\n",
    }
    async with Scorer(config()) as scorer:
        results = [
            await scorer.score("human-eval", problem, f"    return a + b  # {i}\n")
            for i in range(4)
        ]
    assert [r.status for r in results] == ["passed"] * 4, [r.reason for r in results]
