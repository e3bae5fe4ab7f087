"""Exceptions whose parts the test looks at, judged as the single program
judges them: an ``ExceptionGroup`` the candidate raises (its members, their
notes, ``except*``), one exception met twice in a chain (``e.__cause__ is
e.last``), notes and a cause the candidate gives the test's own exception,
and the classes of standard modules (``json.JSONDecodeError``,
``dataclasses.FrozenInstanceError``) caught by those classes.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _body, _d, judged_alike, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "an ExceptionGroup of the test's errors, with notes, split by except*": (
        _d(
            '''
            def run_all(checks):
                """Run each zero-argument callable of the dict; raise ExceptionGroup('failed',
                [...]) of their exceptions, each with the note 'check: <name>'."""
            '''
        ),
        _d(
            """
            def check(candidate):
                def disk():
                    raise OSError('full')
                def conf():
                    raise KeyError('port')
                candidate({'ok': lambda: None})
                try:
                    candidate({'ok': lambda: None, 'disk': disk, 'conf': conf})
                except* OSError as eg:
                    assert eg.exceptions[0].__notes__ == ['check: disk']
                    assert str(eg.exceptions[0]) == 'full'
                except* KeyError as eg:
                    assert eg.exceptions[0].args == ('port',)
                try:
                    candidate({'x': lambda: int('z')})
                except ExceptionGroup as eg:
                    assert eg.message == 'failed' and type(eg.exceptions[0]) is ValueError
                    assert eg.exceptions[0].__notes__ == ['check: x']
                else:
                    raise AssertionError('no group')
            """
        ),
        "run_all",
        _body(
            """
                failed = []
                for name, fn in checks.items():
                    try:
                        fn()
                    except Exception as exc:
                        exc.add_note('check: ' + name)
                        failed.append(exc)
                if failed:
                    raise ExceptionGroup('failed', failed)
            """
        ),
        _body(
            """
                failed = []
                for name, fn in checks.items():
                    try:
                        fn()
                    except Exception as exc:
                        failed.append(exc)
                if failed:
                    raise ExceptionGroup('failed', failed)
            """
        ),
    ),
    "an exception whose cause is also its attribute": (
        _d(
            '''
            class RetryError(Exception):
                def __init__(self, last):
                    super().__init__('gave up')
                    self.last = last

            def retry(fn, times):
                """Call fn up to times times; when every call raised, raise
                RetryError(last) from the last exception."""
            '''
        ),
        _d(
            """
            def check(candidate):
                calls = []
                def flaky():
                    calls.append(1)
                    raise ValueError(len(calls))
                try:
                    candidate(flaky, 3)
                except RetryError as e:
                    assert e.__cause__ is e.last and e.last.args == (3,)
                else:
                    raise AssertionError('no error')
            """
        ),
        "retry",
        _body(
            """
                for _ in range(times):
                    try:
                        return fn()
                    except Exception as exc:
                        last = exc
                raise RetryError(last) from last
            """
        ),
        _body(
            """
                for _ in range(times):
                    try:
                        return fn()
                    except Exception as exc:
                        last = exc
                raise RetryError(last) from ValueError(times)
            """
        ),
    ),
    "an exception of a standard module's class, caught by that class": (
        'import json\n\n\ndef parse(s):\n    """json.loads(s); errors propagate"""\n',
        "import json\ndef check(candidate):\n    try:\n        candidate('[1,')\n    except json.JSONDecodeError as e:\n        assert e.pos == 3 and e.lineno == 1\n",
        "parse",
        "    return json.loads(s)\n",
        "    try:\n        return json.loads(s)\n    except ValueError as e:\n        raise json.JSONDecodeError(e.msg, s, 0) from None\n",
    ),
    "a standard module's exception as the cause of the program's": (
        _d(
            '''
            import json

            class ConfigError(Exception):
                pass

            def load(text):
                """json.loads(text); a JSON error becomes ConfigError('line L') raised
                from it"""
            '''
        ),
        _d(
            """
            import json
            def check(candidate):
                try:
                    candidate('{\\n oops}')
                except ConfigError as e:
                    assert str(e) == 'line 2'
                    assert isinstance(e.__cause__, json.JSONDecodeError), repr(e.__cause__)
                else:
                    raise AssertionError('no error')
            """
        ),
        "load",
        _body(
            """
                try:
                    return json.loads(text)
                except json.JSONDecodeError as err:
                    raise ConfigError('line %d' % err.lineno) from err
            """
        ),
        _body(
            """
                try:
                    return json.loads(text)
                except json.JSONDecodeError as err:
                    raise ConfigError('line %d' % err.lineno) from ValueError(err.msg)
            """
        ),
    ),
    "assigning to a frozen dataclass the candidate returns": (
        _d(
            '''
            from dataclasses import dataclass, replace

            @dataclass(frozen=True)
            class Span:
                start: int
                end: int

            def widen(span, n):
                """A new Span with end moved by n."""
            '''
        ),
        _d(
            """
            import dataclasses
            def check(candidate):
                s = candidate(Span(1, 2), 3)
                assert s == Span(1, 5)
                try:
                    s.end = 0
                except dataclasses.FrozenInstanceError:
                    pass
                else:
                    raise AssertionError('not frozen')
            """
        ),
        "widen",
        "    return replace(span, end=span.end + n)\n",
        "    return replace(span, end=span.end + n - 1)\n",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("raised"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_raised_exceptions_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
