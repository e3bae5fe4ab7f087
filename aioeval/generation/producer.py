"""The generation stage of llm-endpoint runs: prompts -> requests -> candidates.

`endpoint_producer` refuses to start unless the run is safe and reachable
(``params.allow_code_execution``, endpoint, model and a known
``target.api`` set, credentials resolvable, SSRF guard, a model listing /
health check within ``target.retries``), then returns the producer the
pipeline runs in its task group. The producer sends one `WorkItem` per
sample as completions arrive: the candidate unwrapped by the suite, or, for
samples whose generation finally failed, an ``infra_error`` verdict with
cause ``generation:<why>`` (``generation:429``, ``generation:503``,
``generation:timeout``, ``generation:connection``, ``generation:malformed``...).

Backpressure is the window's (`_window`): a request starts only when its
samples fit, so completions held in memory stay bounded whatever the
sandboxes' speed, while the rate limiter alone bounds requests in flight.

Samples per problem: with ``target.use_n`` one request asks for ``n``
samples (up to the window); a server that returns fewer choices than asked
is taken to ignore ``n``: the missing samples are requested one by one, and
so is everything after. How one request's tokens, retries and 429s are
split across its samples is `_accounting`'s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Collection

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from aioeval.config import RunConfig
from aioeval.errors import ConfigError
from aioeval.events import EventHook, GenerationUpdate
from aioeval.run.contract import Producer, PromptSource, WorkItem, default_buffer
from aioeval.types import (
    Candidate,
    Dataset,
    InfraError,
    Problem,
    Prompt,
    Taken,
)

from ._accounting import sample_generations
from ._window import Window
from .client import Client, Completion, RequestError, failure_of
from .codecs import get_codec
from .credentials import ApiKey, resolve_credentials
from .netguard import check_endpoint
from .ratelimit import Ask, Outcome, RateLimiter, Stalled, estimate_tokens
from .retry import Attempted, Clock, Failure, RealClock, Retry, call_with_retry

OFFLOAD_CHARS = 20_000
"""Answers longer than this are read for their program in a worker thread."""


def check_ready(cfg: RunConfig) -> None:
    """Refusals that need no network (ConfigError, one line)."""
    if not cfg.params.allow_code_execution:
        raise ConfigError(
            "llm-endpoint runs execute model output on this machine (in the sandbox); "
            "set params.allow_code_execution: true to allow it"
        )
    if not cfg.target.endpoint:
        raise ConfigError("llm-endpoint needs target.endpoint (e.g. http://127.0.0.1:8000/v1)")
    if not cfg.target.model:
        raise ConfigError("llm-endpoint needs target.model")
    get_codec(cfg.target.api)


async def endpoint_producer(
    suite: PromptSource,
    dataset: Dataset,
    cfg: RunConfig,
    emit: EventHook,
    skip: Collection[tuple[str, int]] = (),
) -> tuple[Producer, int]:
    """The checks of the module docstring, then the producer and how many
    samples it is to produce (``skip`` may still grow until it starts)."""
    check_ready(cfg)
    key = resolve_credentials(cfg.target.credentials_ref)
    assert cfg.target.endpoint is not None
    await check_endpoint(cfg.target.endpoint)
    async with Client(cfg.target, key) as client:
        await client.check()
    gen = Generator(suite, dataset, cfg, key, emit, skip=skip)
    return gen.produce, dataset.size * cfg.params.n_samples


class Generator:
    """One run's generation: its rate limiter, its counters for the progress
    events, and `produce`, the pipeline's producer. ``clock`` is injectable
    so tests can run the limiter and the retry waits in virtual time."""

    def __init__(
        self,
        suite: PromptSource,
        dataset: Dataset,
        cfg: RunConfig,
        key: ApiKey | None,
        emit: EventHook,
        *,
        clock: Clock | None = None,
        skip: Collection[tuple[str, int]] = (),
    ) -> None:
        self.suite = suite
        self.skip = skip
        """(problem id, sample index) already done (resume): never requested.
        Read when producing starts, so the caller may fill it until then."""
        self.dataset = dataset
        self.cfg = cfg
        self.key = key
        self.emit = emit
        self.clock = clock or RealClock()
        seed = cfg.params.seed
        self.rng = random.Random(seed) if seed is not None else random.Random()
        self.n_ok = cfg.target.use_n
        rl, retry = cfg.target.rate_limit, cfg.params.retry
        self.limiter = RateLimiter(
            self.clock,
            rpm=rl.rpm,
            tpm=rl.tpm,
            tpm_counts=rl.tpm_counts,
            max_concurrency=rl.max_concurrency,
            patience_s=retry.rate_limit_patience_s if retry is not None else 120.0,
            max_quiet_s=retry.backoff_max_s if retry is not None else 5.0,
        )
        self.done = 0
        self.in_flight = 0
        self.rate_limited = 0
        self.ignored_hints = 0
        self.retries = 0
        self.failed = 0
        self.samples = 0

    def _update(self) -> None:
        self.emit(
            GenerationUpdate(
                done=self.done,
                in_flight=self.in_flight,
                rate_limited=self.rate_limited,
                ignored_hints=self.ignored_hints,
                retries=self.retries,
                failed=self.failed,
                samples=self.samples,
                concurrency=self.limiter.parallel.allowed,
                rate_rpm=self.limiter.rate_rpm,
            )
        )

    def _on_retry(self, decision: Retry) -> None:
        self.retries += 1
        self._update()

    async def produce(self, send: MemoryObjectSendStream[WorkItem]) -> None:
        params = self.cfg.params
        window = Window(
            send,
            buffer=params.buffer or default_buffer(self.cfg.workers),
            concurrency=self.cfg.target.rate_limit.max_concurrency,
        )
        async with Client(self.cfg.target, self.key) as client, anyio.create_task_group() as tg:
            for problem in self.dataset.problems:
                todo = [i for i in range(params.n_samples) if (problem.id, i) not in self.skip]
                if not todo:
                    continue
                prompt = self.suite.prompt(problem)
                while todo:
                    k = min(len(todo), window.size) if self.n_ok else 1
                    await window.reserve(k)
                    batch, todo = todo[:k], todo[k:]
                    tg.start_soon(self._request, tg, client, window, problem, prompt, batch)

    async def _request(
        self,
        tg: anyio.abc.TaskGroup,
        client: Client,
        window: Window,
        problem: Problem,
        prompt: Prompt,
        indices: list[int],
    ) -> None:
        """One request for the samples ``indices`` of ``problem``, retried,
        its samples (or their infra_error) handed on."""
        k = len(indices)
        text = client.codec.prompt_text(prompt)
        ask = Ask(prompt=estimate_tokens(text), max_tokens=self.cfg.params.max_tokens, n=k)

        async def attempt(number: int) -> Completion:
            who = (problem.id, indices[0], number)
            return await self._attempt(client, prompt, k, ask, who)

        started = time.time()
        result = await call_with_retry(
            attempt,
            self.cfg.params.retry,
            failure_of,
            clock=self.clock,
            rng=self.rng,
            on_retry=self._on_retry,
        )
        finished = time.time()
        got = await self._hand_on(window, problem, indices, result, started, finished)
        # The window still holds the missing samples' places: ask for each.
        for j in range(got, k):
            tg.start_soon(self._request, tg, client, window, problem, prompt, [indices[j]])

    async def _attempt(
        self, client: Client, prompt: Prompt, k: int, ask: Ask, who: tuple[str, int, int]
    ) -> Completion:
        """One attempt under the limiter, which learns from how it went; a
        429 carries the limiter's reading of it to the retry decision."""
        limiter = self.limiter
        try:
            permit = await limiter.acquire(ask)
        except Stalled as exc:
            raise RequestError(
                Failure(kind="stalled"),
                str(exc),
                problem_id=who[0],
                sample_index=who[1],
                attempt=who[2],
            ) from None
        self.in_flight += 1
        self._update()
        try:
            comp = await client.generate(prompt, k, self.cfg.params, who=who)
        except RequestError as exc:
            throttled = exc.failure.status == 429
            self.rate_limited += throttled
            self.ignored_hints += exc.hints.ignored if exc.hints is not None else 0
            outcome: Outcome = "throttled" if throttled else "failed"
            reading = limiter.release(permit, outcome, hints=exc.hints)
            if reading is not None:
                exc.failure = msgspec.structs.replace(exc.failure, throttle=reading)
            raise
        except BaseException:
            limiter.release(permit)
            raise
        finally:
            self.in_flight -= 1
            self.done += 1
        usage = comp.usage
        self.ignored_hints += comp.hints.ignored
        limiter.release(
            permit,
            "ok",
            hints=comp.hints,
            used_tokens=(usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
            if usage is not None
            else None,
            completion_tokens=usage.completion_tokens if usage is not None else None,
        )
        self._update()
        return comp

    async def _take(self, problem: Problem, raw: str) -> Taken:
        """The program in ``raw``; a long answer is read in a worker thread,
        so its parsing cannot hold up the event loop."""
        if len(raw) > OFFLOAD_CHARS:
            return await anyio.to_thread.run_sync(self.suite.take, problem, raw)
        return self.suite.take(problem, raw)

    async def _hand_on(
        self,
        window: Window,
        problem: Problem,
        indices: list[int],
        result: Attempted[Completion],
        started: float,
        finished: float,
    ) -> int:
        """Hand on what one request produced: its choices or, when generation
        gave up, an infra_error per sample, each with its accounting. Returns
        how many samples it settled (fewer choices than asked: the server
        ignores ``n``, so ask one at a time from now on)."""
        k = len(indices)
        verdict: InfraError | None = None
        if result.value is None:
            err, decision = result.error, result.decision
            assert isinstance(err, RequestError) and decision is not None
            verdict = InfraError(
                reason=f"{err} ({decision.reason})", cause=f"generation:{decision.cause}"
            )
            texts = [""] * k
            self.failed += k
        else:
            texts = [c.text for c in result.value.choices[:k]]
            self.n_ok = self.n_ok and len(texts) == k
        gens = sample_generations(result, texts, started, finished)
        for j, raw in enumerate(texts):
            taken = await self._take(problem, raw) if verdict is None else Taken(text="")
            cand = Candidate(
                problem_id=problem.id,
                sample_index=indices[j],
                raw=raw,
                text=taken.text,
                generation=gens[j],
                extraction=taken.kind,
            )
            self.samples += verdict is None
            await window.hand_on(WorkItem(candidate=cand, verdict=verdict))
        self._update()
        return len(texts)
