"""CRUXEval answers: extraction from model text, and the rules each scoring
mode applies to an answer. Pure functions, no I/O.

Extraction turns whatever the model wrote (tagged answer, assertion line,
bare expression, a fenced block, chatter around any of them) into the answer
expression: the predicted value for CRUXEval-O, the ``f(...)`` call for
CRUXEval-I. It is linear in the text's length and never raises.

Official mode executes that text exactly as the upstream evaluator does
(``official_program``, ``official_skip``). Strict mode accepts only data:
a literal for -O (`output_literal`); for -I exactly one call of ``f`` whose
arguments are literals (`input_answer`), which the sandbox passes to ``f``
as data, so no text of the answer is ever executed. The one exception is an
answer whose arguments are exactly the dataset's own input expression
(vetted text, e.g. ``f(''.join(['A'] * 20))``), which is run as written.
Rejections raise `AnswerRejected`, which the suite turns into a ``failed``
verdict carrying the reason.
"""

from __future__ import annotations

import ast
import re
import tokenize
from typing import Literal

import msgspec

from aioeval.errors import CandidateFault
from aioeval.sandbox.values import plain, wire

Task = Literal["o", "i"]

_TAG = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CODE_LANGS = ("", "python", "py", "python3")

MAX_ANSWER = 1_000_000
"""Longest answer text parsed (characters); longer answers are rejected."""


class AnswerRejected(CandidateFault, ValueError):
    """A strict-mode answer that is not of the accepted form; str() is the reason."""


# --- extraction -------------------------------------------------------------


def _fenced(text: str) -> str:
    """The code block that holds the answer, or ``text`` when there is none.

    Preference: the last code block that has an ``assert`` line, else the
    last code block (chatter usually comes before the answer).
    """
    blocks = [m.group(2) for m in _FENCE.finditer(text) if m.group(1).lower() in _CODE_LANGS]
    if not blocks:
        return text
    with_assert = [b for b in blocks if _assert_start(b.splitlines()) is not None]
    return (with_assert or blocks)[-1]


def _assert_start(lines: list[str]) -> int | None:
    for i in range(len(lines) - 1, -1, -1):
        if re.match(r"\s*assert\b", lines[i]):
            return i
    return None


def _parse_assert(lines: list[str], start: int) -> tuple[str, ast.Compare] | None:
    """The logical line starting at ``start``, if it is ``assert a == b``.

    The tokenizer finds where the statement ends (brackets, continuations)
    in one pass, so this is linear in the text however many lines follow.
    """
    rows = _logical_rows(lines, start)
    if rows is None:
        return None
    src = "\n".join(lines[start : start + rows]).strip()
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
        test = tree.body[0].test
        if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq):
            return src, test
    return None


def _logical_rows(lines: list[str], start: int) -> int | None:
    """How many physical lines the statement at ``lines[start]`` spans."""
    feed = iter(line + "\n" for line in lines[start:])
    try:
        for tok in tokenize.generate_tokens(lambda: next(feed, "")):
            if tok.type == tokenize.NEWLINE:
                return tok.start[0]
            if tok.type == tokenize.ENDMARKER:
                return None
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError):
        return None
    return None


def _side(src: str, test: ast.Compare, task: Task) -> str | None:
    node = test.left if task == "i" else test.comparators[0]
    if task == "o" and len(test.ops) > 1:
        return None  # a chained comparison has no single right side
    return ast.get_source_segment(src, node)


def _split_text(text: str, task: Task) -> str:
    """Last resort for text that does not parse: split at the first ``==``."""
    body = re.sub(r"^\s*assert\b", "", text).strip()
    left, sep, right = body.partition("==")
    if not sep:
        return body
    return (left if task == "i" else right).strip()


def _calls_f(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "f"


def extract_answer(raw: str, task: Task) -> str:
    """The answer expression in a model's reply (see the module docstring).

    Order: the last ``[ANSWER]`` block (a missing closing tag, as left by a
    stop sequence, is fine), then a code fence inside it, then the last
    ``assert`` line, then a bare ``f(...) == value`` comparison, else the
    whole stripped text as a bare expression.
    """
    try:
        return _extract(raw, task)
    except Exception:  # a pathological text is still just an answer
        return raw.strip()


def _extract(raw: str, task: Task) -> str:
    tagged = _TAG.findall(raw)
    text = tagged[-1] if tagged else raw
    text = _fenced(text).strip()
    if len(text) > MAX_ANSWER:
        return text
    lines = text.splitlines()
    start = _assert_start(lines)
    if start is not None:
        parsed = _parse_assert(lines, start)
        if parsed is not None:
            side = _side(parsed[0], parsed[1], task)
            if side is not None:
                return side.strip()
        return _split_text(lines[start], task)
    try:
        expr = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    if (
        isinstance(expr, ast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], ast.Eq)
        and _calls_f(expr.left)
    ):
        side = _side(text, expr, task)
        if side is not None:
            return side.strip()
    return text


# --- official mode ----------------------------------------------------------


def official_program(code: str, output: str, generation: str) -> str:
    """The program the upstream evaluator runs for one generation."""
    return code + "\nassert " + output + " == " + generation


def _is_literal(node: ast.expr) -> bool:
    """A display of constants only: no names, calls or operators beyond the
    unary minus and complex arithmetic ``ast.literal_eval`` accepts (and no
    display built to hash badly, which is left to the sandbox)."""
    if any(
        isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) for n in ast.walk(node)
    ):
        return False
    try:
        guard_hashing(node)
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, plain.NotPlain):
        return False
    return True


def _inert(stmt: ast.stmt) -> bool:
    """A module-level statement whose execution cannot fail or have effects:
    a plain ``def`` (no decorators, defaults or annotations, which run at
    definition time) or ``name = <literal>``."""
    if isinstance(stmt, ast.FunctionDef):
        a = stmt.args
        every = [
            *a.posonlyargs,
            *a.args,
            *a.kwonlyargs,
            *([a.vararg] if a.vararg else []),
            *([a.kwarg] if a.kwarg else []),
        ]
        return not (
            stmt.decorator_list
            or stmt.returns
            or a.defaults
            or any(a.kw_defaults)
            or any(x.annotation for x in every)
        )
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets) and _is_literal(stmt.value)
    return False


def static_official_verdict(code: str, output: str, generation: str) -> bool | None:
    """The upstream program's verdict when it is decided by data alone, else None.

    When ``code + assert OUTPUT == GENERATION`` parses as inert definitions
    followed by one ``assert <literal> == <literal>`` (no message), running
    it can only compare two literal values, so Python equality of the two
    ``literal_eval`` results is exactly its outcome, with no process needed.
    Anything else (calls, names, a second statement smuggled in by the
    generation, a syntax error) returns None and is executed as upstream.
    """
    if len(generation) > MAX_ANSWER:
        return None
    try:
        tree = ast.parse(official_program(code, output, generation))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not tree.body or not all(_inert(s) for s in tree.body[:-1]):
        return None
    last = tree.body[-1]
    if not (
        isinstance(last, ast.Assert) and last.msg is None and isinstance(last.test, ast.Compare)
    ):
        return None
    cmp = last.test
    if len(cmp.ops) != 1 or not isinstance(cmp.ops[0], ast.Eq):
        return None
    left, right = cmp.left, cmp.comparators[0]
    if not (_is_literal(left) and _is_literal(right)):
        return None
    try:
        return bool(ast.literal_eval(left) == ast.literal_eval(right))
    except Exception:
        return None


def official_skip(task: Task, generation: str, input_text: str) -> str | None:
    """Why the upstream evaluator would not execute ``generation``, or None."""
    if task == "i" and "f(" not in generation:
        return "skipped (official rule): an input answer must contain 'f('"
    if task == "o" and f"f({input_text})" in generation:
        return "skipped (official rule): an output answer may not contain the call f(input)"
    return None


# --- strict mode ------------------------------------------------------------


def expected_value(output: str) -> object:
    """The dataset's expected output as a Python value (every one is a literal)."""
    return ast.literal_eval(output.strip())


def _parse_eval(src: str, what: str) -> ast.expr:
    if len(src) > MAX_ANSWER:
        raise AnswerRejected(f"strict: the {what} answer is longer than {MAX_ANSWER} characters")
    try:
        return ast.parse(src, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise AnswerRejected(
            f"strict: the {what} answer is not valid Python: {_short(src)}"
        ) from None


def _literal(node: ast.expr, src: str, what: str) -> object:
    try:
        guard_hashing(node)
    except (plain.NotPlain, TypeError, ValueError, RecursionError, MemoryError):
        raise AnswerRejected(
            f"strict: the {what} has a set or dict built to hash badly: {_short(src)}"
        ) from None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise AnswerRejected(f"strict: the {what} is not a literal: {_short(src)}") from None


def guard_hashing(node: ast.AST) -> None:
    """Refuse (NotPlain) set and dict displays whose items share one hash
    value too often: building them would take quadratic time in the engine.
    Linear: each item of a large display is evaluated once on its own."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Set):
            items: list[ast.expr | None] = list(sub.elts)
        elif isinstance(sub, ast.Dict):
            items = list(sub.keys)
        else:
            continue
        if len(items) > plain.MAX_SAME_HASH:
            wire.check_hashes([ast.literal_eval(k) for k in items if k is not None])


def _data_key(value: object, src: str, what: str) -> bytes:
    """The value's exact plain encoding: equal keys mean the same types and
    values in the same order, so the same execution and the same verdict."""
    try:
        return plain.dumps(value)
    except (plain.NotPlain, RecursionError, ValueError):
        raise AnswerRejected(f"strict: the {what} is not plain data: {_short(src)}") from None


def output_literal(text: str) -> tuple[object, bytes]:
    """An -O answer's value and its dedup key.

    Only a literal is accepted, so the value is fixed by syntax and can be
    compared in the engine without running anything.
    """
    src = text.strip()
    value = _literal(_parse_eval(src, "output"), src, "output answer")
    return value, _data_key(value, src, "output answer")


class InputAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """An accepted -I answer: what the sandbox passes to ``f``."""

    args: bytes
    """``plain.dumps([args, kwargs])``; empty when ``source`` is used."""
    source: str | None = None
    """The dataset's own (vetted) input expression, when the answer is exactly it."""
    key: bytes
    """Dedup key: equal keys run ``f`` on identical data."""


def input_answer(text: str, dataset_input: str) -> InputAnswer:
    """An -I answer as data for the sandbox.

    The answer must be exactly one call ``f(...)`` whose arguments are
    Python literals (what ``ast.literal_eval`` accepts, ``set()`` included),
    positional or by keyword. Arguments that are exactly the dataset's own
    input expression are accepted as written (it is vetted text).
    """
    src = text.strip()
    call = _parse_eval(src, "input")
    if not _calls_f(call):
        raise AnswerRejected(
            f"strict: the input answer must be exactly one call f(...): {_short(src)}"
        )
    assert isinstance(call, ast.Call)
    if _same_arguments(call, src, dataset_input):
        return InputAnswer(args=b"", source=dataset_input, key=b"dataset\0")
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for node in call.args:
        if isinstance(node, ast.Starred):
            raise AnswerRejected("strict: the input answer's arguments may not use *unpacking")
        args.append(_literal(node, src, "input answer's argument"))
    for kw in call.keywords:
        if kw.arg is None:
            raise AnswerRejected("strict: the input answer's arguments may not use **unpacking")
        kwargs[kw.arg] = _literal(kw.value, src, "input answer's argument")
    key = _data_key([args, kwargs], src, "input answer's argument")
    return InputAnswer(args=key, key=key)


def _same_arguments(call: ast.Call, src: str, dataset_input: str) -> bool:
    """Are the call's arguments exactly the dataset's input expression?"""
    if len(src) > 4 * len(dataset_input) + 64:
        return False
    try:
        ref = ast.parse(f"f({dataset_input})", mode="eval").body
        assert isinstance(ref, ast.Call)
        mine = ast.dump(ast.Tuple(elts=[*call.args, *call.keywords], ctx=ast.Load()))  # type: ignore[list-item]
        theirs = ast.dump(ast.Tuple(elts=[*ref.args, *ref.keywords], ctx=ast.Load()))  # type: ignore[list-item]
    except (SyntaxError, ValueError, RecursionError, MemoryError, AssertionError):
        return False
    return mine == theirs


def _short(text: str, limit: int = 80) -> str:
    head = text[: limit * 4]
    one = " ".join(head.split())
    return repr(one if len(one) <= limit and len(head) == len(text) else one[: limit - 3] + "...")
