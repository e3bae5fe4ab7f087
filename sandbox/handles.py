"""The verifier's side of a strict job's channel: handles on the child's objects.

A `Session` is one check's conversation with the candidate's child. Values
the child sends are rebuilt by `wire`; objects that are not data (instances
of the candidate's classes, generators, functions) arrive as `Handle`s, whose
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

Objects of the test's own (functions it passes, instances of its classes)
go the other way, as ids the child holds proxies for; the child may call
them and read their public attributes, and nothing else.
"""

from __future__ import annotations

import builtins
import operator
import types
from collections.abc import Callable
from typing import Any

try:
    from . import protocol, wire
except ImportError:  # loaded as a top-level module inside the verifier
    import protocol  # type: ignore[no-redef,import-not-found]
    import wire  # type: ignore[no-redef,import-not-found]

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

BASES = {
    t.__name__: t
    for t in (int, float, complex, str, bytes, tuple, list, dict, set, frozenset, bool, bytearray)
}
MAX_HANDLES = 100_000
MAX_NESTING = 200
"""Calls in flight between the two sides at once (a callback calling the
candidate calling back...)."""


class Refused(BaseException):
    """The test asked a question only the candidate's code could answer."""


class CandidateGone(BaseException):
    """The candidate's child stopped answering (died, exited, was killed)."""


class CandidateExit(BaseException):
    """The candidate raised SystemExit or another BaseException-only type."""


class CandidateError(Exception):
    """The candidate's code raised, or sent back something that is not a value."""


class CheckSetupError(Exception):
    """The test cannot be run this way (an engine or suite limitation)."""


class Session:
    """One check's exchange with the child over ``chan`` (a `verifier.Channel`)."""

    def __init__(self, chan: Any, test_module: str, twins: dict[str, type] | None = None) -> None:
        self.chan = chan
        self.test_module = test_module
        self.twins = twins or {}
        """The prelude's own classes by name: an instance of the candidate's
        class of that name is compared as the prelude's class would."""
        self.handles: dict[int, Any] = {}
        self.objects: list[Any] = []
        self.object_ids: dict[int, int] = {}
        self.standins: dict[int, type[BaseException]] = {}
        self.depth = 0

    # --- wire hooks ---------------------------------------------------------

    def foreign(self, v: object) -> object:
        """An object of the test's that the child gets a proxy for."""
        if type(v) is Handle and v._session is self:
            return ["h", v._hid]
        if isinstance(v, type) and v in self.standins.values():
            hid = next(k for k, c in self.standins.items() if c is v)
            return ["h", hid]
        if isinstance(v, types.ModuleType):
            raise CheckSetupError("the test passed a module to the candidate")
        vid = self.object_ids.get(id(v))
        if vid is None:
            vid = self.object_ids[id(v)] = len(self.objects)
            self.objects.append(v)
        return ["v", vid]

    def refer(self, t: list[Any]) -> object:
        tag = t[0]
        if tag == "v":
            if len(t) != 2 or type(t[1]) is not int or not 0 <= t[1] < len(self.objects):
                raise wire.NotData("unknown verifier object")
            return self.objects[t[1]]
        if tag == "h":
            return self._handle(t)
        return self._exception(t)

    def _handle(self, t: list[Any]) -> Any:
        if len(t) != 5 or type(t[1]) is not int or type(t[2]) is not int:
            raise wire.NotData("malformed handle")
        hid, flags, base, name = t[1], t[2], t[3], t[4]
        known = self.handles.get(hid)
        if known is not None:
            return known
        if len(self.handles) >= MAX_HANDLES:
            raise wire.NotData("too many objects")
        if type(base) is not str or type(name) is not str:
            raise wire.NotData("malformed handle")
        if flags & EXC_CLASS:
            made: Any = self._standin(hid, base, name)
        else:
            made = Handle(self, hid, flags, BASES.get(base), name[:200])
        self.handles[hid] = made
        return made

    def _standin(self, hid: int, base: str, name: str) -> type[BaseException]:
        """The verifier's class for an exception class of the candidate's."""
        parent = getattr(builtins, base, None)
        if not (isinstance(parent, type) and issubclass(parent, Exception)):
            parent = Exception
        label = name if name.isidentifier() else "CandidateException"
        cls = type(label[:100], (parent,), {"__module__": "candidate"})
        self.standins[hid] = cls
        return cls

    def _exception(self, t: list[Any]) -> BaseException:
        if len(t) != 5 or type(t[1]) is not str:
            raise wire.NotData("malformed exception")
        type_name, cls_tree, args_tree = t[1][:100], t[3], t[4]
        try:
            args = self._codec().decode(args_tree)
            args = args if type(args) is tuple else (str(args),)
        except wire.NotData:
            args = ()
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

    def decode(self, tree: object) -> Any:
        try:
            return self._codec().decode(tree)
        except wire.NotData as exc:
            raise CandidateError(f"the candidate sent {exc}") from None

    def _codec(self, memo: list[Any] | None = None) -> wire.Codec:
        return wire.Codec(self.foreign, self.refer, memo)

    # --- asking the child ---------------------------------------------------

    def ask(self, ref: int, op: str, args: object = None) -> Any:
        """Do ``op`` on the child's object ``ref`` and return the value."""
        codec = self._codec()
        try:
            payload = codec.encode(args)
        except wire.NotData as exc:
            raise CheckSetupError(f"the test passed a value that cannot be sent: {exc}") from None
        sent = len(codec.memo)
        reply = self._exchange(protocol.Op(ref=ref, op=op, args=payload))
        try:
            value = codec.decode(reply.value)
            if type(reply.writeback) is not list:
                raise wire.NotData("malformed write-back")
            for item in reply.writeback:
                if type(item) is not list or len(item) != 2 or type(item[0]) is not int:
                    raise wire.NotData("malformed write-back")
                if not 0 <= item[0] < sent:
                    raise wire.NotData("write-back to an unknown container")
                codec.refill(codec.memo[item[0]], item[1])
        except wire.NotData as exc:
            raise CandidateError(f"the candidate sent back {exc}") from None
        except TypeError as exc:  # an unhashable key or set item
            raise CandidateError(f"the candidate sent back a bad value: {exc}") from None
        if not reply.ok:
            if isinstance(value, BaseException):
                raise value
            raise CandidateError("the candidate's process sent a malformed exception")
        return value

    def _exchange(self, op: protocol.Op) -> protocol.Reply:
        if self.depth >= MAX_NESTING:
            raise CandidateError("calls between the test and the candidate nest too deeply")
        self.depth += 1
        try:
            self.chan.send(op)
            while True:
                msg = self.chan.receive()
                if type(msg) is protocol.Reply:
                    return msg
                if type(msg) is protocol.Op:
                    self.chan.send(self._serve(msg))
                    continue
                raise CandidateGone("the candidate's process answered out of turn")
        finally:
            self.depth -= 1

    # --- answering the child (callbacks into the test's objects) ------------

    def _serve(self, op: protocol.Op) -> protocol.Reply:
        codec = self._codec()
        try:
            if type(op.ref) is not int or not 0 <= op.ref < len(self.objects):
                raise AttributeError("no such object")
            target = self.objects[op.ref]
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            value = self._perform(target, op.op, args)
            tree = codec.encode(value)
            return protocol.Reply(ok=True, value=tree, writeback=codec.writeback(snaps))
        except Exception as exc:  # the test's own code raised: the child gets it
            return protocol.Reply(ok=False, value=self._exc_tree(exc, codec))

    def _perform(self, target: Any, op: str, args: Any) -> Any:
        if op == "call":
            if type(args) is not tuple or len(args) != 2 or type(args[0]) is not tuple:
                raise TypeError("malformed call")
            return target(*args[0], **(args[1] or {}))
        if op == "getattr":
            if type(args) is not str or args.startswith("_") or not self._owned(target):
                raise AttributeError(f"the test's object has no readable attribute {args!r}")
            return getattr(target, args)
        if op in _UNARY:
            return _UNARY[op](target)
        if op == "getitem":
            return target[args]
        raise TypeError(f"operation {op!r} is not available on the test's objects")

    def _owned(self, target: Any) -> bool:
        """Is ``target`` the test's own (an instance of or a class it defined)?"""
        cls = target if isinstance(target, type) else type(target)
        return getattr(cls, "__module__", None) == self.test_module

    def _exc_tree(self, exc: BaseException, codec: wire.Codec) -> object:
        try:
            args = codec.encode(exc.args)
        except Exception:
            args = ["t", [str(exc)[:2000]]]
        cls = type(exc)
        name = cls.__name__ if getattr(builtins, cls.__name__, None) is cls else ""
        if not name:  # not a builtin: the child gets its nearest builtin base
            base = next(c for c in cls.__mro__ if getattr(builtins, c.__name__, None) is c)
            name = base.__name__
        return ["e", name, "", None, args]


_UNARY: dict[str, Callable[[Any], Any]] = {
    "iter": iter,
    "next": next,
    "len": len,
    "str": str,
    "repr": repr,
}


def _describe(type_name: str, args: tuple[Any, ...]) -> str:
    text = ", ".join(str(a) for a in args[:3]) if args else ""
    return f"{type_name}: {text}"[:2000] if text else type_name


_no_value = object()


class Handle:
    """A candidate's object, as the test sees it (see the module docstring)."""

    __slots__ = ("__weakref__", "_base", "_flags", "_hid", "_name", "_session")

    def __init__(self, session: Session, hid: int, flags: int, base: type | None, name: str):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_hid", hid)
        object.__setattr__(self, "_flags", flags)
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_name", name)

    def _ask(self, op: str, args: object = None) -> Any:
        return self._session.ask(self._hid, op, args)

    def _plain(self) -> Any:
        """The builtin value of a builtin subclass; for an instance of a
        class the prelude defines too, an instance of the prelude's class
        with the same attributes; else `_no_value`."""
        if self._base is not None:
            value = self._ask("plain")
            return value if type(value) is self._base else _no_value
        twin = self._session.twins.get(self._name)
        if twin is None or self._flags & IS_CLASS:
            return _no_value
        state = self._ask("state")
        if type(state) is not dict or not all(type(k) is str for k in state):
            return _no_value
        made = object.__new__(twin)
        for key, value in state.items():
            object.__setattr__(made, key, value)
        return made

    def _value(self, question: str) -> Any:
        value = self._plain()
        if value is _no_value:
            raise Refused(
                f"strict scoring: the test asked for {question} of a {self._name} object, "
                "which only the candidate's own code could answer"
            )
        return value

    # attribute access, calls, iteration: forwarded

    def __getattr__(self, name: str) -> Any:
        return self._ask("getattr", name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._ask("setattr", [name, value])

    def __delattr__(self, name: str) -> None:
        self._ask("delattr", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask("call", (args, kwargs or None))

    def __iter__(self) -> Any:
        if self._flags & ITERATOR:
            return self
        return self._ask("iter")

    def __next__(self) -> Any:
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

    def __contains__(self, item: object) -> bool:
        if self._base is None and self._flags & ITERABLE:
            return any(x is item or x == item for x in self)
        return item in self._value("'in'")

    def __instancecheck__(self, obj: Any) -> bool:
        answer = self._ask("isinstance", obj)
        return answer is True

    # questions the verifier answers

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        mine = self._plain()
        if mine is _no_value:
            if self._flags & DEFAULT_EQ:
                return False
            self._value("==")
        theirs = other._plain() if type(other) is Handle else other
        if theirs is _no_value:
            return bool(other == mine)
        return bool(mine == theirs)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        if self._flags & DEFAULT_HASH:
            return object.__hash__(self)
        return hash(self._value("hash()"))

    def __bool__(self) -> bool:
        if self._flags & ALWAYS_TRUE:
            return True
        return bool(self._value("the truth value"))


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("the candidate's __str__/__repr__ did not return a str")
    return value


def _forward(name: str) -> Callable[..., Any]:
    """An operator applied to the handle's builtin value (never its own)."""
    op = getattr(operator, name)

    def forward(self: Handle, *others: Any) -> Any:
        values = [o._value(name) if type(o) is Handle else o for o in others]
        return op(self._value(name), *values)

    return forward


def _reflected(name: str) -> Callable[..., Any]:
    op = getattr(operator, name)

    def reflected(self: Handle, other: Any) -> Any:
        return op(other, self._value(name))

    return reflected


for _name in ("lt", "le", "gt", "ge", "add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    setattr(Handle, f"__{_name}__", _forward(_name))
for _name in ("neg", "pos", "abs", "index"):
    setattr(Handle, f"__{_name}__", _forward(_name))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    setattr(Handle, f"__r{_name}__", _reflected(_name))
Handle.__int__ = lambda self: int(self._value("int()"))  # type: ignore[attr-defined]
Handle.__float__ = lambda self: float(self._value("float()"))  # type: ignore[attr-defined]
