"""The sandbox pool on Ray (aioeval/executors/ray/).

Tests marked ``ray`` start one local Ray instance in this process
(``ray.init(address="local", num_cpus=2)``), and one test starts a head plus
a second node on 127.0.0.1 with ``ray start --block`` in their own process
groups; they are excluded from the default run: ``python -m pytest -m ray``.
The unmarked tests need no Ray: the core install must work (and fail
clearly) without it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from aioeval.config import RunConfig, load_config
from aioeval.errors import ConfigError, SandboxError
from aioeval.executors.ray import RayPool, plan_actors
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import load_problems
from aioeval.types import CandidateResult, Summary

Rows = dict[tuple[str, int], str]


def _samples(path: Path, limit: int, *, sleep_s: float = 0.0) -> Path:
    """HumanEval samples: per problem the canonical solution (optionally
    sleeping at module level), a wrong one, and one that does not parse."""
    with path.open("w") as f:
        for p in load_problems()[:limit]:
            good = p.fields["canonical_solution"]
            if sleep_s:
                good += f"\n__import__('time').sleep({sleep_s})\n"
            for completion in (good, "    return None\n", "    return (\n"):
                f.write(json.dumps({"task_id": p.id, "completion": completion}) + "\n")
    return path


def _score(
    out: Path,
    samples: Path,
    sets: list[str],
    *,
    benchmark: str = "human-eval",
    pool: list[RayPool] | None = None,
    on_result: Any = None,
) -> tuple[Summary, Rows]:
    cfg = load_config(None, sets)
    factory = None
    if pool is not None:

        def factory(c: RunConfig) -> RayPool:
            p = RayPool(c)
            pool.append(p)
            return p

    spec = RunSpec(benchmark=benchmark, config=cfg, out_dir=str(out), samples=str(samples))

    async def go() -> Summary:
        return await evaluate(spec, pool_factory=factory, on_result=on_result)

    summary = anyio.run(go)
    rows: Rows = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        rows[(r["problem_id"], r["sample_index"])] = r["status"]
    return summary, rows


def _values(summary: Summary) -> dict[str, float]:
    return {m.name: m.value for m in summary.measurements if m.name.split(".")[-1][:7] == "pass_at"}


# -- no Ray needed ---------------------------------------------------------


def test_core_import_does_not_load_ray() -> None:
    code = "import sys, aioeval.cli, aioeval.run.evaluate, aioeval.executors.ray; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_executor_ray_without_ray_is_a_one_line_error(tmp_path: Path) -> None:
    samples = _samples(tmp_path / "s.jsonl", 1)
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from aioeval.cli import main\n"
        f"sys.exit(main(['score', '--benchmark', 'human-eval', '--samples', {str(samples)!r}, "
        f"'--out', {str(tmp_path / 'out')!r}, '--quiet', '--set', 'params.executor=ray']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'aioeval[ray]'" in lines[0], out.stderr


def test_config_fields() -> None:
    cfg = load_config(
        None, ["params.executor=ray", "params.ray_address=auto", "params.ray_actors=3"]
    )
    assert (cfg.params.executor, cfg.params.ray_address, cfg.params.ray_actors) == (
        "ray",
        "auto",
        3,
    )
    assert load_config(None, []).params.executor == "local"
    with pytest.raises(ConfigError, match="executor"):
        load_config(None, ["params.executor=dask"])
    with pytest.raises(ConfigError, match="ray_actors"):
        load_config(None, ["params.ray_actors=0"])


def _node(node_id: str, cpus: float, alive: bool = True) -> dict[str, Any]:
    return {"NodeID": node_id, "Alive": alive, "Resources": {"CPU": cpus}}


@pytest.mark.parametrize(
    ("nodes", "actors", "workers", "expected"),
    [
        # default: one actor per alive node, one slot per CPU, the whole node reserved
        ([_node("b", 4), _node("a", 2)], None, None, [("a", 2, 2.0), ("b", 4, 4.0)]),
        # dead nodes and CPU-less nodes (a head kept free of work) get nothing
        ([_node("a", 2), _node("b", 8, alive=False), _node("c", 0)], None, None, [("a", 2, 2.0)]),
        # two actors on one 2-CPU node share it
        ([_node("a", 2)], 2, None, [("a", 1, 1.0), ("a", 1, 1.0)]),
        # round-robin, explicit slot count
        ([_node("a", 2), _node("b", 2)], 3, 4, [("a", 4, 1.0), ("b", 4, 2.0), ("a", 4, 1.0)]),
    ],
)
def test_plan_actors(
    nodes: list[dict[str, Any]],
    actors: int | None,
    workers: int | None,
    expected: list[tuple[str, int, float]],
) -> None:
    assert plan_actors(nodes, actors, workers) == expected


def test_plan_actors_refuses_an_empty_cluster() -> None:
    with pytest.raises(SandboxError, match="no alive node"):
        plan_actors([_node("a", 2, alive=False)], None, None)


def test_local_summary_records_the_executor(tmp_path: Path) -> None:
    samples = _samples(tmp_path / "s.jsonl", 2)
    summary, rows = _score(tmp_path / "out", samples, ["params.workers=1"])
    assert (summary.executor, summary.actors, summary.nodes, summary.infra_retries) == (
        "local",
        0,
        1,
        0,
    )
    on_disk = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert on_disk["executor"] == "local" and on_disk["nodes"] == 1
    assert sorted(rows.values()) == ["error", "error", "failed", "failed", "passed", "passed"]


# -- on a local Ray instance -----------------------------------------------


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.mark.ray
def test_humaneval_on_ray_equals_local(tmp_path: Path, ray_instance: Any) -> None:
    samples = _samples(tmp_path / "s.jsonl", 164)
    sets = ["params.k=[1,2,3]"]
    local, local_rows = _score(tmp_path / "local", samples, sets)
    pools: list[RayPool] = []
    remote, remote_rows = _score(
        tmp_path / "ray", samples, [*sets, "params.executor=ray"], pool=pools
    )
    assert remote_rows == local_rows and len(remote_rows) == 3 * 164
    assert (
        _values(remote) == _values(local)
        and abs(_values(local)["human-eval.pass_at_1"] - 1 / 3) < 1e-9
    )
    assert remote.counts == local.counts and remote.complete
    assert (remote.executor, remote.actors, remote.nodes) == ("ray", 1, 1)
    assert remote.isolation == local.isolation  # every hardening layer, as locally
    assert pools[0].batches >= 1 and pools[0].slots == 2 and pools[0].size == 4 * 2
    on_disk = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert on_disk["executor"] == "ray" and on_disk["actors"] == 1


@pytest.mark.ray
def test_cruxeval_official_on_ray_equals_local(
    tmp_path: Path, shared_data: Path, ray_instance: Any
) -> None:
    crux = shared_data / "cruxeval"
    samples = crux / "codellama-7b-temp0.2" / "generations_output.json"
    sets = [
        "params.scoring=official",
        "params.static_compare=false",  # every distinct check runs in a sandbox
        "params.k=[1,5]",
        f"params.dataset_path={crux / 'cruxeval.jsonl'}",
    ]
    local, local_rows = _score(tmp_path / "local", samples, sets, benchmark="cruxeval-o")
    remote, remote_rows = _score(
        tmp_path / "ray", samples, [*sets, "params.executor=ray"], benchmark="cruxeval-o"
    )
    assert len(remote_rows) == 8000 and remote_rows == local_rows
    assert _values(remote) == _values(local)
    official = json.loads((crux / "codellama-7b-temp0.2" / "scored_output.json").read_text())
    for k in (1, 5):
        assert 100 * _values(remote)[f"cruxeval-o.pass_at_{k}"] == pytest.approx(
            official[f"pass_at_{k}"], abs=1e-9
        )
    assert remote.executor == "ray" and remote.counts == local.counts


def _killer(pools: list[RayPool], kills: int) -> Any:
    """An on_result hook that SIGKILLs actor processes holding work, ``kills``
    times, once results are flowing."""
    seen: list[int] = []
    killed: list[int] = []

    async def on_result(_r: CandidateResult) -> None:
        seen.append(1)
        if len(seen) < 6 or len(killed) >= kills or not pools:
            return
        busy = [(n, pid) for pid, n in pools[0].actor_load() if n > 0 and pid not in killed]
        if busy:
            pid = max(busy)[1]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    return on_result


@pytest.mark.ray
@pytest.mark.parametrize("kills", [1, 2])
def test_actor_killed_mid_run_loses_nothing(tmp_path: Path, ray_instance: Any, kills: int) -> None:
    """One of two actors killed: the other takes its batches. Both killed:
    replacements start and the run still completes."""
    samples = _samples(tmp_path / "s.jsonl", 24, sleep_s=0.15)
    sets = ["params.executor=ray", "params.ray_actors=2", "params.workers=1"]
    pools: list[RayPool] = []
    summary, rows = _score(
        tmp_path / "out", samples, sets, pool=pools, on_result=_killer(pools, kills)
    )
    assert len(rows) == 3 * 24 and summary.complete and summary.counts["infra_error"] == 0
    expected = {(pid, i): ("passed", "failed", "error")[i] for pid, i in rows}
    assert rows == expected
    assert summary.infra_retries >= kills  # each lost batch held at least one job
    assert summary.infra_retries == pools[0].redispatched
    assert summary.actors == (2 if kills == 1 else 4) and summary.nodes == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.ray
def test_unreachable_cluster_is_a_one_line_error(tmp_path: Path, ray_instance: Any) -> None:
    samples = _samples(tmp_path / "s.jsonl", 1)
    address = f"127.0.0.1:{_closed_port()}"
    cmd = [
        sys.executable,
        "-m",
        "aioeval",
        "score",
        "--benchmark",
        "human-eval",
        "--samples",
        str(samples),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
        "--set",
        "params.executor=ray",
        "--set",
        f"params.ray_address={address}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"cannot reach the cluster at {address}" in lines[0], out.stderr


@pytest.mark.ray
def test_pool_seam_directly(ray_instance: Any) -> None:
    """Every task kind crosses Ray: call values come back as plain data,
    checked tasks are judged by the actor's verifier, and an empty batch
    round-trips."""
    from aioeval.sandbox.protocol import Call, Checked
    from aioeval.sandbox.values import plain

    checked = Checked(
        program="def g(x):\n    return x * 2", entry="g", setup="", driver="assert g(3) == 6"
    )
    wrong = Checked(
        program="def g(x):\n    return x", entry="g", setup="", driver="assert g(3) == 6"
    )

    async def go() -> tuple[Any, ...]:
        pool = RayPool(load_config(None, ["params.executor=ray"]), batch_max=4)
        await pool.start()
        try:
            a = await pool.execute(
                Call(
                    program="def f():\n    return {'k': [1, 2.5, None]}",
                    entry="f",
                    args=plain.dumps([[], {}]),
                )
            )
            b = await pool.run("raise SystemExit(0)")
            c = await pool.execute(checked)
            d = await pool.execute(wrong)
            return a, b, c, d, await pool.ping()
        finally:
            await pool.aclose()

    a, b, c, d, rtt = anyio.run(go)
    assert a.status == "passed" and plain.loads(a.value) == {"k": [1, 2.5, None]}
    assert b.status != "passed"  # an early exit is never a pass, on Ray as locally
    assert c.status == "passed" and d.status == "failed"
    assert rtt > 0


# -- a head and a second node on this machine, joined by address ------------

DRIVER = """
import json, os, signal, sys
import anyio, ray
from aioeval.config import load_config
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.executors.ray import RayPool

samples, out, address, victim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cfg = load_config(None, ["params.executor=ray", f"params.ray_address={address}", "params.workers=1"])
seen, pools = [], []

def factory(c):
    pools.append(RayPool(c))
    return pools[0]

async def on_result(_r):
    seen.append(1)
    if victim and len(seen) == 6:
        # The whole second node: its raylet (the group ray start leads) and
        # the actor processes on it (Ray puts each worker in its own group).
        second = [n["NodeID"] for n in ray.nodes() if "node:__internal_head__" not in n["Resources"]]
        for a in pools[0]._actors:
            if a.info.node_id in second:
                os.kill(a.info.pid, signal.SIGKILL)
        os.killpg(victim, signal.SIGKILL)

async def go():
    spec = RunSpec(benchmark="human-eval", config=cfg, out_dir=out, samples=samples)
    return await evaluate(spec, on_result=on_result, pool_factory=factory)

s = anyio.run(go)
print(json.dumps({k: getattr(s, k) for k in ("counts", "complete", "actors", "nodes", "infra_retries")}))
"""


def _ray_node(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--block"]
    common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
    return subprocess.Popen(
        [*cmd, *args, *common],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own group: torn down by pgid, nothing else
    )


@pytest.fixture
def two_nodes() -> Iterator[tuple[str, int, dict[str, str]]]:
    """A Ray head and a second node on 127.0.0.1 (1 CPU each); yields the
    address, the second node's process group and the environment to join."""
    pytest.importorskip("ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # a throwaway loopback cluster
    port = _closed_port()
    address = f"127.0.0.1:{port}"
    head = _ray_node(["--head", "--port", str(port), "--include-dashboard", "false"], env)
    procs = [head]
    try:
        probe = (
            "import ray, sys; ray.init(address=sys.argv[1]); "
            "print(sum(n['Alive'] for n in ray.nodes()))"
        )
        worker = _ray_node(["--address", address], env)
        procs.append(worker)
        for _ in range(60):
            out = subprocess.run(
                [sys.executable, "-c", probe, address],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if out.stdout.strip() == "2":
                break
            anyio.run(anyio.sleep, 1)
        else:
            pytest.fail("the two-node Ray cluster did not come up")
        yield address, worker.pid, env
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


@pytest.mark.ray
def test_two_nodes_and_a_node_lost_mid_run(
    tmp_path: Path, two_nodes: tuple[str, int, dict[str, str]]
) -> None:
    address, second, env = two_nodes
    samples = _samples(tmp_path / "s.jsonl", 24, sleep_s=0.15)

    def drive(out: str, victim: int) -> dict[str, Any]:
        cmd = [sys.executable, "-c", DRIVER, str(samples), out, address, str(victim)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-2000:]
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    both = drive(str(tmp_path / "both"), 0)
    assert (both["actors"], both["nodes"], both["infra_retries"]) == (2, 2, 0)
    assert both["complete"] and both["counts"]["passed"] == 24

    lost = drive(str(tmp_path / "lost"), second)
    assert lost["complete"] and lost["counts"] == both["counts"]
    assert lost["infra_retries"] >= 1 and lost["nodes"] == 2


@pytest.mark.ray
def test_a_scorer_on_ray_gives_the_local_verdicts(ray_instance: Any) -> None:
    """A warm Scorer built from a config that names the Ray executor."""
    from aioeval.service import Scorer

    problem = load_problems()[0]
    answers = [problem.fields["canonical_solution"], "    return True\n", "    return (\n"]

    async def go(executor: str) -> list[str]:
        cfg = load_config(overrides=[f"params.executor={executor}"])
        async with Scorer(cfg) as scorer:
            assert isinstance(scorer.pool, RayPool) == (executor == "ray")
            return [(await scorer.score("human-eval", problem.id, a)).status for a in answers]

    assert anyio.run(go, "ray") == anyio.run(go, "local") == ["passed", "failed", "error"]
