"""The Ray executor's driver side without Ray: joining a cluster
(aioeval/executors/ray/_cluster.py) with a stand-in for the ``ray`` module,
and replacing lost actors (``_pool.py``) with a stand-in cluster.

The driver waits for ``ray.init`` on the owner thread's signal rather than
polling, turns its failure into one line, and gives up at the deadline
without leaving a Ray behind. Waits are on events; the one deadline tested
is against an init that never returns until told to.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import anyio
import pytest

from aioeval.config import load_config
from aioeval.errors import SandboxError
from aioeval.executors.ray import RayPool, _cluster
from aioeval.executors.ray._cluster import RayActor, RayCluster
from aioeval.executors.ray._dispatch import Dispatcher, TargetLost
from aioeval.executors.ray._plan import Placement
from aioeval.executors.ray._wire import ActorInfo
from aioeval.sandbox.protocol import Outcome, Program, Task

pytestmark = pytest.mark.anyio


class FakeRay:
    """What RayCluster.connect and close use of the ``ray`` module."""

    def __init__(self, *, error: BaseException | None = None) -> None:
        self.error = error
        self.release = threading.Event()
        """ray.init returns (or raises) once this is set."""
        self.init_thread: str | None = None
        self.kwargs: dict[str, Any] = {}
        self.shut_down = threading.Event()

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: Any) -> None:
        self.init_thread = threading.current_thread().name
        self.kwargs = kwargs
        self.release.wait()
        if self.error is not None:
            raise self.error

    def shutdown(self) -> None:
        self.shut_down.set()


def _cluster_for(ray: FakeRay) -> RayCluster:
    return RayCluster(ray, load_config(None, ["params.executor=ray"]), concurrency=8)


async def test_connect_returns_when_init_does_and_close_shuts_ray_down() -> None:
    ray = FakeRay()
    ray.release.set()
    cluster = _cluster_for(ray)
    await cluster.connect(None)
    # a local instance, on loopback, started by the long-lived owner thread
    assert ray.init_thread == "aioeval-ray"
    assert ray.kwargs["address"] == "local" and ray.kwargs["_node_ip_address"] == "127.0.0.1"
    assert not ray.shut_down.is_set()
    await cluster.close([])
    assert ray.shut_down.is_set()


async def test_a_failing_init_is_one_line() -> None:
    ray = FakeRay(error=RuntimeError("Traceback...\n  somewhere\nConnectionError: refused"))
    ray.release.set()
    with pytest.raises(SandboxError) as caught:
        await _cluster_for(ray).connect(None)
    assert str(caught.value) == (
        "ray: cannot connect to a new local instance: ConnectionError: refused"
    )


async def test_no_answer_by_the_deadline_gives_up_and_never_keeps_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cluster, "CONNECT_TIMEOUT_S", 0.01)
    ray = FakeRay()  # init blocks until released
    with pytest.raises(SandboxError, match=r"no answer from a new local instance within 0 s"):
        await _cluster_for(ray).connect(None)
    ray.release.set()  # ray.init comes back after all: that Ray is shut down again
    assert await anyio.to_thread.run_sync(ray.shut_down.wait, 30)


async def test_a_malformed_address_is_refused_before_ray_is_asked() -> None:
    ray = FakeRay()
    with pytest.raises(SandboxError, match="bad cluster address 'nohost'"):
        await _cluster_for(ray).connect("nohost")
    assert ray.init_thread is None


class RefusingCluster:
    """A cluster of two alive nodes on which no actor starts."""

    async def nodes(self) -> list[dict[str, Any]]:
        return [{"NodeID": n, "Alive": True, "Resources": {"CPU": 1}} for n in ("n1", "n2")]

    async def spawn(self, place: Placement) -> RayActor:
        raise SandboxError(f"ray: sandbox actor failed to start on node {place.node_id}: no room")


async def test_every_actor_lost_and_no_replacement_starts_is_infra_error_in_one_line() -> None:
    pool = RayPool(load_config(None, ["params.executor=ray"]))

    async def lost(_actor: RayActor, _jobs: list[Task]) -> list[Outcome]:
        raise TargetLost

    dispatch = Dispatcher(lost, batch_wait_s=0.0, replenish=pool._respawn)
    info = ActorInfo(pid=1, node_id="n1", slots=1, layers=[], warnings=[])
    dispatch.add(RayActor(None, info))
    pool._cluster, pool._dispatch, pool._respawns_left = RefusingCluster(), dispatch, 2  # type: ignore[assignment]
    outcome = await pool.execute(Program(program="pass"))
    assert outcome.status == "infra_error"
    assert re.fullmatch(
        "ray: every sandbox actor was lost; restart failed: "
        "ray: sandbox actor failed to start on node n[12]: no room",
        outcome.reason,
    ), outcome.reason
    assert pool.redispatched == 1 and pool.actors == 1 and pool.facts().infra_retries == 1
