"""Cluster planning: how many actors go where, from the nodes' resources.

Pure: it reads the node list ``ray.nodes()`` returns and decides nothing
else, so it is tested by table without a cluster.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from aioeval.errors import SandboxError


class Placement(NamedTuple):
    """One actor to start: where, with how many sandbox slots, reserving how many CPUs."""

    node_id: str
    slots: int
    cpus: float


def plan_actors(
    nodes: list[dict[str, Any]], actors: int | None, workers: int | None
) -> list[Placement]:
    """One `Placement` per actor, round-robin over alive nodes with CPUs.

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
        share = float(n["Resources"]["CPU"]) / per_node[n["NodeID"]]
        plan.append(Placement(str(n["NodeID"]), workers or max(1, int(share)), share))
    return plan
