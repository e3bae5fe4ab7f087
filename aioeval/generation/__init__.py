"""The generation stage of llm-endpoint runs: prompts -> requests -> candidates.

    producer ──► client ──► codec (one per endpoint API) ──► HTTP
       │           ├── netguard (SSRF guard on every address)
       │           └── credentials (the key, only in a header)
       ├── ratelimit (pace, parallel caps, token budget, header hints)
       └── retry (what to repeat, how long to wait, on an injectable clock)

`endpoint_producer` checks that the run is safe and the endpoint answers,
then returns the producer the pipeline runs. A new endpoint API is one
module in ``codecs/`` and one entry in `codecs.REGISTRY`.
"""

from __future__ import annotations

from .client import Client, Completion, RequestError
from .producer import check_ready, endpoint_producer

__all__ = ["Client", "Completion", "RequestError", "check_ready", "endpoint_producer"]
