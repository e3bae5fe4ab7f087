"""Chat answers through whole runs: an endpoint run against the fake
OpenAI server on 127.0.0.1 and ``aioeval score`` on a file of raw answers
(``params.extract``), in real sandboxes. Each result records how its
program was taken, an answer with no code is ``failed`` with that reason,
the raw answer stays in results.jsonl, summary.json counts the kinds and
the terminal and HTML reports show the answers with no code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from aioeval.config import decode_config
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import load_problems
from aioeval.suites.livecodebench import data as lcb_data
from aioeval.suites.mbpp import data as mbpp_data
from aioeval.testing.chat_styles import STYLES, Case
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI
from aioeval.types import NO_CODE, Summary

PROBLEMS = load_problems()[:6]
STYLE_OF = {
    "HumanEval/0": "example-usage-block",
    "HumanEval/1": "think-draft",
    "HumanEval/2": "crlf",
    "HumanEval/3": "sentence-then-unfenced",
    "HumanEval/4": "imports-own-block",
}
"""HumanEval/5 answers with prose only."""


def _case(pid: str) -> Case:
    f = next(p for p in PROBLEMS if p.id == pid).fields
    return Case(
        program=f["prompt"] + f["canonical_solution"],
        body=f["canonical_solution"],
        call=f"{f['entry_point']}(*EXAMPLE)",
    )


def _answer(text: str, sample: int) -> str:
    for p in PROBLEMS:
        if p.fields["prompt"] in text:
            style = STYLE_OF.get(p.id)
            if style is None:
                return "I am sorry, I cannot write this function."
            raw = STYLES[style](_case(p.id))
            assert raw is not None
            return raw
    return "no such problem"


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r["problem_id"]: r for r in map(json.loads, lines)}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aioeval", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )


@pytest.mark.anyio
async def test_an_endpoint_run_takes_programs_and_says_when_there_was_none(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    async with FakeOpenAI(FakeConfig(), _answer) as fake:
        cfg = decode_config(
            {
                "target": {"mode": "runtime", "endpoint": fake.url, "model": "fake-model"},
                "params": {"allow_code_execution": True, "limit": 6},
            }
        )
        spec = RunSpec(
            benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(out)
        )
        summary = await evaluate(spec)
    rows = _rows(out)
    for pid in STYLE_OF:
        assert rows[pid]["status"] == "passed", (pid, rows[pid]["reason"])
    assert [rows[f"HumanEval/{i}"]["extraction"] for i in range(6)] == [
        "block",
        "block",
        "block",
        "unfenced",
        "blocks",
        "none",
    ]
    nothing = rows["HumanEval/5"]
    assert (nothing["status"], nothing["reason"]) == ("failed", NO_CODE)
    assert nothing["raw"].startswith("I am sorry") and nothing["candidate"] == ""
    assert rows["HumanEval/0"]["raw"].startswith("Solution:")  # the raw answer is kept
    assert summary.extraction == {"block": 3, "blocks": 1, "none": 1, "unfenced": 1}
    on_disk = msgspec.json.decode((out / "summary.json").read_bytes(), type=Summary)
    assert on_disk.extraction == summary.extraction

    report = _cli("report", str(out), "--html", str(tmp_path / "r.html"))
    assert report.returncode == 0, report.stderr
    line = "1 of 6 answers had no code we could find"
    assert line in report.stdout
    assert line in (tmp_path / "r.html").read_text()


def _score(tmp_path: Path, bench: str, rows: list[dict[str, str]], *sets: str) -> dict[str, Any]:
    samples = tmp_path / f"{bench}.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"{bench}-{len(sets)}"
    args = ["score", "--benchmark", bench, "--samples", str(samples), "--out", str(out)]
    done = _cli(*args, "--quiet", *(a for s in sets for a in ("--set", s)))
    assert done.returncode == 0, done.stderr
    lines = (out / "results.jsonl").read_text().splitlines()
    return {
        "rows": sorted(lines, key=lambda r: json.loads(r)["sample_index"]),
        "summary": json.loads((out / "summary.json").read_text()),
    }


def test_score_runs_what_it_is_given_unless_asked_to_extract(tmp_path: Path) -> None:
    p = PROBLEMS[0]
    raw = STYLES["example-usage-block"](_case(p.id))
    rows = [{"task_id": p.id, "completion": raw}, {"task_id": p.id, "completion": "No idea."}]
    given = _score(tmp_path, "human-eval", rows, "params.limit=1")
    assert [json.loads(r)["status"] for r in given["rows"]] == ["error", "error"]
    assert all(json.loads(r)["extraction"] is None for r in given["rows"])
    assert given["summary"]["extraction"] == {}
    taken = _score(tmp_path, "human-eval", rows, "params.limit=1", "params.extract=true")
    got = [json.loads(r) for r in taken["rows"]]
    assert [(r["status"], r["extraction"]) for r in got] == [
        ("passed", "block"),
        ("failed", "none"),
    ]
    assert got[0]["raw"] == raw
    assert taken["summary"]["extraction"] == {"block": 1, "none": 1}


def test_score_extracts_mbpp_and_livecodebench_answers(tmp_path: Path) -> None:
    mbpp = mbpp_data.fixture_problems()[0]
    program = mbpp.fields["code"]
    case = Case(program=program, call="count_vowels(*EXAMPLE)")
    rows = [
        {"task_id": mbpp.id, "completion": STYLES[s](case) or ""}
        for s in ("asserts-block", "list-item-indented", "think-draft")
    ]
    got = _score(tmp_path, "mbpp", rows, "params.limit=1", "params.extract=true")
    assert [json.loads(r)["status"] for r in got["rows"]] == ["passed"] * 3
    lcb = next(p for p in lcb_data.fixture_problems() if p.id == "lcb-sum")
    case = Case(program=lcb.fields["canonical_solution"])
    rows = [
        {"task_id": lcb.id, "completion": STYLES[s](case) or ""}
        for s in ("shell-block", "output-block", "two-defining-blocks")
    ]
    got = _score(tmp_path, "livecodebench", rows, "params.extract=true")
    statuses = {
        (r["sample_index"], r["status"], r["extraction"]) for r in map(json.loads, got["rows"])
    }
    assert statuses == {(0, "passed", "block"), (1, "passed", "block"), (2, "passed", "ambiguous")}
