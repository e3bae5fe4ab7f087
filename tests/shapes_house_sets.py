"""Generated shapes of a company's own HumanEval-format set (see
``shapes``, which sweeps them with the rest): ClassEval-style class
skeletons, unittest-style tests, configuration from the environment, a
decimal context, ``unittest.mock`` patches, log records, aware datetimes,
paths, coroutines, linked lists the test builds, and callbacks the
candidate's worker threads call."""

from __future__ import annotations

import random
import textwrap

Draw = tuple[str, str, str, str, list[str]]
"""(prompt, test, entry, right answer, wrong answers)"""


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _unittest(body: str) -> str:
    """A unittest.TestCase ``T`` with ``body`` (its methods), run by check."""
    return (
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        + textwrap.indent(_d(body), "    ")
        + "\n\ndef check(candidate):\n"
        "    r = unittest.TextTestRunner(stream=open('/dev/null', 'w'))"
        ".run(unittest.defaultTestLoader.loadTestsFromTestCase(T))\n"
        "    assert r.wasSuccessful(), r.failures + r.errors\n"
    )


def class_skeleton(r: random.Random) -> Draw:
    cls, k = f"Counter{r.randrange(100)}", r.randrange(2, 9)
    skeleton = _d(f'''
        class {cls}:
            """Counts by {k}."""

            def __init__(self):
                """Start at 0."""

            def tick(self):
                """Add {k}; return the new total."""

            def __len__(self):
                """The number of ticks."""


        def make():
            """A new {cls}."""
        ''')
    done = _d(f"""
        class {cls}:
            def __init__(self):
                self.total, self.ticks = 0, 0
            def tick(self):
                self.total += {k}
                self.ticks += 1
                return self.total
            def __len__(self):
                return self.ticks
        """)
    test = _unittest(f"""
        def test_ticks(self):
            c = make()
            self.assertEqual([c.tick() for _ in range(3)], [{k}, {2 * k}, {3 * k}])
            self.assertEqual(len(c), 3)
            self.assertEqual({cls}().tick(), {k})
        """)
    right = "    return " + cls + "()\n\n\n" + done
    wrong = right.replace(f"self.total += {k}", f"self.total += {k + 1}")
    return skeleton, test, "make", right, [wrong, right.replace("self.ticks += 1", "pass")]


def environment(r: random.Random) -> Draw:
    var, value = f"APP_{r.choice('XYZ')}{r.randrange(100)}", r.randrange(2, 64)
    test = _d(f"""
        import os
        def check(candidate):
            assert candidate() == 1
            os.environ[{var!r}] = {str(value)!r}
            assert candidate() == {value}
            del os.environ[{var!r}]
            assert candidate() == 1
        """)
    right = f"    import os\n    return int(os.environ.get({var!r}, '1'))\n"
    wrong = f"    import os\n    return int(os.getenv({var!r}) or {value})\n"
    prompt = f'def workers():\n    """int(${var}), default 1"""\n'
    return prompt, test, "workers", right, [wrong]


def decimal_context(r: random.Random) -> Draw:
    prec, d = r.randrange(4, 12), r.choice([3, 7, 9, 11])
    test = _d(f"""
        import decimal
        decimal.getcontext().prec = {prec}
        def check(candidate):
            assert candidate(1) == decimal.Decimal(1) / {d}
            assert len(str(candidate(2))) == {prec + 2}
        """)
    prompt = f'from decimal import Decimal\n\n\ndef part(x):\n    """Decimal(x) / {d}"""\n'
    right = f"    return Decimal(x) / {d}\n"
    return prompt, test, "part", right, [f"    return Decimal(x / {d})\n"]


def mock_patch(r: random.Random) -> Draw:
    now = 1_700_000_000 + r.randrange(10**6)
    test = _d(f"""
        from unittest import mock
        def check(candidate):
            with mock.patch('time.time', return_value={now}.25) as clock:
                assert candidate() == {now}
            assert clock.call_count == 1
        """)
    prompt = 'import time\n\n\ndef now():\n    """int(time.time())"""\n'
    return prompt, test, "now", "    return int(time.time())\n", ["    return time.time()\n"]


def log_records(r: random.Random) -> Draw:
    name, limit = f"svc{r.randrange(100)}", r.randrange(3, 30)
    prompt = _d(f'''
        import logging

        log = logging.getLogger({name!r})


        def admit(n):
            """True if n <= {limit}; else log WARNING "over by D" and return False."""
        ''')
    test = _unittest(f"""
        def test_logs(self):
            with self.assertLogs({name!r}, level='WARNING') as cm:
                self.assertTrue(admit({limit}))
                self.assertFalse(admit({limit + 2}))
            self.assertEqual(cm.output, ['WARNING:{name}:over by 2'])
        """)
    right = f"    if n <= {limit}:\n        return True\n    log.warning('over by %d', n - {limit})\n    return False\n"
    wrong = right.replace("log.warning", "log.info")
    return prompt, test, "admit", right, [wrong]


def aware_datetime(r: random.Random) -> Draw:
    zone, hour = r.choice(["Europe/Paris", "Asia/Tokyo", "America/New_York"]), r.randrange(24)
    prompt = _d(f'''
        from datetime import datetime
        from zoneinfo import ZoneInfo


        def local(dt):
            """dt in {zone}"""
        ''')
    test = _d(f"""
        from datetime import datetime, timezone
        from zoneinfo import ZoneInfo
        def check(candidate):
            dt = datetime(2024, 3, 10, {hour}, tzinfo=timezone.utc)
            got = candidate(dt)
            assert got == dt and got.tzinfo is ZoneInfo({zone!r})
            assert got.hour == dt.astimezone(ZoneInfo({zone!r})).hour
        """)
    right = f"    return dt.astimezone(ZoneInfo({zone!r}))\n"
    return prompt, test, "local", right, [f"    return dt.replace(tzinfo=ZoneInfo({zone!r}))\n"]


def path_values(r: random.Random) -> Draw:
    root, ext = f"/srv/app{r.randrange(100)}", r.choice(["toml", "json", "ini"])
    prompt = f'from pathlib import Path\n\n\ndef conf(root, name):\n    """root / "conf" / (name + ".{ext}")"""\n'
    test = _d(f"""
        from pathlib import Path
        def check(candidate):
            got = candidate(Path({root!r}), 'main')
            assert got == Path({root!r}) / 'conf' / 'main.{ext}' and got.suffix == '.{ext}'
        """)
    right = f"    return root / 'conf' / (name + '.{ext}')\n"
    return prompt, test, "conf", right, [f"    return root / (name + '.{ext}')\n"]


def coroutine(r: random.Random) -> Draw:
    k = r.randrange(2, 9)
    prompt = f'import asyncio\n\n\nasync def scale(x):\n    """{k} * x"""\n'
    test = _d(f"""
        import asyncio
        def check(candidate):
            assert asyncio.run(candidate(3)) == {3 * k}
            async def both():
                return await asyncio.gather(candidate(1), candidate(2))
            assert asyncio.run(both()) == [{k}, {2 * k}]
        """)
    right = f"    await asyncio.sleep(0)\n    return {k} * x\n"
    return prompt, test, "scale", right, [f"    return {k} + x\n"]


def linked_list(r: random.Random) -> Draw:
    n = r.randrange(20, 300)
    prompt = _d('''
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val = val
                self.next = next


        def reverse(head):
            """The list reversed (its nodes relinked)."""
        ''')
    test = _d(f"""
        def check(candidate):
            head = None
            for v in range({n}):
                head = ListNode(v, head)
            node, seen = candidate(head), []
            while node:
                seen.append(node.val)
                node = node.next
            assert seen == list(range({n}))
        """)
    right = _d("""
            prev = None
            while head:
                head.next, prev, head = prev, head, head.next
            return prev
        """)
    right = textwrap.indent(right, "    ")
    return prompt, test, "reverse", right, ["    return head\n"]


def worker_callback(r: random.Random) -> Draw:
    n, workers = r.randrange(5, 40), r.randrange(2, 5)
    prompt = _d('''
        import threading


        def each_on_workers(items, on_item, workers):
            """Call on_item(x) for every x of items from `workers` threads of its
            own (never the caller's); return the number of items."""
        ''')
    test = _d(f"""
        import threading
        def check(candidate):
            seen, names = [], set()
            mine = threading.local()
            def on_item(x):
                mine.count = getattr(mine, 'count', 0) + 1
                seen.append(x)
                names.add(threading.current_thread().name)
            assert candidate(list(range({n})), on_item, {workers}) == {n}
            assert sorted(seen) == list(range({n}))
            assert threading.current_thread().name not in names, names
            assert not hasattr(mine, 'count')
        """)
    right = _d("""
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(on_item, items))
        return len(items)
        """)
    wrong = "    for x in items:\n        on_item(x)\n    return len(items)\n"
    return prompt, test, "each_on_workers", textwrap.indent(right, "    "), [wrong]


SHAPES = {
    f.__name__: f
    for f in (
        class_skeleton,
        environment,
        decimal_context,
        mock_patch,
        log_records,
        aware_datetime,
        path_values,
        coroutine,
        linked_list,
        worker_callback,
    )
}
