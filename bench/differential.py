"""The full differential sweep: strict scoring against the official single
program on generated problems of every shape in ``tests/shapes.py``, honest
right and wrong answers, through the real engine.

Prints one JSON line: programs, shapes, disagreements by shape (with the
first few examples), answers the official model judged otherwise than drawn
(generator bugs), seconds.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import shapes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-shape", type=int, default=55)
    args = parser.parse_args()
    cases = shapes.cases(args.seed, args.per_shape)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = shapes.sweep(cases, Path(tmp))
    seconds = time.perf_counter() - start
    by_shape: collections.defaultdict[str, list[str]] = collections.defaultdict(list)
    for (task_id, answer), (official, strict, reason) in sorted(result.disagreements().items()):
        by_shape[task_id.split("/")[0]].append(
            f"{task_id}#{answer}: {official} vs {strict} {reason[:120]}"
        )
    print(
        orjson.dumps(
            {
                "bench": "differential",
                "programs": len(result.strict),
                "shapes": len(shapes.SHAPES),
                "disagreements": sum(len(v) for v in by_shape.values()),
                "by_shape": {k: {"count": len(v), "first": v[:3]} for k, v in by_shape.items()},
                "miscast": [f"{t}#{i}: {s}" for t, i, s in result.miscast(cases)][:20],
                "strict_statuses": collections.Counter(s for s, _ in result.strict.values()),
                "seconds": round(seconds, 1),
            }
        ).decode()
    )


if __name__ == "__main__":
    main()
