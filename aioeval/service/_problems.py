"""Problems a caller brings as a dict in a benchmark's own format: bounded in
size before anything reads them, parsed by the suite's own parser in a
bounded child process (see `_parsing`), and kept by content digest in an
LRU bounded in bytes.

A problem's id is the one it gives (or ``problem``) followed by ``@`` and
the whole BLAKE2b-256 digest of the benchmark and the problem's canonical
JSON: two different problems never share an id, so never a cached verdict.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from aioeval.errors import InputError
from aioeval.types import Problem

from ._lru import OnceLRU
from ._parsing import ParseFn, ParserProcess

FIELD_BYTES = 16 * 2**10
PROBLEM_BYTES = 64 * 2**10
KEEP_BYTES = 64 * 2**20
KEEP_COUNT = 10_000
ENTRY_OVERHEAD = 512
"""Bytes charged per kept problem beyond its strings (the objects around them)."""


class ProblemTooLarge(InputError):
    """A caller's problem, or one of its fields, is over the size limit."""


class CallerProblems:
    """``await problems.get(benchmark, fields, parse, id_field)``: the parsed
    `Problem`, from the LRU when the same problem came before."""

    def __init__(
        self,
        *,
        field_bytes: int = FIELD_BYTES,
        problem_bytes: int = PROBLEM_BYTES,
        keep_bytes: int = KEEP_BYTES,
        keep_count: int = KEEP_COUNT,
    ) -> None:
        self.field_bytes, self.problem_bytes = field_bytes, problem_bytes
        self.parser = ParserProcess()
        self.kept: OnceLRU[Problem] = OnceLRU(count=keep_count, limit=keep_bytes, size=_weight)

    def __len__(self) -> int:
        return len(self.kept)

    async def get(
        self, benchmark: str, fields: Mapping[str, Any], parse: ParseFn, id_field: str
    ) -> Problem:
        body = self._measured(fields)
        digest = hashlib.blake2b(benchmark.encode() + b"\0" + body, digest_size=32).digest()

        async def parsed() -> Problem:
            row = dict(fields)
            row.setdefault(id_field, "problem")
            found = await self.parser.parse(parse, orjson.dumps(row), "problem")
            if len(found) != 1:
                raise InputError(f"problem: expected one problem, its parser found {len(found)}")
            return Problem(id=f"{found[0].id}@{digest.hex()}", fields=found[0].fields)

        problem, _ = await self.kept.get(digest, parsed)
        return problem

    def _measured(self, fields: Mapping[str, Any]) -> bytes:
        """The problem's canonical JSON, refused when it or a field is too large."""
        try:
            body = orjson.dumps(dict(fields), option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise InputError(f"problem: not JSON data ({exc})") from None
        if len(body) > self.problem_bytes:
            raise ProblemTooLarge(
                f"problem: {len(body)} bytes of JSON, over the limit of {self.problem_bytes}"
            )
        for name, value in fields.items():
            size = len(orjson.dumps(value))
            if size > self.field_bytes:
                raise ProblemTooLarge(
                    f"problem.{name}: {size} bytes of JSON, over the limit of "
                    f"{self.field_bytes} per field"
                )
        return body

    async def aclose(self) -> None:
        await self.parser.aclose()


def _weight(problem: Problem) -> int:
    """The memory a kept problem holds: its strings, and the objects around them."""
    strings = sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in problem.fields.items())
    return ENTRY_OVERHEAD + sys.getsizeof(problem.id) + strings
