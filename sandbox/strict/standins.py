"""The child's exceptions as the verifier's: the exception trees a
`session.Session` decodes (a raised exception, one passed to the test's
callback, its ``__cause__``), and stand-in classes for the program's
exception classes, derived from the stand-ins of their own bases (else
their nearest builtin base), so the test's ``except`` clauses and
``isinstance`` on any base match, with the text the program's ``__str__``
gave.
"""

from __future__ import annotations

import builtins
import weakref
from typing import Any

from ..values import wire
from .outcomes import CandidateError, CandidateExit, told


class Standins:
    """The session's part that rebuilds exceptions (a mixin of
    `session.Session`, which keeps the handles and the codec)."""

    handles: dict[int, Any]
    standins: dict[int, type[BaseException]]

    def _handle(self, t: list[Any], depth: int = 0) -> Any:
        raise NotImplementedError

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        raise NotImplementedError

    def _standin(
        self, hid: int, base: str, name: str, bases: list[Any], depth: int
    ) -> type[BaseException]:
        """The verifier's class for an exception class of the candidate's:
        derived from the stand-ins of its own bases (so ``except`` on a base
        class of the program's matches), else from its nearest builtin base.
        Its ``__str__`` gives the text the candidate's class gave, if any."""
        parent = getattr(builtins, base, None)
        if not (isinstance(parent, type) and issubclass(parent, BaseException)):
            parent = Exception
        # A program's subclass of a BaseException-only builtin (SystemExit,
        # KeyboardInterrupt, GeneratorExit) stays one: raised, it is the
        # candidate's exit, never caught by the test's ``except Exception``.
        parents: list[type] = []
        for item in bases[:8] if depth < MAX_EXC_DEPTH else []:
            made = None
            if type(item) is str:
                made = getattr(builtins, item, None)
            elif type(item) is list and len(item) >= 2 and item[0] == "h":
                made = self._handle(item, depth + 1)
            if isinstance(made, type) and issubclass(made, BaseException) and made not in parents:
                parents.append(made)
        label = name if name.isidentifier() else "CandidateException"
        body = {"__module__": "candidate", "__str__": _standin_str}
        try:
            cls = type(label[:100], tuple(parents) or (parent,), body)
        except TypeError:  # bases no class can have at once
            cls = type(label[:100], (parent,), body)
        self.standins[hid] = cls
        return cls

    def _exception(self, t: list[Any], depth: int = 0) -> BaseException:
        if len(t) not in (5, 7, 8) or type(t[1]) is not str:
            raise wire.NotData("malformed exception")
        exc = self._exception_made(t)
        if len(t) >= 7 and not isinstance(exc, CandidateError | CandidateExit):
            self._exception_extra(exc, t[5], t[6])
        cause = t[7] if len(t) == 8 else None
        if type(cause) is list and cause[:1] == ["e"] and depth < MAX_EXC_DEPTH:
            made = self._exception(cause, depth + 1)  # ``raise ... from``
            if not isinstance(made, CandidateError | CandidateExit):
                exc.__cause__ = made
        return exc

    def _exception_extra(self, exc: BaseException, attrs_tree: Any, text: Any) -> None:
        """Give the rebuilt exception the candidate's attributes (values
        under the usual rules) and, for a stand-in, the candidate's text."""
        if attrs_tree is not None:
            try:
                attrs = self.codec().decode(attrs_tree)
            except wire.NotData:
                attrs = {}
            if type(attrs) is dict:
                for key, value in attrs.items():
                    if type(key) is str and not key.startswith("__"):
                        try:
                            setattr(exc, key, value)
                        except (AttributeError, TypeError):
                            pass
        if type(text) is str and type(exc) in self.standins.values():
            _TEXTS[exc] = text[:10_000]

    def _exception_made(self, t: list[Any]) -> BaseException:
        type_name, cls_tree, args_tree = t[1][:100], t[3], t[4]
        try:
            args = self.codec().decode(args_tree)
            args = args if type(args) is tuple else (str(args),)
        except wire.NotData:
            args = ()
        if cls_tree is None and type_name == wire.UNSENT:
            what = str(args[0])[:200] if args else "refused"
            return CandidateError(told(f"the candidate sent back {what}"))
        if cls_tree is None:
            cls = getattr(builtins, type_name, None)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                return CandidateError(_describe(type_name, args))
        else:
            cls = self._handle(cls_tree)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                return CandidateError(_describe(type_name, args))
        if not issubclass(cls, Exception):
            return CandidateExit(_describe(type_name, args))
        try:
            return cls(*args)
        except Exception:
            return CandidateError(_describe(type_name, args))


MAX_EXC_DEPTH = 20
"""Levels of exception classes of the program's rebuilt as stand-ins."""
_TEXTS: weakref.WeakKeyDictionary[BaseException, str] = weakref.WeakKeyDictionary()
"""``str()`` of rebuilt exceptions whose candidate class overrides ``__str__``."""


def _standin_str(self: BaseException) -> str:
    text = _TEXTS.get(self)
    if text is not None:
        return text
    base = next(c for c in type(self).__mro__ if getattr(builtins, c.__name__, None) is c)
    return str(base.__str__(self))


def _describe(type_name: str, args: tuple[Any, ...]) -> str:
    text = ", ".join(str(a) for a in args[:3]) if args else ""
    return f"{type_name}: {text}"[:2000] if text else type_name
