"""What the verifier takes of the child's word on a handle's class: the
standard classes it names (`sandbox.strict.stdfaces`) are only the
verifier's own classes of standard modules it has imported, never an
exception class or a class of the engine's; and the test's ``type``
(`sandbox.strict.testnames`) answers as the builtin does for anything that
is not a handle."""

from __future__ import annotations

import abc
import json
import logging
from typing import Any

import pytest

from aioeval.sandbox.strict import handlefaces, stdfaces, testnames


def test_only_standard_classes_the_verifier_has_imported_are_taken() -> None:
    named: list[Any] = [
        ["logging", "Formatter"],
        ["json.encoder", "JSONEncoder"],
        ["aioeval.sandbox.strict.handles", "Handle"],
        ["json", "JSONDecodeError"],
        ["logging", "nope.deeper"],
        ["os", 5],
        "logging.Handler",
        ["logging", "Formatter"],
        ["xml.dom.minidom", "Node"],
    ]
    assert stdfaces.resolve(named) == (logging.Formatter, json.JSONEncoder)
    assert stdfaces.resolve("logging") == ()


def test_a_face_derives_from_the_nearest_standard_classes() -> None:
    found = stdfaces.bases((logging.StreamHandler, logging.Handler, logging.Filterer))
    assert found == (logging.StreamHandler,)
    face = handlefaces.face(0, __name__, found)
    assert issubclass(face, logging.Handler) and not issubclass(face, logging.Formatter)
    assert handlefaces.face(0, __name__, found) is face


def test_a_base_that_refuses_subclasses_is_left_out() -> None:
    face = handlefaces.face(0, __name__, (type(iter(())), logging.Formatter))
    assert issubclass(face, logging.Formatter)


@pytest.mark.parametrize(
    "value",
    [3, "s", int, type, abc.ABCMeta, logging.Formatter(), None],
)
def test_the_test_s_type_is_the_builtin_s_for_what_is_not_a_handle(value: Any) -> None:
    got = testnames.Type(value)
    assert got is type(value) or (type(value) is type and got is testnames.Type)
    assert isinstance(int, testnames.Type) and not isinstance(3, testnames.Type)
    made = testnames.Type("Made", (), {"x": 1})
    assert type(made) is type and made.x == 1  # type: ignore[attr-defined]
