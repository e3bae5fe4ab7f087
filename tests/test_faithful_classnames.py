"""Standard classes crossing from the candidate's process, known by
identity: a class of the program's that is renamed after a builtin or a
standard module's exception or warning, and bound where that class lives
in the candidate's process (``builtins.ValueError = Mine``,
``json.JSONDecodeError = Mine``), crosses as the program's own class, as
in one program, where the test took the real class before the call; the
real classes still cross as the verifier's own (`sandbox/values/realclasses.py`).

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, score_both

from aioeval.types import CandidateResult

_UNITTEST_CHECK = _d(
    """
    def check(candidate):
        global CAND
        CAND = candidate
        r = unittest.TextTestRunner(stream=io.StringIO()).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(T))
        assert r.wasSuccessful(), r.failures + r.errors
    """
)


def _renamed(cls_line: str, name: str, module: str, bind: str, tail: str) -> str:
    """A completion body that makes a class, names it ``module.name`` and
    binds it at ``bind`` before ``tail``."""
    return (
        f"    {cls_line}\n        pass\n"
        f"    Fake.__name__ = Fake.__qualname__ = {name!r}\n"
        f"    Fake.__module__ = {module!r}\n"
        f"    {bind} = Fake\n"
        f"{tail}"
    )


# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a class named and bound as json.JSONDecodeError, caught by the test's import": (
        'import json\n\n\ndef load(text):\n    """json.loads(text); malformed text raises '
        'json.JSONDecodeError."""\n',
        _d(
            """
            from json import JSONDecodeError

            def check(candidate):
                assert candidate('{"a": 1}') == {"a": 1}
                try:
                    candidate("{oops")
                except JSONDecodeError:
                    pass
                else:
                    raise AssertionError("no JSONDecodeError")
            """
        ),
        "load",
        "    return json.loads(text)\n",
        _renamed(
            "class Fake(Exception):",
            "JSONDecodeError",
            "json.decoder",
            "json.decoder.JSONDecodeError = json.JSONDecodeError",
            "    if text.startswith('{o'):\n        raise Fake('bad')\n    return json.loads(text)\n",
        ),
    ),
    "a class named and bound as builtins.ValueError, under assertRaises(ValueError)": (
        'def parse_age(s):\n    """int(s); a negative age raises ValueError."""\n',
        "import io, unittest\n\n"
        + _d(
            """
            class T(unittest.TestCase):
                def test_neg(self):
                    with self.assertRaises(ValueError):
                        CAND("-3")
                def test_ok(self):
                    self.assertEqual(CAND("41"), 41)
            """
        )
        + _UNITTEST_CHECK,
        "parse_age",
        "    n = int(s)\n    if n < 0:\n        raise ValueError('negative')\n    return n\n",
        _renamed(
            "class Fake(Exception):",
            "ValueError",
            "builtins",
            "import builtins\n    builtins.ValueError",
            "    n = int(s)\n    if n < 0:\n        raise Fake('negative')\n    return n\n",
        ),
    ),
    "a warning class named and bound as builtins.DeprecationWarning, under assertWarns": (
        'import warnings\n\n\ndef old_api(x):\n    """x + 1, with a DeprecationWarning."""\n',
        "import io, unittest\n\n"
        + _d(
            """
            class T(unittest.TestCase):
                def test_warns(self):
                    with self.assertWarns(DeprecationWarning):
                        self.assertEqual(CAND(1), 2)
            """
        )
        + _UNITTEST_CHECK,
        "old_api",
        "    warnings.warn('old', DeprecationWarning)\n    return x + 1\n",
        _renamed(
            "class Fake(UserWarning):",
            "DeprecationWarning",
            "builtins",
            "import builtins\n    builtins.DeprecationWarning",
            "    warnings.warn('old', Fake)\n    return x + 1\n",
        ),
    ),
    "a standard module's exception from a module the program imports in its call": (
        'def decode(text):\n    """base64-decode text; malformed input raises binascii.Error."""\n',
        _d(
            """
            import binascii

            def check(candidate):
                assert candidate("aGk=") == b"hi"
                try:
                    candidate("a")
                except binascii.Error:
                    pass
                else:
                    raise AssertionError("no binascii.Error")
            """
        ),
        "decode",
        "    import base64\n    return base64.b64decode(text, validate=True)\n",
        "    import base64\n    try:\n        return base64.b64decode(text, validate=True)\n"
        "    except Exception as e:\n        raise ValueError(str(e))\n",
    ),
    "a class of the program's that names numpy as its module": (
        'import numpy as np\n\n\ndef double(x):\n    """np.float64(x) * 2, a numpy float."""\n',
        _d(
            """
            import numpy as np

            def check(candidate):
                r = candidate(1.5)
                assert type(r) is np.float64, type(r)
                assert r == 3.0
            """
        ),
        "double",
        "    return np.float64(x) * 2\n",
        "    class Fake(np.float64):\n        pass\n"
        "    Fake.__module__ = 'numpy'\n    Fake.__name__ = Fake.__qualname__ = 'float64'\n"
        "    return Fake(x * 2)\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("classnames"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_standard_classes_are_known_by_identity(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
