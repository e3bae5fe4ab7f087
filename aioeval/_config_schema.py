"""The run configuration's shape: the seed's YAML as typed, frozen Structs.

Every field carries a one-line docstring (what it does, its default), and a
struct checks its own ranges in ``__post_init__``. Unknown fields are
forbidden, so a typo is an error naming its path. Its own module because the
shape is data every stage reads, while reading a file and applying
``--set`` overrides (`aioeval.config`) is one step of the CLI and library;
import these names from `aioeval.config`, the public path.
"""

from __future__ import annotations

import os
import re
from typing import Literal

import msgspec

_ENV_REF = re.compile(r"env:[A-Za-z_][A-Za-z0-9_]*")
"""The one documented form of ``target.credentials_ref``."""


class Base(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class RetryConfig(Base, frozen=True):
    """Bounded exponential backoff with full jitter."""

    max_attempts: int = 3
    """Total attempts per request, the first included."""
    backoff_base_s: float = 0.2
    """First backoff; doubles per attempt."""
    backoff_max_s: float = 5.0
    """Cap on one backoff (a server's Retry-After may ask for longer)."""
    rate_limit_patience_s: float = 120.0
    """429s of an endpoint that still serves do not use up max_attempts; a
    sample gives up on 429s only once nothing but 429 came back for this long."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            raise ValueError("backoff times must be >= 0")
        if self.rate_limit_patience_s < 0:
            raise ValueError("rate_limit_patience_s must be >= 0")


class RateLimit(Base, frozen=True):
    """Proactive client-side limits, so a hosted API is never tripped."""

    rpm: float | None = None
    """Requests per minute (None: unknown, adapt to 429s)."""
    tpm: float | None = None
    """Tokens per minute (None: unknown, learned from 429s and headers)."""
    tpm_counts: Literal["max_tokens", "usage"] = "max_tokens"
    """How the server counts tpm: max_tokens (OpenAI: the larger of the prompt
    estimate and max_tokens x n, when sent) or usage (the reported usage)."""
    max_concurrency: int = 16
    """Upper bound on requests in flight; a parallel cap learned from 429s stays below it."""


class Price(Base, frozen=True):
    """USD per million tokens, for ``<bench>.cost_usd``."""

    prompt_per_million: float = 0.0
    completion_per_million: float = 0.0


class Target(Base, frozen=True):
    """What produces candidates."""

    mode: Literal["mock", "runtime"] | None = None
    """mock: bundled fixture / reference answers (--platform llm-mock); runtime:
    a live endpoint (--platform llm-endpoint). Unset: --platform decides."""
    endpoint: str | None = None
    """Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."""
    model: str | None = None
    """Model name sent in each request."""
    credentials_ref: str | None = None
    """Where the API key comes from: ``env:NAME``. Never logged or stored."""
    api: str = "chat"
    """Endpoint API by name: ``chat`` (chat completions), ``completions``
    (legacy completions), or another entry of aioeval.generation.codecs.REGISTRY."""
    retries: RetryConfig = RetryConfig()
    """Retry bounds for control-plane calls (model listing), not generation."""
    rate_limit: RateLimit = RateLimit()
    """Client-side request and token limits."""
    price: Price = Price()
    """Token prices for the cost measurement."""
    request_timeout_s: float = 120.0
    """Total time allowed for one generation request."""
    use_n: bool = True
    """Ask for n samples in one request when the server honours ``n``."""
    max_response_mb: float = 0.0
    """Largest response body read, in MB after decompression (0: derived
    from max_tokens and n, see `aioeval.generation.client.response_cap`).
    A larger body is that request's infra_error (cause ``oversized``)."""

    def __post_init__(self) -> None:
        # A pasted key would be recorded in run.json and echoed in errors;
        # refuse it here, before anything is written, without repeating it.
        if self.credentials_ref is not None and not _ENV_REF.fullmatch(self.credentials_ref):
            raise ValueError(
                "credentials_ref must say where the key is, as env:NAME (an environment "
                "variable), not hold the key itself (the value is not shown)"
            )


class SandboxParams(Base, frozen=True):
    """Per-candidate isolation and limits."""

    isolation: Literal["strict", "best", "minimal"] = "best"
    """best: every layer that works; strict: refuse unless all are on."""
    memory_mb: int = 2048
    """Address-space limit per process; with cgroups, also the total over all of
    a candidate's processes."""
    disk_mb: int = 256
    """Total size of the files a candidate may write (its private tmpfs)."""
    fsize_mb: int = 64
    """Largest file (including captured output) a candidate may write."""
    nofile: int = 256
    """Open file descriptors per process."""
    wall_timeout_s: float | None = None
    """Wall-clock backstop; default max(3 x timeout_s, timeout_s + 5)."""
    hash_seed: int | None = 0
    """PYTHONHASHSEED for candidates (None: random per template), so verdicts
    that depend on set iteration order are reproducible."""
    output_tail: int = 2048
    """Bytes of captured stdout/stderr kept per candidate."""


class EvalPlusParams(Base, frozen=True):
    """How the EvalPlus suites time each input (EvalPlus's own defaults)."""

    min_time_limit_s: float = 4.0
    """Least wall time an input is given."""
    gt_time_limit_factor: float = 4.0
    """An input's limit is max(min_time_limit_s, this x the reference's time on it)."""
    task_limit_s: float = 60.0
    """Cap on the sum of a part's input limits (its whole budget is that + 1 s)."""
    details: bool = False
    """Run every input and list the failing ones, instead of stopping at the first."""

    def __post_init__(self) -> None:
        if self.min_time_limit_s <= 0 or self.gt_time_limit_factor <= 0 or self.task_limit_s <= 0:
            raise ValueError("evalplus time limits must be > 0")


class LiveCodeBenchParams(Base, frozen=True):
    """Time limits of the ``livecodebench`` suite (upstream's defaults)."""

    test_timeout_s: float = 6.0
    """Wall-clock limit of each test (and of loading the program)."""
    problem_timeout_s: float | None = None
    """CPU budget of one answer over all its tests; default upstream's
    whole-problem limit, (test_timeout_s + 1) x tests + 5."""
    partial_credit: bool = False
    """Go on past a failing test and report tests passed of all and the
    first failing test (strict scoring; the verdict itself is unchanged)."""

    def __post_init__(self) -> None:
        if self.test_timeout_s <= 0:
            raise ValueError("test_timeout_s must be > 0")
        if self.problem_timeout_s is not None and self.problem_timeout_s <= 0:
            raise ValueError("problem_timeout_s must be > 0")


class LocalExecutor(Base, frozen=True, tag="local", tag_field="kind"):
    """Sandbox slots on this machine."""


class RayExecutor(Base, frozen=True, tag="ray", tag_field="kind"):
    """Sandbox slots on Ray actors (needs the ``ray`` extra)."""

    address: str | None = None
    """None starts a local Ray instance; ``auto`` or host:port joins a cluster."""
    actors: int | None = None
    """Sandbox actors; default one per alive node, each with workers slots (default its CPUs)."""

    def __post_init__(self) -> None:
        if self.actors is not None and self.actors < 1:
            raise ValueError("actors must be >= 1")


ExecutorConfig = LocalExecutor | RayExecutor


class Params(Base, frozen=True):
    """How the run is carried out and scored."""

    execute: bool = False
    """llm-mock: run reference answers through the sandbox instead of replaying."""
    limit: int | None = None
    """Evaluate only the first N problems."""
    allow_code_execution: bool = False
    """Required for llm-endpoint: model output will be executed."""
    retry: RetryConfig | None = None
    """Generation retries; off when absent. Changes the dataset digest."""
    n_samples: int = 1
    """Samples per problem (pass@k needs n >= k)."""
    k: list[int] | None = None
    """pass@k values reported, where every problem has n >= k (None: the
    benchmark's own list: HumanEval 1, 10, 100; CRUXEval 1, 5)."""
    timeout_s: float = 3.0
    """CPU-time budget per candidate."""
    workers: int | None = None
    """Sandbox slots; default one per CPU core."""
    buffer: int | None = None
    """Completions allowed to wait for a sandbox slot (backpressure); default max(64, 4 x workers).
    Endpoint runs bound samples requested or waiting by the larger of this and
    target.rate_limit.max_concurrency, so the buffer never caps the concurrency."""
    temperature: float | None = None
    """Sampling temperature (None: server default)."""
    top_p: float | None = None
    """Nucleus sampling (None: server default)."""
    max_tokens: int = 512
    """Completion length cap per sample; also the tpm reservation per sample."""
    stop: list[str] | None = None
    """Stop sequences sent with each request."""
    seed: int | None = None
    """Sampling seed sent with each request (servers that support it); also seeds backoff jitter."""
    dataset_path: str | None = None
    """Local dataset file (CRUXEval JSONL)."""
    dataset_url: str | None = None
    """Base URL for downloading the pinned CRUXEval file (tests point it at 127.0.0.1)."""
    scoring: Literal["strict", "official", "both"] = "strict"
    """strict: verdicts the candidate cannot influence (HumanEval tests run in a
    trusted verifier; CRUXEval answers are data). official: the upstream
    programs, byte for byte (a candidate can forge those verdicts). both
    (HumanEval format): each answer both ways, strict's verdict kept and
    official's beside it, to see where they differ before trusting a run."""
    prompt: Literal["direct", "cot"] = "direct"
    """CRUXEval prompt style."""
    static_compare: bool = True
    """CRUXEval official mode: decide programs that only compare two literals
    (``defs; assert <literal> == <literal>``) in the engine, without a process.
    The verdict is the same; false executes every program as upstream does."""
    extract: bool = False
    """score: each sample is a raw chat answer; its program is taken as in
    endpoint runs (recorded as results' ``extraction``). false: the sample
    runs as given, as the official evaluators run it."""
    dedup: bool = True
    """Execute identical (problem, candidate) pairs once per run."""
    recheck_timeouts: bool = False
    """Run timed-out candidates again at the end and report flips."""
    executor: Literal["local", "ray"] | LocalExecutor | RayExecutor = "local"
    """Where sandboxes run, by name (``ray``) or with its settings
    (``{kind: ray, address: auto, actors: 4}``); see `executor_settings`."""
    ray_address: str | None = None
    """Older spelling of ``executor: {kind: ray, address: ...}`` (still read)."""
    ray_actors: int | None = None
    """Older spelling of ``executor: {kind: ray, actors: ...}`` (still read)."""
    sandbox: SandboxParams = SandboxParams()
    evalplus: EvalPlusParams = EvalPlusParams()
    """Per-input time limits of the ``humaneval-plus`` and ``mbpp-plus`` suites."""
    livecodebench: LiveCodeBenchParams = LiveCodeBenchParams()
    """Limits of the ``livecodebench`` suite."""

    def __post_init__(self) -> None:
        if self.n_samples < 1:
            raise ValueError("n_samples must be >= 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError("limit must be >= 1")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        if self.k is not None and any(k < 1 for k in self.k):
            raise ValueError("every k must be >= 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1")
        if self.ray_actors is not None and self.ray_actors < 1:
            raise ValueError("ray_actors must be >= 1")


class RunConfig(Base, frozen=True):
    target: Target = Target()
    params: Params = Params()

    @property
    def workers(self) -> int:
        return self.params.workers or os.cpu_count() or 1

    @property
    def executor_settings(self) -> ExecutorConfig:
        """``params.executor`` as settings, the older ``ray_*`` fields folded in."""
        chosen = self.params.executor
        if isinstance(chosen, LocalExecutor | RayExecutor):
            return chosen
        if chosen == "ray":
            return RayExecutor(address=self.params.ray_address, actors=self.params.ray_actors)
        return LocalExecutor()

    @property
    def wall_timeout_s(self) -> float:
        t = self.params.timeout_s
        return self.params.sandbox.wall_timeout_s or max(3 * t, t + 5)
