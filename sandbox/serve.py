"""The candidate's side of a strict job: run the program, then answer.

Runs in the forked child, after isolation, with the candidate's program
loaded in fresh globals (empty, as the official harnesses exec programs).
It tells the verifier which functions and classes the program defines, then
serves the verifier's requests (`protocol.Op`) on the job's channel until
the verifier hangs up: calls, attribute reads, iteration and the other
operations a `handles.Handle` forwards. Objects the test passed arrive as
`Proxy` objects whose use is a request back to the verifier.

Nothing this child sends can be a pass: it is all values, judged by the
test in the verifier. Names the harness needs are bound at import, before
any candidate code runs, so rebinding builtins cannot change this loop (a
candidate that corrupts its own process only garbles its own answers).
"""

from __future__ import annotations

import builtins
import os
import socket
import struct
import sys
import types
from typing import Any, NoReturn

import msgspec

try:
    from . import frames, protocol, wire
except ImportError:  # loaded as a top-level module inside the template
    import frames  # type: ignore[no-redef,import-not-found]
    import protocol  # type: ignore[no-redef,import-not-found]
    import wire  # type: ignore[no-redef,import-not-found]

CALLABLE, ITERATOR, ITERABLE, DEFAULT_EQ, DEFAULT_HASH, ALWAYS_TRUE, EXC_CLASS, IS_CLASS = (
    1,
    2,
    4,
    8,
    16,
    32,
    64,
    128,
)
"""The handle flags of `handles` (kept in step by a test)."""
LEN = struct.Struct("<I")
_BUILTIN_BASES = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    tuple,
    list,
    dict,
    set,
    frozenset,
)
_type = type
_id = id
_len = len
_str = str
_repr = repr
_format = format
_iter = iter
_next = next
_getattr = getattr
_setattr = setattr
_delattr = delattr
_hasattr = hasattr
_isinstance = isinstance
_issubclass = issubclass
_callable = callable
_exec = exec
_compile = compile
_write = os.write
_recv_soon = frames.recv_soon
_socket = socket.socket
_exit = os._exit
_object_eq = object.__eq__
_object_hash = object.__hash__
_FunctionType = types.FunctionType
_BaseException = BaseException
_Exception = Exception
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(protocol.ChannelMessage)  # type: ignore[var-annotated]


def run(program: str, channel: int) -> NoReturn:
    """Load the program, report its names, serve until hung up; never returns."""
    peer = _Peer(channel)
    scope: dict[str, object] = {}
    try:
        code = _compile(program, "<candidate>", "exec")
    except _BaseException as exc:
        peer.send(protocol.LoadFailed(status="error", reason=_reason(exc)))
        _done()
    try:
        _exec(code, scope)
    except _BaseException as exc:
        flush()
        peer.send(protocol.LoadFailed(status="failed", reason=_reason(exc)))
        _done()
    peer.scope = scope
    try:
        names = [[k, peer.codec().encode(v)] for k, v in _defined(scope)]
    except _BaseException:
        names = []
    peer.send(protocol.Loaded(names=names))
    while True:
        msg = peer.receive()
        if msg is None:
            _done()
        if _type(msg) is protocol.Op:
            peer.send(peer.serve(msg))


def _defined(scope: dict[str, object]) -> list[tuple[str, object]]:
    """The functions and classes the program itself made (not ones it imported)."""
    out = []
    value: Any
    for name, value in list(scope.items()):
        if name.startswith("__"):
            continue
        inner = value
        for _ in range(8):  # through functools.wraps / lru_cache layers
            wrapped = _getattr(inner, "__wrapped__", None)
            if wrapped is None:
                break
            inner = wrapped
        if _type(inner) is _FunctionType:
            if _getattr(inner.__code__, "co_filename", "") == "<candidate>":
                out.append((name, value))
        elif _isinstance(value, type) and _getattr(value, "__module__", "") == "builtins":
            if _getattr(builtins, value.__name__, None) is not value:
                out.append((name, value))
    return out


class Proxy:
    """An object of the test's, used from the candidate's code: every use is
    a request back to the verifier, which runs the test's own code."""

    __slots__ = ("_peer", "_vid")

    def __init__(self, peer: _Peer, vid: int) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_vid", vid)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.ask(self._vid, "call", (args, kwargs or None))

    def __getattr__(self, name: str) -> Any:
        return self._peer.ask(self._vid, "getattr", name)

    def __iter__(self) -> Any:
        return self._peer.ask(self._vid, "iter")

    def __next__(self) -> Any:
        return self._peer.ask(self._vid, "next")

    def __len__(self) -> int:
        return self._peer.ask(self._vid, "len")  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return self._peer.ask(self._vid, "getitem", key)

    def __repr__(self) -> str:
        return self._peer.ask(self._vid, "repr")  # type: ignore[no-any-return]

    __str__ = __repr__


class _Peer:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.sock = _socket(fileno=fd)
        self.buf = b""
        self.scope: dict[str, object] = {}
        self.objects: list[object] = []
        self.object_ids: dict[int, int] = {}
        self.proxies: dict[int, Proxy] = {}

    # --- frames ---------------------------------------------------------

    def send(self, msg: object) -> None:
        body = _encoder.encode(msg)
        data = memoryview(LEN.pack(_len(body)) + body)
        try:
            while data:
                data = data[_write(self.fd, data) :]
        except OSError:
            _done()  # the verifier hung up

    def receive(self) -> Any:
        if not self._fill(LEN.size):
            return None
        (size,) = LEN.unpack_from(self.buf)
        if size > protocol.MAX_FRAME or not self._fill(LEN.size + size):
            return None
        frame = self.buf[LEN.size : LEN.size + size]
        self.buf = self.buf[LEN.size + size :]
        return _decoder.decode(frame)

    def _fill(self, n: int) -> bool:
        while _len(self.buf) < n:
            try:
                chunk = _recv_soon(self.sock, 1 << 16)
            except OSError:
                return False
            if not chunk:
                return False
            self.buf += chunk
        return True

    # --- values -----------------------------------------------------------

    def codec(self, memo: list[Any] | None = None) -> wire.Codec:
        return wire.Codec(self.foreign, self.refer, memo)

    def foreign(self, v: object) -> object:
        """A handle on one of this process's objects."""
        if _type(v) is Proxy:
            return ["v", v._vid]
        hid = self.object_ids.get(_id(v))
        if hid is None:
            hid = self.object_ids[_id(v)] = _len(self.objects)
            self.objects.append(v)
        return ["h", hid, _flags(v), _base(v), _name(v)]

    def refer(self, t: list[Any]) -> object:
        if t[0] == "h":
            return self.objects[t[1]]
        if t[0] == "v":
            proxy = self.proxies.get(t[1])
            if proxy is None:
                proxy = self.proxies[t[1]] = Proxy(self, t[1])
            return proxy
        return _rebuild_exception(t, self)

    # --- requests both ways -----------------------------------------------

    def ask(self, ref: int, op: str, args: object = None) -> Any:
        """Use one of the test's objects (a request to the verifier)."""
        codec = self.codec()
        payload = codec.encode(args)
        sent = _len(codec.memo)
        self.send(protocol.Op(ref=ref, op=op, args=payload))
        while True:
            msg = self.receive()
            if msg is None:
                _done()
            if _type(msg) is protocol.Op:
                self.send(self.serve(msg))
                continue
            value = codec.decode(msg.value)
            for n, tree in msg.writeback:
                if n < sent:
                    codec.refill(codec.memo[n], tree)
            if not msg.ok:
                raise value
            return value

    def serve(self, op: protocol.Op) -> protocol.Reply:
        codec = self.codec()
        try:
            args = codec.decode(op.args)
            snaps = wire.snapshot(codec.memo)
            value = self.perform(op, args)
            tree = codec.encode(value)
            return protocol.Reply(ok=True, value=tree, writeback=codec.writeback(snaps))
        except _BaseException as exc:
            try:
                return protocol.Reply(ok=False, value=_exception_tree(exc, self.codec()))
            except _BaseException:
                return protocol.Reply(ok=False, value=["e", "Exception", "", None, ["t", []]])

    def perform(self, op: protocol.Op, args: Any) -> Any:
        name = op.op
        if op.ref == -1:  # a global of the program, looked up now
            fn = self.scope.get(args[0])
            if fn is None:
                raise NameError(f"name {args[0]!r} is not defined")
            return fn(*args[1], **(args[2] or {}))  # type: ignore[operator]
        target = self.objects[op.ref]
        if name == "call":
            return target(*args[0], **(args[1] or {}))  # type: ignore[operator]
        if name == "getattr":
            return _getattr(target, args)
        if name == "setattr":
            return _setattr(target, args[0], args[1])
        if name == "delattr":
            return _delattr(target, args)
        if name == "iter":
            return _iter(target)  # type: ignore[call-overload]
        if name == "next":
            return _next(target)  # type: ignore[call-overload]
        if name == "len":
            return _len(target)  # type: ignore[arg-type]
        if name == "getitem":
            return target[args]  # type: ignore[index]
        if name == "setitem":
            target[args[0]] = args[1]  # type: ignore[index]
            return None
        if name == "delitem":
            del target[args]  # type: ignore[attr-defined]
            return None
        if name == "str":
            return _str(target)
        if name == "repr":
            return _repr(target)
        if name == "format":
            return _format(target, args)
        if name == "isinstance":
            return _isinstance(args, target)  # type: ignore[arg-type]
        if name == "plain":
            return _as_base(target)
        if name == "state":
            return _state(target)
        raise TypeError(f"unknown operation {name!r}")


def _flags(v: Any) -> int:
    t = _type(v)
    flags = 0
    if _callable(v):
        flags |= CALLABLE
    if _hasattr(t, "__next__"):
        flags |= ITERATOR
    if _hasattr(t, "__iter__"):
        flags |= ITERABLE
    if _getattr(t, "__eq__", None) is _object_eq:
        flags |= DEFAULT_EQ
    if _getattr(t, "__hash__", None) is _object_hash:
        flags |= DEFAULT_HASH
    if not _hasattr(t, "__bool__") and not _hasattr(t, "__len__"):
        flags |= ALWAYS_TRUE
    if _isinstance(v, type):
        flags |= IS_CLASS | DEFAULT_EQ | DEFAULT_HASH | ALWAYS_TRUE
        if _issubclass(v, _BaseException):
            flags |= EXC_CLASS
    return flags


def _base(v: Any) -> str:
    if _isinstance(v, type):
        if _issubclass(v, _BaseException):
            for c in v.__mro__:
                name = _str(c.__name__)
                if _getattr(builtins, name, None) is c:
                    return name
        return ""
    for b in _BUILTIN_BASES:
        if _isinstance(v, b):
            return b.__name__
    return ""


def _name(v: object) -> str:
    t = v if _isinstance(v, type) else _type(v)
    return _str(_getattr(t, "__qualname__", "object"))[:200]


def _as_base(v: object) -> object:
    for base, read in wire.AS_BASE:
        if _isinstance(v, base):
            return read(v)
    raise TypeError("not a builtin value")


def _state(v: object) -> dict[str, object]:
    """An instance's attributes (its ``__dict__``, or its slots)."""
    found = _getattr(v, "__dict__", None)
    if _type(found) is dict:
        return dict(found)
    out: dict[str, object] = {}
    for cls in _type(v).__mro__:
        for slot in _getattr(cls, "__slots__", ()):
            if _hasattr(v, slot):
                out[slot] = _getattr(v, slot)
    return out


def _exception_tree(exc: BaseException, codec: wire.Codec) -> object:
    t = _type(exc)
    try:
        args = codec.encode(exc.args)
    except _BaseException:
        args = ["t", [_reason(exc)]]
    if _getattr(builtins, t.__name__, None) is t:
        return ["e", t.__name__, "", None, args]
    try:
        cls_tree = codec.encode(t)
    except _BaseException:
        return ["e", "Exception", "", None, args]
    return ["e", _str(t.__name__)[:100], _base(t), cls_tree, args]


def _rebuild_exception(t: list[Any], peer: _Peer) -> BaseException:
    """An exception the test's code raised, as the candidate sees it."""
    cls: Any = _getattr(builtins, t[1], None)
    if not (_isinstance(cls, type) and _issubclass(cls, _Exception)):
        cls = _Exception
    args = peer.codec().decode(t[4])
    try:
        return cls(*args)  # type: ignore[no-any-return]
    except _BaseException:
        return _Exception(*args)


def _reason(exc: BaseException) -> str:
    try:
        text = f"{_type(exc).__name__}: {_str(exc)}"
    except _BaseException:
        text = "exception"
    return text[:500]


def flush() -> None:
    """Flush Python's buffered stdout and stderr, whatever the candidate did to them."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except _BaseException:
            pass


def _done() -> NoReturn:
    flush()
    _exit(0)
