"""The strict channel's value trees (`sandbox.wire`): what one side encodes,
the other rebuilds with the same types and contents, and a tree the decoder
cannot trust is refused as `NotData` (an unhashable item as the
`TypeError` the verifier catches), never another exception."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioeval.sandbox.values import plaincall, wire


def _no_foreign(v: object) -> object:
    raise AssertionError(f"plain data took the foreign path: {v!r}")


def _no_refer(t: list[Any]) -> object:
    raise wire.NotData("a reference in plain data")


def crossed(value: Any) -> Any:
    """``value`` as the other side rebuilds it, through msgpack as sent."""
    tree = wire.Codec(_no_foreign, _no_refer).encode(value)
    sent = msgspec.msgpack.decode(msgspec.msgpack.encode(tree))
    return wire.Codec(_no_foreign, _no_refer).decode(sent)


def same(a: Any, b: Any) -> bool:
    """Equal, with the same exact type at every level (nan equals nan)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


keys = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.complex_numbers(allow_nan=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.frozensets(keys, max_size=4),
        st.sets(keys, max_size=4),
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_plain_values_cross_with_their_types(value: Any) -> None:
    assert same(crossed(value), value)


def test_shared_containers_stay_shared() -> None:
    inner = [1, 2]
    back = crossed((inner, inner, {"k": inner}))
    assert back[0] is back[1] is back[2]["k"] == [1, 2]


def nested(depth: int) -> list[Any]:
    tree: list[Any] = ["t", [1]]
    for _ in range(depth):
        tree = ["t", [tree, 2]]
    return tree


def test_depth_is_bounded_wherever_the_nesting_is() -> None:
    codec = wire.Codec(_no_foreign, _no_refer)
    assert codec.decode(nested(wire.MAX_DEPTH - 1))
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(nested(wire.MAX_DEPTH + 1))
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(["l", [nested(wire.MAX_DEPTH + 1)]])


def test_node_count_is_bounded_for_flat_and_nested_trees() -> None:
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(["t", [0] * (wire.MAX_NODES + 1)])
    half = ["l", [0] * (wire.MAX_NODES // 2)]
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(["t", [half, half, half]])


@pytest.mark.parametrize(
    "tree",
    [
        ["t"],
        ["t", 5],
        ["t", [1], 2],
        ["zz", []],
        ["l", [{"a": 1}]],
        ["t", [1.5, {1: 2}]],
        ["@", 3],
        ["d", [[1]]],
        {"t": [1]},
        [1, 2],
    ],
)
def test_malformed_trees_are_not_data(tree: Any) -> None:
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(tree)


def test_unhashable_items_are_a_type_error() -> None:
    for tree in (["s", [["l", []]]], ["f", [["d", []]]], ["d", [[["l", []], 1]]]):
        with pytest.raises(TypeError):
            wire.Codec(_no_foreign, _no_refer).decode(tree)


@settings(max_examples=300, deadline=None)
@given(st.lists(scalars, max_size=8).map(tuple), st.none() | st.just({"k": 1}))
def test_a_plain_call_is_the_tree_the_codec_makes(args: tuple[Any, ...], kwargs: Any) -> None:
    """The short way for a call's plain arguments sends and reads exactly
    what the codec would, and declines whatever the codec must handle."""
    full = wire.Codec(_no_foreign, _no_refer).encode((args, kwargs))
    short = plaincall.plain_args(args, kwargs)
    if short is not None:
        assert short == full
        assert kwargs is None and all(map(plaincall.own_tree, args))
    else:
        assert kwargs or not all(map(plaincall.own_tree, args))
    sent = msgspec.msgpack.decode(msgspec.msgpack.encode(full))
    read = plaincall.plain_call(sent)
    if read is not None:
        assert same(read, wire.Codec(_no_foreign, _no_refer).decode(sent))


def test_a_plain_call_declines_trees_it_does_not_know() -> None:
    for tree in (
        ["t", [["t", [["l", [1]]]], None]],
        ["t", [["t", [1]], ["d", []]]],
        ["t", [["l", [1]], None]],
        ["t", [["t", [1] * (plaincall.PLAIN_CALL + 1)], None]],
        ["t", [["t", [{"a": 1}]], None]],
        ["l", [["t", [1]], None]],
        "t",
    ):
        assert plaincall.plain_call(tree) is None


def test_a_log_record_crosses_as_its_attributes() -> None:
    import logging

    try:
        raise ValueError("bad")
    except ValueError:
        import sys

        record = logging.makeLogRecord(
            {"name": "pay", "msg": "card %s", "args": ("4111",), "exc_info": sys.exc_info()}
        )
    got = crossed(record)
    assert type(got) is logging.LogRecord and got is not record
    assert got.getMessage() == "card 4111" and got.name == "pay" and got.exc_info is None
    assert "ValueError: bad" in got.exc_text


@pytest.mark.parametrize("key", ["getMessage", "__init__", "_private", 3, "exc_info"])
def test_a_log_record_naming_what_its_class_defines_is_not_data(key: Any) -> None:
    fields = wire.Codec(_no_foreign, _no_refer).encode({key: ("x",), "msg": "m"})
    with pytest.raises(wire.NotData):
        wire.Codec(_no_foreign, _no_refer).decode(["x", "logrecord", fields])
