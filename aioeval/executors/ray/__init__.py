"""The sandbox pool on a Ray cluster (``params.executor: ray``; optional extra).

Only execution leaves the driver. Each Ray actor owns an ordinary
`LocalPool` on its node, so every hardening layer applies there exactly as
locally. Generation, rate limiting and the journal stay in the driver: an
API key's limits are global, and one journal is the run's single record.

The package is split by job:

- ``_actor``: what runs on a node (`SandboxActor`, one LocalPool);
- ``_wire``: the typed msgpack that crosses Ray between driver and actor;
- ``_plan``: how many actors where, from the cluster's resources (pure);
- ``_dispatch``: micro-batching of tasks to actors, with per-actor
  backpressure and re-dispatch when an actor is lost; it takes the remote
  call as a function and never imports Ray;
- ``_cluster``: joining or starting Ray, starting actors, calling them;
- ``_pool``: `RayPool`, the executor that ties those together.

Faults: a batch whose actor dies (process killed, node lost, unreachable) is
sent again to another actor and its jobs are counted in ``infra_retries``.
The survivors carry the rest of the run; a run that has lost every actor
starts the start-time plan again on the nodes still alive (twice at most).
When that fails too, the jobs waiting get an ``infra_error`` verdict saying
so. A failing candidate never raises here; only a pool that cannot start
at all does, as a one-line `SandboxError` (or `ConfigError` without Ray
installed).

Ray is imported lazily, so importing this package never imports Ray.
"""

from __future__ import annotations

from ._plan import Placement, plan_actors
from ._pool import RayPool, from_config

__all__ = ["Placement", "RayPool", "from_config", "plan_actors"]
