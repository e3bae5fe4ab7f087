"""The sandbox pool on a Ray cluster (``params.executor: ray``; optional extra).

Only execution leaves the driver. Each Ray actor owns an ordinary
`LocalPool` on its node, built by the same ``local.from_config(cfg)`` as a local run,
so every hardening layer (allowlisted environment, rlimits, network and
filesystem confinement, fresh fork per candidate) applies there exactly as
locally. Generation, rate limiting and the journal stay in the driver: an
API key's limits are global, and one journal is the run's single record.

Dispatch is micro-batched. The pool seam is per job, so the first caller to
find no open batch becomes its leader: it waits a few milliseconds (or until
the batch holds ``batch_max`` jobs) and then for an actor with room. Jobs
arriving meanwhile join that batch, so batches grow by themselves when the
cluster is busy and stay small when it is idle. Each actor accepts at most
``in_flight`` batches at once; a leader with no actor free waits, its callers
wait, and the pipeline's bounded streams carry that backpressure back to
generation.

Faults: a batch whose actor dies (process killed, node lost, unreachable) is
sent again to another actor and its jobs are counted in ``infra_retries``.
The survivors carry the rest of the run; a run that has lost every actor
starts the start-time plan again on the nodes still alive (twice at most).
A failing candidate never raises here; only a pool that cannot start at all
does, as a one-line `SandboxError` (or `ConfigError` without Ray installed).

Ray is imported lazily, so the core install never needs it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from typing import Any

import anyio
import msgspec

from aioeval.config import RayExecutor, RunConfig
from aioeval.errors import ConfigError, SandboxError
from aioeval.executors.base import ExecutorFacts
from aioeval.executors.local import LocalPool
from aioeval.executors.local import from_config as local_from_config
from aioeval.sandbox.protocol import Outcome, Program, Task

CONNECT_TIMEOUT_S = 60.0
"""Longest wait for ray.init to join or start a cluster (it can hang for minutes)."""
PREFLIGHT_TIMEOUT_S = 5.0
"""TCP connect probe of a cluster address before handing it to Ray."""
START_TIMEOUT_S = 120.0
"""Longest wait for the actors to be placed and their templates to answer."""


class BatchReply(msgspec.Struct, frozen=True, array_like=True):
    outcomes: list[Outcome]
    infra_retries: int
    """The actor's LocalPool retries so far (templates that died mid-job)."""


class ActorInfo(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    pid: int
    node_id: str
    host: str
    slots: int
    layers: list[str]
    warnings: list[str]
    missing: list[str] = []


_encoder = msgspec.msgpack.Encoder()
_jobs_decoder = msgspec.msgpack.Decoder(list[Task])
_reply_decoder = msgspec.msgpack.Decoder(BatchReply)
_info_decoder = msgspec.msgpack.Decoder(ActorInfo)


class SandboxActor:
    """Runs inside a Ray worker process: one LocalPool on this node.

    Payloads cross Ray as msgpack bytes, so the wire format is the same
    typed Structs as the local protocol and no pickle of engine objects is
    needed on the hot path.
    """

    def __init__(self, config: bytes, slots: int) -> None:
        self._config = config
        self._slots = slots
        self._pool: LocalPool | None = None

    async def start(self) -> bytes:
        import ray

        cfg = msgspec.msgpack.decode(self._config, type=RunConfig)
        params = msgspec.structs.replace(cfg.params, workers=self._slots, executor="local")
        pool = local_from_config(msgspec.structs.replace(cfg, params=params))
        assert isinstance(pool, LocalPool)
        await pool.start()
        self._pool = pool
        info = ActorInfo(
            pid=os.getpid(),
            node_id=ray.get_runtime_context().get_node_id(),
            host=socket.gethostname(),
            slots=pool.size,
            layers=pool.layers,
            warnings=pool.warnings,
            missing=pool.missing,
        )
        return _encoder.encode(info)

    async def run_batch(self, payload: bytes) -> bytes:
        pool = self._pool
        assert pool is not None, "run_batch before start"
        jobs = _jobs_decoder.decode(payload)
        outcomes: list[Outcome | None] = [None] * len(jobs)

        async def one(i: int, job: Task) -> None:
            outcomes[i] = await pool.execute(job)

        async with anyio.create_task_group() as tg:
            for i, job in enumerate(jobs):
                tg.start_soon(one, i, job)
        done = [o for o in outcomes if o is not None]
        return _encoder.encode(BatchReply(outcomes=done, infra_retries=pool.infra_retries))

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None


class _Actor:
    """The driver's view of one actor: its handle, facts and load."""

    def __init__(self, handle: Any, info: ActorInfo) -> None:
        self.handle = handle
        self.info = info
        self.in_flight = 0
        self.alive = True
        self.infra_retries = 0


class _Batch:
    """Jobs collected by one leader; callers wait on ``done``."""

    def __init__(self) -> None:
        self.jobs: list[Task] = []
        self.outcomes: list[Outcome] = []
        self.full = anyio.Event()
        self.done = anyio.Event()

    def finish(self, outcomes: list[Outcome]) -> None:
        self.outcomes = outcomes
        self.done.set()

    def fail(self, reason: str) -> None:
        self.finish([Outcome(id=0, status="infra_error", reason=reason) for _ in self.jobs])


class _ActorLost(Exception):
    pass


class _BatchFailed(Exception):
    pass


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("params.executor=ray needs Ray: pip install 'aioeval[ray]'") from None
    return ray


def _preflight(address: str) -> None:
    """Fail fast on an address nobody answers at: ray.init would retry for minutes."""
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise SandboxError(f"ray: bad cluster address {address!r}; expected host:port or auto")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), PREFLIGHT_TIMEOUT_S).close()
    except OSError as exc:
        raise SandboxError(
            f"ray: cannot reach the cluster at {address}: {exc.strerror or exc}"
        ) from None


def plan_actors(
    nodes: list[dict[str, Any]], actors: int | None, workers: int | None
) -> list[tuple[str, int, float]]:
    """(node id, slots, CPUs reserved) per actor, round-robin over alive nodes.

    Default: one actor per node with one slot per CPU. An actor reserves its
    node's CPUs divided by the actors placed there, so the plan always fits
    an idle cluster and Ray does not put other work on those cores.
    """
    alive = sorted(
        (n for n in nodes if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0),
        key=lambda n: str(n["NodeID"]),
    )
    if not alive:
        raise SandboxError("ray: the cluster has no alive node with CPUs")
    count = actors or len(alive)
    placed = [alive[i % len(alive)] for i in range(count)]
    per_node: dict[str, int] = {}
    for n in placed:
        per_node[n["NodeID"]] = per_node.get(n["NodeID"], 0) + 1
    plan = []
    for n in placed:
        cpus = float(n["Resources"]["CPU"])
        share = cpus / per_node[n["NodeID"]]
        slots = workers or max(1, int(share))
        plan.append((str(n["NodeID"]), slots, share))
    return plan


class _RayOwner(threading.Thread):
    """The thread that calls ray.init and, later, ray.shutdown.

    A local Ray instance's processes are started with a parent-death signal
    tied to the *thread* that started them, so that thread must live as long
    as the instance; a worker thread from a pool would take the cluster down
    when it is recycled. It is a daemon with a deadline on ``ready`` because
    ray.init cannot be interrupted and, against an address that accepts TCP
    but is no Ray head, retries for minutes.
    """

    def __init__(self, ray: Any, address: str | None) -> None:
        super().__init__(name="aioeval-ray", daemon=True)
        self.ray = ray
        self.address = address
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        local = self.address in (None, "local")
        try:
            # A local instance stays on loopback: nothing of it listens on
            # the machine's public addresses.
            extra = {"_node_ip_address": "127.0.0.1"} if local else {}
            self.ray.init(
                address=self.address or "local",
                include_dashboard=False if local else None,
                log_to_driver=False,
                logging_level=logging.WARNING,
                **extra,
            )
        except BaseException as exc:
            self.error = exc
            self.ready.set()
            return
        self.ready.set()
        self.stop.wait()
        self.ray.shutdown()


def from_config(cfg: RunConfig) -> RayPool:
    """The Ray executor a run's configuration asks for."""
    return RayPool(cfg)


class RayPool:
    """A `SandboxPool` whose slots are Ray actors' LocalPools.

    ``size`` is ``depth`` x the sandbox slots across actors: a remote slot
    needs more jobs outstanding than a local one to stay busy across a
    dispatch round trip (Little's law), and the pipeline sizes its executors
    and buffers from ``size``. Each actor holds ``in_flight`` (2) batches of
    ``depth`` (4) x its slots: while one batch travels back, the other keeps
    every slot busy, and each batch's fixed dispatch cost (about 1.5 ms on
    one machine, see bench/ray_overhead.py) is shared by 4 jobs per slot.
    On one 2-core node depth 4 cost 8% of local throughput, depth 2 13%.
    """

    executor = "ray"

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
        self.redispatched = 0
        self.batches = 0
        self._actors: list[_Actor] = []
        self._open: _Batch | None = None
        self._room: anyio.Event | None = None  # made in start(): needs the event loop
        self._respawn_lock: anyio.Lock | None = None
        self._respawns_left = 0
        self._owner: _RayOwner | None = None
        self._ray: Any = None

    # -- facts -------------------------------------------------------------

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
        if not self._actors:
            return []
        common = [x for x in self._actors[0].info.layers]
        for a in self._actors[1:]:
            common = [x for x in common if x in a.info.layers]
        return common

    @property
    def missing(self) -> list[str]:
        """Layers missing on any actor."""
        seen: list[str] = []
        for a in self._actors:
            seen += [x for x in a.info.missing if x not in seen]
        return seen

    @property
    def warnings(self) -> list[str]:
        seen: list[str] = []
        for a in self._actors:
            for w in a.info.warnings:
                if w not in seen:
                    seen.append(w)
        return seen

    @property
    def actors(self) -> int:
        """Actors started over the run (replacements included)."""
        return len(self._actors)

    @property
    def nodes(self) -> int:
        return len({a.info.node_id for a in self._actors})

    @property
    def infra_retries(self) -> int:
        """Jobs sent again after their actor was lost, plus the actors' own
        template restarts."""
        return self.redispatched + sum(a.infra_retries for a in self._actors)

    def facts(self) -> ExecutorFacts:
        return ExecutorFacts(
            executor="ray",
            actors=self.actors,
            nodes=self.nodes,
            infra_retries=self.infra_retries,
        )

    def actor_load(self) -> list[tuple[int, int]]:
        """(pid, batches in flight) per live actor."""
        return [(a.info.pid, a.in_flight) for a in self._actors if a.alive]

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        ray = self._ray = _import_ray()
        if _async_library() != "asyncio":
            raise ConfigError("params.executor=ray needs the asyncio event loop")
        self._room, self._respawn_lock = anyio.Event(), anyio.Lock()
        await self._connect(ray)
        try:
            nodes = await anyio.to_thread.run_sync(ray.nodes)
            plan = plan_actors(nodes, self.planned_actors, self.cfg.params.workers)
            with anyio.fail_after(START_TIMEOUT_S):
                async with anyio.create_task_group() as tg:
                    for node_id, slots, cpus in plan:
                        tg.start_soon(self._spawn, node_id, slots, cpus)
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

    async def _connect(self, ray: Any) -> None:
        if ray.is_initialized():
            return  # the caller's Ray (a service or a test); theirs to shut down
        address = self.address
        if address not in (None, "auto", "local"):
            await anyio.to_thread.run_sync(_preflight, address)
        owner = _RayOwner(ray, address)
        owner.start()
        with anyio.move_on_after(CONNECT_TIMEOUT_S):
            while not owner.ready.is_set():
                await anyio.sleep(0.05)
        where = address or "a new local instance"
        if not owner.ready.is_set():
            raise SandboxError(f"ray: no answer from {where} within {CONNECT_TIMEOUT_S:.0f} s")
        if owner.error is not None:
            raise SandboxError(f"ray: cannot connect to {where}: {_one_line(owner.error)}")
        self._owner = owner

    async def _spawn(self, node_id: str, slots: int, cpus: float) -> _Actor:
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(SandboxActor).options(
            num_cpus=cpus,
            max_restarts=0,
            max_concurrency=max(64, 4 * self.in_flight),
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        )
        handle = remote.remote(_encoder.encode(self.cfg), slots)
        try:
            raw = await _await(handle.start.remote())
        except Exception as exc:
            ray.kill(handle)
            raise SandboxError(
                f"ray: sandbox actor failed to start on node {node_id[:8]}: {_one_line(exc)}"
            ) from None
        actor = _Actor(handle, _info_decoder.decode(raw))
        self._actors.append(actor)
        return actor

    async def aclose(self) -> None:
        ray = self._ray
        with anyio.CancelScope(shield=True):
            live = [a for a in self._actors if a.alive]
            if live and ray is not None:
                with anyio.move_on_after(10):
                    async with anyio.create_task_group() as tg:
                        for a in live:
                            tg.start_soon(_close_actor, a)
                for a in live:
                    a.alive = False
                    _kill(ray, a.handle)
            owner, self._owner = self._owner, None
            if owner is not None:
                owner.stop.set()
                await anyio.to_thread.run_sync(owner.join)

    async def ping(self) -> float:
        """Seconds for one empty batch to reach an actor and come back: the
        fixed dispatch cost a batch pays on top of its executions."""
        actor = await self._acquire()
        t0 = anyio.current_time()
        await self._call(actor, _encoder.encode([]), 0)
        return anyio.current_time() - t0

    # -- dispatch ----------------------------------------------------------

    async def run(self, program: str) -> Outcome:
        """Run one program in the official single-process model (`Program`)."""
        return await self.execute(Program(program=program))

    async def execute(self, task: Task) -> Outcome:
        batch = self._open
        leader = batch is None
        if batch is None:
            batch = self._open = _Batch()
        index = len(batch.jobs)
        batch.jobs.append(task)
        if len(batch.jobs) >= (self.batch_max or 1):
            if self._open is batch:
                self._open = None
            batch.full.set()
        if leader:
            try:
                await self._lead(batch)
            finally:
                if self._open is batch:
                    self._open = None
                if not batch.done.is_set():
                    batch.fail("ray: dispatch cancelled")
        else:
            await batch.done.wait()
        return batch.outcomes[index]

    async def _lead(self, batch: _Batch) -> None:
        with anyio.move_on_after(self.batch_wait_s):
            await batch.full.wait()
        try:
            actor = await self._acquire()
        except _BatchFailed as exc:
            self._seal(batch)
            batch.fail(str(exc))
            return
        # Jobs kept joining while we waited for room; from here on the batch is closed.
        self._seal(batch)
        payload = _encoder.encode(batch.jobs)
        while True:
            try:
                reply = await self._call(actor, payload, len(batch.jobs))
            except _ActorLost:
                self.redispatched += len(batch.jobs)
                try:
                    actor = await self._acquire()
                except _BatchFailed as exc:
                    batch.fail(str(exc))
                    return
                continue
            except _BatchFailed as exc:
                batch.fail(str(exc))
                return
            batch.finish(reply.outcomes)
            return

    def _seal(self, batch: _Batch) -> None:
        if self._open is batch:
            self._open = None

    async def _acquire(self) -> _Actor:
        """The least loaded live actor with room; waits while all are full."""
        while True:
            live = [a for a in self._actors if a.alive]
            if not live:
                await self._respawn()
                continue
            free = [a for a in live if a.in_flight < self.in_flight]
            if free:
                actor = min(free, key=lambda a: (a.in_flight / a.info.slots, -a.info.slots))
                actor.in_flight += 1
                return actor
            assert self._room is not None
            await self._room.wait()

    def _release(self, actor: _Actor) -> None:
        actor.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        """Let every leader waiting for room look again."""
        if self._room is not None:
            self._room.set()
        self._room = anyio.Event()

    async def _call(self, actor: _Actor, payload: bytes, jobs: int) -> BatchReply:
        ray = self._ray
        limits_wall = self.cfg.wall_timeout_s
        # A healthy actor finishes a batch in ceil(jobs/slots) candidate
        # wall budgets; far past that it is wedged or cut off.
        deadline = (jobs / actor.info.slots + 1) * (limits_wall + 30) + 60
        try:
            with anyio.fail_after(deadline):
                raw = await _await(actor.handle.run_batch.remote(payload))
        except TimeoutError:
            self._lose(actor)
            raise _ActorLost from None
        except ray.exceptions.RayTaskError as exc:
            raise _BatchFailed(f"ray: sandbox actor raised: {_one_line(exc)}") from None
        except ray.exceptions.RayError:
            self._lose(actor)
            raise _ActorLost from None
        finally:
            self._release(actor)
        reply = _reply_decoder.decode(raw)
        actor.infra_retries = max(actor.infra_retries, reply.infra_retries)
        self.batches += 1
        if len(reply.outcomes) != jobs:
            raise _BatchFailed("ray: sandbox actor answered out of step")
        return reply

    def _lose(self, actor: _Actor) -> None:
        if actor.alive:
            actor.alive = False
            _kill(self._ray, actor.handle)
            self._wake()

    async def _respawn(self) -> None:
        """Every actor is gone: start replacements on the nodes still alive."""
        assert self._respawn_lock is not None
        async with self._respawn_lock:
            if any(a.alive for a in self._actors):
                return
            if self._respawns_left <= 0:
                raise _BatchFailed("ray: every sandbox actor was lost")
            ray = self._ray
            try:
                nodes = await anyio.to_thread.run_sync(ray.nodes)
                params = self.cfg.params
                plan = plan_actors(nodes, self.planned_actors, params.workers)
                plan = plan[: self._respawns_left]
                self._respawns_left -= len(plan)
                with anyio.fail_after(START_TIMEOUT_S):
                    async with anyio.create_task_group() as tg:
                        for node_id, slots, cpus in plan:
                            tg.start_soon(self._spawn, node_id, slots, cpus)
            except (SandboxError, TimeoutError) as exc:
                raise _BatchFailed(
                    f"ray: every sandbox actor was lost; restart failed: {exc}"
                ) from None
            if not any(a.alive for a in self._actors):
                raise _BatchFailed("ray: every sandbox actor was lost")


async def _await(ref: Any) -> Any:
    """Await an ObjectRef on the running asyncio loop (uvloop included)."""
    return await asyncio.wrap_future(ref.future())


async def _close_actor(actor: _Actor) -> None:
    try:
        await _await(actor.handle.close.remote())
    except Exception:
        pass


def _kill(ray: Any, handle: Any) -> None:
    try:
        ray.kill(handle, no_restart=True)
    except Exception:
        pass


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


def _async_library() -> str:
    """The running async library's name, without a sniffio dependency."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return "other"
    return "asyncio"
