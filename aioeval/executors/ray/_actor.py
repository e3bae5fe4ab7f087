"""The part that runs on a node: one Ray actor owning one `LocalPool`.

The pool is built by the same ``local.from_config(cfg)`` as a local run, so
every hardening layer (allowlisted environment, rlimits, network and
filesystem confinement, fresh fork per candidate) applies on the node
exactly as it does locally.
"""

from __future__ import annotations

import os

import anyio
import msgspec

from aioeval.config import RunConfig
from aioeval.executors.local import LocalPool
from aioeval.executors.local import from_config as local_from_config
from aioeval.sandbox.protocol import Outcome, Task

from ._wire import ActorInfo, BatchReply, encoder, jobs_decoder


class SandboxActor:
    """Runs inside a Ray worker process; the driver wraps it with ``ray.remote``."""

    def __init__(self, config: bytes, slots: int) -> None:
        self._config = config
        self._slots = slots
        self._pool: LocalPool | None = None

    async def start(self) -> bytes:
        """Start the node's sandbox slots; answers an encoded `ActorInfo`."""
        import ray

        cfg = msgspec.msgpack.decode(self._config, type=RunConfig)
        params = msgspec.structs.replace(cfg.params, workers=self._slots, executor="local")
        pool = local_from_config(msgspec.structs.replace(cfg, params=params))
        assert isinstance(pool, LocalPool)
        await pool.start()
        self._pool = pool
        facts = pool.facts()
        info = ActorInfo(
            pid=os.getpid(),
            node_id=ray.get_runtime_context().get_node_id(),
            slots=pool.size,
            layers=pool.layers,
            warnings=pool.warnings,
            missing=pool.missing,
            verifier_layers=facts.verifier_layers,
            verifier_missing=facts.verifier_missing,
        )
        return encoder.encode(info)

    async def run_batch(self, payload: bytes) -> bytes:
        """Run an encoded ``list[Task]`` at once; answers an encoded `BatchReply`."""
        pool = self._pool
        assert pool is not None, "run_batch before start"
        jobs = jobs_decoder.decode(payload)
        outcomes: list[Outcome | None] = [None] * len(jobs)

        async def one(i: int, job: Task) -> None:
            outcomes[i] = await pool.execute(job)

        async with anyio.create_task_group() as tg:
            for i, job in enumerate(jobs):
                tg.start_soon(one, i, job)
        done = [o for o in outcomes if o is not None]
        return encoder.encode(BatchReply(outcomes=done, infra_retries=pool.infra_retries))

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
