"""What the test patches in for the candidate's code to find, judged as the
single program judges it: a function of the program's the test replaces
through its globals (``mock.patch.dict(globals(), ...)``), and a test's
subclass of a standard value type that only adds class helpers (a
``FakeDate`` with its own ``today``), whose objects the candidate's code
computes with, a class the prompt imports that the test replaces through
its globals with a frozen clock's class, a method of the prompt's class
patched with ``autospec`` (called with the candidate's instance first), a standard value or a standard module's exception that a
patched function gives the candidate's code. ``LIMITS``: an exception of
a library's class (not a standard module's) that the test's code raises
into the candidate's (its ``except`` clause on that class does not catch
it there), named.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_RATE = (
    "def get_rate(currency):\n    raise RuntimeError('network disabled')\n\n\n"
    "def convert(amount, currency):\n"
    '    """amount * get_rate(currency), rounded to 2 places."""\n'
)
_WEEK = (
    "import datetime\n\n\ndef week_start():\n"
    '    """The Monday and the ISO week of datetime.date.today(), as "YYYY-MM-DD Www"."""\n'
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a function of the program's replaced through the test's globals": (
        _RATE,
        _d(
            """
            from unittest import mock
            def check(candidate):
                m = mock.Mock(return_value=0.5)
                with mock.patch.dict(globals(), {'get_rate': m}):
                    assert candidate(10.0, 'EUR') == 5.0
                m.assert_called_once_with('EUR')
            """
        ),
        "convert",
        "    return round(amount * get_rate(currency), 2)\n",
        "    return round(amount * get_rate(currency) * 2, 2)\n",
    ),
    "a test's date subclass patched in for datetime.date": (
        _WEEK,
        _d(
            """
            import datetime
            from unittest import mock
            class FakeDate(datetime.date):
                @classmethod
                def today(cls):
                    return cls(2021, 1, 2)
            def check(candidate):
                with mock.patch('datetime.date', FakeDate):
                    assert candidate() == '2020-12-28 W53', candidate()
            """
        ),
        "week_start",
        "    t = datetime.date.today()\n    week = t.isocalendar()[1]\n"
        "    return '%s W%d' % (t - datetime.timedelta(days=t.weekday()), week)\n",
        "    t = datetime.date.today()\n    week = t.isocalendar()[1]\n"
        "    return '%s W%d' % (t - datetime.timedelta(days=t.isoweekday()), week)\n",
    ),
    "subprocess.run patched to return the test's CompletedProcess": (
        "import subprocess\n\n\ndef branch(repo):\n"
        '    """git\'s current branch of repo (subprocess.run, text output); RuntimeError\n'
        '    with the stripped stderr on a non-zero return code"""\n',
        _d(
            """
            import subprocess
            from unittest import mock
            def check(candidate):
                ok = subprocess.CompletedProcess(['git'], 0, 'main\\n', '')
                with mock.patch('subprocess.run', return_value=ok):
                    assert candidate('/r') == 'main'
                bad = subprocess.CompletedProcess(['git'], 128, '', 'fatal: no repo\\n')
                with mock.patch('subprocess.run', return_value=bad):
                    try:
                        candidate('/r')
                    except RuntimeError as e:
                        assert str(e) == 'fatal: no repo'
                    else:
                        raise AssertionError('no RuntimeError')
            """
        ),
        "branch",
        "    p = subprocess.run(['git', '-C', repo, 'branch', '--show-current'],"
        " capture_output=True, text=True)\n"
        "    try:\n        p.check_returncode()\n"
        "    except subprocess.CalledProcessError:\n        raise RuntimeError(p.stderr.strip())\n"
        "    return p.stdout.strip()\n",
        "    p = subprocess.run(['git', '-C', repo, 'branch', '--show-current'],"
        " capture_output=True, text=True)\n"
        "    return p.stdout.strip()\n",
    ),
    "a standard module's exception the test's callback raises into the candidate": (
        "import urllib.error\n\n\ndef fetch_all(get, urls):\n"
        '    """{url: get(url)} for each url, leaving out those where get raises HTTPError;\n'
        '    a 5xx HTTPError is raised on."""\n',
        _d(
            """
            import urllib.error
            def check(candidate):
                def get(url):
                    if url in ('b', 'c'):
                        code = 404 if url == 'b' else 503
                        raise urllib.error.HTTPError(url, code, 'no', {}, None)
                    return url.upper()
                assert candidate(get, ['a', 'b']) == {'a': 'A'}
                try:
                    candidate(get, ['c'])
                except urllib.error.HTTPError as e:
                    assert e.code == 503 and str(e) == 'HTTP Error 503: no'
                else:
                    raise AssertionError('no HTTPError')
            """
        ),
        "fetch_all",
        "    out = {}\n    for u in urls:\n        try:\n            out[u] = get(u)\n"
        "        except urllib.error.HTTPError as e:\n            if e.code >= 500:\n"
        "                raise\n    return out\n",
        "    out = {}\n    for u in urls:\n        try:\n            out[u] = get(u)\n"
        "        except urllib.error.HTTPError as e:\n            pass\n    return out\n",
    ),
    "CalledProcessError of a patched subprocess.run, caught by its class": (
        "import subprocess\n\n\ndef version(tool):\n"
        '    """[tool, "--version"] output with subprocess.run(check=True), stripped; on\n'
        '    CalledProcessError, "exit N: " + its stderr"""\n',
        _d(
            """
            import subprocess
            from unittest import mock
            def check(candidate):
                err = subprocess.CalledProcessError(2, ['gcc', '--version'], '', 'boom')
                with mock.patch('subprocess.run', side_effect=err):
                    assert candidate('gcc') == 'exit 2: boom'
            """
        ),
        "version",
        "    try:\n        p = subprocess.run([tool, '--version'], capture_output=True, text=True,"
        " check=True)\n    except subprocess.CalledProcessError as e:\n"
        "        return f'exit {e.returncode}: {e.stderr}'\n    return p.stdout.strip()\n",
        "    try:\n        p = subprocess.run([tool, '--version'], capture_output=True, text=True,"
        " check=True)\n    except subprocess.CalledProcessError as e:\n"
        "        return f'exit {e.returncode}: {e.output}'\n    return p.stdout.strip()\n",
    ),
    "a class the prompt imports, replaced through the test's globals by a frozen clock": (
        "from datetime import datetime, timezone\n\n\ndef in_force(start, end):\n"
        '    """Is start <= datetime.now(timezone.utc) < end?"""\n',
        _d(
            """
            from unittest import mock
            from datetime import datetime, timezone
            def frozen(at):
                class Frozen(datetime):
                    @classmethod
                    def now(cls, tz=None):
                        return at if tz is None else at.astimezone(tz)
                return Frozen
            def check(candidate):
                a = datetime(2024, 6, 1, 12, tzinfo=timezone.utc)
                b = datetime(2024, 6, 2, tzinfo=timezone.utc)
                with mock.patch.dict(globals(), {"datetime": frozen(a)}):
                    assert candidate(a, b) is True
                with mock.patch.dict(globals(), {"datetime": frozen(b)}):
                    assert candidate(a, b) is False
            """
        ),
        "in_force",
        "    return start <= datetime.now(timezone.utc) < end\n",
        "    return start <= datetime.now(timezone.utc) <= end\n",
    ),
    "a method of the prompt's class patched with autospec, called on the candidate's instance": (
        "class Gateway:\n    def __init__(self, merchant):\n        self.merchant = merchant\n\n"
        "    def charge(self, token, cents):\n        raise RuntimeError('no network')\n\n\n"
        "def charge_all(merchant, tokens):\n"
        '    """Gateway(merchant).charge(token, 100) for each token; the list of answers."""\n',
        _d(
            """
            from unittest import mock
            def check(candidate):
                with mock.patch.object(Gateway, "charge", autospec=True,
                                       side_effect=lambda self, token, cents: token * 2) as charge:
                    assert candidate("m-42", ["a", "b"]) == ["aa", "bb"]
                assert charge.call_count == 2
                first = charge.call_args_list[0].args[0]
                assert isinstance(first, Gateway) and first.merchant == "m-42"
                assert charge.call_args_list[1].args[1:] == ("b", 100)
            """
        ),
        "charge_all",
        "    gw = Gateway(merchant)\n    return [gw.charge(t, 100) for t in tokens]\n",
        "    gw = Gateway(merchant)\n    return [gw.charge(t, 10) for t in tokens]\n",
    ),
}

# name: (prompt, test, entry, answer, strict status, official status, reason in strict)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "a library's exception the test's callback raises into the candidate": (
        "import msgspec\n\n\ndef parse_all(parse, docs):\n"
        '    """[parse(d)] for each doc, leaving out those where parse raises DecodeError"""\n',
        _d(
            """
            import msgspec
            def check(candidate):
                def parse(d):
                    if d == 'bad':
                        raise msgspec.DecodeError('bad input')
                    return d.upper()
                assert candidate(parse, ['a', 'bad']) == ['A']
            """
        ),
        "parse_all",
        "    out = []\n    for d in docs:\n        try:\n            out.append(parse(d))\n"
        "        except msgspec.DecodeError:\n            pass\n    return out\n",
        "failed",
        "passed",
        "strict scoring: the test's code raised msgspec.DecodeError",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("patched"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_what_the_test_patches_in_is_judged_as_one_program_judges_it(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_it_cannot_reach_the_candidate_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
