"""Endpoint APIs, registered by name (``target.api``) in `REGISTRY`.

Each is a `Codec` (see `base`): one module that builds the API's request
body and reads its answer. Adding an API is a new module here and one
entry below; nothing else in the engine branches on the API.
"""

from __future__ import annotations

from aioeval.errors import ConfigError

from .base import Answer, Choice, Codec, Malformed, Usage
from .chat import Chat
from .completions import Completions

REGISTRY: dict[str, Codec] = {
    "chat": Chat(),
    "completions": Completions(),
}

__all__ = ["REGISTRY", "Answer", "Choice", "Codec", "Malformed", "Usage", "get_codec"]


def get_codec(api: str) -> Codec:
    """The codec ``target.api`` names; a one-line ConfigError for an unknown name."""
    codec = REGISTRY.get(api)
    if codec is None:
        raise ConfigError(
            f"target.api {api!r}: unknown endpoint API; choose one of {', '.join(REGISTRY)}"
        )
    return codec
