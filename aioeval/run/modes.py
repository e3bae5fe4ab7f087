"""What a run does, decided once: its platform, mode, dataset and producer.

| mode | when | produces |
|---|---|---|
| ``replay`` | llm-mock | the suite's bundled pre-scored fixture, as results |
| ``reference`` | llm-mock with ``params.execute`` | the reference answers |
| ``score`` | ``--samples FILE`` | candidates made elsewhere |
| ``endpoint`` | llm-endpoint | completions of a live model |

The platform comes from ``--platform`` or, when that is not given, from the
config's ``target.mode`` (``runtime`` is llm-endpoint); a contradiction
between the two is an error, never a silent choice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio.to_thread
import msgspec

from aioeval.config import RunConfig
from aioeval.errors import ConfigError
from aioeval.events import EventHook
from aioeval.run.contract import Producer, iter_producer
from aioeval.suites.base import Suite, digest_problems
from aioeval.types import (
    Candidate,
    CandidateResult,
    Dataset,
    DatasetInfo,
    Error,
    Execution,
    Failed,
    Passed,
    Timeout,
    make_result,
)

Platform = Literal["llm-mock", "llm-endpoint"]
Mode = Literal["replay", "reference", "score", "endpoint"]
PLATFORMS: tuple[Platform, ...] = ("llm-mock", "llm-endpoint")
_TARGET_MODES: dict[str, Platform] = {"mock": "llm-mock", "runtime": "llm-endpoint"}


def platform_of(platform: str | None, cfg: RunConfig) -> Platform:
    """``--platform`` if given, else what ``target.mode`` says; both must agree."""
    implied = _TARGET_MODES.get(cfg.target.mode) if cfg.target.mode is not None else None
    if platform is None:
        return implied or "llm-mock"
    if platform not in PLATFORMS:
        raise ConfigError(f"unknown platform {platform!r}; choose {' or '.join(PLATFORMS)}")
    if implied is not None and implied != platform:
        raise ConfigError(
            f"--platform {platform} contradicts target.mode: {cfg.target.mode} in the config "
            f"(target.mode {cfg.target.mode} means --platform {implied})"
        )
    return platform  # type: ignore[return-value]


def mode_of(platform: Platform, samples: str | None, cfg: RunConfig) -> Mode:
    if samples is not None:
        return "score"
    if platform == "llm-endpoint":
        return "endpoint"
    return "reference" if cfg.params.execute else "replay"


@dataclass
class Plan:
    """The run's dataset and where its candidates come from."""

    mode: Mode
    dataset: Dataset
    total: int
    producer: Producer | None = None
    """None for replay: its results are already decided."""
    replay: list[CandidateResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """For summary.json's notes (e.g. repeated lines in a samples file)."""


async def plan(
    suite: Suite,
    mode: Mode,
    cfg: RunConfig,
    *,
    samples: str | None,
    emit: EventHook,
    skip: set[tuple[str, int]],
) -> Plan:
    """Load the dataset and make the mode's producer. ``skip`` is filled in
    place later on --resume; the endpoint producer reads it when it starts,
    so samples already done are never requested (or paid for)."""
    dataset = await suite.load(mode=mode)
    if mode == "replay":
        results = replay_results(suite, dataset)
        return Plan(mode=mode, dataset=dataset, total=len(results), replay=results)
    if mode == "reference":
        cands = reference_candidates(suite, dataset)
        return Plan(mode=mode, dataset=dataset, total=len(cands), producer=iter_producer(cands))
    if mode == "score":
        assert samples is not None
        cands = list(suite.read_samples(Path(samples), dataset))
        if cfg.params.extract:
            cands = await anyio.to_thread.run_sync(taken_from, suite, dataset, cands)
        dataset = _covered(dataset, {c.problem_id for c in cands})
        return Plan(
            mode=mode,
            dataset=dataset,
            total=len(cands),
            producer=iter_producer(cands),
            notes=repeat_notes(cands),
        )
    # Imported here: the HTTP client (aiohttp builds its TLS contexts at
    # import) costs a scoring run's start a tenth of a second for nothing.
    from aioeval.generation import endpoint_producer

    producer, total = await endpoint_producer(suite, dataset, cfg, emit, skip)
    return Plan(mode=mode, dataset=dataset, total=total, producer=producer)


def repeat_notes(cands: list[Candidate]) -> list[str]:
    """Samples that repeat an earlier one of the same problem word for word
    are scored and counted in n, as upstream does; say how many there are."""
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for c in cands:
        key = (c.problem_id, c.raw)
        repeats += key in seen
        seen.add(key)
    if not repeats:
        return []
    return [
        f"samples file: {repeats:,} samples repeat an earlier sample of the same problem "
        "word for word; each is scored and counted in n, as upstream does"
    ]


def _covered(dataset: Dataset, present: set[str]) -> Dataset:
    """The dataset narrowed to the problems a samples file covers (the full
    size is kept, so the summary can say what the run covers)."""
    if len(present) >= dataset.size:
        return dataset
    kept = [p for p in dataset.problems if p.id in present]
    return Dataset(
        name=dataset.name,
        version=dataset.version,
        digest=digest_problems(kept),
        problems=kept,
        full_size=dataset.full_size or dataset.size,
    )


def identify(dataset: Dataset, cfg: RunConfig) -> DatasetInfo:
    """Dataset identity. Generation retries change what a run measures, so a
    retried run gets its own version label and digest."""
    version, digest = dataset.version, dataset.digest
    retry = cfg.params.retry
    if retry is not None:
        version += "+retry"
        digest = hashlib.sha256(
            f"{digest}|retry:{retry.max_attempts}:{retry.backoff_base_s}:{retry.backoff_max_s}".encode()
        ).hexdigest()
    return DatasetInfo(name=dataset.name, version=version, digest=digest, size=dataset.size)


def taken_from(suite: Suite, dataset: Dataset, cands: list[Candidate]) -> list[Candidate]:
    """Raw chat answers (``params.extract``) with their programs taken."""
    problems = {p.id: p for p in dataset.problems}
    out = []
    for c in cands:
        taken = suite.take(problems[c.problem_id], c.raw)
        out.append(msgspec.structs.replace(c, text=taken.text, extraction=taken.kind))
    return out


def reference_candidates(suite: Suite, dataset: Dataset) -> list[Candidate]:
    out = []
    for p in dataset.problems:
        ref = suite.reference(p)
        out.append(Candidate(problem_id=p.id, sample_index=0, raw=ref, text=suite.unwrap(p, ref)))
    return out


def replay_results(suite: Suite, dataset: Dataset) -> list[CandidateResult]:
    """The bundled pre-scored fixture, as results (nothing is executed)."""
    ids = {p.id for p in dataset.problems}
    tags = {"passed": Passed, "failed": Failed, "timeout": Timeout, "error": Error}
    out = []
    for rec in suite.mock_records():
        if rec.problem_id in ids:
            cand = Candidate(
                problem_id=rec.problem_id,
                sample_index=rec.sample_index,
                raw=rec.completion,
                text=rec.completion,
            )
            verdict = tags[rec.status](reason=rec.reason, parts=rec.parts)  # type: ignore[arg-type]
            out.append(make_result(cand, verdict, Execution()))
    return out
