"""Exceptions across the two processes, judged as the single program judges
them: the candidate's raised to the test (builtin, the program's own and
the prompt's classes, caught by a base), the test's own raised through the
candidate and back as themselves.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import judged_alike, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    # exceptions
    "json.loads error propagates as ValueError": (
        'import json\n\n\ndef parse(s):\n    """json.loads(s); errors propagate"""\n',
        "def check(candidate):\n    assert candidate('[1]') == [1]\n    try:\n        candidate('{bad')\n    except ValueError as e:\n        assert 'Expecting' in str(e)\n    else:\n        assert False\n",
        "parse",
        "    return json.loads(s)\n",
        "    try:\n        return json.loads(s)\n    except ValueError:\n        return None\n",
    ),
    "UnicodeDecodeError propagates": (
        'def dec(b):\n    """b.decode() strictly"""\n',
        "def check(candidate):\n    try:\n        candidate(b'\\xff')\n    except UnicodeDecodeError as e:\n        assert e.start == 0 and e.reason == 'invalid start byte'\n    else:\n        assert False\n",
        "dec",
        "    return b.decode()\n",
        "    return b.decode(errors='replace')\n",
    ),
    "KeyError str": (
        'def get(d, k):\n    """d[k], KeyError propagates"""\n',
        "def check(candidate):\n    try:\n        candidate({}, 'x')\n    except KeyError as e:\n        assert str(e) == \"'x'\" and e.args == ('x',)\n    else:\n        assert False\n",
        "get",
        "    return d[k]\n",
        "    return d.get(k)\n",
    ),
    "assert in candidate caught as AssertionError": (
        'def pos(x):\n    """assert x > 0, return x"""\n',
        "def check(candidate):\n    try:\n        candidate(-1)\n    except AssertionError as e:\n        assert str(e) == 'neg'\n    else:\n        assert False\n    assert candidate(2) == 2\n",
        "pos",
        "    assert x > 0, 'neg'\n    return x\n",
        "    return x\n",
    ),
    "exception class of the completion caught by base": (
        'def f(x):\n    """raise a ValueError subclass named BadInput for x < 0"""\n',
        "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError as e:\n        assert type(e).__name__ == 'BadInput' and e.args == (-1,)\n    else:\n        assert False\n",
        "f",
        "    if x < 0:\n        raise BadInput(x)\n    return x\n\n\nclass BadInput(ValueError):\n    pass\n",
        "    if x < 0:\n        raise ValueError(x)\n    return x\n",
    ),
    "raise the class, not an instance": (
        'def f(x):\n    """TypeError if x is not int"""\n',
        "def check(candidate):\n    try:\n        candidate('a')\n    except TypeError as e:\n        assert e.args == ()\n    else:\n        assert False\n",
        "f",
        "    if not isinstance(x, int):\n        raise TypeError\n    return x\n",
        "    return x\n",
    ),
    "FileNotFoundError from OSError args": (
        'def f(p):\n    """open(p).read()"""\n',
        "def check(candidate):\n    try:\n        candidate('/nonexistent/zz')\n    except FileNotFoundError as e:\n        assert e.errno == 2 and e.filename == '/nonexistent/zz'\n    else:\n        assert False\n",
        "f",
        "    with open(p) as fh:\n        return fh.read()\n",
        "    raise OSError(p)\n",
    ),
    "ZeroDivisionError caught by ArithmeticError": (
        'def div(a, b):\n    """a // b"""\n',
        "def check(candidate):\n    try:\n        candidate(1, 0)\n    except ArithmeticError as e:\n        assert isinstance(e, ZeroDivisionError)\n    else:\n        assert False\n",
        "div",
        "    return a // b\n",
        "    return a // b if b else 0\n",
    ),
    "RecursionError from unbounded recursion": (
        'def depth(n):\n    """recurse n deep"""\n',
        "def check(candidate):\n    assert candidate(100) == 100\n    try:\n        candidate(10 ** 6)\n    except RecursionError:\n        pass\n    else:\n        assert False\n",
        "depth",
        "    return 0 if n == 0 else 1 + depth(n - 1)\n",
        "    return n\n",
    ),
    "StopIteration from next on an exhausted generator": (
        'def one():\n    """yields 1 once"""\n',
        "def check(candidate):\n    g = candidate()\n    assert next(g) == 1\n    try:\n        next(g)\n    except StopIteration:\n        pass\n    else:\n        assert False\n    assert next(candidate(), 'end') == 1\n    g = candidate(); next(g)\n    assert next(g, 'end') == 'end'\n",
        "one",
        "    yield 1\n",
        "    yield 1\n    yield 2\n",
    ),
    "exception with a list arg": (
        'def f(xs):\n    """ValueError(list of negatives) if any"""\n',
        "def check(candidate):\n    try:\n        candidate([1, -2, -3])\n    except ValueError as e:\n        assert e.args[0] == [-2, -3]\n    else:\n        assert False\n",
        "f",
        "    neg = [x for x in xs if x < 0]\n    if neg:\n        raise ValueError(neg)\n",
        "    raise ValueError([])\n",
    ),
    "exception message with format": (
        'def f(x):\n    """raise ValueError(f"bad: {x!r}")"""\n',
        "def check(candidate):\n    try:\n        candidate('q')\n    except Exception as e:\n        assert repr(e) == \"ValueError(\\\"bad: 'q'\\\")\" and str(e) == \"bad: 'q'\"\n    else:\n        assert False\n",
        "f",
        "    raise ValueError(f'bad: {x!r}')\n",
        "    raise ValueError(f'bad: {x}')\n",
    ),
    "exception type identity": (
        'def f(x):\n    """IndexError"""\n',
        "def check(candidate):\n    try:\n        candidate(1)\n    except Exception as e:\n        assert type(e) is IndexError and e.__class__ == IndexError\n",
        "f",
        "    return [][x]\n",
        "    return {}[x]\n",
    ),
    "custom exception of prompt with two args and kwargs attr": (
        'class AppError(Exception):\n    def __init__(self, code, msg):\n        super().__init__(msg)\n        self.code = code\n\n\ndef f(x):\n    """AppError(404, "missing") when x is None"""\n',
        "def check(candidate):\n    try:\n        candidate(None)\n    except AppError as e:\n        assert e.code == 404 and str(e) == 'missing'\n    else:\n        assert False\n",
        "f",
        "    if x is None:\n        raise AppError(404, 'missing')\n    return x\n",
        "    if x is None:\n        raise AppError(500, 'missing')\n    return x\n",
    ),
    "exception subclass of the prompt's with a keyword-only init": (
        'class Err(Exception):\n    pass\n\n\ndef f(x):\n    """raise Err subclass Neg for x < 0"""\n',
        "def check(candidate):\n    try:\n        candidate(-1)\n    except Err as e:\n        assert type(e).__name__ == 'Neg'\n    else:\n        assert False\n",
        "f",
        "    if x < 0:\n        raise Neg(x)\n\n\nclass Neg(Err):\n    pass\n",
        "    if x < 0:\n        raise Err(x)\n",
    ),
    "exception from a callback the test passes": (
        'def apply(f, x):\n    """f(x), returning None if f raises KeyError"""\n',
        "class Oops(KeyError):\n    pass\ndef check(candidate):\n    def g(x):\n        raise Oops(x)\n    assert candidate(g, 1) is None\n    def h(x):\n        raise ValueError(x)\n    try:\n        candidate(h, 2)\n    except ValueError as e:\n        assert e.args == (2,)\n    else:\n        assert False\n",
        "apply",
        "    try:\n        return f(x)\n    except KeyError:\n        return None\n",
        "    try:\n        return f(x)\n    except Exception:\n        return None\n",
    ),
    # the test's exceptions raised through the candidate
    "the test's own exception propagates through the candidate": (
        'def retry(f, n):\n    """call f up to n times until it does not raise; re-raise the last error"""\n',
        "class Flaky(Exception):\n    pass\ndef check(candidate):\n    calls = []\n    def f():\n        calls.append(1)\n        raise Flaky('no')\n    try:\n        candidate(f, 3)\n    except Flaky as e:\n        assert str(e) == 'no' and len(calls) == 3\n    else:\n        assert False\n",
        "retry",
        "    for i in range(n):\n        try:\n            return f()\n        except Exception:\n            if i == n - 1:\n                raise\n",
        "    for i in range(n):\n        try:\n            return f()\n        except Exception:\n            pass\n",
    ),
    "the test's exception object comes back as itself": (
        'def call(f):\n    """f(), errors propagate"""\n',
        "def check(candidate):\n    err = ValueError('x')\n    def f():\n        raise err\n    try:\n        candidate(f)\n    except ValueError as e:\n        assert e is err\n",
        "call",
        "    return f()\n",
        "    try:\n        return f()\n    except ValueError as e:\n        raise ValueError(*e.args)\n",
    ),
    "the test's exception with an attribute through the candidate": (
        'def call(f):\n    """f(), errors propagate"""\n',
        "class E(Exception):\n    def __init__(self, code):\n        super().__init__(code)\n        self.code = code\ndef check(candidate):\n    def f():\n        raise E(7)\n    try:\n        candidate(f)\n    except E as e:\n        assert e.code == 7\n    else:\n        assert False\n",
        "call",
        "    return f()\n",
        "    try:\n        return f()\n    except Exception:\n        return None\n",
    ),
    "candidate catches the test's exception by its builtin base": (
        'def safe(f):\n    """f(), or "err" if it raises a LookupError"""\n',
        "class Missing(KeyError):\n    pass\ndef check(candidate):\n    def f():\n        raise Missing('k')\n    assert candidate(f) == 'err'\n",
        "safe",
        "    try:\n        return f()\n    except LookupError:\n        return 'err'\n",
        "    try:\n        return f()\n    except IndexError:\n        return 'err'\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("exceptions"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_exceptions_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
