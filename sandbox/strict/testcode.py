"""The trusted test's code, as the verifier holds it: compiled once per
problem, its output captured, and the prompt's helpers guarded where a
candidate redefines them. No candidate object is ever compiled or run here.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from types import CodeType, FunctionType
from typing import Any

from .. import protocol
from ..values import assigned
from . import handles, twins

OUTPUT_CAP = 2048
"""What the test itself may print that is kept (the rest is counted)."""


class TestBroken(Exception):
    """The test itself does not run (does not compile, raises at import)."""


class Capture(io.TextIOBase):
    """The test's stdout and stderr: the first `OUTPUT_CAP` characters kept."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.size < OUTPUT_CAP:
            self.kept.append(text[: OUTPUT_CAP - self.size])
        self.size += len(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.kept)


class Compiled:
    """A test, compiled once: the prelude, the setup, the driver, and the
    global names any of them reads (the ones a candidate may define)."""

    def __init__(self, check: protocol.Check) -> None:
        self.prelude = _prelude_code(check.prelude)
        try:
            self.setup = compile(check.setup, "<test>", "exec")
            self.driver = compile(check.driver, "<test driver>", "exec")
        except SyntaxError as exc:
            raise TestBroken(f"the test does not compile: {exc}") from None
        self.names = _names(self.setup) | _names(self.driver)
        codes = (self.setup, self.driver)
        self.attributes = set().union(*(assigned.stored(c, assigned.ATTRIBUTES) for c in codes))
        """Attribute names the test assigns (a module's: `assigned`)."""
        self.globals = set().union(*(assigned.stored(c, assigned.GLOBALS) for c in codes))
        """Global names the test's functions rebind."""

    def rebound(self, names: list[Any], prompt: Iterable[str] = ()) -> set[str]:
        """The globals the test may rebind for the program too: the ones its
        functions assign, and, where it reaches its globals as a dict
        (``mock.patch.dict(globals(), ...)``, ``globals()[name] = ...``),
        the names the program defines (``names``: `protocol.Loaded`'s) and
        the ones the prompt binds (``prompt``: an imported ``datetime``
        the test replaces with a frozen clock's class)."""
        out = set(self.globals)
        if "globals" in self.names:
            out |= {n[0] for n in names if type(n) is list and n and type(n[0]) is str}
            out |= {n for n in prompt if not n.startswith("__")}
        return out


def _prelude_code(text: str) -> CodeType | None:
    """The prelude's code; for a prelude that is not a whole program (a
    prompt that is only a signature), its import statements alone."""
    if not text.strip():
        return None
    try:
        return compile(text, "<prelude>", "exec")
    except SyntaxError:
        pass
    imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    try:
        return compile("\n".join(imports), "<prelude>", "exec")
    except SyntaxError:
        return None


def _names(code: CodeType) -> set[str]:
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out |= _names(const)
    return out


def guarded(name: str, theirs: Any, ours: FunctionType) -> Callable[..., Any]:
    """The program's ``name``, whose every answer must match the prelude's:
    the test may build what it compares with a helper of the prompt's, and a
    program that redefines that helper must not decide both sides."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            expected: Any = ours(*args, **kwargs)
        except Exception as exc:
            expected = exc
        got = theirs(*args, **kwargs)
        if isinstance(expected, Exception) or not _agree(expected, got):
            raise handles.Refused(
                f"strict scoring: the program's {name} answers differently from the "
                "problem's own on the test's input"
            )
        return got

    call.__name__ = name
    return call


def _agree(a: Any, b: Any) -> bool:
    """Equal, or the same structure of the prompt's classes (two linked
    lists the prompt's helper and the program's built, whose nodes keep
    the default ``==``)."""
    try:
        return (type(a) is type(b) and bool(a == b)) or a is b or twins.same(a, b)
    except Exception:
        return False
