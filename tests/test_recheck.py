"""params.recheck_timeouts re-runs timed-out candidates at the end of a run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
import pytest
from scored import read_results

import aioeval
from aioeval.config import load_config
from aioeval.events import Event, ResultReady

pytestmark = pytest.mark.anyio


async def test_flipped_timeouts_are_replaced_and_counted(tmp_path: Path) -> None:
    # Candidates run under an unprivileged uid: the marker must be readable.
    shared = Path(tempfile.mkdtemp(prefix="aioeval-recheck-"))
    shared.chmod(0o755)
    marker = shared / "machine-is-idle-now"
    spin = (
        "    import os\n"
        f"    while not os.path.exists({str(marker)!r}):\n"
        "        pass\n"
        "    return [0, 1][0:0] if False else _real(numbers, threshold)\n"
    )
    real = (
        "def _real(numbers, threshold):\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
    )
    samples = tmp_path / "s.jsonl"
    samples.write_bytes(
        orjson.dumps({"task_id": "HumanEval/0", "completion": spin + real})
        + b"\n"
        + orjson.dumps({"task_id": "HumanEval/0", "completion": "    return True\n"})
        + b"\n"
    )

    def on_event(event: Event) -> None:
        # The first verdict of the spinning candidate is a timeout; from then on
        # the condition it waits for holds, as if the load had gone away.
        if isinstance(event, ResultReady) and event.result.status == "timeout":
            marker.touch()

    cfg = load_config(overrides=["params.timeout_s=1", "params.recheck_timeouts=true"])
    out = tmp_path / "run"
    spec = aioeval.RunSpec(
        benchmark="human-eval", config=cfg, out_dir=str(out), samples=str(samples)
    )
    summary = await aioeval.evaluate(spec, on_event=on_event)
    assert marker.exists()
    marker.unlink()
    shared.rmdir()
    results = read_results(out)
    assert sorted((r.sample_index, r.status) for r in results) == [(0, "passed"), (1, "failed")]
    assert summary.counts["timeout"] == 0 and summary.counts["passed"] == 1
    assert any("1 timeout verdicts flipped" in n for n in summary.notes)
    m = summary.measurement("human-eval.pass_at_1")
    assert m is not None and m.value == pytest.approx(0.5)
