"""What each suite's answers must define, for the extractor (`extract`):
the entry point a program has to bind, and the prompt a body completes.

Kept apart from the suites so that a suite's answer path is one call:
``take(raw, target)``.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re

from aioeval.types import Problem, Taken

from .extract import Target, extract

_BUILTINS = frozenset(dir(builtins))
_DEFINES = re.compile(r"^(?:class|def|async\s+def)\s+([A-Za-z_]\w*)", re.MULTILINE)


def take(raw: str, target: Target) -> Taken:
    """The program in ``raw`` for ``target``, and how it was taken."""
    got = extract(raw, target)
    text = got.text
    if got.kind not in (None, "body", "none") and target.prompt and _open_signature(target.prompt):
        text = STUB + text
    return Taken(text=text, kind=got.kind)


STUB = "    pass\n"
"""Closes a prompt that ends in a bare signature (``def add(a, b):``) when
the answer is a whole program: the program runs after the prompt, and its
own definition of the function replaces the stub, as when a prompt with a
docstring is followed by the model's whole function."""


@functools.lru_cache(maxsize=1024)
def _open_signature(prompt: str) -> bool:
    """Does the prompt only compile with a body added (a bare signature)?
    Asked once per prompt: a run takes many answers to each."""
    try:
        compile(prompt, "<prompt>", "exec")
        return False
    except SyntaxError:
        pass
    try:
        compile(prompt + STUB, "<prompt>", "exec")
        return True
    except SyntaxError:
        return False


def humaneval(problem: Problem) -> Target:
    """A HumanEval-format problem: its entry point; a body completes the prompt."""
    f = problem.fields
    return Target(entry=(f["entry_point"],), prompt=f["prompt"])


def mbpp(problem: Problem, tests: tuple[str, ...]) -> Target:
    """An MBPP problem: the names its tests call that its reference defines
    (the function under test); with none, every name the tests call."""
    called: set[str] = set()
    for test in tests:
        called |= _called(test)
    defined = set(_DEFINES.findall(problem.fields.get("code", "")))
    entry = (called & defined) or called
    return Target(entry=tuple(sorted(entry)))


def livecodebench(problem: Problem) -> Target:
    """A LiveCodeBench problem: a functional one's starter class
    (``Solution``) or its method's name; a stdin one has no entry (the
    program reads stdin)."""
    f = problem.fields
    if not f["func_name"]:
        return Target()
    named = _DEFINES.findall(f.get("starter_code", ""))
    # The method's name too: an answer may define it as a plain function,
    # which upstream's harness calls when there is no class.
    return Target(entry=tuple(dict.fromkeys([*named[:1], f["func_name"]])))


def _called(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in _BUILTINS
    }
