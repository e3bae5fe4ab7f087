"""The driver's side of Ray: joining a cluster, starting actors, calling them.

Everything that touches the ``ray`` module on the driver lives here; Ray is
imported only when a run asks for it, so the core install never needs it.
Ray's own errors become the dispatcher's (`TargetLost`, `BatchFailed`) or a
one-line `SandboxError`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import threading
from typing import Any

import anyio

from aioeval.config import RunConfig
from aioeval.errors import ConfigError, SandboxError
from aioeval.sandbox.protocol import Outcome, Task

from ._actor import SandboxActor
from ._dispatch import BatchFailed, Target, TargetLost
from ._plan import Placement
from ._wire import ActorInfo, encoder, info_decoder, reply_decoder

CONNECT_TIMEOUT_S = 60.0
"""Longest wait for ray.init to join or start a cluster (it can hang for minutes)."""
PREFLIGHT_TIMEOUT_S = 5.0
"""TCP connect probe of a cluster address before handing it to Ray."""


class RayActor(Target):
    """The driver's view of one actor: its handle, what it reported, its load."""

    def __init__(self, handle: Any, info: ActorInfo) -> None:
        super().__init__(info.slots)
        self.handle = handle
        self.info = info
        self.infra_retries = 0
        """The actor's own template restarts, as of its latest reply."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("params.executor=ray needs Ray: pip install 'aioeval[ray]'") from None
    return ray


class RayCluster:
    """One run's use of Ray: the connection (if it made it) and its actors."""

    def __init__(self, ray: Any, cfg: RunConfig, *, concurrency: int) -> None:
        self.ray = ray
        self.cfg = cfg
        self.concurrency = concurrency
        """Calls an actor accepts at once (Ray's ``max_concurrency``)."""
        self._owner: _RayOwner | None = None

    async def connect(self, address: str | None) -> None:
        """Join ``address`` (or start a local instance) unless Ray is already up."""
        if self.ray.is_initialized():
            return  # the caller's Ray (a service or a test); theirs to shut down
        if address not in (None, "auto", "local"):
            await anyio.to_thread.run_sync(_preflight, address)
        owner = _RayOwner(self.ray, address)
        owner.start()
        where = address or "a new local instance"
        with anyio.move_on_after(CONNECT_TIMEOUT_S):
            await asyncio.wrap_future(owner.ready)
        if not owner.ready.done():
            owner.stop.set()  # shut down if ray.init ever returns
            raise SandboxError(f"ray: no answer from {where} within {CONNECT_TIMEOUT_S:.0f} s")
        if owner.error is not None:
            raise SandboxError(f"ray: cannot connect to {where}: {one_line(owner.error)}")
        self._owner = owner

    async def nodes(self) -> list[dict[str, Any]]:
        nodes: list[dict[str, Any]] = await anyio.to_thread.run_sync(self.ray.nodes)
        return nodes

    async def spawn(self, place: Placement) -> RayActor:
        """Start one actor pinned to its node; returns once its sandboxes answer."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = self.ray.remote(SandboxActor).options(
            num_cpus=place.cpus,
            max_restarts=0,
            max_concurrency=self.concurrency,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=place.node_id, soft=False),
        )
        handle = remote.remote(encoder.encode(self.cfg), place.slots)
        try:
            raw = await _await(handle.start.remote())
        except Exception as exc:
            self.kill(handle)
            raise SandboxError(
                f"ray: sandbox actor failed to start on node {place.node_id[:8]}: {one_line(exc)}"
            ) from None
        return RayActor(handle, info_decoder.decode(raw))

    async def run_batch(self, actor: RayActor, jobs: list[Task]) -> list[Outcome]:
        """The dispatcher's remote call: one batch on one actor."""
        # A healthy actor finishes a batch in ceil(jobs/slots) candidate
        # wall budgets; far past that it is wedged or cut off.
        deadline = (len(jobs) / actor.info.slots + 1) * (self.cfg.wall_timeout_s + 30) + 60
        errors = self.ray.exceptions
        try:
            with anyio.fail_after(deadline):
                raw = await _await(actor.handle.run_batch.remote(encoder.encode(jobs)))
        except TimeoutError:
            raise TargetLost from None
        except errors.RayTaskError as exc:
            raise BatchFailed(f"ray: sandbox actor raised: {one_line(exc)}") from None
        except errors.RayError:
            raise TargetLost from None
        reply = reply_decoder.decode(raw)
        actor.infra_retries = max(actor.infra_retries, reply.infra_retries)
        return reply.outcomes

    def kill(self, handle: Any) -> None:
        try:
            self.ray.kill(handle, no_restart=True)
        except Exception:
            pass

    async def close(self, actors: list[RayActor]) -> None:
        """Close live actors (10 s grace), kill them, and end a Ray this run started."""
        with anyio.CancelScope(shield=True):
            live = [a for a in actors if a.alive]
            if live:
                with anyio.move_on_after(10):
                    async with anyio.create_task_group() as tg:
                        for a in live:
                            tg.start_soon(_close_actor, a)
                for a in live:
                    a.alive = False
                    self.kill(a.handle)
            owner, self._owner = self._owner, None
            if owner is not None:
                owner.stop.set()
                await anyio.to_thread.run_sync(owner.join)


class _RayOwner(threading.Thread):
    """The thread that calls ray.init and, later, ray.shutdown.

    A local Ray instance's processes are started with a parent-death signal
    tied to the *thread* that started them, so that thread must live as long
    as the instance; a worker thread from a pool would take the cluster down
    when it is recycled. It is a daemon and the driver waits on ``ready``
    with a deadline, because ray.init cannot be interrupted and, against an
    address that accepts TCP but is no Ray head, retries for minutes.
    """

    def __init__(self, ray: Any, address: str | None) -> None:
        super().__init__(name="aioeval-ray", daemon=True)
        self.ray = ray
        self.address = address
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        """Resolved once ray.init returns or raises (then ``error`` says why)."""
        # Running from the start: a driver that gives up cannot cancel it
        # under this thread's feet.
        self.ready.set_running_or_notify_cancel()
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
            self.ready.set_result(None)
            return
        self.ready.set_result(None)
        self.stop.wait()
        self.ray.shutdown()


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


async def _await(ref: Any) -> Any:
    """Await an ObjectRef on the running asyncio loop (uvloop included)."""
    return await asyncio.wrap_future(ref.future())


async def _close_actor(actor: RayActor) -> None:
    try:
        await _await(actor.handle.close.remote())
    except Exception:
        pass


def one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__
