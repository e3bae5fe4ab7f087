"""Threads and event loops on both sides of the channel, judged as the
single program judges them or named: the test's own threads calling the
candidate's object at once, the candidate's thread calling the test's
function after its call returned, a method of the candidate's class that
the test patches, and the test's coroutines that the candidate's code runs
on its own event loop. ``LIMITS`` are the answers strict scoring cannot
judge as one program does: the result names why, so a wrong answer never
passes silently.

Each shape is a problem with a right and a wrong answer, scored in one
strict and one official run (`test_faithful.score_both`)."""

from __future__ import annotations

import pytest
from test_faithful import _d, judged_alike, judged_as_listed, score_both

from aioeval.types import CandidateResult

_COUNTER = (
    "import threading\n\n\nclass Counter:\n"
    '    """increment() adds one, safely from many threads; value() -> the count."""\n'
    "    def __init__(self):\n        self.n = 0\n        self.lock = threading.Lock()\n"
)
_COUNTER_LOCKED = (
    "    def increment(self):\n        with self.lock:\n            seen = self.n\n"
    "            self.n = seen + 1\n"
    "    def value(self):\n        return self.n\n"
)
_COUNTER_RACY = (
    "    def increment(self):\n        import time\n        seen = self.n\n"
    "        time.sleep(0.001)\n        self.n = seen + 1\n"
    "    def value(self):\n        return self.n\n"
)
_FOUR_THREADS = _d(
    """
    import threading
    def check(candidate):
        c = candidate()
        def work():
            for _ in range(20):
                c.increment()
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert c.value() == 80, c.value()
    """
)
_TEST_HOLDS_THE_LOCK = _d(
    """
    import threading, time
    def check(candidate):
        c = candidate()
        c.lock.acquire()
        t = threading.Thread(target=c.increment, daemon=True)
        t.start()
        time.sleep(0.2)
        c.n = 10
        c.lock.release()
        t.join()
        assert c.value() == 11, c.value()
    """
)
_BACKGROUND = (
    "import threading\n\n\ndef in_background(job, done):\n"
    '    """Start a daemon thread that calls done(job()); return the thread at once."""\n'
)
_WAITING_JOB = _d(
    """
    import threading, time
    def check(candidate):
        gate = threading.Event()
        got = []
        t0 = time.monotonic()
        t = candidate(lambda: gate.wait(2) and 42, got.append)
        assert time.monotonic() - t0 < 1.0, "must return at once"
        gate.set()
        t.join(3)
        assert got == [42], got
    """
)
_CONVERTER = (
    "class Rates:\n"
    '    """A remote rate service (the test replaces it)."""\n'
    "    def rate(self, src, dst):\n        raise ConnectionError('no network')\n\n\n"
    "class Converter:\n"
    '    """Converter(rates).convert(amount, src, dst) -> amount * rates.rate(src, dst),'
    ' rounded to 2 places; the same currency needs no rate."""\n'
)

_FIRST_DONE = (
    "import asyncio\n\n\nasync def first_done(*factories):\n"
    '    """Run factory() of each at once; return the value of the first to finish'
    ' and cancel the others."""\n'
)
_RACE = _d(
    """
    import asyncio
    def check(candidate):
        log = []
        def make(delay, value):
            async def f():
                try:
                    await asyncio.sleep(delay)
                except asyncio.CancelledError:
                    log.append(('cancelled', value))
                    raise
                return value
            return f
        async def main():
            got = await candidate(make(0.2, 'slow'), make(0.01, 'fast'), make(0.1, 'mid'))
            await asyncio.sleep(0.01)
            return got
        assert asyncio.run(main()) == 'fast'
        assert sorted(log) == [('cancelled', 'mid'), ('cancelled', 'slow')], log
    """
)
_LOAD_ALL = (
    "import asyncio\n\n\nasync def load_all(loader, keys):\n"
    '    """{key: await loader(key)} for keys, at most two loads running at once."""\n'
)
_PEAK = _d(
    """
    import asyncio
    def check(candidate):
        now = {'running': 0, 'peak': 0}
        async def loader(key):
            now['running'] += 1
            now['peak'] = max(now['peak'], now['running'])
            await asyncio.sleep(0.01)
            now['running'] -= 1
            return key * 2
        got = asyncio.run(candidate(loader, [1, 2, 3, 4, 5]))
        assert got == {1: 2, 2: 4, 3: 6, 4: 8, 5: 10}, got
        assert now['peak'] == 2, now
    """
)
_DEADLINE = (
    "import asyncio\n\n\nasync def within(factory, seconds, default):\n"
    '    """await factory(), or default if it takes longer than seconds (it is then'
    ' cancelled)."""\n'
)

# name: (prompt, test, entry, right answer, wrong answer)
_RUN_JOBS = (
    "import threading\n\n\ndef run_jobs(jobs, on_done, workers=3):\n"
    '    """Run each zero-argument job on `workers` threads; call on_done(i, result)'
    ' from the thread that ran it; return when all are done."""\n'
)
_ON_WORKERS = _d(
    """
    import threading
    def check(candidate):
        seen, names = {}, set()
        local = threading.local()
        lock = threading.Lock()
        def on_done(i, result):
            local.count = getattr(local, 'count', 0) + 1
            with lock:
                seen[i] = result
                names.add(threading.current_thread().name)
                totals[threading.get_ident()] = local.count
        totals = {}
        candidate([(lambda i=i: i * i) for i in range(40)], on_done, workers=4)
        assert seen == {i: i * i for i in range(40)}, seen
        assert threading.main_thread().name not in names, names
        assert threading.current_thread() is threading.main_thread()
        assert sum(totals.values()) == 40, totals
    """
)
_WITH_TIMEOUT = (
    "import threading\n\n\ndef call_with_timeout(fn, timeout, *args):\n"
    '    """fn(*args) on a daemon thread; TimeoutError if it has not finished within'
    ' timeout seconds (the thread is left running)."""\n'
)
_RELEASED_LATER = _d(
    """
    import threading
    def check(candidate):
        assert candidate(lambda a, b: a + b, 1.0, 2, 3) == 5
        release = threading.Event()
        try:
            candidate(lambda: release.wait(60), 0.05)
        except TimeoutError:
            pass
        else:
            raise AssertionError('no timeout')
        release.set()
    """
)

SHAPES: dict[str, tuple[str, str, str, str, str]] = {
    "the test's coroutines run as the candidate's tasks, the losers cancelled": (
        _FIRST_DONE,
        _RACE,
        "first_done",
        "    tasks = [asyncio.ensure_future(f()) for f in factories]\n"
        "    done, rest = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)\n"
        "    for t in rest:\n        t.cancel()\n"
        "    return done.pop().result()\n",
        "    tasks = [asyncio.create_task(f()) for f in factories]\n"
        "    first = await tasks[0]\n"
        "    for t in tasks[1:]:\n        t.cancel()\n"
        "    return first\n",
    ),
    "the test's coroutine awaited beside the candidate's other tasks": (
        _LOAD_ALL,
        _PEAK,
        "load_all",
        "    gate = asyncio.Semaphore(2)\n"
        "    async def one(k):\n        async with gate:\n            return k, await loader(k)\n"
        "    return dict(await asyncio.gather(*(one(k) for k in keys)))\n",
        "    async def one(k):\n        return k, await loader(k)\n"
        "    return dict(await asyncio.gather(*(one(k) for k in keys)))\n",
    ),
    "the test's coroutine cancelled by the candidate's timeout": (
        _DEADLINE,
        _d(
            """
            import asyncio
            def check(candidate):
                log = []
                async def slow():
                    try:
                        await asyncio.sleep(1.0)
                    except asyncio.CancelledError:
                        log.append('cancelled')
                        raise
                    return 'late'
                async def quick():
                    await asyncio.sleep(0)
                    return 'quick'
                assert asyncio.run(candidate(slow, 0.05, 'default')) == 'default'
                assert log == ['cancelled'], log
                assert asyncio.run(candidate(quick, 0.5, 'default')) == 'quick'
            """
        ),
        "within",
        "    try:\n        return await asyncio.wait_for(factory(), seconds)\n"
        "    except asyncio.TimeoutError:\n        return default\n",
        "    return await factory()\n",
    ),
    "the test's coroutine waiting on an event another of them sets": (
        "import asyncio\n\n\nasync def both(first, second):\n"
        '    """[await first(), await second()], the two run at once."""\n',
        _d(
            """
            import asyncio
            def check(candidate):
                async def main():
                    ready = asyncio.Event()
                    async def waiter():
                        await asyncio.wait_for(ready.wait(), 0.5)
                        return 'woke'
                    async def setter():
                        await asyncio.sleep(0.01)
                        ready.set()
                        return 'set'
                    return await candidate(waiter, setter)
                assert asyncio.run(main()) == ['woke', 'set']
            """
        ),
        "both",
        "    return list(await asyncio.gather(first(), second()))\n",
        "    return [await first(), await second()]\n",
    ),
    "the test's coroutine stepped after another's cancelled timer is due": (
        "import asyncio\n\n\nasync def after_timeout(slow, quick):\n"
        '    """await slow() for at most 0.01 s (a timeout is ignored), wait 0.1 s, then'
        ' return await quick()."""\n',
        _d(
            """
            import asyncio
            def check(candidate):
                async def slow():
                    await asyncio.sleep(0.05)
                async def quick():
                    await asyncio.sleep(0)
                    return 'quick'
                assert asyncio.run(candidate(slow, quick)) == 'quick'
            """
        ),
        "after_timeout",
        "    try:\n        await asyncio.wait_for(slow(), 0.01)\n"
        "    except asyncio.TimeoutError:\n        pass\n"
        "    await asyncio.sleep(0.1)\n    return await quick()\n",
        "    try:\n        await asyncio.wait_for(slow(), 0.01)\n"
        "    except asyncio.TimeoutError:\n        return 'timeout'\n"
        "    return await quick()\n",
    ),
    "a method of the candidate's class that the test patches with a return value": (
        _CONVERTER,
        _d(
            """
            from unittest import mock
            def check(candidate):
                with mock.patch.object(Rates, 'rate', return_value=1.5) as rate:
                    c = Converter(Rates())
                    assert c.convert(10, 'EUR', 'USD') == 15.0
                    assert c.convert(2, 'EUR', 'EUR') == 2
                    rate.assert_called_once_with('EUR', 'USD')
            """
        ),
        "Converter",
        "    def __init__(self, rates):\n        self.rates = rates\n"
        "    def convert(self, amount, src, dst):\n"
        "        if src == dst:\n            return amount\n"
        "        return round(amount * self.rates.rate(src, dst), 2)\n",
        "    def __init__(self, rates):\n        self.rates = rates\n"
        "    def convert(self, amount, src, dst):\n"
        "        return round(amount * self.rates.rate(src, dst), 2)\n",
    ),
    "the candidate's pool calling the test's callback on its worker threads": (
        _RUN_JOBS,
        _ON_WORKERS,
        "run_jobs",
        "    from concurrent.futures import ThreadPoolExecutor\n"
        "    def run(i, job):\n        on_done(i, job())\n"
        "    with ThreadPoolExecutor(max_workers=workers) as pool:\n"
        "        for i, job in enumerate(jobs):\n            pool.submit(run, i, job)\n",
        "    for i, job in enumerate(jobs):\n        on_done(i, job())\n",
    ),
}

_TEST_THREADS = "strict scoring: the test's threads called the candidate's code side by side"
# name: (prompt, test, entry, answer, strict status, official status, strict reason)
LIMITS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "the test's producer and consumer threads on the candidate's blocking queue": (
        'class Channel:\n    """put(x) waits while an item is waiting; get() waits for one."""\n',
        _d(
            """
            import threading
            def check(candidate):
                c = candidate()
                got = []
                def produce():
                    for i in range(3):
                        c.put(i)
                def consume():
                    for _ in range(3):
                        got.append(c.get())
                threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert got == [0, 1, 2]
            """
        ),
        "Channel",
        _d(
            """
            import threading
            class Channel:
                def __init__(self):
                    self.cv = threading.Condition()
                    self.items = []
                def put(self, x):
                    with self.cv:
                        self.cv.wait_for(lambda: not self.items)
                        self.items.append(x)
                        self.cv.notify_all()
                def get(self):
                    with self.cv:
                        self.cv.wait_for(lambda: self.items)
                        x = self.items.pop()
                        self.cv.notify_all()
                        return x
            """
        ),
        "failed",
        "passed",
        _TEST_THREADS,
    ),
    "the test's threads calling a locked counter at once": (
        _COUNTER,
        _FOUR_THREADS,
        "Counter",
        _COUNTER_LOCKED,
        "failed",
        "passed",
        _TEST_THREADS,
    ),
    "the test's threads calling a counter that loses updates": (
        _COUNTER,
        _FOUR_THREADS,
        "Counter",
        _COUNTER_RACY,
        "failed",
        "failed",
        _TEST_THREADS,
    ),
    "the test holding the candidate's lock while its thread calls": (
        _COUNTER,
        _TEST_HOLDS_THE_LOCK,
        "Counter",
        _COUNTER_LOCKED,
        "failed",
        "passed",
        _TEST_THREADS,
    ),
    "the test's thread pool mapping the candidate's function": (
        'def sq(x):\n    """x * x"""\n',
        _d(
            """
            from concurrent.futures import ThreadPoolExecutor
            def check(candidate):
                with ThreadPoolExecutor(4) as ex:
                    assert list(ex.map(candidate, range(50))) == [i * i for i in range(50)]
            """
        ),
        "sq",
        "    return x * x\n",
        "failed",
        "passed",
        _TEST_THREADS,
    ),
    "the candidate's thread calling the test's waiting job after it returned": (
        _BACKGROUND,
        _WAITING_JOB,
        "in_background",
        "    t = threading.Thread(target=lambda: done(job()), daemon=True)\n"
        "    t.start()\n    return t\n",
        "failed",
        "passed",
        "strict scoring: the candidate's threads called the test's code side by side",
    ),
    "the test's callback on the candidate's thread waiting for the test's next step": (
        _WITH_TIMEOUT,
        _RELEASED_LATER,
        "call_with_timeout",
        "    box = {}\n"
        "    t = threading.Thread(target=lambda: box.update(v=fn(*args)), daemon=True)\n"
        "    t.start()\n    t.join(timeout)\n"
        "    if t.is_alive():\n        raise TimeoutError(timeout)\n"
        "    return box['v']\n",
        "timeout",
        "passed",
        "strict scoring: the test's code, called from a thread of the candidate's, was still",
    ),
}


@pytest.fixture(scope="module")
def verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[tuple[str, int], CandidateResult]]:
    return score_both(tmp_path_factory.mktemp("concurrency"), SHAPES, LIMITS)


@pytest.mark.parametrize("name", list(SHAPES))
def test_threads_and_loops_are_judged_as_one_program_judges_them(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_alike(verdicts, name)


@pytest.mark.parametrize("name", list(LIMITS))
def test_where_they_cannot_be_followed_the_reason_is_named(
    verdicts: dict[str, dict[tuple[str, int], CandidateResult]], name: str
) -> None:
    judged_as_listed(verdicts, name, LIMITS)
