"""OpenAI-compatible HTTP client: chat completions and legacy completions.

The only module that talks to the model server. One request asks for ``n``
samples of one prompt and returns its choices, the usage it reported and
the rate-limit hints of its headers. Every failure is a `RequestError`
carrying the problem id, sample index and attempt it belongs to, plus a
`Failure` that `retry.should_retry` classifies:

    EndpointError (aioeval.errors)
    ├── RequestError        one generation request failed (status, timeout,
    │                       dropped connection, malformed body)
    └── UnsafeEndpointError refused by the SSRF guard (aioeval.netguard)

Redirects are not followed (a redirect could lead past the SSRF guard, and
the Authorization header with it). The API key goes into that header and
nowhere else; error messages quote at most a short, single-line excerpt of
the response body, never the request.
"""

from __future__ import annotations

import random
import time
from typing import Any

import aiohttp
import anyio
import msgspec

from .config import Params, Target
from .credentials import ApiKey
from .errors import EndpointError
from .netguard import GuardedResolver, UnsafeEndpointError
from .ratehints import RateHeaders, read_headers
from .retry import Failure, RealClock, call_with_retry
from .suites.base import Prompt


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    finish_reason: str | None = None


class Completion(msgspec.Struct, frozen=True, kw_only=True):
    choices: list[Choice]
    usage: Usage | None
    hints: RateHeaders
    latency_ms: float


class RequestError(EndpointError):
    """One request failed; ``failure`` says how, the rest says for whom."""

    def __init__(
        self,
        failure: Failure,
        detail: str,
        *,
        problem_id: str,
        sample_index: int,
        attempt: int,
        hints: RateHeaders | None = None,
    ) -> None:
        self.failure = failure
        self.detail = detail
        self.problem_id = problem_id
        self.sample_index = sample_index
        self.attempt = attempt
        self.hints = hints or RateHeaders()
        super().__init__(
            f"{problem_id} sample {sample_index} attempt {attempt}: {failure.cause}: {detail}"
        )


def failure_of(exc: Exception) -> Failure | None:
    return exc.failure if isinstance(exc, RequestError) else None


# Wire shapes: lenient (unknown fields ignored), but a body without choices
# is malformed.
class _Message(msgspec.Struct):
    content: str | None = None


class _ChatChoice(msgspec.Struct):
    message: _Message = msgspec.field(default_factory=_Message)
    index: int = 0
    finish_reason: str | None = None


class _TextChoice(msgspec.Struct):
    text: str | None = None
    index: int = 0
    finish_reason: str | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _ChatBody(msgspec.Struct):
    choices: list[_ChatChoice]
    usage: _Usage | None = None


class _TextBody(msgspec.Struct):
    choices: list[_TextChoice]
    usage: _Usage | None = None


class _Model(msgspec.Struct):
    id: str


class _Models(msgspec.Struct):
    data: list[_Model]


_CHAT = msgspec.json.Decoder(_ChatBody)
_TEXT = msgspec.json.Decoder(_TextBody)
_MODELS = msgspec.json.Decoder(_Models)


def _excerpt(body: bytes, limit: int = 160) -> str:
    text = body[: limit * 4].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


def request_body(target: Target, params: Params, prompt: Prompt, n: int) -> dict[str, Any]:
    """The JSON body of one generation request (pure)."""
    body: dict[str, Any] = {"model": target.model, "max_tokens": params.max_tokens}
    if target.api == "chat":
        body["messages"] = prompt.messages
    else:
        body["prompt"] = prompt.text
    if n > 1:
        body["n"] = n
    for key in ("temperature", "top_p", "stop", "seed"):
        value = getattr(params, key)
        if value is not None:
            body[key] = value
    return body


def parse_completion(api: str, data: bytes) -> tuple[list[Choice], Usage | None]:
    """Choices in index order and usage; raises msgspec errors when malformed."""
    body: _ChatBody | _TextBody
    if api == "chat":
        body = _CHAT.decode(data)
        pairs = [(c.index, c.message.content or "", c.finish_reason) for c in body.choices]
    else:
        body = _TEXT.decode(data)
        pairs = [(c.index, c.text or "", c.finish_reason) for c in body.choices]
    if not pairs:
        raise msgspec.ValidationError("no choices")
    pairs.sort(key=lambda p: p[0])
    choices = [Choice(text=t, finish_reason=f) for _, t, f in pairs]
    usage = None
    if body.usage is not None and (
        body.usage.prompt_tokens is not None or body.usage.completion_tokens is not None
    ):
        usage = Usage(
            prompt_tokens=body.usage.prompt_tokens,
            completion_tokens=body.usage.completion_tokens,
        )
    return choices, usage


class Client:
    """``async with Client(target, key) as c: await c.generate(...)``."""

    def __init__(
        self, target: Target, key: ApiKey | None, *, resolver: GuardedResolver | None = None
    ) -> None:
        if not target.endpoint or not target.model:
            raise EndpointError("target.endpoint and target.model are required")
        self.target = target
        self.base = target.endpoint.rstrip("/")
        self._key = key
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Client:
        connector = aiohttp.TCPConnector(
            resolver=self._resolver or GuardedResolver(), limit=0, ttl_dns_cache=60
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.target.request_timeout_s),
            trust_env=False,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        session, self._session = self._session, None
        if session is not None:
            with anyio.CancelScope(shield=True):
                await session.close()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        return headers

    async def _send(
        self, method: str, path: str, body: bytes | None, who: tuple[str, int, int]
    ) -> tuple[bytes, RateHeaders]:
        assert self._session is not None, "use Client inside 'async with'"
        problem_id, sample_index, attempt = who

        def fail(failure: Failure, detail: str, hints: RateHeaders | None = None) -> RequestError:
            return RequestError(
                failure,
                detail,
                problem_id=problem_id,
                sample_index=sample_index,
                attempt=attempt,
                hints=hints,
            )

        try:
            async with self._session.request(
                method, self.base + path, data=body, headers=self._headers(), allow_redirects=False
            ) as resp:
                data = await resp.read()
                hints = read_headers(resp.headers, time.time())
                if resp.status != 200:
                    failure = Failure(
                        kind="status", status=resp.status, retry_after_s=hints.retry_after_s
                    )
                    raise fail(failure, f"HTTP {resp.status}: {_excerpt(data)}", hints)
                return data, hints
        except RequestError:
            raise
        except UnsafeEndpointError as exc:
            raise fail(Failure(kind="refused"), str(exc)) from None
        except TimeoutError:
            raise fail(
                Failure(kind="timeout"), f"no answer within {self.target.request_timeout_s} s"
            ) from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, UnsafeEndpointError):
                raise fail(Failure(kind="refused"), str(exc.os_error)) from None
            raise fail(Failure(kind="connection"), f"{type(exc).__name__}: {exc}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise fail(Failure(kind="connection"), f"{type(exc).__name__}: {exc}") from None

    async def generate(
        self, prompt: Prompt, n: int, params: Params, *, who: tuple[str, int, int]
    ) -> Completion:
        """One request for ``n`` samples; ``who`` is (problem id, first sample
        index, attempt). May return fewer choices than asked (servers that
        ignore ``n``)."""
        path = "/chat/completions" if self.target.api == "chat" else "/completions"
        body = msgspec.json.encode(request_body(self.target, params, prompt, n))
        t0 = time.perf_counter()
        data, hints = await self._send("POST", path, body, who)
        latency_ms = (time.perf_counter() - t0) * 1000.0
        try:
            choices, usage = parse_completion(self.target.api, data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RequestError(
                Failure(kind="malformed"),
                f"not a completion ({exc}): {_excerpt(data, 80)}",
                problem_id=who[0],
                sample_index=who[1],
                attempt=who[2],
                hints=hints,
            ) from None
        return Completion(choices=choices, usage=usage, hints=hints, latency_ms=latency_ms)

    async def check(self) -> list[str]:
        """Control-plane check at start (GET {endpoint}/models), retried per
        ``target.retries``. Returns the model ids listed (empty when the
        server has no listing); raises a one-line EndpointError when the
        endpoint is unreachable, rejects the key, or does not serve the model."""

        async def attempt(n: int) -> tuple[bytes, RateHeaders]:
            return await self._send("GET", "/models", None, ("<models>", 0, n))

        result = await call_with_retry(
            attempt, self.target.retries, failure_of, clock=RealClock(), rng=random.Random()
        )
        where = f"endpoint {self.base}"
        if result.value is None:
            err = result.error
            assert isinstance(err, RequestError)
            status = err.failure.status
            if status in (401, 403):
                raise EndpointError(f"{where} rejected the credentials (HTTP {status})")
            if status is not None and status < 500 and status != 429:
                return []  # answers, but has no model listing: reachable is enough
            raise EndpointError(
                f"{where} unreachable after {result.attempts} attempt(s): {err.detail}"
            )
        try:
            models = [m.id for m in _MODELS.decode(result.value[0]).data]
        except (msgspec.DecodeError, msgspec.ValidationError):
            return []
        model = self.target.model
        if models and model not in models and not any(m.split(":")[0] == model for m in models):
            shown = ", ".join(models[:5]) + (", ..." if len(models) > 5 else "")
            raise EndpointError(f"{where} does not serve model {model!r} (it lists: {shown})")
        return models
