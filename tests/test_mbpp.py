"""The MBPP-style suite: its data checks, its programs, and runs end to end
through the CLI (mock replay, reference solutions, ``--dataset FILE``,
samples) and against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_cli import aioeval, read_run, value

from aioeval.config import Params, decode_config
from aioeval.errors import ConfigError, InputError
from aioeval.fake_openai import FakeConfig, FakeOpenAI
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites import BENCHMARKS, get_suite
from aioeval.suites.mbpp import data
from aioeval.suites.mbpp.suite import build_program, checked_task, driver
from aioeval.types import Problem

FIXTURE = data.fixture_problems()
BY_ID = {p.id: p for p in FIXTURE}


def plan_of(problem: Problem) -> data.TestPlan:
    return data.plan_tests(data.tests_of(problem), problem.fields["test_setup_code"])


def row(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_id": 7,
        "text": "Write a function to double a number.",
        "code": "def double(x):\n    return 2 * x\n",
        "test_list": ["assert double(2) == 4", "assert double(-1) == -2"],
        "test_setup_code": "",
        "challenge_test_list": [],
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_registered_so_the_cli_offers_it() -> None:
    assert "mbpp" in BENCHMARKS
    assert get_suite("mbpp").name == "mbpp"


def test_fixture_loads_with_int_ids_as_strings() -> None:
    assert [p.id for p in FIXTURE] == [str(i) for i in range(1, 11)]
    assert json.loads(BY_ID["3"].fields["challenge_test_list"]) != []
    assert BY_ID["8"].fields["test_setup_code"].startswith("GRID")


def test_plan_finds_the_solutions_functions_and_the_modules_the_asserts_use() -> None:
    assert plan_of(BY_ID["1"]) == data.TestPlan(functions=("count_vowels",), modules=())
    assert plan_of(BY_ID["7"]) == data.TestPlan(functions=("hypotenuse",), modules=("math",))
    # GRID comes from the setup, set/sorted are builtins: none is the candidate's.
    assert plan_of(BY_ID["8"]).functions == ("grid_sum",)
    assert plan_of(BY_ID["10"]).functions == ("common_items",)
    assert plan_of(BY_ID["9"]).functions == ("to_celsius", "to_fahrenheit")
    # Names a test binds itself (comprehensions, lambdas) are not the candidate's.
    plan = data.plan_tests(("assert all(f(x) for x in range(3))", "assert (lambda y: g(y))(1)"), "")
    assert plan.functions == ("f", "g")


MAX_ABS = row(
    task_id="abs/1",
    text="Write a function max that returns the largest absolute value in a list.",
    code="import builtins\n\ndef max(xs):\n    return builtins.max(abs(x) for x in xs)\n",
    test_list=["assert max([-5, 3]) == 5", "assert max([2, -1]) == 2"],
)


def test_a_function_named_like_a_builtin_is_the_solutions_when_the_code_defines_it() -> None:
    tests, code = tuple(MAX_ABS["test_list"]), MAX_ABS["code"]
    assert data.plan_tests(tests, "", code).functions == ("max",)
    with pytest.raises(ValueError, match="no name the solution could define"):
        data.plan_tests(tests, "")  # without the reference code, max is the builtin


def test_a_builtin_named_task_is_scored_against_the_candidates_function(tmp_path: Path) -> None:
    dataset = write_jsonl(tmp_path / "abs.jsonl", [MAX_ABS])
    samples = write_jsonl(
        tmp_path / "samples.jsonl",
        [
            {"task_id": "abs/1", "completion": MAX_ABS["code"]},
            {"task_id": "abs/1", "completion": "x = 1\n"},  # leaves max to the builtin
        ],
    )
    out = tmp_path / "run"
    proc = aioeval(
        "score", "--benchmark", "mbpp", "--dataset", str(dataset), "--samples", str(samples),
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _, results = read_run(out)
    results.sort(key=lambda r: r.sample_index)  # rows land in completion order
    assert [r.status for r in results] == ["passed", "failed"], [r.reason for r in results]
    assert "max" in (results[1].reason or "")


def test_strict_split_keeps_the_asserts_out_of_the_candidates_program() -> None:
    p = BY_ID["9"]
    task = checked_task(p, "def to_celsius(f):\n    return 0\n")
    assert "assert" not in task.program and "GRID" not in task.program
    assert task.program.endswith("def to_celsius(f):\n    return 0\n")
    assert "def to_fahrenheit(*args, **kwargs)" in task.setup
    assert "test 3: assert round(to_fahrenheit" in task.driver
    assert "import math" in checked_task(BY_ID["7"], "").setup


def test_driver_labels_each_assert_and_keeps_its_meaning() -> None:
    text = driver(("assert f(1) == 2", "assert f(2) == 3, 'own message'"))
    scope: dict[str, Any] = {"f": lambda x: x + 1}
    exec(text, scope)
    scope["f"] = lambda x: x
    with pytest.raises(AssertionError, match=r"^test 1: assert f\(1\) == 2$"):
        exec(text, scope)
    scope["f"] = lambda x: 2 if x == 1 else 0
    with pytest.raises(AssertionError, match=r"^own message$"):
        exec(text, scope)


def test_official_program_is_setup_code_then_tests() -> None:
    p = BY_ID["8"]
    program = build_program(p, "CODE")
    assert program == (
        "GRID = [[1, 2, 3], [4, 5, 6]]\nCODE\n"
        "assert grid_sum(GRID) == 21\nassert grid_sum([]) == 0\nassert grid_sum([[7]]) == 7\n"
    )


def test_prompt_gives_the_task_and_the_first_test() -> None:
    prompt = get_suite("mbpp").prompt(BY_ID["2"])
    user = prompt.messages[-1]["content"]
    assert "second largest distinct value" in user
    assert "assert second_largest([4, 1, 7, 7, 3]) == 4" in user
    assert "assert second_largest([5, 5]) is None" not in user  # only the first test
    assert prompt.text.startswith('"""') and "assert second_largest([4, 1" in prompt.text


def test_unwrap_takes_the_fenced_code() -> None:
    suite = get_suite("mbpp")
    raw = "Sure:\n```python\ndef f(x):\n    return x\n```\nThat is all."
    assert suite.unwrap(BY_ID["1"], raw) == "def f(x):\n    return x\n"


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "malformed"),
        (row(text=None), "missing required field `text`"),
        (row(test_list=None), "missing required field `test_list`"),
        (row(test_list=["assert double(2) == 4", 3]), "`$.test_list[1]`"),
        (row(task_id=[1]), "`$.task_id`"),
        (row(test_list=[]), "test_list: no tests"),
        (row(test_list=["assert double(2) == 4", "assert double(("]), "test_list[1]: not valid"),
        (row(test_setup_code="import"), "test_setup_code: not valid Python"),
        (row(challenge_test_list=["assert ("]), "challenge_test_list[0]: not valid"),
        (row(test_list=["assert len('ab') == 2"]), "test_list: the asserts use no name"),
        (row(task_id=1), "task_id: '1' appears twice"),
    ],
)
def test_bad_dataset_lines_name_file_line_and_field(
    tmp_path: Path, line: Any, fragment: str
) -> None:
    path = write_jsonl(tmp_path / "tasks.jsonl", [row(task_id=1), line])
    with pytest.raises(InputError) as info:
        data.read_mbpp_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ") and fragment in message, message
    assert "\n" not in message


def test_a_bad_dataset_is_one_line_on_the_cli_and_nothing_is_written(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "tasks.jsonl", [row(), row(task_id=8, text=5)])
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "mbpp", "--dataset", str(path), "--set", "params.execute=true",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:2" in lines[0] and "$.text" in lines[0], proc.stderr
    assert not (out / "results.jsonl").exists()


def test_mock_replay_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = aioeval("run", "--benchmark", "mbpp", "--platform", "llm-mock", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.benchmark == "mbpp" and summary.dataset.name == "mbpp-fixture"
    assert summary.dataset.size == len(results) == 10
    assert value(summary, "mbpp.pass_at_1") == pytest.approx(0.4)
    assert {r.status for r in results} == {"passed", "failed", "error", "timeout"}


def test_reference_solutions_score_one_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "mbpp", "--platform", "llm-mock", "--set", "params.execute=true",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert [r.status for r in results] == ["passed"] * 10, [r.reason for r in results]
    assert value(summary, "mbpp.pass_at_1") == 1.0
    assert summary.measurement("mbpp.pass_at_1").official  # type: ignore[union-attr]


def test_a_dataset_file_runs_under_its_own_name_version_and_digest(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "mbpp" / "problems.jsonl"
    own = tmp_path / "team-tasks.jsonl"
    own.write_bytes(fixture.read_bytes() + json.dumps(row(task_id="team/1")).encode() + b"\n")
    out = tmp_path / "run"
    proc = aioeval(
        "run", "--benchmark", "mbpp", "--dataset", str(own), "--set", "params.execute=true",
        "--set", "params.scoring=official", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary, results = read_run(out)
    assert summary.dataset.name == "team-tasks" and summary.dataset.size == 11
    assert summary.dataset.version.startswith("sha256:")
    fixture_run = anyio.run(lambda: get_suite("mbpp").load(mode="reference"))
    assert summary.dataset.digest != fixture_run.digest
    assert [r.status for r in results] == ["passed"] * 11
    assert any(r.problem_id == "team/1" for r in results)


def test_dataset_file_and_replay_or_missing_code_are_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [row(), row(task_id=8, code=None)])
    suite = get_suite("mbpp", Params(dataset_path=str(path)))
    with pytest.raises(ConfigError, match="replays the bundled"):
        anyio.run(lambda: suite.load(mode="replay"))
    with pytest.raises(InputError, match=r"1 problem\(s\) have no code \(first: task_id 8"):
        anyio.run(lambda: suite.load(mode="reference"))
    assert anyio.run(lambda: suite.load(mode="score")).size == 2
    missing = get_suite("mbpp", Params(dataset_path=str(tmp_path / "nope.jsonl")))
    with pytest.raises(InputError, match=r"nope\.jsonl: cannot read"):
        anyio.run(lambda: missing.load(mode="score"))


def test_read_samples_accepts_int_or_str_ids(tmp_path: Path) -> None:
    suite = get_suite("mbpp")
    ds = anyio.run(lambda: suite.load(mode="score"))
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [{"task_id": 2, "completion": "a"}, {"task_id": "2", "completion": "b"}],
    )
    got = [(c.problem_id, c.sample_index, c.text) for c in suite.read_samples(path, ds)]
    assert got == [("2", 0, "a"), ("2", 1, "b")]
    bad = write_jsonl(tmp_path / "b.jsonl", [{"task_id": 2, "completion": "a"}, {"task_id": 99}])
    with pytest.raises(InputError, match=r"b.jsonl:2: .*missing required field `completion`"):
        list(suite.read_samples(bad, ds))


@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_mock_records_agree_with_real_execution(tmp_path: Path, scoring: str) -> None:
    """The replayed fixture says what scoring its completions really gives,
    and both scoring models agree on these honest answers."""
    records = get_suite("mbpp").mock_records()
    samples = write_jsonl(
        tmp_path / "s.jsonl",
        [{"task_id": r.problem_id, "completion": r.completion} for r in records],
    )
    out = tmp_path / "run"
    proc = aioeval(
        "score", "--benchmark", "mbpp", "--samples", str(samples), "--out", str(out),
        "--set", f"params.scoring={scoring}", "--set", "params.timeout_s=1",
        "--set", "params.sandbox.wall_timeout_s=30",  # a timeout, never starved, under load
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _summary, results = read_run(out)
    got = {r.problem_id: r for r in results}
    for rec in records:
        assert got[rec.problem_id].status == rec.status, (rec.problem_id, got[rec.problem_id])
        if scoring == "strict" and rec.status != "timeout":
            assert got[rec.problem_id].reason == rec.reason


def _answers(problems: list[Problem], wrong: set[str]) -> Any:
    """Chat answers: each problem's reference code in a fence, found by the
    task text in the prompt; problems in ``wrong`` get a function returning None."""
    table = [(p.fields["text"], p) for p in problems]

    def answer(text: str, sample: int) -> str:
        for task, p in table:
            if task in text:
                code = p.fields["code"]
                if p.id in wrong:
                    code = re.sub(r"(def \w+\(.*\):\n)(.|\n)*", r"\1    return None\n", code)
                return f"Here it is:\n```python\n{code}```\n"
        return "```python\npass\n```"

    return answer


@pytest.mark.anyio
async def test_endpoint_run_against_the_fake_server(tmp_path: Path) -> None:
    async with FakeOpenAI(FakeConfig(), _answers(FIXTURE, {"4", "9"})) as fake:
        cfg = decode_config(
            {
                "target": {"mode": "runtime", "endpoint": fake.url, "model": "fake-model"},
                "params": {"allow_code_execution": True, "n_samples": 2},
            }
        )
        spec = RunSpec(benchmark="mbpp", platform="llm-endpoint", config=cfg, out_dir=str(tmp_path))
        summary = await evaluate(spec)
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and summary.complete
    failed = {r["problem_id"] for r in rows if r["status"] != "passed"}
    assert failed == {"4", "9"}
    assert all("```" not in r["candidate"] for r in rows)
    m = summary.measurement("mbpp.pass_at_1")
    assert m is not None and m.value == pytest.approx(0.8)
