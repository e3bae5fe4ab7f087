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
import sys
import weakref
from typing import Any

from ..values import wire
from . import fileowners, stdfaces
from .outcomes import CandidateError, CandidateExit, told


class Standins:
    """The session's part that rebuilds exceptions (a mixin of
    `session.Session`, which keeps the handles and the codec)."""

    handles: dict[int, Any]
    standins: dict[int, type[BaseException]]
    objects: list[Any]
    exc_made: dict[int, BaseException]
    """The exceptions of the tree being rebuilt, by the child's numbers."""
    exc_depth: int

    def _handle(self, t: list[Any], depth: int = 0) -> Any:
        raise NotImplementedError

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        raise NotImplementedError

    def decode(self, tree: object) -> Any:
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
        """The exception a tree of the child's describes (`described.exception_tree`);
        the exceptions of one tree are numbered, so one met twice is one object."""
        if self.exc_depth == 0:
            self.exc_made = {}
        self.exc_depth += 1
        try:
            return self._exception_in(t, depth)
        finally:
            self.exc_depth -= 1

    def _exception_in(self, t: list[Any], depth: int) -> BaseException:
        if len(t) == 3 and t[1] == "@":
            made = self.exc_made.get(t[2]) if type(t[2]) is int else None
            if made is None:
                raise wire.NotData("reference to an unknown exception")
            return made
        if len(t) == 6 and t[1] == "@v":
            return self._test_exception(t, depth)
        if len(t) not in (5, 7, 8, 9) or type(t[1]) is not str:
            raise wire.NotData("malformed exception")
        exc = self._exception_made(t)
        if len(t) == 9 and type(t[8]) is int:
            self.exc_made[t[8]] = exc
        if len(t) >= 7 and not isinstance(exc, CandidateError | CandidateExit):
            attrs = self._exception_extra(exc, t[5], t[6])
            fileowners.note_candidate_denied(exc, attrs.get("__paths__"))
        self._cause(exc, t[7] if len(t) >= 8 else None, depth)
        return exc

    def _test_exception(self, t: list[Any], depth: int) -> BaseException:
        """The test's own exception, passed back, with the attributes,
        notes and cause the candidate's code gave it (as in one program,
        where they are given to the test's object)."""
        vid = t[2]
        if type(vid) is not int or not 0 <= vid < len(self.objects):
            raise wire.NotData("unknown verifier object")
        exc = self.objects[vid]
        if not isinstance(exc, BaseException):
            raise wire.NotData("not an exception of the test's")
        if type(t[5]) is int:
            self.exc_made[t[5]] = exc
        self._exception_extra(exc, t[3], None)
        self._cause(exc, t[4], depth)
        return exc

    def _cause(self, exc: BaseException, cause: Any, depth: int) -> None:
        """``raise ... from``: the cause's tree, rebuilt (or the test's own
        exception it names), as ``__cause__``."""
        if type(cause) is not list or cause[:1] not in (["e"], ["v"]) or depth >= MAX_EXC_DEPTH:
            return
        try:
            made = self._exception(cause, depth + 1) if cause[0] == "e" else self.decode(cause)
        except wire.NotData:  # a cause that names itself: no chain of objects
            return
        if isinstance(made, BaseException) and not isinstance(made, CandidateError | CandidateExit):
            exc.__cause__ = made

    def _exception_extra(self, exc: BaseException, attrs_tree: Any, text: Any) -> dict[Any, Any]:
        """Give the rebuilt exception the candidate's attributes (values
        under the usual rules) and, for a stand-in, the candidate's text;
        the attributes as sent (a dunder name among them is not set)."""
        attrs: Any = {}
        if attrs_tree is not None:
            try:
                attrs = self.codec().decode(attrs_tree)
            except wire.NotData:
                attrs = {}
            if type(attrs) is dict:
                for key, value in attrs.items():
                    if key == "__notes__" and not _notes(value):
                        continue
                    if type(key) is str and (not key.startswith("__") or key == "__notes__"):
                        try:
                            setattr(exc, key, value)
                        except (AttributeError, TypeError):
                            pass
        if type(text) is str and type(exc) in self.standins.values():
            _TEXTS[exc] = text[:10_000]
        return attrs if type(attrs) is dict else {}

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
        elif type(cls_tree) is list and cls_tree[:1] == ["s"]:
            cls = standard_class(cls_tree, type_name, t[2])
        else:
            cls = self._handle(cls_tree)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return CandidateError(_describe(type_name, args))
        if _skips(cls):
            return CandidateError(
                told(
                    f"strict scoring: the candidate raised {type_name}, which would skip the test's checks"
                )
            )
        if issubclass(cls, SystemExit):  # the test's ``except SystemExit`` sees it
            try:
                return _exit_class(cls)(*args)
            except Exception:
                return CandidateExit(_describe(type_name, args))
        if not issubclass(cls, Exception):
            return CandidateExit(_describe(type_name, args))
        try:
            made = cls(*args)
            if type(made) is cls:
                return made
            made = cls()  # ``OSError(2, ...)`` makes a FileNotFoundError: not what was raised
            made.args = args
            return made
        except Exception:
            pass
        try:  # a standard class whose constructor takes other arguments
            made = cls.__new__(cls, *args)  # (JSONDecodeError): its attributes follow
            made.args = args
            return made
        except Exception:
            return CandidateError(_describe(type_name, args))


def _skips(cls: type[BaseException]) -> bool:
    """Is ``cls`` an exception with which ``unittest`` skips or silently
    ends a test method (where the test imported it)? Raised by the
    candidate's code, it would pass a suite without computing anything."""
    case = sys.modules.get("unittest.case")
    skips = (getattr(case, "SkipTest", None), getattr(case, "_ShouldStop", None))
    return any(isinstance(k, type) and issubclass(cls, k) for k in skips)


def _exit_class(cls: type[BaseException]) -> type[BaseException]:
    """``cls`` (``SystemExit`` or a stand-in derived from it) as the
    candidate's exit: a ``SystemExit`` to the test's ``except`` clauses and
    ``assertRaises``, as in one program, and a `CandidateExit`, so one that
    no clause of the test's catches fails the check, whatever its code."""
    made = _EXITS.get(cls)
    if made is None:
        made = _EXITS[cls] = type(
            cls.__name__, (cls, CandidateExit), {"__module__": cls.__module__}
        )
    return made


_EXITS: dict[type[BaseException], type[BaseException]] = {}


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


def standard_class(tree: list[Any], name: str, base: Any) -> Any:
    """A standard library's exception class (``json.JSONDecodeError``,
    ``dataclasses.FrozenInstanceError``): the verifier's own, where the
    test or the prompt imported its module (no module is imported for the
    child), so ``except`` and ``isinstance`` on it match; else a stand-in
    of its name derived from its nearest builtin base."""
    if len(tree) != 3 or type(tree[1]) is not str or type(tree[2]) is not str:
        raise wire.NotData("malformed exception class")
    found = stdfaces.lookup(tree[1], tree[2])
    if found is not None:
        return found
    key = (tree[1], tree[2], base if type(base) is str else "")
    made = _STANDARD.get(key)
    if made is None:
        parent = getattr(builtins, key[2], None)
        if not (isinstance(parent, type) and issubclass(parent, BaseException)):
            parent = Exception
        label = name if name.isidentifier() else "StandardError"
        made = _STANDARD[key] = type(label, (parent,), {"__module__": tree[1][:200]})
    return made


_STANDARD: dict[tuple[str, str, str], type] = {}
"""Stand-ins for standard exception classes whose module the test did not import."""


def _notes(value: Any) -> bool:
    """``__notes__`` as Python keeps them: a list of strings."""
    return type(value) is list and all(type(n) is str for n in value)


def _describe(type_name: str, args: tuple[Any, ...]) -> str:
    text = ", ".join(str(a) for a in args[:3]) if args else ""
    return f"{type_name}: {text}"[:2000] if text else type_name
