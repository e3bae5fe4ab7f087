"""CRUXEval answers: extraction from model text, and the rules each scoring
mode applies to an answer. Pure functions, no I/O.

Extraction turns whatever the model wrote (tagged answer, assertion line,
bare expression, a fenced block, chatter around any of them) into the answer
expression: the predicted value for CRUXEval-O, the ``f(...)`` call for
CRUXEval-I.

Official mode executes that text exactly as the upstream evaluator does
(``official_program``, ``official_skip``). Strict mode accepts only an answer
whose meaning is fixed by its syntax: a literal for -O (``output_literal``),
exactly one call of ``f`` with argument expressions that cannot reach into
the interpreter for -I (``input_call``). Rejections raise `AnswerRejected`,
which the suite turns into a ``failed`` verdict carrying the reason.
"""

from __future__ import annotations

import ast
import re
from typing import Literal

Task = Literal["o", "i"]

_TAG = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CODE_LANGS = ("", "python", "py", "python3")

# Builtins an -I argument may call or name: pure constructors and helpers.
# Anything that reaches frames, globals, attributes by name or the import
# system (eval, exec, setattr, globals, vars, __import__, type, ...) is out.
SAFE_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "bin",
        "bool",
        "bytearray",
        "bytes",
        "chr",
        "complex",
        "dict",
        "divmod",
        "enumerate",
        "filter",
        "float",
        "frozenset",
        "hex",
        "int",
        "isinstance",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "oct",
        "ord",
        "pow",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "slice",
        "sorted",
        "str",
        "sum",
        "tuple",
        "zip",
    }
)


class AnswerRejected(ValueError):
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
    """The smallest run of lines from ``start`` that parses as ``assert a == b``."""
    for end in range(start + 1, len(lines) + 1):
        src = "\n".join(lines[start:end]).strip()
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
            test = tree.body[0].test
            if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq):
                return src, test
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
    tagged = _TAG.findall(raw)
    text = tagged[-1] if tagged else raw
    text = _fenced(text).strip()
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
    unary minus and complex arithmetic ``ast.literal_eval`` accepts."""
    if any(
        isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) for n in ast.walk(node)
    ):
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
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


def output_literal(text: str) -> tuple[object, str]:
    """An -O answer's value and its normalized form (for dedup).

    Only a literal is accepted, so the value is fixed by syntax and can be
    compared in the engine without running anything.
    """
    src = text.strip()
    try:
        node = ast.parse(src, mode="eval")
        value = ast.literal_eval(node)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        kind = "not valid Python" if isinstance(exc, SyntaxError) else "not a literal"
        raise AnswerRejected(f"strict: the output answer is {kind}: {_short(src)}") from None
    return value, ast.dump(node)


def module_names(code: str) -> frozenset[str]:
    """Names the problem's code binds at module level (other than ``f``)."""
    names: set[str] = set()
    for stmt in ast.parse(code).body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    names.discard("f")
    return frozenset(names)


def input_call(text: str, problem_names: frozenset[str]) -> tuple[str, str]:
    """An -I answer as ``(call source, normalized form)``.

    The answer must be exactly one call ``f(...)``. Its arguments may be any
    expression built from literals, operators, lambdas, comprehensions, the
    pure builtins in `SAFE_BUILTINS` and the problem's own module-level
    names; they may not name ``f``, touch underscore attributes or assign
    (walrus), so evaluating them cannot change what ``f`` does.
    """
    src = text.strip()
    try:
        node = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise AnswerRejected(
            f"strict: the input answer is not valid Python: {_short(src)}"
        ) from None
    call = node.body
    if not _calls_f(call):
        raise AnswerRejected(
            f"strict: the input answer must be exactly one call f(...): {_short(src)}"
        )
    assert isinstance(call, ast.Call)
    args: list[ast.AST] = [*call.args, *call.keywords]
    bound: set[str] = set()
    for arg in args:
        for sub in ast.walk(arg):
            if isinstance(sub, ast.arg):
                bound.add(sub.arg)
            elif isinstance(sub, ast.comprehension):
                bound.update(n.id for n in ast.walk(sub.target) if isinstance(n, ast.Name))
    allowed = (bound | SAFE_BUILTINS | problem_names) - {"f"}
    for arg in args:
        for sub in ast.walk(arg):
            if isinstance(sub, ast.Name) and sub.id not in allowed:
                raise AnswerRejected(f"strict: the input answer's arguments may not use {sub.id!r}")
            if isinstance(sub, ast.arg) and sub.arg == "f":
                raise AnswerRejected("strict: the input answer's arguments may not bind 'f'")
            if isinstance(sub, ast.Attribute) and sub.attr.startswith("_"):
                raise AnswerRejected(
                    f"strict: the input answer's arguments may not use attribute {sub.attr!r}"
                )
            if isinstance(sub, ast.NamedExpr):
                raise AnswerRejected("strict: the input answer's arguments may not assign (:=)")
    return src, ast.dump(node)


def _short(text: str, limit: int = 80) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 3] + "...")
