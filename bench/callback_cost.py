"""What a callback of the test's costs under strict scoring while containers
are open or kept: the candidate calls the test's function once for each of
``--items`` items, strict and official.

Three cases: the items are an argument of the call (open while the sort
runs); the candidate's object keeps the list across calls (both sides hold
it, `values.kept`) and sorts it in a later call; and the candidate's object
keeps the list and calls the test's function on each item (a kept list
that does not change, compared at every callback).

Prints one JSON line: each case's strict and official wall and CPU
milliseconds, and strict's CPU per callback in microseconds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_faithful import score_both

_SORTER = (
    "class Sorter:\n"
    '    """Sorter(items) keeps items (the caller\'s list); by(key) sorts it in place by key."""\n'
)
_SORTER_RIGHT = (
    "    def __init__(self, items):\n        self.items = items\n"
    "    def by(self, key):\n        self.items.sort(key=key)\n"
)


def shapes(n: int) -> dict[str, tuple[str, str, str, str, str]]:
    expected = f"sorted(range({n}), key=lambda v: -v)"
    return {
        "argument": (
            'def sort_by(items, key):\n    """sorted(items, key=key)"""\n',
            f"def check(candidate):\n    assert candidate(list(range({n})), lambda v: -v)"
            f" == {expected}\n",
            "sort_by",
            "    return sorted(items, key=key)\n",
            "    return items\n",
        ),
        "kept": (
            _SORTER,
            f"def check(candidate):\n    xs = list(range({n}))\n    s = candidate(xs)\n"
            f"    s.by(lambda v: -v)\n    assert xs == {expected}\n",
            "Sorter",
            _SORTER_RIGHT,
            "    def __init__(self, items):\n        self.items = list(items)\n"
            "    def by(self, key):\n        self.items.sort(key=key)\n",
        ),
        "kept, walked": (
            'class Walker:\n    """Walker(items) keeps items; each(fn) calls fn(x) for each x."""\n',
            f"def check(candidate):\n    seen = []\n    w = candidate(list(range({n})))\n"
            f"    w.each(seen.append)\n    assert seen == list(range({n}))\n",
            "Walker",
            "    def __init__(self, items):\n        self.items = items\n"
            "    def each(self, fn):\n        for x in self.items:\n            fn(x)\n",
            "    def __init__(self, items):\n        self.items = items\n"
            "    def each(self, fn):\n        pass\n",
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    args = parser.parse_args()
    cases = shapes(args.items)
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = score_both(Path(tmp), cases, {})
    out: dict[str, object] = {"bench": "callback_cost", "items": args.items}
    for name in cases:
        row: dict[str, object] = {}
        for mode in ("strict", "official"):
            r = verdicts[mode][(name, 0)]
            row[mode] = {
                "status": r.status,
                "wall_ms": round(r.wall_ms or 0, 1),
                "cpu_ms": round(r.cpu_ms or 0, 1),
            }
        strict_cpu = verdicts["strict"][(name, 0)].cpu_ms or 0.0
        row["strict_cpu_us_per_callback"] = round(1000 * strict_cpu / args.items, 1)
        out[name] = row
    print(orjson.dumps(out).decode())


if __name__ == "__main__":
    main()
