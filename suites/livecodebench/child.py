"""The candidate's side of a LiveCodeBench-style problem.

This module's source, followed by the candidate's program as a string
literal (`livecodebench.child_program`), is what runs in the sandboxed child. It defines
one entry point, ``_aioeval_lcb(op, *args)``, that the test calls:

- ``load``: compile the program and run its module level, as
  LiveCodeBench's ``compile_code`` does (``lcb_runner/evaluation/
  testing_util.py``), under the test's first time limit.
- ``stdin``: run a stdin program once on one test's input and return what
  it printed (bounded).
- ``call``: call the functional problem's method and return its value.

The program sees LiveCodeBench's environment, reproduced by the same
mechanism rather than rule by rule: its standard imports first (star
imports of common modules, a recursion limit of 50000, int-to-str of up to
50000 digits); a stdin program's imports run once at load and the rest of
it becomes a function called per test (a final ``if __name__ ==
'__main__':`` block is unwrapped first); during a call ``sys.stdin`` is an
object that behaves as upstream's stand-in (``read()`` is the whole input
every time, ``readline()`` reads like a file, ``readlines()`` gives the lines
split on newlines, ``buffer.read()`` the bytes; it cannot be iterated), the
process's own (empty) stdin, which names bound at load keep, is patched as
upstream patches it (`_PROCESS_STDIN`), and ``sys.stdout`` is a bounded text buffer;
``SystemExit`` ends a run normally. A functional program is called on one
``Solution()`` made at load (or a module function when the program defines
no ``class Solution``); as upstream, a program of either kind whose text
says ``class Solution`` needs a module-level ``Solution`` to load.

Only the standard library is imported and there is no ``from __future__``:
the source is pasted ahead of other code.
"""

import ast
import builtins
import io
import sys
from typing import Any

LCB_STAR_IMPORTS = (
    "string re datetime collections heapq bisect copy math random statistics "
    "itertools functools operator io sys json builtins typing"
).split()
"""Modules whose names LiveCodeBench's programs see unimported, in its order
(later ones shadow earlier ones: ``builtins`` restores ``pow`` over ``math.pow``)."""
LCB_IMPORTS = (
    "".join(f"from {m} import *\n" for m in LCB_STAR_IMPORTS)
    + "".join(f"import {m}\n" for m in LCB_STAR_IMPORTS if m not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)
INT_DIGITS = 50_000
"""Upstream's evaluator raises the int-to-str digit limit to this."""
OUTPUT_CAP = 8 * 1024 * 1024
"""Characters a stdin program may print per test: its output crosses the
channel to the verifier as one message (16 MiB at most)."""


class _Flood(BaseException):
    """The program printed more than `OUTPUT_CAP` (a BaseException, so an
    ordinary ``except Exception`` in the program does not swallow it)."""


class _Stdout(io.StringIO):
    """The program's stdout: kept in memory up to `OUTPUT_CAP` characters."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.flooded = False

    def write(self, text: str) -> int:
        if self.flooded or self.size + len(text) > OUTPUT_CAP:
            self.flooded = True
            raise _Flood
        self.size += len(text)
        return super().write(text)


class _StdinBytes:
    def __init__(self, data: str) -> None:
        self.data = data.encode("utf-8")

    def read(self, *args: object) -> bytes:
        return self.data

    def readline(self, *args: object) -> bytes:
        return self.data.split(b"\n")[0] + b"\n"


class _Stdin:
    """Upstream's stand-in for ``sys.stdin``, as a program observes it."""

    def __init__(self, data: str) -> None:
        self._data = data
        self._stream = io.StringIO(data)
        self.buffer = _StdinBytes(data)

    def read(self, *args: object) -> str:
        return self._data

    def readline(self, size: int = -1, /) -> str:
        return self._stream.readline(size)

    def readlines(self, *args: object) -> list[str]:
        return self._data.split("\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    return (
        isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def stdin_module(source: str) -> str:
    """The stdin program as upstream runs it: the standard imports, the
    program's own top-level imports, and everything else inside
    ``def wrapped_function():`` (a final main guard unwrapped first). A
    program that does not parse is returned as it is (compiling it fails)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    body = list(tree.body)
    if body and _is_main_guard(body[-1]):
        guard = body.pop()
        assert isinstance(guard, ast.If)
        body.extend(guard.body)
    imports: list[ast.stmt] = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    rest = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
    args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    function = ast.FunctionDef(
        name="wrapped_function", args=args, body=rest, decorator_list=[], lineno=1
    )
    try:
        text = ast.unparse(ast.Module(body=imports, type_ignores=[]))
        return LCB_IMPORTS + "\n" + text + "\n" + ast.unparse(function)
    except (ValueError, RecursionError, MemoryError):
        return source


_PROCESS_STDIN = io.TextIOWrapper(io.BytesIO(b""))
"""The evaluating process's own stdin (empty: upstream's worker reads
/dev/null). Names bound to it at load (``from sys import stdin``, or the
star-imported ``stdin``) keep it, and upstream patches its ``read``,
``readline`` and ``readlines`` during a run (before it swaps ``sys.stdin``)."""


def _patch_process_stdin(data: str) -> None:
    lines = iter(data.split("\n"))
    _PROCESS_STDIN.read = lambda *args: data  # type: ignore[method-assign]
    _PROCESS_STDIN.readline = lambda *args: next(lines)  # type: ignore[method-assign]
    _PROCESS_STDIN.readlines = lambda *args: data.split("\n")  # type: ignore[method-assign]


def _unpatch_process_stdin() -> None:
    for name in ("read", "readline", "readlines"):
        _PROCESS_STDIN.__dict__.pop(name, None)


def _solution(scope: dict[str, Any]) -> Any:
    if "Solution" not in scope:
        raise AttributeError("the program says 'class Solution' but has no module-level Solution")
    return scope["Solution"]()


class _Program:
    """The candidate's program, loaded once, run per test."""

    def __init__(self, source: str, kind: str, func_name: str) -> None:
        sys.set_int_max_str_digits(INT_DIGITS)
        sys.stdin = _PROCESS_STDIN
        scope: dict[str, Any] = {"__name__": "tmp_sol", "__builtins__": builtins}
        if kind == "stdin":
            text, name = stdin_module(source), "wrapped_function"
        else:
            text, name = LCB_IMPORTS + "\n\n" + source, func_name
        exec(compile(text, "<candidate>", "exec"), scope)
        # Upstream makes a ``Solution()`` whenever the text it ran says
        # ``class Solution`` (a string included), whatever the kind: a stdin
        # program's class is inside its wrapper function, so it fails there.
        owner: Any = _solution(scope) if "class Solution" in text else None
        self.run = getattr(owner, name) if owner is not None else scope[name]

    def stdin(self, data: str) -> str:
        out = _Stdout()
        saved = sys.stdout
        _patch_process_stdin(data)
        sys.stdin, sys.stdout = _Stdin(data), out  # type: ignore[assignment]
        try:
            self.run()
        except SystemExit:
            pass
        except _Flood:
            pass
        finally:
            sys.stdin, sys.stdout = _PROCESS_STDIN, saved
            _unpatch_process_stdin()
        if out.flooded:
            raise RuntimeError(f"the program printed more than {OUTPUT_CAP} characters")
        return out.getvalue()


_aioeval_loaded: list[_Program] = []


def _aioeval_lcb(op: str, *args: Any) -> Any:
    """The one entry point the test calls (see the module docstring)."""
    if op == "load":
        _aioeval_loaded[:] = [_Program(_AIOEVAL_SOURCE, _AIOEVAL_KIND, _AIOEVAL_FUNC)]
        return None
    program = _aioeval_loaded[0]
    if op == "stdin":
        return program.stdin(args[0])
    return program.run(*args)


_AIOEVAL_SOURCE = ""
_AIOEVAL_KIND = "stdin"
_AIOEVAL_FUNC = ""
