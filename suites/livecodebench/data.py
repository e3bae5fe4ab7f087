"""LiveCodeBench-style problems: the bundled fixture or a release file in
LiveCodeBench's JSONL shape, checked line by line.

A row has ``question_id``, ``question_content``, ``starter_code``,
``public_test_cases`` (JSON text of ``[{input, output, testtype}]``),
``private_test_cases`` (the same JSON, or that JSON text pickled, zlib-
compressed and base64-encoded, as the release files store it), ``metadata``
(JSON text; ``func_name`` makes the problem functional) and descriptive
fields (title, platform, contest, date, difficulty). The bundled fixture
adds ``canonical_solution``. Tests run public first, then private, as
upstream's ``get_evaluation_sample`` orders them
(``lcb_runner/benchmarks/code_generation.py``).

Hidden tests are never unpickled: `pickled_string` reads the pickle's
opcodes with `pickletools.genops`, a parser that only decodes bytes, and
accepts a pickle only when it is one string (framing and memo opcodes
aside). An ``Unpickler`` whose ``find_class`` refuses every global would
also keep imports out, but it still runs the pickle machine on the file's
instructions (building containers of any size and shape, extension codes,
persistent ids); reading the opcodes runs nothing and accepts less.
"""

import base64
import binascii
import json
import pickletools
import zlib
from pathlib import Path
from typing import Any

import msgspec
import orjson

from aioeval.errors import InputError
from aioeval.sandbox.protocol import MAX_FRAME
from aioeval.sandbox.strict.channel import MAX_MESSAGE
from aioeval.types import Problem

from ..base import fixture_problems as bundled
from ..base import jsonl_rows, read_problems_file

FIXTURE = "livecodebench/problems.jsonl"
FIXTURE_NAME = "livecodebench-fixture"
FIXTURE_VERSION = "aioeval-fixture-1"
TESTS_CAP = MAX_FRAME * 3 // 4
"""Characters of test data one problem may have: its tests travel to the
verifier in one frame (`protocol.MAX_FRAME`), beside the test's code."""
INPUT_CAP = MAX_MESSAGE * 3 // 4
"""Characters of one test's input: it travels to the candidate's process as
one channel message (`channel.MAX_MESSAGE`)."""

DESCRIBED = ("question_title", "platform", "contest_id", "contest_date", "difficulty")

_STRING_OPS = frozenset(
    {
        "UNICODE",
        "SHORT_BINUNICODE",
        "BINUNICODE",
        "BINUNICODE8",
        "SHORT_BINBYTES",
        "BINBYTES",
        "BINBYTES8",
    }
)
_FRAMING_OPS = frozenset({"PROTO", "FRAME", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"})


class _Row(msgspec.Struct):
    question_id: str
    question_content: str
    public_test_cases: str
    private_test_cases: str = ""
    metadata: str = "{}"
    starter_code: str = ""
    question_title: str = ""
    platform: str = ""
    contest_id: str = ""
    contest_date: str = ""
    difficulty: str = ""
    canonical_solution: str = ""


class Test(msgspec.Struct):
    input: str
    output: str
    testtype: str = "stdin"


_tests = msgspec.json.Decoder(list[Test])


def pickled_string(data: bytes) -> str:
    """The string a pickle holds, read without unpickling; ValueError
    (naming the opcode) for any pickle that is not one plain string."""
    strings: list[Any] = []
    try:
        for op, arg, _pos in pickletools.genops(data):
            if op.name in _STRING_OPS:
                strings.append(arg)
            elif op.name not in _FRAMING_OPS:
                raise ValueError(f"the pickle uses {op.name}; only a pickled string is accepted")
    except ValueError:
        raise
    except Exception as exc:  # a malformed pickle: genops' own complaints
        raise ValueError(f"not a readable pickle ({exc})") from None
    if len(strings) != 1:
        raise ValueError(f"the pickle holds {len(strings)} strings, not one")
    found = strings[0]
    if isinstance(found, bytes):
        try:
            return found.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the pickled bytes are not UTF-8 text") from None
    return str(found)


def _decompress(data: bytes) -> bytes:
    inflate = zlib.decompressobj()
    out = inflate.decompress(data, MAX_FRAME + 1)
    if len(out) > MAX_FRAME or inflate.unconsumed_tail:
        raise ValueError(f"decompresses to more than {MAX_FRAME} bytes")
    return out


def private_tests(text: str) -> list[Test]:
    """The hidden tests: JSON, or the release files' encoded form."""
    if not text.strip():
        return []
    try:
        return _tests.decode(text)
    except msgspec.DecodeError:
        pass
    try:
        packed = base64.b64decode(text.encode("ascii"))
        inner = pickled_string(_decompress(packed))
    except (binascii.Error, UnicodeEncodeError, zlib.error) as exc:
        raise ValueError(f"neither JSON nor base64 of zlib data ({exc})") from None
    try:
        return _tests.decode(inner)
    except msgspec.DecodeError as exc:
        raise ValueError(f"the decoded tests are not a list of tests: {exc}") from None


def check_tests(tests: list[Test], func_name: str) -> None:
    """ValueError (naming the test) for tests a problem cannot run: none,
    an unknown kind, an input over `INPUT_CAP`, over `TESTS_CAP` in all, or a
    functional test whose arguments or output are not JSON."""
    if not tests:
        raise ValueError("the problem has no tests")
    total = 0
    for number, test in enumerate(tests, 1):
        if test.testtype not in ("stdin", "functional"):
            raise ValueError(f"test {number}: testtype {test.testtype!r} is not stdin/functional")
        if len(test.input) > INPUT_CAP:
            raise ValueError(f"test {number}: input longer than {INPUT_CAP} characters")
        total += len(test.input) + len(test.output)
        if func_name:
            try:
                for line in test.input.split("\n"):
                    json.loads(line)
                json.loads(test.output)
            except ValueError:
                raise ValueError(
                    f"test {number}: a functional test needs one JSON value per input "
                    "line and a JSON output"
                ) from None
    if total > TESTS_CAP:
        raise ValueError(f"tests longer than {TESTS_CAP} characters in all")


def _problem(row: _Row) -> Problem:
    try:
        meta = json.loads(row.metadata) if row.metadata.strip() else {}
    except ValueError:
        raise ValueError("metadata: not JSON") from None
    func_name = meta.get("func_name") if isinstance(meta, dict) else None
    if func_name is not None and (not isinstance(func_name, str) or not func_name.isidentifier()):
        raise ValueError(f"metadata: func_name {func_name!r} is not a name")
    try:
        public = _tests.decode(row.public_test_cases)
    except msgspec.DecodeError as exc:
        raise ValueError(f"public_test_cases: {exc}") from None
    try:
        hidden = private_tests(row.private_test_cases)
    except ValueError as exc:
        raise ValueError(f"private_test_cases: {exc}") from None
    tests = public + hidden
    check_tests(tests, func_name or "")
    return make_problem(
        row.question_id,
        question=row.question_content,
        starter_code=row.starter_code,
        func_name=func_name or "",
        tests=tests,
        canonical_solution=row.canonical_solution,
        question_title=row.question_title,
        platform=row.platform,
        contest_id=row.contest_id,
        contest_date=row.contest_date,
        difficulty=row.difficulty,
    )


def make_problem(
    pid: str,
    *,
    question: str,
    starter_code: str,
    func_name: str,
    tests: list[Test],
    canonical_solution: str = "",
    **described: str,
) -> Problem:
    """A problem in the fields the suite reads (``described``: title,
    platform, contest and difficulty, empty when not given)."""
    fields = {name: described.get(name, "") for name in DESCRIBED}
    fields.update(
        question_content=question,
        starter_code=starter_code,
        func_name=func_name,
        tests=orjson.dumps([[t.input, t.output] for t in tests]).decode(),
        canonical_solution=canonical_solution,
    )
    return Problem(id=pid, fields=fields)


def tests_of(problem: Problem) -> list[tuple[str, str]]:
    """The problem's tests, ``(input, expected output)`` in the order they run."""
    return parse_tests(problem.fields["tests"])


def parse_tests(tests_json: str) -> list[tuple[str, str]]:
    return [(i, o) for i, o in orjson.loads(tests_json)]


def parse_lcb(data: bytes, source: str) -> list[Problem]:
    """Problems from JSONL bytes; a bad line is an error naming
    ``source:line``, the question and the field."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for lineno, row in jsonl_rows(data.splitlines(), source, msgspec.json.Decoder(_Row)):
        where = f"{source}:{lineno}: question_id {row.question_id!r}"
        if row.question_id in seen:
            raise InputError(f"{where}: appears twice")
        try:
            problem = _problem(row)
        except ValueError as exc:
            raise InputError(f"{where}: {exc}") from None
        seen.add(row.question_id)
        problems.append(problem)
    if not problems:
        raise InputError(f"{source}: no problems in it")
    return problems


def read_lcb_file(path: Path) -> tuple[list[Problem], str, str]:
    """(problems, dataset name, version) of a LiveCodeBench release file."""
    return read_problems_file(path, parse_lcb, (".jsonl", ".json"))


def fixture_problems() -> list[Problem]:
    return bundled(FIXTURE, parse_lcb)
