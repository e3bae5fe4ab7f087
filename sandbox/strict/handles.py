"""Handles: the candidate's objects as the test in the verifier sees them.

Values the child sends are rebuilt by `wire`; objects that are not data
(instances of the candidate's classes, generators, functions) arrive as
`Handle`s (made by a `session.Session`), whose
attribute reads, calls, iteration, ``next``, ``len``, indexing, ``str`` and
``repr`` go to the child and come back as values under the same rules.

What a handle never does is let the candidate's code answer a question the
test then judges: ``==``, ``!=``, ``bool``, ``hash`` and ordering are decided
here. An object whose class keeps Python's defaults for them is answered as
Python would (identity, always true); a subclass of a builtin type is first
read as its builtin value (with the builtin type's own methods, in the
child); anything else raises `Refused`, which fails the check with a reason
that says why. Exceptions of the candidate's own classes are rebuilt as
stand-in classes derived from their nearest builtin base, so the test's
``except`` clauses and ``isinstance`` checks still match them.
"""

from __future__ import annotations

import dis
import enum
import sys
import types
from collections.abc import Callable
from typing import Any, NoReturn, Protocol, TypeGuard

__all__ = [
    "CandidateError",
    "CandidateExit",
    "CandidateGone",
    "CheckSetupError",
    "Handle",
    "Refused",
]

from . import handleasync, handlefaces, handlemath, skeleton, twins
from .outcomes import CandidateError, CandidateExit, CandidateGone, CheckSetupError, Refused, told

# Flags the child reports on a handle (about its own object; they only
# choose which of Python's defaults the verifier may apply on its own).
CALLABLE = 1
ITERATOR = 2
ITERABLE = 4
DEFAULT_EQ = 8
DEFAULT_HASH = 16
ALWAYS_TRUE = 32
EXC_CLASS = 64
IS_CLASS = 128
ORDERS = 256
CONTAINS = 512
COROUTINE = 1024
GENERATOR = 2048
ASYNC_ITERABLE = 4096

BASES = {
    t.__name__: t
    for t in (int, float, complex, str, bytes, tuple, list, dict, set, frozenset, bool, bytearray)
}


_no_value = twins.NO_VALUE


class Asker(Protocol):
    """What a handle needs of its session (see `session.Session`)."""

    twins: dict[str, type]
    guards: dict[int, tuple[str, Callable[..., Any]]]
    """Handles on the program's class of a name the prelude's class has
    (the names the test binds): each instance the test builds with one is
    built by the prelude's class too, and the two must agree."""
    epoch: int
    """Moves whenever the candidate's code may have run (every request but
    the reads of a value): a value read since is still the value."""

    unfielded: set[tuple[str, str]]
    """(class name, attribute) to read with ``getattr``, not from the fields."""
    stdbases: dict[int, tuple[type, ...]]
    """The verifier's standard classes a handle's class derives from (`stdfaces`)."""

    def ask(self, ref: int, op: str, args: object = None) -> Any: ...

    def field(self, hid: int, name: str) -> Any:
        """A data attribute of the child's object, or `twins.NO_VALUE`."""

    def state(self, hid: int) -> Any:
        """All the attributes of the child's object (`fieldsof.states_of`)."""


class Handle(metaclass=handlefaces.Meta):
    # A candidate's object, as the test sees it (see the module docstring).
    # No docstring: ``__doc__`` is the program's object's (a decorator's
    # wrapper that copies its function's), read from the child.

    __slots__ = ("__weakref__", "_base", "_conv", "_flags", "_hid", "_name", "_read", "_session")

    @property
    def __doc__(self) -> Any:  # type: ignore[override]
        return self._ask("getattr", "__doc__")

    def __init__(self, session: Asker, hid: int, flags: int, base: type | None, name: str):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_hid", hid)
        object.__setattr__(self, "_flags", flags)
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_read", (-1, _no_value))
        object.__setattr__(self, "_conv", (-1, {}))

    def _ask(self, op: str, args: object = None) -> Any:
        return self._session.ask(self._hid, op, args)

    def _plain(self) -> Any:
        """The builtin value of a builtin subclass; for an instance of a
        class the prelude defines too, an instance of the prelude's class
        with the same attributes; else `_no_value`. Read once until the
        candidate's code may have run again: in one program an object does
        not change between two reads with nothing run in between, and a
        child that answered each read differently (a root that is a root
        whenever it is checked) must not be believed."""
        epoch, value = self._read
        if epoch == self._session.epoch:
            return value
        value = self._read_plain()
        object.__setattr__(self, "_read", (self._session.epoch, value))
        return value

    def _read_plain(self) -> Any:
        if self._base is not None:
            value = self._reading("plain")
            return value if type(value) is self._base else _no_value
        twin = self._session.twins.get(self._name)
        if twin is None or self._flags & IS_CLASS:
            return _no_value
        return self._as_twin(twin, self._reading("states"))

    def _seed(self, state: Any) -> None:
        """Take ``state`` as this object's attributes now (read by the
        request that made it: `__call__`), as `_plain` would read them."""
        twin = self._session.twins.get(self._name)
        if self._base is None and twin is not None and not self._flags & IS_CLASS:
            object.__setattr__(self, "_read", (self._session.epoch, self._as_twin(twin, state)))

    def _as_twin(self, twin: type, state: Any) -> Any:
        """An instance of the prompt's class with the attributes ``state``
        (the program's object's), else `_no_value`."""
        if type(state) is not dict or not all(type(k) is str for k in state):
            return _no_value
        if isinstance(twin, enum.EnumMeta):
            return twins.member(twin, state, self._base)
        if skeleton.builds_nothing(twin):
            return _no_value  # the prompt's class only declares its constructor
        if any(twins.shadows(twin, key) for key in state):
            return _no_value  # the prelude's __eq__ would call the candidate's own code
        try:
            made: Any = object.__new__(twin)
            for key, value in state.items():
                object.__setattr__(made, key, value)
        except (TypeError, AttributeError):  # a class object.__new__ cannot make
            return _no_value
        return made

    def _reading(self, op: str) -> Any:
        """A read of the value (``plain`` or ``states``). It runs none of the
        candidate's code, so an exception in its place is the child's
        choice, not the program's: answering ``==`` with a `StopIteration`
        would end the ``map`` or ``filter`` the test compares in."""
        try:
            if op == "states":  # with the objects it reaches (`Session.state`)
                return self._session.state(self._hid)
            return self._ask(op)
        except Exception as exc:
            raise Refused(
                f"strict scoring: the candidate's process raised {type(exc).__name__} "
                f"instead of giving the value of a {self._name} object"
            ) from None

    def _value(self, question: str) -> Any:
        value = self._plain()
        if value is _no_value or not self._twin_answers(value, question):
            self._refuse(question)
        return value

    def _refuse(self, question: str) -> NoReturn:
        raise Refused(
            f"strict scoring: the test asked for {question} of a {self._name} object, "
            "which only the candidate's own code could answer"
        )

    def _twin_answers(self, value: Any, question: str) -> bool:
        """Does the prompt's class answer ``question`` for this object (not
        a method it only declares, or lacks where the program's class has
        one: see `skeleton`)? A builtin value or an enum member always does;
        an ordering the program's class lacks too is the prompt's error."""
        if self._base is not None or isinstance(type(value), enum.EnumMeta):
            return True
        if question in ("lt", "le", "gt", "ge") and not self._flags & ORDERS:
            return True
        return skeleton.answers(type(value), question)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """The builtin base of a builtin subclass, so ``isinstance(h, tuple)``
        holds for a namedtuple as in one program (``type(h)`` stays Handle);
        for a coroutine, a class ``asyncio`` takes for one; for a generator, its
        type (``isinstance(h, types.GeneratorType)`` as in one program); else
        the face of the program's protocols (`handlefaces`)."""
        if self._flags & COROUTINE:
            return handleasync.Coroutine
        if self._flags & GENERATOR:
            return types.GeneratorType
        std = self._session.stdbases.get(self._hid, ())
        return self._base or handlefaces.face(self._flags, __name__, std)

    # attribute access, calls, iteration: forwarded

    def __getattr__(self, name: str) -> Any:
        if self._flags & COROUTINE and name in handleasync.METHODS:
            return handleasync.method(self, name)
        guard = self._session.guards.get(self._hid)
        fielded = (self._name, name) not in self._session.unfielded
        if guard is None and fielded and not self._flags & IS_CLASS and not name.startswith("_"):
            value = self._session.field(self._hid, name)
            if value is not _no_value:
                return value
            # A method, most likely: its class's other objects are asked
            # for it directly, not for their fields first.
            self._session.unfielded.add((self._name, name))
        value = self._ask("getattr", name)
        if guard is not None and isinstance(guard[1], type):
            twins.guard_attribute(self._session, guard, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        binds = [True] if isinstance(value, types.FunctionType) else []  # on a class: a method
        self._ask("setattr", [name, value, *binds])

    def __delattr__(self, name: str) -> None:
        self._ask("delattr", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        guard = self._session.guards.get(self._hid)
        if guard is None:
            return self._ask("call", (args, kwargs or None))
        # A guarded class: its object's attributes come with it, for the
        # comparison with the prompt's (one round trip, not two).
        got = self._ask("build", (args, kwargs or None))
        if type(got) is not list or len(got) != 2:
            raise CandidateError(told("the candidate's process sent a malformed object"))
        got, state = got
        if type(got) is Handle:
            got._seed(state)
        twins.built_alike(guard, got, args, kwargs)
        return got

    def __iter__(self) -> Any:
        if self._flags & ITERATOR:
            return self
        return self._ask("iter")

    def __next__(self) -> Any:
        if self._flags & COROUTINE:  # a coroutine's step, as the event loop takes it
            return handleasync.method(self, "send")()
        return self._ask("next")

    def __len__(self) -> int:
        n = self._ask("len")
        if type(n) is not int or n < 0:
            raise TypeError("the candidate's __len__ did not return a non-negative int")
        return n

    def __getitem__(self, key: Any) -> Any:
        return self._ask("getitem", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._ask("setitem", [key, value])

    def __delitem__(self, key: Any) -> None:
        self._ask("delitem", key)

    def __str__(self) -> str:
        return _text(self._ask("str"))

    def __repr__(self) -> str:
        return _text(self._ask("repr"))

    def __format__(self, spec: str) -> str:
        return _text(self._ask("format", spec))

    def __enter__(self) -> Any:  # ``with`` looks these two up on the type
        return self.__getattr__("__enter__")()

    def __exit__(self, *exc: Any) -> bool:
        said = self.__getattr__("__exit__")(exc[0], exc[1], None)
        if exc[1] is None or not (is_handle(said) or said):
            return False
        if _raised_here(exc[1], sys._getframe(1)):
            return True
        raise Refused(
            "strict scoring: the candidate's __exit__ swallowed a failure inside the test's "
            "with block, which only the test's own code may decide"
        )

    def __contains__(self, item: object) -> bool:
        """An iterable object: searched by iterating, with the test's ``==``;
        where its class has its own ``__contains__``, that must say the
        same (a set that ignores case, say, is not answered by iterating).
        Else the builtin value's, or the prompt's class's, answer."""
        twin = self._session.twins.get(self._name)
        by_twin = twin is not None and self._flags & CONTAINS and skeleton.answers(twin, "'in'")
        if self._base is None and self._flags & ITERABLE and not by_twin:
            found = any(x is item or x == item for x in self)
            if self._flags & CONTAINS and self.__getattr__("__contains__")(item) is not found:
                self._refuse("'in'")
            return found
        container = self._value("'in'")
        if self._base is not None and self._enum_twin():
            container = self._flag_member(container)
        if is_handle(item) and item._plain() is not _no_value:
            plain = item._plain()  # a member of the program's enum: the prompt's
            item = item._flag_member(plain) if item._base and item._enum_twin() else plain
        return item in container

    def _flag_member(self, value: Any) -> Any:
        """The prompt's member for a builtin value of its ``IntFlag`` or
        ``IntEnum`` (``Mode.W in mode`` asks the prompt's flag, not an int)."""
        try:
            return self._session.twins[self._name](value)
        except (ValueError, TypeError):
            self._refuse("'in'")

    def _enum_twin(self) -> bool:
        """Is this a member of an enum the prompt defines too (compared as
        the prompt's member of that name, which a value the prompt's enum
        made, ``Perm.R | Perm.W``, may be)?"""
        return isinstance(self._session.twins.get(self._name), enum.EnumMeta)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        raise Refused(
            f"strict scoring: the test derives a class from the candidate's {self._name}, "
            "whose code runs only in the candidate's process"
        )

    def __copy__(self) -> Any:
        """``copy.copy`` of the candidate's object, made in its process by
        its class's own code (a copy there, a handle here)."""
        return self._ask("copy")

    def __deepcopy__(self, memo: Any) -> Any:
        return self._ask("deepcopy")

    def __reduce_ex__(self, protocol: Any) -> Any:
        """``pickle`` of the candidate's object: a refusal, not the
        ``TypeError`` of an object that cannot be pickled, which a test
        expecting one would take for the answer."""
        raise Refused(
            f"strict scoring: the test pickled the candidate's {self._name} object, "
            "which lives in the candidate's process"
        )

    def __reduce__(self) -> Any:
        return self.__reduce_ex__(2)

    def __instancecheck__(self, obj: Any) -> bool:
        answer = self._ask("isinstance", obj)
        return answer is True

    # questions the verifier answers

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if self._flags & DEFAULT_EQ and self._base is None and not self._enum_twin():
            return False  # identity, as the class's own (default) == says
        mine = self._plain()
        if mine is _no_value:
            if self._flags & DEFAULT_EQ:
                return False
            self._value("==")
        elif not self._twin_answers(mine, "=="):
            self._value("==")  # refused: the prompt's class only declares it
        theirs = other._plain() if is_handle(other) else other
        if theirs is _no_value:
            return bool(other == mine)
        return bool(mine == theirs)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        # The child's flags say what its class keeps of Python's defaults;
        # a builtin subclass is hashed and tested as its builtin value.
        if self._flags & DEFAULT_HASH and self._base is None:
            return object.__hash__(self)
        return hash(self._value("hash()"))

    def __bool__(self) -> bool:
        if self._flags & ALWAYS_TRUE and self._base is None:
            return True
        return bool(self._value("the truth value"))


def _raised_here(exc: BaseException, frame: types.FrameType) -> bool:
    """May the candidate's ``__exit__`` swallow ``exc``? Only when the
    test's ``with`` block raised it itself with a ``raise`` statement (a
    test of a context manager that suppresses errors): never a failed
    ``assert``, an error in an expression of the candidate's values, one
    from the candidate's code or a helper, which would let it hide a
    failure of the check."""
    tb = exc.__traceback__
    if isinstance(exc, AssertionError) or tb is None or tb.tb_next is not None:
        return False
    code = tb.tb_frame.f_code.co_code
    return tb.tb_frame is frame and code[tb.tb_lasti] == _RAISE


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("the candidate's __str__/__repr__ did not return a str")
    return value


_RAISE = dis.opmap["RAISE_VARARGS"]
handlemath.install(Handle)
handlefaces.install(Handle, {"__next__": COROUTINE, "__getitem__": IS_CLASS})


class CoroutineHandle(Handle):
    """A handle on the candidate's coroutine: only these are awaitable, so
    ``inspect.isawaitable`` (and ``mock.patch``'s choice of an ``AsyncMock``)
    sees the program's functions and objects as what they are."""

    __slots__ = ()


handleasync.install(CoroutineHandle, COROUTINE)
KINDS = {Handle, CoroutineHandle}
"""The types of the verifier's handles (`handleaiter` adds its own)."""


def is_handle(x: object) -> TypeGuard[Handle]:
    """Is ``x`` one of the verifier's handles? (By its real type: a
    handle's ``__class__`` answers for the program's object.)"""
    return type(x) in KINDS


twins.HANDLE.append(Handle)
