"""The llm-endpoint path end to end, against the fake OpenAI server on
127.0.0.1: through the library (evaluate) and through `aioeval run
--platform llm-endpoint` as a subprocess. Every fault path of the fake
server is run: nothing lost, nothing double-counted, right counts."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from aioeval.config import decode_config
from aioeval.errors import ConfigError, EndpointError
from aioeval.events import Event, GenerationUpdate
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.executors import GatedExecutor, ScriptedExecutor
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI, human_eval_answers
from aioeval.types import Summary

PROBLEMS = load_problems()
FAST_RETRY = {"max_attempts": 4, "backoff_base_s": 0.01, "backoff_max_s": 0.05}
SECRET = "sk-live-DO-NOT-LEAK-4242"


def config(url: str, **params: Any) -> dict[str, Any]:
    return {
        "target": {
            "mode": "runtime",
            "endpoint": url,
            "model": "fake-model",
            "request_timeout_s": 0.5,
            "price": {"prompt_per_million": 1.0, "completion_per_million": 2.0},
            "retries": {"max_attempts": 1},
        },
        "params": {"allow_code_execution": True, "limit": 3, **params},
    }


def read_results(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def measure(summary: Summary, name: str) -> float | None:
    m = summary.measurement(f"human-eval.{name}")
    return m.value if m is not None else None


def assert_each_sample_once(rows: list[dict[str, Any]], problems: int, n: int) -> None:
    keys = Counter((r["problem_id"], r["sample_index"]) for r in rows)
    assert len(rows) == problems * n
    assert set(keys.values()) == {1}
    assert {k for k, _ in keys} == {p.id for p in PROBLEMS[:problems]}
    assert {i for _, i in keys} == set(range(n))


async def run(
    fake: FakeOpenAI,
    out: Path,
    events: list[Event] | None = None,
    target_use_n: bool = True,
    **params: Any,
) -> Summary:
    raw = config(fake.url, **params)
    raw["target"]["use_n"] = target_use_n
    cfg = decode_config(raw)
    spec = RunSpec(benchmark="human-eval", platform="llm-endpoint", config=cfg, out_dir=str(out))
    return await evaluate(spec, on_event=events.append if events is not None else None)


@pytest.mark.anyio
async def test_fenced_answers_are_unwrapped_and_scored(tmp_path: Path) -> None:
    answers = human_eval_answers(PROBLEMS[:4], wrong={"HumanEval/1"})
    events: list[Event] = []
    async with FakeOpenAI(FakeConfig(latency_s=(0.0, 0.02)), answers) as fake:
        summary = await run(fake, tmp_path / "o", events, limit=4, n_samples=2)
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 4, 2)
    assert summary.complete and summary.counts["passed"] == 6 and summary.counts["failed"] == 2
    assert measure(summary, "pass_at_1") == pytest.approx(0.75)
    for r in rows:
        assert "```" not in r["candidate"] and r["raw"].startswith("Here you go")
        assert r["attempts"] == 1 and r["latency_ms"] > 0 and r["gen_started_at"] > 0
    # tokens: the sum over samples is exactly what the server reported
    total = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
    assert total == fake.tokens == measure(summary, "total_tokens")
    prompt = sum(r["prompt_tokens"] for r in rows)
    assert measure(summary, "cost_usd") == pytest.approx((prompt + 2 * (total - prompt)) / 1e6)
    assert measure(summary, "retry_count") is None  # retries off: not reported
    assert all(r["retry_overhead_ms"] == 0.0 for r in rows)
    assert measure(summary, "generation_latency_p50_ms") is not None
    assert summary.model == "fake-model"
    updates = [e for e in events if isinstance(e, GenerationUpdate)]
    assert updates[-1].done == fake.requests and updates[-1].in_flight == 0


@pytest.mark.anyio
async def test_a_completion_cut_at_max_tokens_is_recorded_as_length(tmp_path: Path) -> None:
    """The fake server cuts answers at max_tokens, as real ones do; its
    answers to HumanEval/0-2 are 156, 238 and 95 tokens long."""
    async with FakeOpenAI(FakeConfig(), human_eval_answers(PROBLEMS[:3])) as fake:
        await run(fake, tmp_path / "o", n_samples=2, max_tokens=150)
    rows = {(r["problem_id"], r["sample_index"]): r for r in read_results(tmp_path / "o")}
    assert len(rows) == 6
    reasons = {pid: {rows[pid, i]["finish_reason"] for i in range(2)} for pid, _ in rows}
    assert reasons == {
        "HumanEval/0": {"length"},
        "HumanEval/1": {"length"},
        "HumanEval/2": {"stop"},
    }
    for r in rows.values():
        if r["finish_reason"] == "length":
            assert len(r["raw"]) == 150 * 4 and r["status"] != "passed"
        else:
            assert r["status"] == "passed"


@pytest.mark.anyio
async def test_n_is_used_when_honoured(tmp_path: Path) -> None:
    async with FakeOpenAI(FakeConfig(), human_eval_answers(PROBLEMS[:3])) as fake:
        summary = await run(fake, tmp_path / "o", n_samples=4)
    assert fake.n_asked == {4: 3} and fake.requests == 3
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 3, 4)
    assert summary.counts["passed"] == 12
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) == fake.tokens
    assert measure(summary, "pass_at_1") == 1.0


@pytest.mark.anyio
async def test_n_ignored_falls_back_to_single_requests(tmp_path: Path) -> None:
    async with FakeOpenAI(FakeConfig(honour_n=False), human_eval_answers(PROBLEMS[:3])) as fake:
        summary = await run(fake, tmp_path / "o", n_samples=3)
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 3, 3)
    assert fake.requests == 9 and fake.samples == 9  # one sample per request, none wasted
    assert summary.counts["passed"] == 9
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) == fake.tokens


@pytest.mark.anyio
async def test_transient_faults_are_retried_and_counted(tmp_path: Path) -> None:
    faults = ["429", "503", "drop", "500", "slow"]
    cfg = FakeConfig(faults=faults, retry_after_s=0.05, slow_s=5.0)
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        # Slow start sends the first request alone, so it may meet every fault.
        retry = {**FAST_RETRY, "max_attempts": len(faults)}
        summary = await run(fake, tmp_path / "o", n_samples=2, retry=retry)
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 3, 2)
    assert summary.complete and summary.counts["passed"] == 6
    assert fake.requests == 3 + len(faults) and fake.served == 3
    # each retry counted once, whatever n the retried request asked for
    assert sum(r["retry_count"] for r in rows) == len(faults) == measure(summary, "retry_count")
    assert sum(r["rate_limited"] for r in rows) == 1 == measure(summary, "rate_limited_count")
    assert measure(summary, "retry_overhead_ms") > 0
    assert summary.dataset.version.endswith("+retry")
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) == fake.tokens


@pytest.mark.anyio
async def test_permanent_faults_are_infra_errors_not_model_failures(tmp_path: Path) -> None:
    cfg = FakeConfig(faults=["malformed", "nonjson", "400"])
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:4])) as fake:
        summary = await run(fake, tmp_path / "o", limit=4, retry=FAST_RETRY)
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 4, 1)
    assert fake.requests == 4  # not retried
    assert not summary.complete
    assert summary.counts["infra_error"] == 3 and summary.counts["passed"] == 1
    assert summary.incomplete == {"generation:malformed": 2, "generation:400": 1}
    bad = [r for r in rows if r["status"] == "infra_error"]
    assert all(r["wall_ms"] is None and r["attempts"] == 1 for r in bad)
    # pass@1 is over the scored samples only
    assert measure(summary, "pass_at_1") == 1.0


@pytest.mark.anyio
async def test_retries_off_and_exhausted(tmp_path: Path) -> None:
    cfg = FakeConfig(faults=["503", "ok", "503", "503", "429", "429"], retry_after_s=0.01)
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        summary = await run(fake, tmp_path / "a", limit=2)
        assert summary.incomplete == {"generation:503": 1}
        retry = {**FAST_RETRY, "max_attempts": 2}
        summary = await run(fake, tmp_path / "b", limit=1, retry=retry)
        assert summary.incomplete == {"generation:503": 1}
        (row,) = read_results(tmp_path / "b")
        assert (row["attempts"], row["retry_count"], row["rate_limited"]) == (2, 1, 0)
        assert "gave up after 2 attempts" in row["reason"]
        # 429s of an endpoint that serves do not use up max_attempts ...
        summary = await run(fake, tmp_path / "c", limit=1, retry=retry)
    assert summary.complete
    (row,) = read_results(tmp_path / "c")
    assert (row["attempts"], row["retry_count"], row["rate_limited"]) == (3, 2, 2)


@pytest.mark.anyio
async def test_an_endpoint_answering_only_429_stalls_after_the_patience(tmp_path: Path) -> None:
    cfg = FakeConfig(fault_rates={"429": 1.0}, retry_after_s=0.01)
    retry = {**FAST_RETRY, "rate_limit_patience_s": 0.3}
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        summary = await run(fake, tmp_path / "o", limit=3, retry=retry)
    rows = read_results(tmp_path / "o")
    assert summary.incomplete == {"generation:429": 3}
    assert all("rate_limit_patience_s" in r["reason"] for r in rows)
    # Each 429 was an attempt actually sent; the samples still queued were
    # not sent once the endpoint had stalled.
    assert sum(r["attempts"] for r in rows) == fake.requests == fake.rate_limited
    assert sum(r["rate_limited"] for r in rows) == fake.requests


@pytest.mark.anyio
async def test_missing_usage_omits_token_measurements(tmp_path: Path) -> None:
    cfg = FakeConfig(fault_rates={"nousage": 1.0})
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        summary = await run(fake, tmp_path / "o")
    assert summary.complete and summary.counts["passed"] == 3
    assert measure(summary, "total_tokens") is None and measure(summary, "cost_usd") is None
    assert all(r["prompt_tokens"] is None for r in read_results(tmp_path / "o"))


@pytest.mark.anyio
async def test_refusals_before_any_request(tmp_path: Path) -> None:
    async with FakeOpenAI() as fake:
        for raw, err, message in [
            ({"allow_code_execution": False}, ConfigError, "model output"),
            ({"endpoint": "http://169.254.169.254/v1"}, EndpointError, "metadata"),
            ({"endpoint": "file:///etc/passwd"}, EndpointError, "only http and https"),
            ({"model": None}, ConfigError, "target.model"),
            ({"api": "chta"}, ConfigError, "unknown endpoint API"),
            ({"credentials_ref": "env:AIOEVAL_SURELY_UNSET"}, ConfigError, "not set"),
        ]:
            cfg = config(fake.url)
            for key, value in raw.items():
                section = "params" if key == "allow_code_execution" else "target"
                cfg[section][key] = value
            spec = RunSpec(
                benchmark="human-eval",
                platform="llm-endpoint",
                config=decode_config(cfg),
                out_dir=str(tmp_path / "never"),
            )
            with pytest.raises(err, match=message):
                await evaluate(spec)
        assert fake.requests == 0 and fake.model_requests == 0
    assert not (tmp_path / "never").exists()


@pytest.mark.anyio
async def test_generation_waits_for_a_saturated_pool(tmp_path: Path) -> None:
    pool = GatedExecutor()
    raw = config("", limit=10, n_samples=4, buffer=4, dedup=False)
    raw["target"]["rate_limit"] = {"max_concurrency": 4}
    raw["params"]["sandbox"] = {"isolation": "minimal"}  # the executor runs nothing
    cfg = decode_config(raw)
    summary: Summary | None = None
    async with FakeOpenAI(FakeConfig(), human_eval_answers(PROBLEMS[:10])) as fake:
        target = msgspec.structs.replace(cfg.target, endpoint=fake.url)
        spec = RunSpec(
            benchmark="human-eval",
            platform="llm-endpoint",
            config=msgspec.structs.replace(cfg, target=target),
            out_dir=str(tmp_path / "o"),
        )

        async def go() -> None:
            nonlocal summary
            summary = await evaluate(spec, pool_factory=lambda _c: pool)

        async with anyio.create_task_group() as tg:
            tg.start_soon(go)
            with anyio.fail_after(20):
                while pool.waiting < 2:  # both executors hold a job
                    await anyio.sleep(0.01)
            # Give a runaway producer time to show itself: ten quiet points in a
            # row (every task blocked, nothing in flight, no new sample), counted
            # in loop turns, not seconds, so a loaded machine cannot cut it short.
            with anyio.fail_after(20):
                quiet, seen = 0, fake.samples
                while quiet < 10:
                    await anyio.wait_all_tasks_blocked()
                    quiet = quiet + 1 if (fake.samples, fake.in_flight) == (seen, 0) else 0
                    seen = fake.samples
            held = fake.samples
            # 2 executing + a window of 4 samples (the stream's buffer included)
            assert 2 <= held <= 2 + 4
            pool.gate.set()
    assert summary is not None and summary.counts["passed"] == 40
    assert fake.samples == 40


@pytest.mark.anyio
async def test_max_concurrency_is_reached_above_the_pipeline_buffer(tmp_path: Path) -> None:
    """A buffer of 4 does not cap 12 requests in flight: the window is at
    least max_concurrency. The server holds every answer until 12 are in
    flight (a client capped below that never gets there)."""
    raw = config("", limit=12, buffer=4, dedup=False)
    raw["target"]["request_timeout_s"] = 60
    raw["target"]["rate_limit"] = {"rpm": 60000, "max_concurrency": 12}  # paced: no slow start
    raw["params"]["sandbox"] = {"isolation": "minimal"}  # the executor runs nothing
    summary: Summary | None = None
    async with FakeOpenAI(FakeConfig(), human_eval_answers(PROBLEMS[:12])) as fake:
        raw["target"]["endpoint"] = fake.url
        spec = RunSpec(
            benchmark="human-eval",
            platform="llm-endpoint",
            config=decode_config(raw),
            out_dir=str(tmp_path / "o"),
        )
        fake.hold_answers()

        async def go() -> None:
            nonlocal summary
            summary = await evaluate(spec, pool_factory=lambda _c: ScriptedExecutor())

        async with anyio.create_task_group() as tg:
            tg.start_soon(go)
            with anyio.fail_after(30):
                await fake.wait_in_flight(12)
            fake.release_answers()
    assert summary is not None and summary.counts["passed"] == 12
    assert fake.max_in_flight == 12 and fake.requests == 12


def _cli(out: Path, cfg_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "aioeval.cli",
        "run",
        "--benchmark",
        "human-eval",
        "--platform",
        "llm-endpoint",
        "--config",
        str(cfg_path),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def _sneaky_answers() -> Any:
    """HumanEval/0's answer checks, from inside the sandbox, that the key is
    not in its environment; the others are plain canonical answers."""
    plain = human_eval_answers(PROBLEMS[:3])
    p0 = PROBLEMS[0]

    def answer(text: str, i: int) -> str:
        if p0.fields["prompt"] in text:
            probe = (
                "    import os\n"
                "    assert not any('DO-NOT-LEAK' in v for v in os.environ.values())\n"
            )
            return f"```python\n{p0.fields['prompt']}{probe}{p0.fields['canonical_solution']}```"
        return plain(text, i)

    return answer


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_cli_run_keeps_the_key_out_of_everything(tmp_path: Path) -> None:
    cfg = config("", n_samples=2)
    cfg["target"]["credentials_ref"] = "env:AIOEVAL_TEST_KEY"
    env = {**os.environ, "AIOEVAL_TEST_KEY": SECRET}
    async with FakeOpenAI(FakeConfig(require_key=SECRET), _sneaky_answers()) as fake:
        cfg["target"]["endpoint"] = fake.url
        path = tmp_path / "cfg.yaml"
        path.write_text(json.dumps(cfg))
        proc = await anyio.run_process(_cli(tmp_path / "o", path), env=env, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert fake.auth_seen == {f"Bearer {SECRET}"}
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["counts"]["passed"] == 6 and summary["complete"]
    names = {m["name"] for m in summary["measurements"]}
    assert {"human-eval.pass_at_1", "human-eval.total_tokens", "human-eval.cost_usd"} <= names
    for f in (tmp_path / "o").iterdir():
        assert SECRET not in f.read_text(errors="replace"), f.name
    assert SECRET not in proc.stdout.decode() + proc.stderr.decode()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_cli_exit_codes(tmp_path: Path) -> None:
    async with FakeOpenAI(FakeConfig(faults=["503"]), human_eval_answers(PROBLEMS[:3])) as fake:
        path = tmp_path / "cfg.yaml"
        path.write_text(json.dumps(config(fake.url)))
        incomplete = await anyio.run_process(_cli(tmp_path / "a", path), check=False)
        no_consent = await anyio.run_process(
            _cli(tmp_path / "b", path, "--set", "params.allow_code_execution=false"), check=False
        )
        unsafe = await anyio.run_process(
            _cli(tmp_path / "c", path, "--set", "target.endpoint=http://169.254.169.254/v1"),
            check=False,
        )
        down = await anyio.run_process(
            _cli(tmp_path / "d", path, "--set", "target.endpoint=http://127.0.0.1:9/v1"),
            check=False,
        )
    assert incomplete.returncode == 3
    err = incomplete.stderr.decode()
    assert "generation:503=1" in err and len(err.strip().splitlines()) == 1
    for proc, message in [
        (no_consent, "model output"),
        (unsafe, "metadata address"),
        (down, "unreachable"),
    ]:
        lines = proc.stderr.decode().strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], lines


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_cli_start_up_refusals_exit_2_with_the_servers_message(tmp_path: Path) -> None:
    """An unusable backend (400 on /models), a base URL missing /v1 (404 to
    the listing and to a one-token request), a rejected key: exit 2 with one
    line quoting the server, before any sample is spent."""
    unusable = FakeConfig(models_status=400, models_message="No connected db.")
    async with FakeOpenAI(unusable) as bad, FakeOpenAI(FakeConfig(require_key=SECRET)) as good:
        path = tmp_path / "cfg.yaml"
        path.write_text(json.dumps(config(bad.url)))
        env = {**os.environ, "AIOEVAL_TEST_KEY": "sk-wrong"}
        cases = [
            (_cli(tmp_path / "a", path), "No connected db."),
            (
                _cli(tmp_path / "b", path, "--set", f"target.endpoint={good.url[:-3]}"),
                "answers 404 to /models and to /chat/completions",
            ),
            (
                _cli(
                    tmp_path / "c",
                    path,
                    "--set",
                    f"target.endpoint={good.url}",
                    "--set",
                    "target.credentials_ref=env:AIOEVAL_TEST_KEY",
                ),
                "rejected the credentials (HTTP 401: bad key)",
            ),
        ]
        for argv, message in cases:
            proc = await anyio.run_process(argv, check=False, env=env)
            lines = proc.stderr.decode().strip().splitlines()
            assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], lines
        assert bad.requests == good.requests == 0  # (case b's probe met a 404)
    for name in "abc":
        results = tmp_path / name / "results.jsonl"
        assert not results.exists() or results.stat().st_size == 0


def test_replaced_verdict_does_not_count_generation_twice() -> None:
    """A timeout re-check replaces a verdict; the candidate's tokens,
    retries and latency must stay counted once."""
    from aioeval.config import RunConfig
    from aioeval.run.summary import RunStats
    from aioeval.suites import get_suite
    from aioeval.types import Candidate, Execution, Generation, Passed, Timeout, make_result

    gen = Generation(
        attempts=2, latency_ms=40.0, retry_count=1, retry_overhead_ms=5.0,
        prompt_tokens=10, completion_tokens=20, rate_limited=1,
    )  # fmt: skip
    cand = Candidate(problem_id="HumanEval/0", sample_index=0, raw="x", text="x", generation=gen)
    cfg = RunConfig(params=decode_config({"params": {"retry": {}}}).params)
    once = RunStats("human-eval")
    once.add(make_result(cand, Passed(), Execution(wall_ms=1.0)))
    twice = RunStats("human-eval")
    first = make_result(cand, Timeout(), Execution(wall_ms=9.0))
    twice.add(first)
    twice.remove(first)
    twice.add(make_result(cand, Passed(), Execution(wall_ms=1.0)))
    suite = get_suite("human-eval")
    assert once.measurements(cfg, suite) == twice.measurements(cfg, suite)


@pytest.mark.anyio
async def test_resume_requests_only_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "o"
    cfg = FakeConfig(faults=["ok", "503"])
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        first = await run(fake, out, n_samples=2, target_use_n=False)
        assert first.incomplete == {"generation:503": 1} and fake.requests == 6
        first_target = config(fake.url)["target"]
        spec = RunSpec(
            benchmark="human-eval",
            platform="llm-endpoint",
            config=decode_config(
                {**config(fake.url, n_samples=2), "target": {**first_target, "use_n": False}}
            ),
            out_dir=str(out),
            resume=True,
        )
        second = await evaluate(spec)
    assert fake.requests == 7  # only the sample that failed was asked for again
    assert second.complete and second.counts["passed"] == 6
    assert_each_sample_once(read_results(out), 3, 2)


@pytest.mark.anyio
async def test_a_hostile_body_is_refused_without_being_held(tmp_path: Path) -> None:
    """A 200 MB body and a 200 MB body gzip-compressed to a few hundred kB:
    each is that sample's infra_error (cause ``oversized``), read no further
    than the cap (1 MB for these requests), so the engine never holds it.
    tracemalloc sees every buffer aiohttp and the engine allocate."""
    import tracemalloc

    cfg = FakeConfig(faults=["huge", "bomb"], huge_mb=200)
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:3])) as fake:
        tracemalloc.start()
        try:
            summary = await run(fake, tmp_path / "o", limit=3, retry=FAST_RETRY)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    rows = read_results(tmp_path / "o")
    assert_each_sample_once(rows, 3, 1)
    assert summary.incomplete == {"generation:oversized": 2}
    assert summary.counts["passed"] == 1
    assert all("max_response_mb" in r["reason"] for r in rows if r["status"] == "infra_error")
    assert peak < 48 * 2**20, f"peak {peak / 2**20:.0f} MB"


@pytest.mark.anyio
async def test_an_absurd_wait_is_ignored_and_counted(tmp_path: Path) -> None:
    """Every other request is a 429 asking to wait 10**20 s: obeying it would
    stall the run; the hint is ignored (counted in the summary), the 429 is
    retried like one without hints, and every sample is generated."""
    cfg = FakeConfig(fault_every={"absurd": 2})
    async with FakeOpenAI(cfg, human_eval_answers(PROBLEMS[:4])) as fake:
        with anyio.fail_after(60):
            summary = await run(fake, tmp_path / "o", limit=4, retry=FAST_RETRY)
    assert summary.complete and summary.counts["passed"] == 4
    assert fake.rate_limited >= 1
    (note,) = [n for n in summary.notes if "hints ignored" in n]
    assert note.startswith(f"endpoint: {fake.rate_limited} rate-limit hints ignored")
