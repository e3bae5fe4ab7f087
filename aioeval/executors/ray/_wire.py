"""What crosses Ray between the driver and an actor, as typed msgpack.

Payloads travel as msgpack bytes, so the wire format is the same typed
Structs as the local sandbox protocol and no pickle of engine objects is
needed on the hot path.
"""

from __future__ import annotations

import msgspec

from aioeval.sandbox.protocol import Outcome, Task


class BatchReply(msgspec.Struct, frozen=True, array_like=True):
    """An actor's answer to one batch, outcomes in the order of its jobs."""

    outcomes: list[Outcome]
    infra_retries: int
    """The actor's LocalPool retries so far (templates that died mid-job)."""


class ActorInfo(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """What a started actor reports about itself and its node."""

    pid: int
    node_id: str
    slots: int
    layers: list[str]
    warnings: list[str]
    missing: list[str] = []
    verifier_layers: list[str] = []
    verifier_missing: list[str] = []


encoder = msgspec.msgpack.Encoder()
jobs_decoder = msgspec.msgpack.Decoder(list[Task])
reply_decoder = msgspec.msgpack.Decoder(BatchReply)
info_decoder = msgspec.msgpack.Decoder(ActorInfo)
