"""Containers the test and the candidate both hold, judged as the single
program judges them: in one program a list the test passes and the
candidate keeps, a list the candidate returns while it keeps it, and a
prompt's module-level dict or list are one object each, and what either
side's code does to it later the other sees; so is a prompt's name the
program's code rebinds, and a prompt's iterator it draws from. ``LIMITS`` are where strict
scoring stops following them: the result names why.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a list the candidate keeps and changes in a later call": (
        'class Playlist:\n    """Playlist(songs) keeps its own copy; add(song)."""\n',
        _d(
            """
            def check(candidate):
                mine = ['intro', 'verse']
                p = Playlist(mine)
                p.add('chorus')
                assert mine == ['intro', 'verse'], mine
            """
        ),
        "Playlist",
        "    def __init__(self, songs):\n        self.s = list(songs)\n"
        "    def add(self, x):\n        self.s.append(x)\n",
        "    def __init__(self, songs):\n        self.s = songs\n"
        "    def add(self, x):\n        self.s.append(x)\n",
    ),
    "a list the test changes after the candidate kept it": (
        'class Stack:\n    """Stack(items) uses the caller\'s list as its storage."""\n',
        _d(
            """
            def check(candidate):
                items = [1]
                s = Stack(items)
                items.append(2)
                assert len(s) == 2
                s.push(3)
                assert items == [1, 2, 3]
            """
        ),
        "Stack",
        "    def __init__(self, items):\n        self.items = items\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "    def push(self, x):\n        self.items.append(x)\n",
        "    def __init__(self, items):\n        self.items = list(items)\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "    def push(self, x):\n        self.items.append(x)\n",
    ),
    "a dict inside an argument, kept and changed later": (
        'class Index:\n    """Index(config) reads config["words"] live; add(w) must not touch config."""\n',
        _d(
            """
            def check(candidate):
                config = {'words': ['a']}
                ix = Index(config)
                config['words'].append('b')
                assert ix.count() == 2
                ix.add('c')
                assert config == {'words': ['a', 'b']}, config
            """
        ),
        "Index",
        "    def __init__(self, config):\n        self.config = config\n        self.extra = []\n"
        "    def count(self):\n        return len(self.config['words']) + len(self.extra)\n"
        "    def add(self, w):\n        self.extra.append(w)\n",
        "    def __init__(self, config):\n        self.config = config\n"
        "    def count(self):\n        return len(self.config['words'])\n"
        "    def add(self, w):\n        self.config['words'].append(w)\n",
    ),
    "an internal list returned and changed by the test": (
        'class Bag:\n    """put(v); items() returns a copy; count()."""\n',
        _d(
            """
            def check(candidate):
                b = Bag()
                b.put(1)
                r = b.items()
                r.append(9)
                assert b.count() == 1
            """
        ),
        "Bag",
        "    def __init__(self):\n        self._x = []\n"
        "    def put(self, v):\n        self._x.append(v)\n"
        "    def items(self):\n        return list(self._x)\n"
        "    def count(self):\n        return len(self._x)\n",
        "    def __init__(self):\n        self._x = []\n"
        "    def put(self, v):\n        self._x.append(v)\n"
        "    def items(self):\n        return self._x\n"
        "    def count(self):\n        return len(self._x)\n",
    ),
    "the prompt's dict changed by the candidate": (
        "DEFAULTS = {'a': 1, 'b': 2}\n\n\ndef merged(o):\n"
        '    """DEFAULTS merged with o; DEFAULTS must not change."""\n',
        _d(
            """
            def check(candidate):
                assert candidate({'a': 5}) == {'a': 5, 'b': 2}
                assert DEFAULTS == {'a': 1, 'b': 2}, DEFAULTS
            """
        ),
        "merged",
        "    return {**DEFAULTS, **o}\n",
        "    DEFAULTS.update(o)\n    return dict(DEFAULTS)\n",
    ),
    "the prompt's list changed by the test": (
        'REGISTRY = []\n\n\ndef count_plugins():\n    """How many names REGISTRY holds."""\n',
        _d(
            """
            def check(candidate):
                REGISTRY.append('a')
                REGISTRY.append('b')
                assert candidate() == 2
            """
        ),
        "count_plugins",
        "    return len(REGISTRY)\n",
        "    return 2 if not REGISTRY else len(REGISTRY) + 1\n",
    ),
    "a deque the candidate keeps across many calls": (
        'def remember(x, seen):\n    """Append x to the caller\'s deque seen; return its length."""\n',
        _d(
            """
            from collections import deque
            def check(candidate):
                seen = deque()
                for i in range(200):
                    assert candidate(i, seen) == i + 1
                assert list(seen) == list(range(200))
            """
        ),
        "remember",
        "    seen.append(x)\n    return len(seen)\n",
        "    seen.append(x)\n    return len(seen) if x < 199 else 0\n",
    ),
    "a kept list returned twice is one list (and a fresh one each time is not)": (
        'class Stack:\n    """push(x); items() gives the stack\'s own list, not a copy."""\n',
        _d(
            """
            def check(candidate):
                s = Stack()
                s.push(1)
                a = s.items()
                s.push(2)
                assert s.items() is a and a == [1, 2]
            """
        ),
        "Stack",
        "class Stack:\n    def __init__(self):\n        self._items = []\n"
        "    def push(self, x):\n        self._items.append(x)\n"
        "    def items(self):\n        return self._items\n",
        "class Stack:\n    def __init__(self):\n        self._items = []\n"
        "    def push(self, x):\n        self._items.append(x)\n"
        "    def items(self):\n        return list(self._items)\n",
    ),
    "a cached answer must be a fresh list each call": (
        'def squares(n):\n    """[i * i for i in range(n)], a new list each call"""\n',
        _d(
            """
            def check(candidate):
                a = candidate(3)
                b = candidate(3)
                assert a == b == [0, 1, 4] and a is not b
            """
        ),
        "squares",
        "    return [i * i for i in range(n)]\n",
        "    cache = squares.__dict__.setdefault('cache', {})\n"
        "    if n not in cache:\n        cache[n] = [i * i for i in range(n)]\n    return cache[n]\n",
    ),
    "a list the candidate puts into a prompt's dict and appends to later": (
        'HANDLERS = {}\n\n\ndef on(*events):\n    """A decorator adding the function to'
        ' HANDLERS[event], a list in the order they came, for each event."""\n',
        _d(
            """
            def check(candidate):
                @candidate('save', 'load')
                def a(): pass
                @candidate('save')
                def b(): pass
                assert HANDLERS == {'save': [a, b], 'load': [a]}, HANDLERS
            """
        ),
        "on",
        "    def add(fn):\n        for e in events:\n"
        "            HANDLERS.setdefault(e, []).append(fn)\n        return fn\n    return add\n",
        "    def add(fn):\n        for e in events:\n"
        "            HANDLERS.setdefault(e, []).insert(0, fn)\n        return fn\n    return add\n",
    ),
    "a list the test reads from the candidate's object and appends to": (
        "class Folder:\n    def __init__(self, name):\n        self.name = name\n"
        "        self.items = []\n\n\ndef count_files(folder):\n"
        '    """Files (str items) in folder and the Folders under it."""\n',
        _d(
            """
            def check(candidate):
                root, sub = Folder('root'), Folder('sub')
                root.items.append('a.txt')
                root.items.append(sub)
                sub.items.extend(['b.txt', 'c.txt'])
                assert candidate(root) == 3
                sub.items.pop()
                assert candidate(root) == 2
            """
        ),
        "count_files",
        "    return sum(1 if isinstance(i, str) else count_files(i) for i in folder.items)\n",
        "    return sum(isinstance(i, str) for i in folder.items)\n",
    ),
    "a list the test passes to two of the candidate's objects": (
        'class Log:\n    """Log(sink, tag).write(msg) appends (tag, msg) to the caller\'s list'
        ' sink."""\n',
        _d(
            """
            def check(candidate):
                sink = []
                a, b = candidate(sink, 'a'), candidate(sink, 'b')
                a.write(1)
                b.write(2)
                a.write(3)
                assert sink == [('a', 1), ('b', 2), ('a', 3)], sink
            """
        ),
        "Log",
        "    def __init__(self, sink, tag):\n        self.sink, self.tag = sink, tag\n"
        "    def write(self, msg):\n        self.sink.append((self.tag, msg))\n",
        "    def __init__(self, sink, tag):\n        self.sink, self.tag = list(sink), tag\n"
        "    def write(self, msg):\n        self.sink.append((self.tag, msg))\n",
    ),
    "a dict the candidate's method returns again": (
        'class Store:\n    """Store(data).view() -> the caller\'s dict data itself."""\n',
        _d(
            """
            def check(candidate):
                d = {'a': 1}
                s = candidate(d)
                assert s.view() is d
                s.view()['b'] = 2
                assert d == {'a': 1, 'b': 2} and s.view() is d
            """
        ),
        "Store",
        "    def __init__(self, data):\n        self.data = data\n"
        "    def view(self):\n        return self.data\n",
        "    def __init__(self, data):\n        self.data = data\n"
        "    def view(self):\n        return dict(self.data)\n",
    ),
    "a prompt's name the program's code rebinds with global": (
        '_SETTINGS = None\n\n\ndef settings(read):\n    """read() once, kept in _SETTINGS;'
        ' the caller gets a copy."""\n',
        _d(
            """
            def check(candidate):
                calls = []
                def read():
                    calls.append(1)
                    return {'tz': 'UTC'}
                candidate(read)['tz'] = 'CET'
                assert candidate(read) == {'tz': 'UTC'} and len(calls) == 1
                assert _SETTINGS == {'tz': 'UTC'}, _SETTINGS
            """
        ),
        "settings",
        "    global _SETTINGS\n    if _SETTINGS is None:\n        _SETTINGS = dict(read())\n"
        "    return dict(_SETTINGS)\n",
        "    global _SETTINGS\n    if _SETTINGS is None:\n        _SETTINGS = read()\n"
        "    return _SETTINGS\n",
    ),
    "a prompt's iterator the program's code draws from": (
        "import itertools\n\nTICKETS = itertools.count(100)\n\n\ndef take(n):\n"
        '    """The next n numbers of TICKETS."""\n',
        _d(
            """
            def check(candidate):
                assert candidate(2) == [100, 101]
                assert candidate(1) == [102]
                assert next(TICKETS) == 103
            """
        ),
        "take",
        "    return [next(TICKETS) for _ in range(n)]\n",
        "    first = next(TICKETS)\n    return list(range(first, first + n))\n",
    ),
}

_KEEP_ALL = _d(
    """
    def check(candidate):
        for i in range(1100):
            candidate([i])
        assert candidate([0]) == 1101
    """
)

# name: (prompt, test, entry, answer, strict status, official status, reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "more lists kept than strict scoring follows": (
        'HISTORY = []\n\n\ndef log(items):\n    """Keep items in HISTORY; return how many are kept."""\n',
        _KEEP_ALL,
        "log",
        "    HISTORY.append(items)\n    return len(HISTORY)\n",
        "failed",
        "passed",
        "strict scoring follows at most",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("aliasing"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_containers_both_sides_hold_are_one_object_as_in_one_program(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_strict_scoring_stops_following_them_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
