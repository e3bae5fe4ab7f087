"""Weak references between the test's objects and the candidate's, judged
as the single program judges them: a cache of what a test's factory made
(``WeakValueDictionary``) and a registry of the test's listeners
(``WeakSet``) keep the test's objects while the test holds them, give the
same object back, and lose one once the test lets it go (``del``,
``gc.collect()``); the test's weak references to the candidate's objects
die once neither side holds them, and live while the candidate does.

Each shape is a HumanEval-format problem with a right and a wrong answer,
scored in one strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _body, _d, judged_alike, score_both

from aioeval.types import CandidateResult

_CACHE_RIGHT = _body(
    """
    def __init__(self, make):
        self.make = make
        self.live = weakref.WeakValueDictionary()
    def get(self, key):
        found = self.live.get(key)
        if found is None:
            found = self.live[key] = self.make(key)
        return found
    def __len__(self):
        return len(self.live)
    """
)

# name: (prompt, test, entry, right answer, wrong answer)
SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "a weak cache of the objects a test's factory makes": (
        _d(
            '''
            import weakref

            class Cache:
                """get(key): the live object made for key, else make(key), kept
                only while someone else holds it. len(): the live ones."""
            '''
        ),
        _d(
            """
            import gc
            def check(candidate):
                class Item:
                    def __init__(self, key):
                        self.key = key
                made = []
                def make(key):
                    made.append(key)
                    return Item(key)
                c = candidate(make)
                a = c.get('a')
                assert c.get('a') is a and made == ['a'] and len(c) == 1
                b = c.get('b')
                assert len(c) == 2 and b.key == 'b'
                del b
                gc.collect()
                assert len(c) == 1
                assert c.get('b').key == 'b' and made == ['a', 'b', 'b']
            """
        ),
        "Cache",
        _CACHE_RIGHT,
        _CACHE_RIGHT.replace("weakref.WeakValueDictionary()", "{}"),
    ),
    "a weak set of the test's listeners": (
        _d(
            '''
            import weakref

            class Bus:
                """subscribe(listener) keeps it weakly; publish(x) calls each live
                listener's on(x) and returns how many it called."""
            '''
        ),
        _d(
            """
            import gc
            def check(candidate):
                class Listener:
                    def __init__(self):
                        self.got = []
                    def on(self, x):
                        self.got.append(x)
                bus = candidate()
                one, two = Listener(), Listener()
                bus.subscribe(one)
                bus.subscribe(two)
                assert bus.publish(1) == 2 and one.got == [1] and two.got == [1]
                del two
                gc.collect()
                assert bus.publish(2) == 1 and one.got == [1, 2]
            """
        ),
        "Bus",
        _body(
            """
            def __init__(self):
                self.listeners = weakref.WeakSet()
            def subscribe(self, listener):
                self.listeners.add(listener)
            def publish(self, x):
                for listener in list(self.listeners):
                    listener.on(x)
                return len(self.listeners)
            """
        ),
        _body(
            """
            def __init__(self):
                self.listeners = []
            def subscribe(self, listener):
                self.listeners.append(listener)
            def publish(self, x):
                for listener in self.listeners:
                    listener.on(x)
                return len(self.listeners)
            """
        ),
    ),
    "weak references the test keeps to the candidate's objects": (
        _d(
            '''
            import weakref

            class Registry:
                """make(name): a new Item(name) of the registry's own, which it
                knows only while someone holds it; pin(item) holds it for good;
                live(): how many it knows."""
            '''
        ),
        _d(
            """
            import gc
            import weakref
            def check(candidate):
                reg = candidate()
                a, b, c = reg.make('a'), reg.make('b'), reg.make('c')
                reg.pin(c)
                rb, rc = weakref.ref(b), weakref.ref(c)
                seen = weakref.WeakSet([a, b])
                assert reg.live() == 3 and rb() is b and len(seen) == 2
                del b, c
                gc.collect()
                assert rb() is None and len(seen) == 1
                assert rc() is not None and rc().name == 'c'
                assert reg.live() == 2
            """
        ),
        "Registry",
        _body(
            """
            class Item:
                def __init__(self, name):
                    self.name = name
            def __init__(self):
                self.known = weakref.WeakSet()
                self.pinned = []
            def make(self, name):
                item = self.Item(name)
                self.known.add(item)
                return item
            def pin(self, item):
                self.pinned.append(item)
            def live(self):
                return len(self.known)
            """
        ),
        _body(
            """
            class Item:
                def __init__(self, name):
                    self.name = name
            def __init__(self):
                self.known = []
                self.pinned = []
            def make(self, name):
                item = self.Item(name)
                self.known.append(item)
                return item
            def pin(self, item):
                self.pinned.append(item)
            def live(self):
                return len(self.known)
            """
        ),
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("weakrefs"), SHAPES, {})


@pytest.mark.parametrize("name", list(SHAPES))
def test_weak_references_are_judged_as_the_single_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)
