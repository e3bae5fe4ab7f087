"""The Suite protocol: what a benchmark module provides to the engine.

A suite is pure where it can be: loading data, rendering prompts, unwrapping
answers and building programs are plain functions of the problem. Only
``judge`` touches the sandbox, through the pool seam it is handed.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import anyio.to_thread
import msgspec
import orjson
import platformdirs

from aioeval.config import Params
from aioeval.errors import ConfigError, InputError
from aioeval.executors.base import Executor
from aioeval.metrics import pass_at_k
from aioeval.sandbox.protocol import Outcome
from aioeval.types import (
    Candidate,
    Dataset,
    Error,
    Execution,
    Failed,
    InfraError,
    Passed,
    Problem,
    Prompt,
    Status,
    Taken,
    Timeout,
    Verdict,
    status_of,
)

CACHE_ENV = "AIOEVAL_CACHE_DIR"
"""Where downloaded datasets and computed reference outputs are kept, when
set (else the user's cache directory)."""
OFFLOAD_CHARS = 20_000
"""Answers longer than this are parsed and keyed in a worker thread, so one
huge answer cannot hold up the event loop (generation, other verdicts)."""

T = TypeVar("T")


async def offload(size: int, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``, in a worker thread when ``size`` (of the answer) is large."""
    if size > OFFLOAD_CHARS:
        return await anyio.to_thread.run_sync(fn, *args)
    return fn(*args)


class MockRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One pre-scored candidate of a bundled fixture (a recorded run)."""

    problem_id: str
    sample_index: int = 0
    completion: str
    status: str
    reason: str = ""
    parts: dict[str, Status] | None = None


Mode = Literal["replay", "reference", "score", "endpoint"]


class Suite(Protocol):
    """A benchmark, bound to a run's parameters when it is made (see
    ``aioeval.suites.get_suite``) and immutable after that. The engine never
    branches on a benchmark's name: what differs between benchmarks (data,
    prompts, answers, how verdicts become pass@k) is asked of the suite."""

    name: str
    default_k: tuple[int, ...]
    """pass@k reported when ``params.k`` is not set."""
    figures: tuple[str, ...]
    """Parts of the tests (a verdict's ``parts``) whose pass@k is reported
    too, as ``<bench>.<part>.pass_at_<k>`` (EvalPlus's ``base``)."""

    async def load(self, *, mode: Mode) -> Dataset:
        """The dataset for a run mode: ``replay`` (bundled pre-scored
        fixture), ``reference`` (reference answers through the sandbox),
        ``score`` (external samples) or ``endpoint`` (a live model)."""
        ...

    def prompt(self, problem: Problem) -> Prompt: ...

    def unwrap(self, problem: Problem, raw: str) -> str:
        """The candidate as executed, from the model's raw text (never raises)."""
        ...

    def take(self, problem: Problem, raw: str) -> Taken:
        """`unwrap`'s text with how it was taken (`Taken`; never raises)."""
        ...

    def reference(self, problem: Problem) -> str:
        """The reference answer, as a raw candidate (for ``params.execute``)."""
        ...

    def dedup_key(self, problem: Problem, text: str) -> str:
        """Identical keys must behave identically when executed."""
        ...

    async def judge(
        self, problem: Problem, text: str, pool: Executor
    ) -> tuple[Verdict, Execution]: ...

    def mock_records(self) -> list[MockRecord]: ...

    def read_samples(self, path: Path, dataset: Dataset) -> Iterator[Candidate]: ...

    def pass_counts(self, per_problem: Mapping[str, list[int]]) -> dict[str, tuple[int, int]]:
        """(n, c) per problem from ``[scored, passed, skipped]`` counts."""
        ...

    def pass_at_k(self, n: int, c: int, k: int) -> float: ...

    @property
    def comparable(self) -> bool:
        """Is pass@k under this suite's scoring comparable with published figures?"""
        ...


class SuiteBase:
    """Defaults most suites share: n and c as counted, the unbiased
    estimator, comparable pass@k, exact-text dedup."""

    default_k: tuple[int, ...] = (1, 10, 100)
    figures: tuple[str, ...] = ()
    scores_both = False
    """Can it run each answer both ways (``scoring: both``)?"""

    def __init__(self, params: Params) -> None:
        if params.scoring == "both" and not self.scores_both:
            raise ConfigError(
                f"params.scoring=both is for the HumanEval format; {type(self).__name__} "
                "scores strict or official"
            )
        self.params = params

    def dedup_key(self, problem: Problem, text: str) -> str:
        return text

    def unwrap(self, problem: Problem, raw: str) -> str:
        return self.take(problem, raw).text

    def take(self, problem: Problem, raw: str) -> Taken:
        return Taken(text=raw)

    def pass_counts(self, per_problem: Mapping[str, list[int]]) -> dict[str, tuple[int, int]]:
        return {k: (v[0], v[1]) for k, v in per_problem.items() if v[0] > 0}

    def pass_at_k(self, n: int, c: int, k: int) -> float:
        return pass_at_k(n, c, k)

    @property
    def comparable(self) -> bool:
        return True


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)


def unwrap_fence(raw: str) -> str:
    """Return the body of the single python code fence in ``raw``, else raw.

    Only an unambiguous answer is unwrapped: one fence (python/py or
    unlabelled). Several fences, or none, leave the text as it is, so the
    official behaviour (execute what the model wrote) is kept when in doubt.
    """
    blocks = [
        m for m in _FENCE.finditer(raw) if m.group(1).lower() in ("", "python", "py", "python3")
    ]
    if len(blocks) != 1:
        return raw
    return blocks[0].group(2)


def verdict_from_outcome(out: Outcome) -> tuple[Verdict, Execution]:
    execution = Execution(wall_ms=out.wall_ms, cpu_ms=out.cpu_ms, output_tail=out.output_tail)
    if out.status == "passed":
        return Passed(), execution
    if out.status == "failed":
        return Failed(reason=out.reason), execution
    if out.status == "timeout":
        return Timeout(
            reason=f"{out.reason} (cpu {out.cpu_ms:.0f} ms, wall {out.wall_ms:.0f} ms)"
        ), execution
    if out.status == "error":
        return Error(reason=out.reason), execution
    return InfraError(reason=out.reason, cause="sandbox"), Execution()


def both_ways(
    strict: tuple[Verdict, Execution], official: tuple[Verdict, Execution]
) -> tuple[Verdict, Execution]:
    """Strict scoring's verdict, with the official one's beside it; an
    engine fault on either side is the answer's infra_error."""
    for verdict, execution in (strict, official):
        if isinstance(verdict, InfraError):
            return verdict, execution
    verdict, execution = strict
    other = official[0]
    assert not isinstance(verdict, InfraError) and not isinstance(other, InfraError)
    return msgspec.structs.replace(
        verdict, official_status=status_of(other), official_reason=other.reason
    ), execution


def digest_problems(problems: list[Problem]) -> str:
    h = hashlib.sha256()
    for p in problems:
        h.update(orjson.dumps({"id": p.id, **p.fields}, option=orjson.OPT_SORT_KEYS))
        h.update(b"\n")
    return h.hexdigest()


def limit_problems(problems: list[Problem], params: Params) -> list[Problem]:
    return problems[: params.limit] if params.limit is not None else problems


def dataset_of(name: str, version: str, problems: list[Problem], params: Params) -> Dataset:
    """The run's dataset: ``params.limit`` applied, the full size kept."""
    kept = limit_problems(problems, params)
    return Dataset(
        name=name,
        version=version,
        digest=digest_problems(kept),
        problems=kept,
        full_size=len(problems) if len(kept) < len(problems) else None,
    )


def read_dataset_file(path: Path, suffixes: tuple[str, ...]) -> tuple[bytes, str, str]:
    """(bytes, dataset name, version) of a ``--dataset`` file: the name is
    the file's without ``suffixes`` (removed in that order), the version a
    digest of its bytes, so an edited file never passes for the same data."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--dataset {path}: cannot read: {exc.strerror}") from None
    name = path.name
    for suffix in suffixes:
        name = name.removesuffix(suffix)
    return raw, name, "sha256:" + hashlib.sha256(raw).hexdigest()[:16]


def require_references(
    path: Path, problems: list[Problem], field: str, *, label: str = "", runs: str
) -> None:
    """``params.execute`` runs every problem's reference (its ``field``): a
    file where one is empty is refused before anything runs, naming it."""
    missing = [p.id for p in problems if not p.fields.get(field, "").strip()]
    if missing:
        raise InputError(
            f"{path}: {len(missing)} problem(s) have no {field} (first: {label}"
            f"{missing[0]}); params.execute runs the {runs}"
        )


def defines_function(source: str, name: str) -> bool | None:
    """Does ``source`` define function ``name`` at top level? (None: it does not compile.)"""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in tree.body
    )


def read_jsonl_maybe_gzipped(path: Path) -> tuple[bytes, str, str]:
    """(JSONL bytes, dataset name, version) of a ``--dataset`` file that
    may be gzipped, as HumanEval and EvalPlus release theirs."""
    raw, name, version = read_dataset_file(path, (".gz", ".jsonl", ".json"))
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw), name, version


ParseProblems = Callable[[bytes, str], list[Problem]]
"""A benchmark's dataset parser: (file bytes, source named in errors) -> problems."""


def read_problems_file(
    path: Path, parse: ParseProblems, suffixes: tuple[str, ...] | None = None
) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of a ``--dataset`` file read by
    ``parse``: JSONL, plain or gzipped, when ``suffixes`` is None; else a
    plain file whose name drops ``suffixes`` (`read_dataset_file`)."""
    if suffixes is None:
        raw, name, version = read_jsonl_maybe_gzipped(path)
    else:
        raw, name, version = read_dataset_file(path, suffixes)
    return parse(raw, str(path)), name, version


def fixture_problems(name: str, parse: ParseProblems) -> list[Problem]:
    """The problems of a bundled fixture (``aioeval/fixtures/NAME``), read by ``parse``."""
    data = resources.files("aioeval.fixtures").joinpath(name).read_bytes()
    return parse(data, f"aioeval/fixtures/{name}")


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path``, whole or not at all (a cache another run reads)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cache_dir() -> Path:
    """The directory every suite keeps its cache under (``$AIOEVAL_CACHE_DIR``
    overrides the user's cache directory)."""
    override = os.environ.get(CACHE_ENV)
    return Path(override) if override else Path(platformdirs.user_cache_dir("aioeval"))


def fixture_records(name: str) -> list[MockRecord]:
    """The pre-scored candidates of a bundled fixture (``aioeval/fixtures/NAME``)."""
    data = resources.files("aioeval.fixtures").joinpath(name).read_bytes()
    return [msgspec.json.decode(line, type=MockRecord) for line in data.splitlines() if line]


def jsonl_rows(
    lines: Iterable[bytes], source: str, decoder: msgspec.json.Decoder[T]
) -> Iterator[tuple[int, T]]:
    """Each non-blank line decoded, with its number; a line that does not
    decode is an error naming ``source:line`` and, from msgspec, the field."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield lineno, decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise InputError(f"{source}:{lineno}: {exc}") from None


def sample_rows(path: Path, decoder: msgspec.json.Decoder[T]) -> list[tuple[int, T]]:
    """A samples file's JSONL rows with their line numbers; one line naming
    the file when it cannot be read."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read samples: {exc.strerror}") from None
    with fh:
        return list(jsonl_rows(fh, str(path), decoder))


def read_completions(
    path: Path, dataset: Dataset, decoder: msgspec.json.Decoder[Any]
) -> Iterator[Candidate]:
    """Candidates from a samples file of ``{"task_id", "completion"}`` lines
    (HumanEval's shape); a task's samples are indexed in file order."""
    known = {p.id for p in dataset.problems}
    seen: dict[str, int] = {}
    out: list[Candidate] = []
    for lineno, row in sample_rows(path, decoder):
        pid = str(row.task_id)
        if pid not in known:
            raise InputError(f"{path}:{lineno}: unknown task_id {row.task_id!r}")
        index = seen[pid] = seen.get(pid, -1) + 1
        text = row.completion
        out.append(Candidate(problem_id=pid, sample_index=index, raw=text, text=text))
    if not out:
        raise InputError(f"{path}: no samples found")
    return iter(out)
