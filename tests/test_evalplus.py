"""The EvalPlus suites (``humaneval-plus``, ``mbpp-plus``) on the project's
own fixture: verdicts per kind of answer, both parts, strict against
official, the reference's outputs computed once and cached, EvalPlus's
comparison rules, and bad files refused with a line that names them.
Parity with EvalPlus's own evaluator runs when one is installed
(``AIOEVAL_EVALPLUS_PYTHON``), as ``bench/evalplus_parity.py`` does."""

from __future__ import annotations

import json
import marshal
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aioeval
from aioeval.config import load_config
from aioeval.errors import InputError
from aioeval.suites import get_suite
from aioeval.suites.evalplus import data as evalplus_data
from aioeval.suites.evalplus import harness as evalplus_harness
from aioeval.suites.evalplus.suite import literal
from aioeval.suites.human_eval.data import parse_humaneval
from aioeval.types import CandidateResult, Summary

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalplus_fixture

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 0.3
STALL_S = 1.0
NOT_PASSED = {"failed", "timeout", "error"}


def _score(
    tmp: Path, flavor: str, scoring: str, samples: Path
) -> tuple[Summary, list[CandidateResult]]:
    bench = {"humaneval": "humaneval-plus", "mbpp": "mbpp-plus"}[flavor]
    cfg = load_config(
        None,
        [
            f"params.scoring={scoring}",
            f"params.evalplus.min_time_limit_s={LIMIT_S}",
            "params.k=[1,10]",
        ],
    )
    out = tmp / f"{flavor}-{scoring}"
    spec = aioeval.RunSpec(benchmark=bench, config=cfg, samples=str(samples), out_dir=str(out))
    summary = anyio.run(aioeval.evaluate, spec)
    lines = (out / "results.jsonl").read_bytes().splitlines()
    rows = [msgspec.json.decode(x, type=CandidateResult) for x in lines]
    return summary, sorted(rows, key=lambda r: (r.problem_id, r.sample_index))


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Any]]:
    """Both flavors, both scorings, on the fixture samples (one run each)."""
    tmp = tmp_path_factory.mktemp("evalplus")
    env = pytest.MonkeyPatch()
    env.setenv("AIOEVAL_CACHE_DIR", str(tmp / "cache"))
    try:
        paths = evalplus_fixture.write_samples(tmp, STALL_S)
        out: dict[tuple[str, str], Any] = {}
        for flavor, path in paths.items():
            kinds = [json.loads(x)["kind"] for x in path.read_text().splitlines()]
            for scoring in ("strict", "official"):
                summary, rows = _score(tmp, flavor, scoring, path)
                out[(flavor, scoring)] = (summary, rows, kinds)
        yield out
    finally:
        env.undo()


def _by_kind(rows: list[CandidateResult], kinds: list[str]) -> dict[str, list[CandidateResult]]:
    """Rows in sample order (each problem's samples come in kind order)."""
    per: dict[str, list[CandidateResult]] = {}
    order: dict[str, list[CandidateResult]] = {}
    for r in rows:
        order.setdefault(r.problem_id, []).append(r)
    kinds_per_problem = len(kinds) // len(order)
    for results in order.values():
        for i, r in enumerate(results):
            per.setdefault(kinds[i % kinds_per_problem], []).append(r)
    return per


@pytest.mark.parametrize("flavor", ["humaneval", "mbpp"])
def test_each_kind_of_answer_gets_its_verdict(scored: dict[Any, Any], flavor: str) -> None:
    summary, rows, kinds = scored[(flavor, "strict")]
    assert summary.complete and summary.counts["infra_error"] == 0
    per = _by_kind(rows, kinds)
    for r in per["reference"]:
        assert r.status == "passed" and r.parts == {"base": "passed", "plus": "passed"}, r
    for r in per["wrong_base"]:
        assert r.parts is not None and r.parts["base"] in NOT_PASSED, r
    for r in per["crash"]:
        assert r.status == "failed" and "ValueError" in r.reason, r
    for r in per["stall"]:
        assert r.status == "timeout" and f"{LIMIT_S:g}s" in r.reason, r
    for r in per["syntax"]:
        assert r.status == "error", r
    for r in per["exit_at_import"]:
        assert r.status == "failed", r
    # A counter that crashes on its third call: each part is a process of
    # its own, as under EvalPlus, so a short base part passes.
    assert any(r.parts == {"base": "passed", "plus": "failed"} for r in per["crash_late"])
    assert any(r.parts == {"base": "passed", "plus": "failed"} for r in per["wrong_plus"])


@pytest.mark.parametrize("flavor", ["humaneval", "mbpp"])
def test_strict_and_official_agree_on_every_part(scored: dict[Any, Any], flavor: str) -> None:
    _, strict, _ = scored[(flavor, "strict")]
    _, official, _ = scored[(flavor, "official")]

    def passed(r: CandidateResult) -> tuple[bool, ...]:
        assert r.parts is not None
        return (r.status == "passed", r.parts["base"] == "passed", r.parts["plus"] == "passed")

    assert [passed(r) for r in strict] == [passed(r) for r in official]


@pytest.mark.parametrize("flavor", ["humaneval", "mbpp"])
def test_the_base_figure_sits_next_to_the_whole(scored: dict[Any, Any], flavor: str) -> None:
    summary, rows, _ = scored[(flavor, "strict")]
    bench = summary.benchmark
    whole = summary.measurement(f"{bench}.pass_at_1")
    base = summary.measurement(f"{bench}.base.pass_at_1")
    assert whole is not None and base is not None
    per: dict[str, list[int]] = {}
    for r in rows:
        assert r.parts is not None
        counts = per.setdefault(r.problem_id, [0, 0])
        counts[0] += 1
        counts[1] += r.parts["base"] == "passed"
    expected = sum(c / n for n, c in per.values()) / len(per)
    assert base.value == pytest.approx(expected)
    assert base.value > whole.value


def test_the_reference_runs_once_and_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run reads the reference's outputs from the cache: no `Call`
    reaches the pool (a pool that refuses them still scores)."""
    from aioeval.types import Passed

    monkeypatch.setenv("AIOEVAL_CACHE_DIR", str(tmp_path / "cache"))
    params = load_config(None, [f"params.evalplus.min_time_limit_s={LIMIT_S}"]).params

    Counting = evalplus_fixture.counting_pool()

    async def judge_all() -> list[str]:
        suite = get_suite("mbpp-plus", params)
        data = await suite.load(mode="score")
        async with Counting(workers=2) as pool:
            out = []
            for p in data.problems[:3]:
                verdict, _ = await suite.judge(p, suite.reference(p), pool)
                out.append(type(verdict).__name__)
            return out

    assert anyio.run(judge_all) == [Passed.__name__] * 3
    first = Counting.calls
    assert first == 6  # base and plus of three problems
    assert len(list((tmp_path / "cache" / "evalplus").glob("*.msgpack"))) == 6
    assert anyio.run(judge_all) == [Passed.__name__] * 3
    assert Counting.calls == first


def test_bad_files_are_refused_with_file_line_and_field(tmp_path: Path) -> None:
    rows = [
        json.loads(x) for x in (ROOT / "fixtures/evalplus/mbpp_plus.jsonl").read_text().splitlines()
    ]
    rows[1]["plus_input"] = {"not": "a list"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        InputError, match=r"bad.jsonl:2: plus_input must be a list of argument lists"
    ):
        evalplus_data.read_file(bad)
    del rows[1]["plus_input"]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"bad.jsonl:2: .*plus_input"):
        evalplus_data.read_file(bad)


def test_humaneval_format_names_the_suite_for_an_evalplus_file() -> None:
    line = (ROOT / "fixtures/evalplus/humaneval_plus.jsonl").read_bytes().splitlines()[0]
    row = json.loads(line)
    row["test"] = "def check(candidate):\n    pass\n"
    with pytest.raises(InputError, match="--benchmark humaneval-plus"):
        parse_humaneval(json.dumps(row).encode(), "he.jsonl")


def test_mbpp_inputs_become_what_the_tasks_take() -> None:
    assert evalplus_data.mbpp_inputs("Mbpp/2", [[[1, 2], [3]]]) == [[(1, 2), (3,)]]
    assert evalplus_data.mbpp_inputs("Mbpp/124", [[0, "1j"]]) == [(0.0, 1j)]
    assert evalplus_data.mbpp_inputs("Mbpp/115", [[[[1], []]]]) == [[[{1}, {}]]]
    assert evalplus_data.mbpp_inputs("Mbpp/580", [[[1, [2]]]]) == [((1, (2,)),)]
    assert evalplus_data.mbpp_inputs("Mbpp/9999", [[[1]]]) == [[[1]]]
    assert evalplus_data.mbpp_inputs("Fixture/2", [[[1]]]) == [[[1]]]


_plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.complex_numbers()
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers() | st.text(max_size=4), max_size=4)
        | st.sets(st.integers(), max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, complex):
        return _same(a.real, b.real) and _same(a.imag, b.imag)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(_plain)
@settings(max_examples=300, deadline=None)
def test_a_literal_evaluates_to_its_value(value: Any) -> None:
    scope = {"__builtins__": __builtins__, "_aioeval_marshal": marshal}
    assert _same(eval(literal(value), scope), value)


def test_an_int_past_the_decimal_limit_is_written() -> None:
    """An expected output such as ``2 ** 100000`` (30,103 digits): repr
    refuses ints of more than 4,300 digits, a marshal blob does not."""
    for value in (10**4299, 10**4300, -(2**13_001), 2**100_000, [1, 3**20_000]):
        assert _same(eval(literal(value), {"_aioeval_marshal": marshal}), value)


_numbers = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.integers(-(10**6), 10**6)


@given(
    st.lists(_numbers, min_size=1, max_size=5),
    st.lists(_numbers, min_size=1, max_size=5),
    st.sampled_from([1e-6, 1e-3, 0.5]),
)
@settings(max_examples=400, deadline=None)
def test_allclose_is_numpys(a: list[Any], b: list[Any], atol: float) -> None:
    np = pytest.importorskip("numpy", reason="numpy decides what allclose means")
    try:
        want = bool(np.allclose(a, b, rtol=1e-07, atol=atol))
    except ValueError:  # shapes numpy cannot broadcast
        want = False
    assert evalplus_harness._aioeval_allclose(a, b, atol) == want


@pytest.mark.skipif(
    not os.environ.get("AIOEVAL_EVALPLUS_PYTHON"),
    reason="set AIOEVAL_EVALPLUS_PYTHON to an interpreter with evalplus installed",
)
def test_parity_with_evalplus() -> None:
    cmd = [
        sys.executable, str(ROOT / "bench" / "evalplus_parity.py"),
        "--evalplus-python", os.environ["AIOEVAL_EVALPLUS_PYTHON"],
        "--evalplus-path", os.environ.get("AIOEVAL_EVALPLUS_PATH", ""),
        "--stall-s", "2", "--scoring", "strict",
    ]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) == 2 and all(r["disagreements"] == 0 for r in rows), rows


@pytest.mark.parametrize("flavor", ["humaneval", "mbpp"])
def test_the_replay_fixture_is_what_scoring_gives(scored: dict[Any, Any], flavor: str) -> None:
    _, rows, _ = scored[(flavor, "strict")]
    records = get_suite(f"{flavor}-plus").mock_records()
    got = {(r.problem_id, r.sample_index): (r.status, r.parts) for r in rows}
    assert {(m.problem_id, m.sample_index): (m.status, m.parts) for m in records} == got
