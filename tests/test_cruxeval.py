"""CRUXEval-O/-I end to end: real sandbox pool, real files, the library API."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from aioeval.cli import main
from aioeval.config import Params, RunConfig
from aioeval.errors import InputError
from aioeval.executors.local import LocalPool
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites import get_suite
from aioeval.suites.cruxeval import data as crux_data
from aioeval.suites.cruxeval.suite import CruxEvalI, CruxEvalO
from aioeval.types import Failed, Passed, Problem, Summary

FIXTURE = Path(crux_data.__file__).resolve().parent.parent.parent / "fixtures" / crux_data.FIXTURE


def _run(
    out: Path, suite_name: str, samples: Path | None = None, **params: Any
) -> tuple[Summary, list[dict[str, Any]]]:
    spec = RunSpec(
        benchmark=suite_name,
        config=RunConfig(params=Params(**params)),
        out_dir=str(out),
        samples=str(samples) if samples else None,
    )

    async def go() -> Summary:
        return await evaluate(spec)

    summary = anyio.run(go)
    lines = (out / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]  # in completion order
    return summary, sorted(rows, key=lambda r: (r["problem_id"], r["sample_index"]))


def _value(summary: Summary, name: str) -> float:
    m = summary.measurement(f"{summary.benchmark}.{name}")
    assert m is not None, name
    return m.value


@pytest.mark.parametrize("suite_name", ["cruxeval-o", "cruxeval-i"])
@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_reference_answers_pass_on_the_fixture(
    tmp_path: Path, suite_name: str, scoring: str
) -> None:
    summary, rows = _run(tmp_path / "out", suite_name, execute=True, scoring=scoring)
    assert summary.dataset.size >= 20 and len(rows) == summary.dataset.size
    assert summary.counts["passed"] == len(rows), [r for r in rows if r["status"] != "passed"]
    assert summary.scoring == scoring
    assert _value(summary, "pass_at_1") == 1.0
    # the official flag: only the upstream-compatible mode is comparable
    m = summary.measurement(f"{suite_name}.pass_at_1")
    assert m is not None and m.official is (scoring == "official")


@pytest.mark.parametrize("suite_name", ["cruxeval-o", "cruxeval-i"])
@pytest.mark.parametrize("scoring", ["strict", "official"])
def test_reference_answers_pass_on_all_800(
    tmp_path: Path, shared_data: Path, suite_name: str, scoring: str
) -> None:
    dataset = shared_data / "cruxeval" / "cruxeval.jsonl"
    summary, rows = _run(
        tmp_path / "out", suite_name, execute=True, scoring=scoring, dataset_path=str(dataset)
    )
    assert summary.dataset.size == 800 and summary.dataset.version == crux_data.PINNED_VERSION
    failing = [(r["problem_id"], r["reason"]) for r in rows if r["status"] != "passed"]
    assert failing == [] and len(rows) == 800


@pytest.mark.parametrize("suite_name", ["cruxeval-o", "cruxeval-i"])
def test_replay_runs_offline_with_failures(tmp_path: Path, suite_name: str) -> None:
    suite = get_suite(suite_name)
    records = suite.mock_records()
    summary, rows = _run(tmp_path / "out", suite_name)
    assert summary.dataset.name == "cruxeval-mock-fixture"
    assert len(rows) == len(records) and summary.executions == 0
    assert 0 < summary.counts["failed"] < len(rows)
    assert summary.counts["passed"] == sum(r.status == "passed" for r in records)


@pytest.mark.parametrize("suite_name", ["cruxeval-o", "cruxeval-i"])
def test_mock_records_agree_with_real_execution(tmp_path: Path, suite_name: str) -> None:
    """The pre-scored fixture is what strict scoring really says."""
    suite = get_suite(suite_name)
    records = suite.mock_records()
    gens: dict[str, list[str]] = {}
    for r in sorted(records, key=lambda r: r.sample_index):
        gens.setdefault(r.problem_id, []).append(r.completion)
    samples = tmp_path / "gens.json"
    samples.write_text(json.dumps(gens))
    _, rows = _run(tmp_path / "out", suite_name, samples=samples, dataset_path=str(FIXTURE))
    got = {(r["problem_id"], r["sample_index"]): (r["status"], r["reason"]) for r in rows}
    want = {(r.problem_id, r.sample_index): (r.status, r.reason) for r in records}
    assert got == want


# --- strict mode closes the official evaluator's loopholes -----------------

IDENTITY = Problem(
    id="p", fields={"code": "def f(x):\n    return x", "input": "1", "output": "'s'"}
)
ALWAYS_EQUAL = Problem(
    id="q",
    fields={
        "code": "class E:\n    def __eq__(self, other):\n        return True\n"
        "def f(x):\n    return E()",
        "input": "0",
        "output": "[1, 2]",
    },
)
INT_SUBCLASS = Problem(
    id="r",
    fields={
        "code": "class I(int):\n    __eq__ = lambda s, o: True\n    __hash__ = int.__hash__\n"
        "def f(x):\n    return I(x)",
        "input": "0",
        "output": "7",
    },
)

# (suite, problem, answer, strict reason fragment); each passes the official check
LOOPHOLES = [
    (CruxEvalI, IDENTITY, "f(0) or True", "exactly one call"),
    (
        CruxEvalI,
        IDENTITY,
        "f(__import__('sys')._getframe(0).f_code.co_consts[1])",  # reads the caller's expected value
        "is not a literal",
    ),
    (CruxEvalI, ALWAYS_EQUAL, "f(0)", "not plain builtin data"),
    (CruxEvalI, INT_SUBCLASS, "f(0)", "f returns 7, not 0"),  # judged by its int value
    (CruxEvalO, IDENTITY, "type('E', (), {'__eq__': lambda s, o: True})()", "not a literal"),
    (CruxEvalO, IDENTITY, "'s' if True else 0", "not a literal"),
]


@pytest.mark.anyio
async def test_strict_closes_official_loopholes() -> None:
    async with LocalPool(workers=2) as pool:
        for cls, problem, answer, reason in LOOPHOLES:
            official, _ = await cls(Params(scoring="official")).judge(problem, answer, pool)
            assert isinstance(official, Passed), (answer, official)
            strict, _ = await cls(Params(scoring="strict")).judge(problem, answer, pool)
            assert isinstance(strict, Failed) and reason in strict.reason, (answer, strict)
        # a plain correct answer passes strict, by value equality like the official check
        ok, execution = await CruxEvalI(Params()).judge(IDENTITY, "f('s')", pool)
        assert isinstance(ok, Passed) and execution.wall_ms is not None
        ok, execution = await CruxEvalO(Params()).judge(IDENTITY, "'s'", pool)
        assert isinstance(ok, Passed) and execution.wall_ms is None  # no sandbox for -O
        wrong, _ = await CruxEvalI(Params()).judge(IDENTITY, "f('t')", pool)
        assert isinstance(wrong, Failed) and "'s', not 't'" in wrong.reason


# --- official skip rules, the shrinking n, and dedup ------------------------


def _subset(tmp_path: Path, ids: list[str]) -> Path:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line]
    path = tmp_path / "subset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] in ids))
    return path


def test_official_n_rule_and_dedup(tmp_path: Path) -> None:
    # fixture_2: f([7, -3, 12, 5, -8]) == 9; fixture_8: f(19) == (1, 5);
    # fixture_14: f(-17) == (17, 'negative')
    dataset = _subset(tmp_path, ["fixture_2", "fixture_8", "fixture_14"])
    gens = {
        # two skipped (no "f("; the second is a dedup copy), one pass, one fail
        "fixture_2": ["9", "9", "f([7, -3, 12, 5, -8])", "f([1])"],
        # nothing passes: the official list keeps both generations
        "fixture_14": ["(17, 'negative')", "f(1)"],
        "fixture_8": ["f(19)", "f( 19 )"],
    }
    samples = tmp_path / "gens.json"
    samples.write_text(json.dumps(gens))
    common: dict[str, Any] = {"dataset_path": str(dataset), "k": [1, 2]}

    off, rows = _run(tmp_path / "off", "cruxeval-i", samples, scoring="official", **common)
    skipped = {(r["problem_id"], r["sample_index"]) for r in rows if r["skipped"]}
    assert skipped == {("fixture_2", 0), ("fixture_2", 1), ("fixture_14", 0)}
    assert all(r["status"] == "failed" for r in rows if r["skipped"])
    # upstream lists: [True, False], [False, False], [True, True]
    assert math.isclose(_value(off, "pass_at_1"), (0.5 + 0 + 1) / 3, abs_tol=1e-12)
    assert math.isclose(_value(off, "pass_at_2"), (1 + 0 + 1) / 3, abs_tol=1e-12)
    assert off.executions == 5 and off.executions_saved == 1  # only the exact "9" repeats

    strict, rows = _run(tmp_path / "strict", "cruxeval-i", samples, **common)
    assert not any(r["skipped"] for r in rows)
    # n never shrinks: (4, 1), (2, 0), (2, 2)
    assert math.isclose(_value(strict, "pass_at_1"), (0.25 + 0 + 1) / 3, abs_tol=1e-12)
    assert math.isclose(_value(strict, "pass_at_2"), (0.5 + 0 + 1) / 3, abs_tol=1e-12)
    # "f( 19 )" is the same call as "f(19)": executed once
    assert strict.executions == 4 and strict.executions_saved == 2


def test_output_skip_rule(tmp_path: Path) -> None:
    dataset = _subset(tmp_path, ["fixture_8"])
    samples = tmp_path / "gens.json"
    samples.write_text(json.dumps({"fixture_8": ["f(19)", "(1, 5)", "(1, 4)"]}))
    summary, rows = _run(
        tmp_path / "out", "cruxeval-o", samples, scoring="official", dataset_path=str(dataset)
    )
    assert [r["skipped"] for r in rows] == [True, False, False]
    assert [r["status"] for r in rows] == ["failed", "passed", "failed"]
    assert _value(summary, "pass_at_1") == 0.5


# --- generations files -------------------------------------------------------


def _fixture_dataset(**params: Any) -> tuple[CruxEvalO, Any]:
    suite = CruxEvalO(Params(**params))

    async def go() -> Any:
        return await suite.load(mode="reference")

    return suite, anyio.run(go)


def test_read_samples_positions_and_limit(tmp_path: Path) -> None:
    suite, full = _fixture_dataset()
    gens = {p.id: [p.fields["output"], "0"] for p in full.problems}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(gens))
    cands = list(suite.read_samples(path, full))
    assert len(cands) == 2 * full.size
    assert [(c.sample_index, c.text) for c in cands[:2]] == [(0, gens["fixture_0"][0]), (1, "0")]
    # ids cut by params.limit are not "unknown"
    suite, three = _fixture_dataset(limit=3)
    assert {c.problem_id for c in suite.read_samples(path, three)} == {
        "fixture_0",
        "fixture_1",
        "fixture_2",
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"fixture_0": ["1"]}', r"no generations for 24 problem id\(s\) \(fixture_1, fixture_2, "),
        ("ALL+", r"1 problem id\(s\) \(sample_9\) not in the dataset"),
        ("[1, 2]", r"expected a JSON object"),
        ("{not json", r"not valid JSON"),
        ("ALL:fixture_3=7", r"fixture_3: expected a non-empty list of strings"),
        ("ALL:fixture_3=[]", r"fixture_3: expected a non-empty list of strings"),
        ("ALL:fixture_4=['a', 3]", r"fixture_4\[1\]: expected a string, got int"),
    ],
)
def test_read_samples_errors(tmp_path: Path, content: str, message: str) -> None:
    suite, ds = _fixture_dataset()
    if content.startswith("ALL"):
        table: dict[str, Any] = {p.id: ["1"] for p in ds.problems}
        if content == "ALL+":
            table["sample_9"] = ["1"]
        else:
            key, _, value = content[4:].partition("=")
            table[key] = eval(value)
        content = json.dumps(table)
    path = tmp_path / "g.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        list(suite.read_samples(path, ds))
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_cli_score_missing_ids_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "g.json"
    samples.write_text('{"fixture_0": ["1"]}')
    code = main(
        [
            "score",
            "--benchmark",
            "cruxeval-o",
            "--samples",
            str(samples),
            "--dataset",
            str(FIXTURE),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "no generations for 24 problem id(s)" in err


# --- prompts -------------------------------------------------------------


def test_prompts() -> None:
    problem = crux_data.fixture_problems()[3]
    for cls, line in (
        (CruxEvalO, "assert f([4, 9, 1, 4, 7], (9, 2, 4, 4)) == ??"),
        (CruxEvalI, "assert f(??) == [4, 9]"),
    ):
        direct = cls(Params(prompt="direct")).prompt(problem)
        cot = cls(Params(prompt="cot")).prompt(problem)
        user = direct.messages[-1]["content"]
        assert problem.fields["code"] in user and line in user
        assert "[ANSWER]" in user and "[/ANSWER]" in user
        assert "step by step" in cot.messages[-1]["content"] and "step by step" not in user
        assert user in direct.text


# --- acceptance: the official numbers on real Code Llama generations -----------

OFFICIAL = {
    "cruxeval-o": ("output", 0.342125, 0.40286706349206347),
    "cruxeval-i": ("input", 0.3595, 0.44991071428571433),
}


@pytest.mark.slow
@pytest.mark.parametrize("suite_name", ["cruxeval-o", "cruxeval-i"])
def test_official_mode_reproduces_upstream_scores(
    tmp_path: Path, shared_data: Path, suite_name: str
) -> None:
    """Every per-generation verdict and pass@1/pass@5 to 1e-9.

    With a 1 s CPU budget rather than the default 3 s: every generation that
    ends uses under 5 ms of CPU, and the 12 distinct ones that do not (26 of
    the -I generations) loop for ever, so both budgets give the same
    verdicts, and the 1 s one takes 24 s less CPU."""
    task, p1, p5 = OFFICIAL[suite_name]
    root = shared_data / "cruxeval"
    gen_dir = root / "codellama-7b-temp0.2"
    summary, rows = _run(
        tmp_path / "out",
        suite_name,
        gen_dir / f"generations_{task}.json",
        scoring="official",
        k=[1, 5],
        dataset_path=str(root / "cruxeval.jsonl"),
        timeout_s=1.0,
    )
    assert summary.candidates == 8000 and summary.complete
    assert abs(_value(summary, "pass_at_1") - p1) < 1e-9
    assert abs(_value(summary, "pass_at_5") - p5) < 1e-9
    scored = json.loads((gen_dir / f"scored_{task}.json").read_text())
    assert abs(scored["pass_at_1"] / 100 - p1) < 1e-9
    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["sample_index"]):
        by_problem.setdefault(r["problem_id"], []).append(r)
    mismatches = []
    for pid, expected in scored["raw_scored_generations"].items():
        ours = [r["status"] == "passed" for r in by_problem[pid] if not r["skipped"]]
        if True not in ours:
            ours = [False] * len(by_problem[pid])
        if ours != expected:
            mismatches.append(pid)
    assert mismatches == []
