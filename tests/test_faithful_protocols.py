"""The protocols of the candidate's objects, as the test's type checks see
them: ``isinstance`` against ``collections.abc``'s and ``contextlib``'s
ABCs, ``numbers``, ``typing``'s ``Supports...`` and a test's own runtime
``Protocol``, and ``hash()`` of an unhashable object, answer as for the
program's object, not for the verifier's handle class, which defines
every protocol method (`sandbox/strict/handlefaces.py`).

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, score_both

from aioeval.types import CandidateResult


def _isinstance_check(imports: str, abc: str, then: str = "") -> str:
    return _d(
        f"""
        {imports}

        def check(candidate):
            r = candidate([1, 2])
            assert isinstance(r, {abc}), "not {abc}"
        """
    ) + (f"    {then}\n" if then else "")


_MAKE = 'def make(xs):\n    """Return an object over xs as the test asks."""\n'
_HOLD = "    class R:\n        def __init__(self, xs):\n            self.xs = xs\n"

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "collections.abc.Iterable of an object with and without __iter__": (
        _MAKE,
        _isinstance_check("from collections.abc import Iterable", "Iterable"),
        "make",
        _HOLD + "        def __iter__(self):\n            return iter(self.xs)\n    return R(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "collections.abc.Hashable of a frozen and of a plain dataclass": (
        "from dataclasses import dataclass\n\n\n" + _MAKE,
        _isinstance_check("from collections.abc import Hashable", "Hashable"),
        "make",
        "    @dataclass(frozen=True)\n    class K:\n        xs: tuple\n    return K(tuple(xs))\n",
        "    @dataclass\n    class K:\n        xs: tuple\n    return K(tuple(xs))\n",
    ),
    "collections.abc.Sized of an object with and without __len__": (
        _MAKE,
        _isinstance_check("from collections.abc import Sized", "Sized"),
        "make",
        _HOLD + "        def __len__(self):\n            return len(self.xs)\n    return R(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "collections.abc.Iterator of an iterator and of a re-iterable object": (
        _MAKE,
        _isinstance_check("from collections.abc import Iterator", "Iterator"),
        "make",
        _HOLD
        + "            self.it = iter(xs)\n        def __iter__(self):\n            return self\n"
        "        def __next__(self):\n            return next(self.it)\n    return R(xs)\n",
        _HOLD + "        def __iter__(self):\n            return iter(self.xs)\n    return R(xs)\n",
    ),
    "contextlib.AbstractContextManager of an object with and without __enter__/__exit__": (
        _MAKE,
        _isinstance_check(
            "from contextlib import AbstractContextManager", "AbstractContextManager"
        ),
        "make",
        _HOLD + "        def __enter__(self):\n            return self\n"
        "        def __exit__(self, *exc):\n            return False\n    return R(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "typing.SupportsFloat of an object with and without __float__": (
        _MAKE,
        _isinstance_check("from typing import SupportsFloat", "SupportsFloat"),
        "make",
        _HOLD
        + "        def __float__(self):\n            return float(sum(self.xs))\n    return R(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "a test's runtime Protocol naming __len__": (
        _MAKE,
        _d(
            """
            from typing import Protocol, runtime_checkable

            @runtime_checkable
            class HasLen(Protocol):
                def __len__(self) -> int: ...

            def check(candidate):
                assert isinstance(candidate([1, 2]), HasLen), "no __len__"
            """
        ),
        "make",
        _HOLD + "        def __len__(self):\n            return len(self.xs)\n    return R(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "numbers.Number of the program's subclass of it": (
        "import numbers\n\n\n" + _MAKE,
        _isinstance_check("import numbers", "numbers.Number"),
        "make",
        "    class N(numbers.Number):\n        def __init__(self, xs):\n            self.xs = xs\n"
        "    return N(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
    "collections.abc.Sequence of the program's subclass of it": (
        "from collections.abc import Sequence\n\n\n" + _MAKE,
        _isinstance_check(
            "from collections.abc import Sequence", "Sequence", "assert list(r) == [1, 2]"
        ),
        "make",
        "    class S(Sequence):\n        def __init__(self, xs):\n            self.xs = xs\n"
        "        def __getitem__(self, i):\n            return self.xs[i]\n"
        "        def __len__(self):\n            return len(self.xs)\n    return S(xs)\n",
        _HOLD + "        def __iter__(self):\n            return iter(self.xs)\n    return R(xs)\n",
    ),
    "a generic class of the program's, subscripted by the test": (
        "from typing import Generic, TypeVar\n\nT = TypeVar('T')\n\n\n"
        'def box_class():\n    """Return a generic class Box[T] holding one value (get())."""\n',
        _d(
            """
            def check(candidate):
                Box = candidate()
                assert Box[int](3).get() == 3
            """
        ),
        "box_class",
        "    class Box(Generic[T]):\n        def __init__(self, v):\n            self.v = v\n"
        "        def get(self):\n            return self.v\n    return Box\n",
        "    class Box(Generic[T]):\n        def __init__(self, v):\n            self.v = v\n"
        "        def get(self):\n            return None\n    return Box\n",
    ),
    "hash() of a mutable record must raise TypeError": (
        "from dataclasses import dataclass\n\n\n" + _MAKE,
        _d(
            """
            def check(candidate):
                r = candidate([1, 2])
                try:
                    hash(r)
                except TypeError:
                    pass
                else:
                    raise AssertionError("hashable")
            """
        ),
        "make",
        "    @dataclass\n    class K:\n        xs: list\n    return K(xs)\n",
        _HOLD + "    return R(xs)\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("protocols"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_protocols_answer_as_for_the_programs_object(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
