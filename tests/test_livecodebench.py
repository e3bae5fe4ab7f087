"""The LiveCodeBench-style suite: its comparison rules against hand-worked
cases, the restricted reader of hidden tests, hostile and edge-case programs
through the real sandbox, the fixture, and runs end to end through the CLI."""

from __future__ import annotations

import base64
import decimal
import importlib.util
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_cli import aioeval, read_run, value

from aioeval.config import LiveCodeBenchParams, Params, decode_config
from aioeval.errors import InputError
from aioeval.executors.local import LocalPool
from aioeval.fake_openai import FakeConfig, FakeOpenAI
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.sandbox.protocol import Limits
from aioeval.suites import BENCHMARKS, get_suite
from aioeval.suites.livecodebench import data
from aioeval.suites.livecodebench.checks import stdout_mismatch, value_mismatch
from aioeval.suites.livecodebench.child import OUTPUT_CAP
from aioeval.suites.livecodebench.suite import LiveCodeBench, extract_code, user_prompt
from aioeval.types import Problem

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_DIR = ROOT / "fixtures" / "livecodebench"
FIXTURE = data.fixture_problems()
BY_ID = {p.id: p for p in FIXTURE}


def hidden(tests: list[dict[str, str]], protocol: int = 4) -> str:
    """Tests as the release files hide them."""
    blob = pickle.dumps(json.dumps(tests), protocol=protocol)
    return base64.b64encode(zlib.compress(blob)).decode()


def row(qid: str = "q1", tests: Any = None, func: str | None = None, **over: Any) -> dict[str, Any]:
    tests = tests if tests is not None else [("1\n", "1\n")]
    kind = "functional" if func else "stdin"
    cases = [{"input": i, "output": o, "testtype": kind} for i, o in tests]
    base = {
        "question_title": "t",
        "question_content": "Solve it.",
        "platform": "atcoder",
        "question_id": qid,
        "contest_id": "c",
        "contest_date": "2024-01-01T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps(cases[:1]),
        "private_test_cases": hidden(cases[1:]),
        "metadata": json.dumps({"func_name": func} if func else {}),
    }
    base.update(over)
    return base


def problem(tests: list[tuple[str, str]], func: str | None = None) -> Problem:
    line = json.dumps(row(tests=tests, func=func)).encode()
    return data.parse_lcb(line, "mem")[0]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# --- comparison rules -----------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "ok"),
    [
        ("8\n", "8\n", True),
        ("8   \n", "8", True),  # trailing spaces
        ("\n\n8\n\n\n", "8\n", True),  # blank lines around the answer
        ("8\r\n9\r\n", "8\n9\n", True),
        ("1\n\n2\n", "1\n2\n", False),  # a blank line inside is a line
        ("1.0\n", "1\n", True),  # equal as decimals
        ("2.5\n", "2.5000000000\n", True),
        ("1e2\n", "100\n", True),
        ("-0\n", "0\n", True),
        ("1.000000001\n", "1\n", False),  # no tolerance: exact decimals
        ("1  2\n", "1 2\n", True),  # tokens, not characters, for numbers
        ("a  b\n", "a b\n", False),  # ...but not for words
        ("0.10 x\n", "0.1 x\n", False),
        ("Yes\n", "yes\n", False),
        ("", "", True),  # no output, none expected
        ("", "5\n", False),  # no output
        ("5\n", "", False),
        ("5 6\n", "5\n", False),
    ],
)
def test_stdout_rules_on_hand_worked_cases(output: str, expected: str, ok: bool) -> None:
    why = stdout_mismatch(output, expected)
    assert (why is None) == ok, why


def test_stdout_rules_on_a_huge_output_name_the_line() -> None:
    expected = "".join(f"{i}\n" for i in range(300_000))
    assert stdout_mismatch(expected, expected) is None
    wrong = expected[: -len("299999\n")] + "299999.5\n"
    assert stdout_mismatch(wrong, expected) == (
        "wrong answer at line 300000: '299999.5' != '299999'"
    )
    assert "300000 output line(s), expected 299999" in (
        stdout_mismatch(expected, expected[: -len("299999\n")]) or ""
    )


def test_a_signalling_nan_fails_as_upstream_does() -> None:
    with pytest.raises(decimal.InvalidOperation):
        stdout_mismatch("sNaN\n", "1\n")


def test_value_rules() -> None:
    assert value_mismatch((0, 1), [0, 1]) is None  # a tuple counts as a list
    assert value_mismatch(5, 5.0) is None
    assert value_mismatch([[1, 2]], [[1, 2]]) is None
    assert value_mismatch([(1, 2)], [[1, 2]]) is not None  # only the top level
    assert value_mismatch(12, 12.75) == "wrong answer: returned 12, expected 12.75"


# --- prompts and answers --------------------------------------------------------


def test_prompt_has_upstreams_layout_with_or_without_starter_code() -> None:
    stdin = user_prompt(BY_ID["lcb-sum"])
    assert stdin.startswith("### Question:\nRead two integers A and B")
    assert "### Format: Write a program that reads its input from stdin" in stdin
    assert "```python\n# YOUR CODE HERE\n```" in stdin
    assert stdin.endswith("### Answer: (use the provided format with backticks)\n\n")
    functional = user_prompt(BY_ID["lcb-two-sum"])
    assert "### Format: Complete the starter code below" in functional
    assert "```python\nclass Solution:\n    def twoSum(self, nums: List[int]" in functional


def test_extraction_takes_the_last_fenced_block() -> None:
    raw = "Idea:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\nprint(3)\n```\nDone."
    assert extract_code(raw) == "print(2)\nprint(3)"
    assert extract_code("print(1)") == ""  # no fence: nothing to run, as upstream
    assert extract_code("```python\nprint(1)") == ""


# --- hidden tests: the restricted reader ------------------------------------------


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_hidden_tests_in_the_release_encoding_are_read(protocol: int) -> None:
    cases = [{"input": "2\n", "output": "4\n", "testtype": "stdin"}]
    line = json.dumps(row(private_test_cases=hidden(cases, protocol)))
    (p,) = data.parse_lcb(line.encode(), "mem")
    assert data.tests_of(p) == [("1\n", "1\n"), ("2\n", "4\n")]
    if protocol >= 3:  # older protocols pickle bytes as a call of _codecs.encode
        assert data.pickled_string(pickle.dumps(b"[]", protocol=protocol)) == "[]"


class _Evil:
    def __reduce__(self) -> tuple[Any, ...]:
        return (print, ("UNPICKLED",))


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (_Evil(), "GLOBAL"),  # STACK_GLOBAL / GLOBAL, then REDUCE
        (["a", "b"], "EMPTY_LIST"),
        (7, "BININT1"),
    ],
)
def test_a_pickle_that_is_not_one_string_is_refused_naming_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payload: Any, fragment: str
) -> None:
    bad = base64.b64encode(zlib.compress(pickle.dumps(payload))).decode()
    path = write_jsonl(tmp_path / "lcb.jsonl", [row("ok"), row("abc123", private_test_cases=bad)])
    with pytest.raises(InputError) as info:
        data.read_lcb_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: question_id 'abc123': private_test_cases: "), message
    assert fragment in message and "\n" not in message
    assert "UNPICKLED" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("over", "fragment"),
    [
        ({"private_test_cases": "not base64 !!"}, "private_test_cases: neither JSON nor"),
        ({"metadata": "{"}, "metadata: not JSON"),
        ({"metadata": json.dumps({"func_name": "a b"})}, "func_name 'a b' is not a name"),
        ({"public_test_cases": "[]", "private_test_cases": "[]"}, "no tests"),
        ({"public_test_cases": '[{"input": "1"}]'}, "missing required field `output`"),
        ({"question_id": "ok"}, "appears twice"),
    ],
)
def test_bad_rows_are_one_line_naming_file_line_and_question(
    tmp_path: Path, over: dict[str, Any], fragment: str
) -> None:
    path = write_jsonl(tmp_path / "lcb.jsonl", [row("ok"), row("q2", **over)])
    with pytest.raises(InputError) as info:
        data.read_lcb_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ") and fragment in message, message
    assert "\n" not in message


def test_functional_tests_must_be_json_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "f.jsonl", [row(tests=[("[1,\n2", "3")], func="f")])
    with pytest.raises(InputError, match=r"f\.jsonl:1: question_id 'q1': test 1: a functional"):
        data.read_lcb_file(path)


# --- the fixture --------------------------------------------------------------------


def test_fixture_has_the_kinds_of_problem_it_must() -> None:
    assert 10 <= len(FIXTURE) <= 20
    assert "livecodebench" in BENCHMARKS and get_suite("livecodebench").default_k == (1, 5)
    assert {p.fields["func_name"] for p in FIXTURE} >= {"", "twoSum", "findMaxAverage"}
    biggest = max(len(i) for p in FIXTURE for i, _ in data.tests_of(p))
    assert biggest >= 1_000_000
    assert any("." in o for p in FIXTURE if not p.fields["func_name"] for _, o in data.tests_of(p))
    assert all(p.fields["canonical_solution"] for p in FIXTURE)


def test_fixture_is_what_its_script_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_fixture", FIXTURE_DIR / "make_fixture.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(tmp_path)
    fresh = data.parse_lcb((tmp_path / "problems.jsonl").read_bytes(), "fresh")
    assert fresh == FIXTURE
    assert (tmp_path / "mock.jsonl").read_text() == (FIXTURE_DIR / "mock.jsonl").read_text()


# --- programs through the sandbox ---------------------------------------------------


def judge_all(
    cases: list[tuple[Problem, str]], scoring: str = "strict", **limits: Any
) -> list[tuple[str, str]]:
    params = Params(scoring=scoring, livecodebench=LiveCodeBenchParams(**limits))  # type: ignore[arg-type]
    suite = LiveCodeBench(params)
    out: list[tuple[str, str]] = [("", "")] * len(cases)

    async def go() -> None:
        async with LocalPool(workers=2, limits=Limits(cpu_s=3.0, wall_s=60.0)) as pool:

            async def one(i: int, p: Problem, code: str) -> None:
                verdict, _ = await suite.judge(p, code, pool)
                out[i] = (verdict.__struct_config__.tag, verdict.reason)  # type: ignore[assignment]

            async with anyio.create_task_group() as tg:
                for i, (p, code) in enumerate(cases):
                    tg.start_soon(one, i, p, code)

    anyio.run(go)
    return out


CONSTANT = problem([("1\n", "42\n"), ("2\n", "42\n")])
ECHO = problem([("1\n", "1\n"), ("2\n", "2\n"), ("3\n", "3\n")])
PAIR = problem([("3 5\n", "8\n")])
FUNC = problem([("[1, 2]\n3", "[1, 2, 3]"), ("[]\n0", "[0]")], func="push")
PUSH = "class Solution:\n    def push(self, xs, x):\n        return {}\n"

EDGE_CASES: list[tuple[str, Problem, str, str, str]] = [
    ("never reads stdin", CONSTANT, "print(42)\n", "passed", ""),
    ("no output", CONSTANT, "pass\n", "failed", "test 1: wrong answer"),
    ("exit after the answer", CONSTANT, "import sys\nprint(42)\nsys.exit(3)\n", "passed", ""),
    (
        "main guard",
        ECHO,
        "def main():\n    print(input())\nif __name__ == '__main__':\n    main()\n",
        "passed",
        "",
    ),
    ("reads past the input", ECHO, "print(input())\ninput()\ninput()\n", "failed", "EOFError"),
    (
        "sys.stdin.readline past the input reads nothing, as a file",
        PAIR,
        "import sys\nfor _ in range(3):\n    line = sys.stdin.readline()\nprint(repr(line))\n",
        "failed",
        "wrong answer at line 1: \"''\" != '8'",
    ),
    (
        "readline past the input on stdin bound at load: StopIteration, as upstream",
        PAIR,
        "from sys import stdin\nfor _ in range(3):\n    stdin.readline()\n",
        "failed",
        "StopIteration",
    ),
    (
        "floods stdout",
        ECHO,
        "while True:\n    print('x' * 65536)\n",
        "failed",
        f"printed more than {OUTPUT_CAP} characters",
    ),
    (
        "floods, catching everything",
        ECHO,
        "for _ in range(1000):\n    try:\n        print('x' * 65536)\n    except BaseException:\n"
        "        pass\n",
        "failed",
        "printed more than",
    ),
    (
        "stdin bound at load reads the input through upstream's patches",
        PAIR,
        "from sys import stdin\na, b = map(int, stdin.read().split())\nprint(a + b)\n",
        "passed",
        "",
    ),
    (
        "stdin bound at load: its buffer is the process's own (empty), as upstream",
        PAIR,
        "from sys import stdin\na, b = map(int, stdin.buffer.read().split())\nprint(a + b)\n",
        "failed",
        "ValueError",
    ),
    (
        "upstream's stdin stand-in cannot be iterated",
        PAIR,
        "import sys\nfor line in sys.stdin:\n    print(sum(map(int, line.split())))\n",
        "failed",
        "not iterable",
    ),
    (
        "input() reads an empty line",
        problem([("\n3 5\n", "8\n")]),
        "input()\na, b = map(int, input().split())\nprint(a + b)\n",
        "passed",
        "",
    ),
    (
        "top-level names are a function's locals, as upstream",
        ECHO,
        "n = int(input())\ndef f():\n    global n\n    return n\nprint(f())\n",
        "failed",
        "NameError",
    ),
    (
        "upstream's standard imports",
        PAIR,
        "a, b = map(int, input().split())\nprint(sqrt((a + b) ** 2))\n",
        "passed",
        "",
    ),
    (
        "a stdin program that defines class Solution does not load, as upstream",
        PAIR,
        "class Solution:\n    def add(self, a, b):\n        return a + b\n\n\n"
        "a, b = map(int, input().split())\nprint(Solution().add(a, b))\n",
        "failed",
        "no module-level Solution",
    ),
    (
        "nor one that says class Solution in a string",
        PAIR,
        "a, b = map(int, input().split())\nprint(a + b if 'class Solution' else 0)\n",
        "failed",
        "no module-level Solution",
    ),
    (
        "a comment that says class Solution does not count (upstream reads the parsed program)",
        PAIR,
        "# class Solution\na, b = map(int, input().split())\nprint(a + b)\n",
        "passed",
        "",
    ),
    ("a tuple for a list", FUNC, PUSH.format("tuple(xs + [x])"), "passed", ""),
    (
        "a value whose __eq__ says yes",
        FUNC,
        "class V:\n    def __eq__(self, o):\n        return True\n" + PUSH.format("V()"),
        "failed",
        "strict scoring: the test asked for == of a V object",
    ),
    (
        "no such method",
        FUNC,
        PUSH.replace("push", "pop").format("xs"),
        "failed",
        "no attribute 'push'",
    ),
    (
        "state kept between tests, as upstream",
        FUNC,
        "class Solution:\n    def __init__(self):\n        self.calls = 0\n"
        "    def push(self, xs, x):\n        self.calls += 1\n"
        "        return xs + [x] if self.calls < 2 else None\n",
        "failed",
        "test 2: wrong",
    ),
]


def test_edge_case_programs_through_the_sandbox() -> None:
    got = judge_all([(p, code) for _, p, code, _, _ in EDGE_CASES])
    for (name, _, _, status, fragment), (s, reason) in zip(EDGE_CASES, got, strict=True):
        assert s == status and fragment in reason, (name, s, reason)


def test_a_loop_on_one_test_is_a_timeout_at_that_tests_limit() -> None:
    loops = "n = int(input())\nwhile n == 2:\n    pass\nprint(n)\n"
    sleeps = "import time\nn = int(input())\nif n == 3:\n    time.sleep(600)\nprint(n)\n"
    got = judge_all([(ECHO, loops), (ECHO, sleeps)], test_timeout_s=0.5, problem_timeout_s=120.0)
    for status, reason in got:
        assert status == "timeout", reason
        assert "time limit of 0.5s" in reason, reason  # not the problem's 120 s budget


def test_the_whole_problem_has_a_cpu_budget() -> None:
    spin = (
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.7:\n"
        "    pass\nprint(input())\n"
    )
    ((status, reason),) = judge_all([(ECHO, spin)], test_timeout_s=10.0, problem_timeout_s=1.0)
    assert status == "timeout" and "1s" in reason, reason


def test_official_scoring_times_each_test_too() -> None:
    loops = "n = int(input())\nwhile n == 2:\n    pass\nprint(n)\n"
    ((status, reason),) = judge_all([(ECHO, loops)], "official", test_timeout_s=0.5)
    assert status == "failed" and "time limit of 0.5s" in reason, reason


def test_strict_and_official_agree_on_the_honest_edge_cases() -> None:
    cases = [(p, code) for _, p, code, _, _ in EDGE_CASES]
    strict = [s for s, _ in judge_all(cases)]
    official = [s for s, _ in judge_all(cases, "official")]
    forged = [name for name, *_ in EDGE_CASES].index("a value whose __eq__ says yes")
    # The one difference: the single program lets the candidate's __eq__ decide.
    assert official[forged] == "passed" and strict[forged] == "failed"
    del strict[forged], official[forged]
    assert strict == official


# --- through the CLI ------------------------------------------------------------------


def test_mock_replay_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "livecodebench", "--platform", "llm-mock", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.dataset.name == "livecodebench-fixture" and summary.dataset.size == 10
    passed = sum(r.status == "passed" for r in results)
    assert 0 < passed < len(results)
    assert value(summary, "livecodebench.pass_at_1") > 0
    assert summary.measurement("livecodebench.pass_at_5") is None  # n < 5 per problem


@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_canonical_solutions_pass_through_the_cli(tmp_path: Path, scoring: str) -> None:
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "livecodebench", "--platform", "llm-mock",
        "--set", "params.execute=true", "--set", f"params.scoring={scoring}", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert [r.status for r in results] == ["passed"] * 10, [r.reason for r in results]
    assert value(summary, "livecodebench.pass_at_1") == 1.0


@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_mock_records_agree_with_both_scorings(tmp_path: Path, scoring: str) -> None:
    """The fixture's answers (canonical, honest alternatives, honest wrong
    ones) score as recorded, in upstream's custom-evaluation file shape; the
    one that loops is a timeout under strict scoring and a failure under
    official scoring (upstream counts it as a failure too)."""
    records = get_suite("livecodebench").mock_records()
    by_problem: dict[str, list[str]] = {}
    for rec in records:
        by_problem.setdefault(rec.problem_id, []).append(rec.completion)
    samples = tmp_path / "custom.json"
    samples.write_text(
        json.dumps([{"question_id": k, "code_list": v} for k, v in by_problem.items()])
    )
    out = tmp_path / "run"
    proc = aioeval(
        "score", "--benchmark", "livecodebench", "--samples", str(samples), "--out", str(out),
        "--set", f"params.scoring={scoring}", "--set", "params.livecodebench.test_timeout_s=1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _summary, results = read_run(out)
    got = {(r.problem_id, r.sample_index): r for r in results}
    for rec in records:
        want = rec.status
        if scoring == "official" and want == "timeout":
            want = "failed"
        result = got[(rec.problem_id, rec.sample_index)]
        assert result.status == want, (rec.problem_id, rec.sample_index, result.reason)


def test_a_dataset_with_a_code_pickle_is_refused_on_the_cli(tmp_path: Path) -> None:
    bad = base64.b64encode(zlib.compress(pickle.dumps(_Evil()))).decode()
    path = write_jsonl(
        tmp_path / "release.jsonl", [row("3000"), row("3001", private_test_cases=bad)]
    )
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "3000", "completion": "print(1)"}])
    out = tmp_path / "run"
    proc = aioeval(
        "score", "--benchmark", "livecodebench", "--dataset", str(path), "--samples",
        str(samples), "--out", str(out),
    )  # fmt: skip
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:2: question_id '3001'" in lines[0], proc.stderr
    assert "UNPICKLED" not in proc.stdout + proc.stderr
    assert not (out / "results.jsonl").exists()


def test_a_release_file_scores_under_its_own_name(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "release_v9.jsonl", [row("3000", tests=[("2\n", "2\n")] * 2)])
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": "3000", "completion": "print(input())"},
            {"task_id": "3000", "completion": ""},
        ],
    )
    out = tmp_path / "run"
    proc = aioeval(
        "score", "--benchmark", "livecodebench", "--dataset", str(path), "--samples",
        str(samples), "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.dataset.name == "release_v9"
    assert sorted(r.status for r in results) == ["failed", "passed"]


@pytest.mark.anyio
async def test_endpoint_run_against_the_fake_server(tmp_path: Path) -> None:
    """Prompts in upstream's format, answers with prose and two fences (the
    last one is run), scored: one problem answered wrongly."""
    table = [(p.fields["question_content"], p) for p in FIXTURE]

    def answer(text: str, sample: int) -> str:
        for content, p in table:
            if content in text and "### Format:" in text:
                code = p.fields["canonical_solution"]
                if p.id == "lcb-mean":
                    code = code.replace("/ n", "// n")
                return f"First try:\n```python\nprint(0)\n```\nFinal:\n```python\n{code}```\n"
        return "no idea"

    async with FakeOpenAI(FakeConfig(), answer) as fake:
        cfg = decode_config(
            {
                "target": {"mode": "runtime", "endpoint": fake.url, "model": "fake-model"},
                "params": {"allow_code_execution": True},
            }
        )
        spec = RunSpec(
            benchmark="livecodebench", platform="llm-endpoint", config=cfg, out_dir=str(tmp_path)
        )
        summary = await evaluate(spec)
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 10 and summary.complete
    assert {r["problem_id"] for r in rows if r["status"] != "passed"} == {"lcb-mean"}
    assert all("```" not in r["candidate"] and "print(0)" not in r["candidate"] for r in rows)


SWALLOWS = {
    "lcb-sum": "import time\ntry:\n    time.sleep(20)\nexcept:\n    pass\n"
    "a, b = map(int, input().split())\nprint(a + b)\n",
    "lcb-two-sum": "import time\nclass Solution:\n    def twoSum(self, nums, target):\n"
    "        try:\n            time.sleep(20)\n        except:\n            pass\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n",
}


@pytest.mark.parametrize("scoring", ["official", "strict"])
def test_a_program_that_swallows_the_time_limit_is_judged_as_upstream(
    tmp_path: Path, scoring: str
) -> None:
    """A bare ``except:`` around a sleep past the test's limit. Upstream's
    alarm handler prints a line, then raises: a stdin program that swallows
    it has the line in its captured output (a wrong answer); a functional
    program returns its value, which upstream compares and passes. Strict
    scoring ends the call at the limit (a timeout) either way."""
    samples = write_jsonl(
        tmp_path / "s.jsonl", [{"task_id": k, "completion": v} for k, v in SWALLOWS.items()]
    )
    out = tmp_path / scoring
    proc = aioeval(
        "score", "--benchmark", "livecodebench", "--samples", str(samples), "--out", str(out),
        "--quiet", "--set", f"params.scoring={scoring}",
        "--set", "params.livecodebench.test_timeout_s=1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _, results = read_run(out)
    got = {r.problem_id: r.status for r in results}
    if scoring == "strict":
        assert got == {"lcb-sum": "timeout", "lcb-two-sum": "timeout"}
    else:
        assert got == {"lcb-sum": "failed", "lcb-two-sum": "passed"}
        reason = next(r.reason for r in results if r.problem_id == "lcb-sum")
        assert "2 output line(s), expected 1" in reason
