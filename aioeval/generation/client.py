"""The HTTP client: the only module that talks to the model server.

One request asks for ``n`` samples of one prompt and returns its choices,
the usage it reported and the rate-limit hints of its headers. What the
request and its answer look like is the endpoint API's business, a codec
chosen by ``target.api`` (`aioeval.generation.codecs`); everything else
here is the same for every API. Every failure is a `RequestError`
carrying the problem id, sample index and attempt it belongs to, plus a
`Failure` that `retry.should_retry` classifies:

    EndpointError (aioeval.errors)
    ├── RequestError        one generation request failed (status, timeout,
    │                       dropped connection, malformed body)
    └── UnsafeEndpointError refused by the SSRF guard (aioeval.generation.netguard)

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

from aioeval.config import Params, Target
from aioeval.errors import EndpointError
from aioeval.types import Prompt

from .codecs import Choice, Malformed, Usage, get_codec
from .credentials import ApiKey
from .netguard import GuardedResolver, UnsafeEndpointError
from .ratehints import RateHeaders, read_headers
from .retry import Failure, RealClock, call_with_retry

BYTES_PER_TOKEN = 64
"""Room per generated token in a response body: a token is a few bytes of
text, escaped in JSON at most six bytes per byte, with logprobs and
framing on top."""
MIN_RESPONSE_BYTES = 1 << 20


def response_cap(target: Target, max_tokens: int, n: int) -> int:
    """The most bytes (after decompression) read from one response: what
    ``n`` answers of ``max_tokens`` tokens can take, at least a megabyte,
    unless ``target.max_response_mb`` says otherwise. A broken or hostile
    server cannot make the engine hold more than this per request."""
    if target.max_response_mb > 0:
        return int(target.max_response_mb * 2**20)
    return max(MIN_RESPONSE_BYTES, BYTES_PER_TOKEN * max(max_tokens, 1) * max(n, 1))


async def _read_capped(resp: aiohttp.ClientResponse, cap: int) -> bytes | None:
    """The body, or None once it passes ``cap`` bytes: counted as decoded
    (aiohttp inflates gzip and deflate as it reads), so a small compressed
    body that inflates past the cap is refused without being held whole."""
    if (
        resp.content_length is not None
        and resp.content_length > cap
        and not resp.headers.get("Content-Encoding")
    ):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


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


class _Model(msgspec.Struct):
    id: str


class _Models(msgspec.Struct):
    data: list[_Model]


_MODELS = msgspec.json.Decoder(_Models)


def _excerpt(body: bytes, limit: int = 160) -> str:
    text = body[: limit * 4].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


class _ErrorBody(msgspec.Struct):
    error: Any = None
    message: Any = None
    detail: Any = None


def server_message(body: bytes, limit: int = 160) -> str:
    """The server's own words from an error body: OpenAI's ``error.message``,
    or ``error`` / ``message`` / ``detail`` as other servers put it; else a
    short excerpt of the body."""
    try:
        parsed = msgspec.json.decode(body[:65536], type=_ErrorBody)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _excerpt(body, limit)
    for value in (parsed.error, parsed.message, parsed.detail):
        if isinstance(value, dict):
            value = value.get("message") or value.get("msg")
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = value[0].get("msg") or value[0].get("message")
        if isinstance(value, str) and value.strip():
            return _excerpt(value.encode(), limit)
    return _excerpt(body, limit)


PING = Prompt(messages=[{"role": "user", "content": "ping"}], text="ping")
"""The start-up check's one-token request, when the server has no model listing."""


class Client:
    """``async with Client(target, key) as c: await c.generate(...)``."""

    def __init__(
        self, target: Target, key: ApiKey | None, *, resolver: GuardedResolver | None = None
    ) -> None:
        if not target.endpoint or not target.model:
            raise EndpointError("target.endpoint and target.model are required")
        self.target = target
        self.codec = get_codec(target.api)
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

    def _redact(self, text: str) -> str:
        """A server may echo the key back; it never reaches a message."""
        key = self._key.reveal() if self._key is not None else ""
        return text.replace(key, "***") if len(key) >= 4 else text

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        return headers

    async def _send(
        self, method: str, path: str, body: bytes | None, who: tuple[str, int, int], cap: int
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
                data = await _read_capped(resp, cap)
                if data is None:
                    raise fail(
                        Failure(kind="oversized"),
                        f"response body over {cap / 2**20:.1f} MB (target.max_response_mb)",
                    )
                hints = read_headers(resp.headers, time.time())
                if resp.status != 200:
                    failure = Failure(
                        kind="status", status=resp.status, retry_after_s=hints.retry_after_s
                    )
                    message = self._redact(server_message(data))
                    raise fail(failure, f"HTTP {resp.status}: {message}", hints)
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
        assert self.target.model is not None
        body = msgspec.json.encode(self.codec.body(self.target.model, prompt, n, params))
        t0 = time.perf_counter()
        cap = response_cap(self.target, params.max_tokens, n)
        data, hints = await self._send("POST", self.codec.path, body, who, cap)
        latency_ms = (time.perf_counter() - t0) * 1000.0
        try:
            answer = self.codec.parse(data)
        except Malformed as exc:
            raise RequestError(
                Failure(kind="malformed"),
                f"not a completion ({exc}): {self._redact(_excerpt(data, 80))}",
                problem_id=who[0],
                sample_index=who[1],
                attempt=who[2],
                hints=hints,
            ) from None
        return Completion(
            choices=answer.choices, usage=answer.usage, hints=hints, latency_ms=latency_ms
        )

    async def check(self) -> list[str]:
        """Start-up check, before any sample is spent: ``GET {endpoint}/models``
        and, when the server has no listing (404), one tiny real request
        (one token). Both are retried per ``target.retries``. Returns the
        model ids listed (empty without a listing). Raises a one-line
        EndpointError quoting the server's message when the endpoint is
        unreachable, rejects the key (401/403), refuses the probe with any
        other 4xx (an unusable key or backend often answers 400), answers
        404 to both (a base URL without ``/v1``), is not OpenAI-compatible,
        or does not serve the model. A 429 means reachable: the run adapts."""
        where = f"endpoint {self.base}"
        listing = await self._probe("GET", "/models", None)
        if isinstance(listing, RequestError):
            status = listing.failure.status
            if status != 404:
                self._refuse(listing, where, "GET /models")
                return []
            path = self.codec.path
            assert self.target.model is not None
            body = self.codec.body(self.target.model, PING, 1, Params(max_tokens=1))
            answer = await self._probe("POST", path, msgspec.json.encode(body))
            if isinstance(answer, RequestError):
                if answer.failure.status == 404:
                    raise EndpointError(
                        f"{where} answers 404 to /models and to {path} "
                        f"({listing.detail}); is the base URL right (it usually ends in /v1)?"
                    )
                self._refuse(answer, where, f"a one-token test request ({path})")
                return []
            try:
                self.codec.parse(answer)
            except Malformed:
                raise EndpointError(
                    f"{where} is not an OpenAI-compatible endpoint ({self.target.api} API): "
                    f"{path} answered {_excerpt(answer, 80)}"
                ) from None
            return []
        try:
            models = [m.id for m in _MODELS.decode(listing).data]
        except (msgspec.DecodeError, msgspec.ValidationError):
            return []
        model = self.target.model
        if models and model not in models and not any(m.split(":")[0] == model for m in models):
            shown = ", ".join(models[:5]) + (", ..." if len(models) > 5 else "")
            raise EndpointError(f"{where} does not serve model {model!r} (it lists: {shown})")
        return models

    async def _probe(self, method: str, path: str, body: bytes | None) -> bytes | RequestError:
        async def attempt(n: int) -> bytes:
            cap = response_cap(self.target, 1, 1)
            data, _ = await self._send(method, path, body, ("<start-up check>", 0, n), cap)
            return data

        result = await call_with_retry(
            attempt, self.target.retries, failure_of, clock=RealClock(), rng=random.Random()
        )
        if result.value is not None:
            return result.value
        assert isinstance(result.error, RequestError)
        result.error.attempt = result.attempts
        return result.error

    @staticmethod
    def _refuse(err: RequestError, where: str, what: str) -> None:
        """Raise for a failed probe, unless a 429 (reachable, only busy)."""
        status = err.failure.status
        if status == 429:
            return
        if status in (401, 403):
            raise EndpointError(f"{where} rejected the credentials ({err.detail})")
        if status is not None and 400 <= status < 500:
            raise EndpointError(f"{where} refused {what}: {err.detail}")
        raise EndpointError(f"{where} unreachable after {err.attempt} attempt(s): {err.detail}")
