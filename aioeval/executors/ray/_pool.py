"""`RayPool`: the executor that puts the cluster, the plan and the dispatcher together."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator

import anyio

from aioeval.config import RayExecutor, RunConfig
from aioeval.errors import ConfigError, SandboxError
from aioeval.executors.base import ExecutorFacts
from aioeval.sandbox.protocol import Outcome, Program, Task

from ._cluster import RayActor, RayCluster, import_ray
from ._dispatch import ALL_LOST, BatchFailed, Dispatcher
from ._plan import Placement, plan_actors

START_TIMEOUT_S = 120.0
"""Longest wait for the actors to be placed and their templates to answer."""


class RayPool:
    """An executor whose slots are Ray actors' LocalPools.

    ``size`` is ``depth`` x the sandbox slots across actors: a remote slot
    needs more jobs outstanding than a local one to stay busy across a
    dispatch round trip (Little's law), and the pipeline sizes its executors
    and buffers from ``size``. Each actor holds ``in_flight`` (2) batches of
    ``depth`` (4) x its slots: while one batch travels back, the other keeps
    every slot busy, and each batch's fixed dispatch cost (about 1.5 ms on
    one machine, see bench/ray_overhead.py) is shared by 4 jobs per slot.
    On one 2-core node depth 4 cost 8% of local throughput, depth 2 13%.
    """

    def __init__(
        self,
        cfg: RunConfig,
        *,
        batch_max: int | None = None,
        batch_wait_s: float = 0.002,
        in_flight: int = 2,
        depth: int = 4,
    ) -> None:
        self.cfg = cfg
        settings = cfg.executor_settings
        self.address = settings.address if isinstance(settings, RayExecutor) else None
        self.planned_actors = settings.actors if isinstance(settings, RayExecutor) else None
        self.batch_max = batch_max
        """Jobs per batch; default depth x the actors' mean slot count."""
        self.batch_wait_s = batch_wait_s
        """How long a leader waits for company before looking for an actor."""
        self.in_flight = in_flight
        """Batches each actor may hold at once (the per-actor backpressure bound)."""
        self.depth = depth
        """Jobs the pool accepts per sandbox slot (see the class docstring)."""
        self._cluster: RayCluster | None = None
        self._dispatch: Dispatcher[RayActor] | None = None  # made in start(): needs the loop
        self._respawns_left = 0

    # -- facts -------------------------------------------------------------

    @property
    def _actors(self) -> list[RayActor]:
        return self._dispatch.targets if self._dispatch is not None else []

    @property
    def slots(self) -> int:
        """Sandbox slots across the actors started."""
        return sum(a.info.slots for a in self._actors)

    @property
    def size(self) -> int:
        return self.depth * self.slots

    @property
    def layers(self) -> list[str]:
        """Layers in force on every actor (the intersection, in order)."""
        actors = self._actors
        if not actors:
            return []
        return [x for x in actors[0].info.layers if all(x in a.info.layers for a in actors)]

    @property
    def missing(self) -> list[str]:
        """Layers missing on any actor."""
        return _union(a.info.missing for a in self._actors)

    @property
    def warnings(self) -> list[str]:
        return _union(a.info.warnings for a in self._actors)

    @property
    def actors(self) -> int:
        """Actors started over the run (replacements included)."""
        return len(self._actors)

    @property
    def nodes(self) -> int:
        return len({a.info.node_id for a in self._actors})

    @property
    def redispatched(self) -> int:
        """Jobs sent again because their actor was lost."""
        return self._dispatch.redispatched if self._dispatch is not None else 0

    @property
    def batches(self) -> int:
        """Batches the actors answered."""
        return self._dispatch.batches if self._dispatch is not None else 0

    @property
    def infra_retries(self) -> int:
        """Jobs sent again after their actor was lost, plus the actors' own
        template restarts."""
        return self.redispatched + sum(a.infra_retries for a in self._actors)

    def facts(self) -> ExecutorFacts:
        actors = self._actors
        first = actors[0].info.verifier_layers if actors else []
        return ExecutorFacts(
            executor="ray",
            actors=self.actors,
            nodes=self.nodes,
            infra_retries=self.infra_retries,
            verifier_layers=[x for x in first if all(x in a.info.verifier_layers for a in actors)],
            verifier_missing=_union(a.info.verifier_missing for a in actors),
        )

    def actor_load(self) -> list[tuple[int, int]]:
        """(pid, batches in flight) per live actor."""
        return [(a.info.pid, a.in_flight) for a in self._actors if a.alive]

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        ray = import_ray()
        if not _on_asyncio():
            raise ConfigError("params.executor=ray needs the asyncio event loop")
        cluster = self._cluster = RayCluster(ray, self.cfg, concurrency=max(64, 4 * self.in_flight))
        dispatch = self._dispatch = Dispatcher(
            cluster.run_batch,
            batch_wait_s=self.batch_wait_s,
            in_flight=self.in_flight,
            on_lost=lambda actor: cluster.kill(actor.handle),
            replenish=self._respawn,
        )
        try:
            await cluster.connect(self.address)
            plan = await self._plan()
            await self._spawn_all(plan)
        except TimeoutError:
            await self.aclose()
            raise SandboxError(
                f"ray: sandbox actors not ready within {START_TIMEOUT_S:.0f} s "
                "(not enough free CPUs, or aioeval missing on a node?)"
            ) from None
        except BaseException:
            await self.aclose()
            raise
        self._respawns_left = 2 * len(plan)
        if self.batch_max is None:
            self.batch_max = max(1, round(self.size / len(self._actors)))  # depth x slots
        dispatch.batch_max = self.batch_max

    async def _plan(self) -> list[Placement]:
        assert self._cluster is not None
        nodes = await self._cluster.nodes()
        return plan_actors(nodes, self.planned_actors, self.cfg.params.workers)

    async def _spawn_all(self, plan: list[Placement]) -> None:
        """Start the planned actors at once; each joins the dispatch when ready."""
        cluster, dispatch = self._cluster, self._dispatch
        assert cluster is not None and dispatch is not None

        async def spawn(place: Placement) -> None:
            dispatch.add(await cluster.spawn(place))

        try:
            with anyio.fail_after(START_TIMEOUT_S):
                async with anyio.create_task_group() as tg:
                    for place in plan:
                        tg.start_soon(spawn, place)
        except BaseExceptionGroup as group:
            # One actor that cannot start is the whole reason, in one line.
            first = next((e for e in _leaves(group) if isinstance(e, SandboxError)), None)
            if first is None:
                raise
            raise first from None

    async def _respawn(self) -> None:
        """Every actor is gone: start replacements on the nodes still alive
        (twice the start-time plan over the run, at most)."""
        if self._respawns_left <= 0:
            raise BatchFailed(ALL_LOST)
        try:
            plan = (await self._plan())[: self._respawns_left]
            self._respawns_left -= len(plan)
            await self._spawn_all(plan)
        except (SandboxError, TimeoutError) as exc:
            raise BatchFailed(f"{ALL_LOST}; restart failed: {exc}") from None

    async def aclose(self) -> None:
        if self._cluster is not None:
            await self._cluster.close(self._actors)

    async def ping(self) -> float:
        """Seconds for one empty batch to reach an actor and come back: the
        fixed dispatch cost a batch pays on top of its executions."""
        assert self._dispatch is not None, "ping before start"
        return await self._dispatch.ping()

    # -- dispatch ----------------------------------------------------------

    async def run(self, program: str) -> Outcome:
        """Run one program in the official single-process model (`Program`)."""
        return await self.execute(Program(program=program))

    async def execute(self, task: Task) -> Outcome:
        assert self._dispatch is not None, "execute before start"
        return await self._dispatch.execute(task)


def from_config(cfg: RunConfig) -> RayPool:
    """The Ray executor a run's configuration asks for."""
    return RayPool(cfg)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _union(lists: Iterable[list[str]]) -> list[str]:
    """Every item of the lists once, in first-seen order."""
    seen: list[str] = []
    for items in lists:
        seen += [x for x in items if x not in seen]
    return seen


def _on_asyncio() -> bool:
    """Whether the running async library is asyncio, without a sniffio dependency."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
