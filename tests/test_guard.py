"""Fail closed: model output runs only where the sandbox isolates it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

import aioeval
from aioeval.errors import SandboxError
from aioeval.run import guard
from aioeval.testing.executors import ScriptedExecutor

FULL = ["rlimits", "unprivileged-uid", "network-namespace", "cgroup-memory", "seccomp"]


@pytest.mark.parametrize("mode", ["endpoint", "score"])
def test_model_output_needs_identity_network_and_memory(mode: str) -> None:
    guard.check(mode, "best", FULL, 2048)
    guard.check(mode, "best", ["user-namespace", "network-namespace"], 2048)
    with pytest.raises(SandboxError) as info:
        guard.check(mode, "best", ["rlimits", "seccomp"], 2048)
    text = str(info.value)
    assert "\n" not in text
    assert "no separate uid or user namespace, no network namespace" in text
    assert "params.sandbox.isolation=minimal" in text
    with pytest.raises(SandboxError, match="no memory limit"):
        guard.check(mode, "best", ["user-namespace", "network-namespace"], 0)


def test_vetted_code_and_an_explicit_minimal_keep_running() -> None:
    for mode in ("replay", "reference"):
        guard.check(mode, "best", [], 0)
    guard.check("endpoint", "minimal", [], 0)


def _score(tmp_path: Path, isolation: str) -> aioeval.Summary:
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "    return True\\n"}\n')
    cfg = aioeval.load_config(overrides=[f"params.sandbox.isolation={isolation}"])
    spec = aioeval.RunSpec(
        benchmark="human-eval", config=cfg, samples=str(samples), out_dir=str(tmp_path / isolation)
    )
    return anyio.run(lambda: aioeval.evaluate(spec, pool_factory=lambda _cfg: ScriptedExecutor()))


def test_scoring_answers_on_a_bare_host_is_refused_unless_accepted(tmp_path: Path) -> None:
    """An executor with no isolation layers (as on a stock container):
    ``aioeval score`` refuses, and runs once minimal is asked for."""
    with pytest.raises(SandboxError, match="refusing to run model output"):
        _score(tmp_path, "best")
    summary = _score(tmp_path, "minimal")
    assert summary.complete
    assert any(n.startswith("isolation: minimal was accepted") for n in summary.notes)
