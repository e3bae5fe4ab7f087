"""A long linked list through strict scoring: the prompt's helpers build
it and read it back, the candidate reverses it (the 2,000-node shape of
``tests/test_faithful_house_sets.py``), at two lengths, strict and official.

Prints one JSON line: each length's strict and official wall and CPU
milliseconds, and ``growth``, strict's CPU at the longer length over the
shorter divided by the ratio of the lengths (about 1 when the cost is
proportional to the size).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_faithful import score_both

PROMPT = (
    "class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n"
    "        self.next = next\n\n\ndef build(vals):\n    head = None\n"
    "    for v in reversed(vals):\n        head = ListNode(v, head)\n    return head\n\n\n"
    "def to_list(head):\n    out = []\n    while head:\n        out.append(head.val)\n"
    '        head = head.next\n    return out\n\n\ndef reverse(head):\n    """reversed"""\n'
)
RIGHT = "    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n    return prev\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=500)
    parser.add_argument("--long", type=int, default=4000)
    args = parser.parse_args()
    shapes = {}
    for n in (args.short, args.long):
        test = f"def check(candidate):\n    assert to_list(candidate(build(list(range({n}))))) == list(range({n}))[::-1]\n"
        shapes[str(n)] = (PROMPT, test, "reverse", RIGHT, "    return head\n")
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = score_both(Path(tmp), shapes, {})
    out: dict[str, object] = {"bench": "linked_list"}
    for n in shapes:
        for mode in ("strict", "official"):
            r = verdicts[mode][(n, 0)]
            if r.status != "passed":
                raise SystemExit(f"{mode} {n}: {r.status} {r.reason}")
            out[f"{mode}_{n}"] = {
                "wall_ms": round(r.wall_ms or 0, 1),
                "cpu_ms": round(r.cpu_ms or 0, 1),
            }
    cpu = {n: verdicts["strict"][(n, 0)].cpu_ms or 1.0 for n in shapes}
    out["growth"] = round(cpu[str(args.long)] / cpu[str(args.short)] / (args.long / args.short), 2)
    print(orjson.dumps(out).decode())


if __name__ == "__main__":
    main()
