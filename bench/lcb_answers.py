"""The answers of `bench/lcb_data.py`'s eight problem kinds, each labelled
with its verdict under LiveCodeBench's rules (``passed``, ``wrong``,
``error``, ``timeout``). All are written for aioeval's benches; the stall
answers wait on the large test only (``STALL`` inputs), so the right part
of each runs first."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """A problem kind's starter code and answers."""

    starter: str
    answers: list[tuple[str, str]]
    """Seven answers every problem of the kind has."""
    last: tuple[str, str]
    """The eighth answer, on most problems."""
    stall: tuple[str, str]
    """The eighth answer on every tenth problem: past the limit on the large test."""


READ_N = "n = int(input())\nxs = list(map(int, input().split()))\n"
SLEEP = "import time\n"

STDIN: dict[str, Kind] = {
    "sum": Kind(
        starter="",
        answers=[
            ("n = int(input())\nprint(sum(map(int, input().split())))\n", "passed"),
            (
                "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))\n",
                "passed",
            ),
            (
                "import sys\nd = sys.stdin.buffer.read().split()\nprint(sum(int(x) for x in d[1:]))\n",
                "passed",
            ),
            # Upstream's star import of builtins binds ``open`` before its
            # ``mock_open`` patch: ``open(0)`` is the process's empty stdin.
            ("data = open(0).read().split()\nprint(sum(map(int, data[1:])))\n", "wrong"),
            (
                "def main():\n    n = int(input())\n    xs = list(map(int, input().split()))\n"
                "    print(sum(xs), '  ')\n\n\nif __name__ == '__main__':\n    main()\n",
                "passed",
            ),
            (READ_N + "print(sum(xs) - min(xs))\n", "wrong"),
            (READ_N + "print(xs[n])\n", "error"),
        ],
        last=("input()\nprint(sum(map(int, input().split()[:-1])))\n", "wrong"),
        stall=(
            SLEEP + "n = int(input())\nif n >= 2000:\n    time.sleep(60)\n"
            "print(sum(map(int, input().split())))\n",
            "timeout",
        ),
    ),
    "mean": Kind(
        starter="",
        answers=[
            (READ_N + "print(f'{sum(xs) / n:.10f}')\n", "passed"),
            (READ_N + "print(sum(xs) / n)\n", "passed"),
            (READ_N + "print('%.12f' % (sum(xs) / n))\n", "passed"),
            (
                "from decimal import Decimal\nn = int(input())\n"
                "print(sum(Decimal(x) for x in input().split()) / n)\n",
                "passed",
            ),
            (READ_N + "print(f'{sum(xs) / n:.10f}', end=' \\r\\n')\n", "passed"),
            (READ_N + "print(sum(xs) // n)\n", "wrong"),
            (READ_N + "print(f'{sum(xs) / n:.2f}')\n", "wrong"),
        ],
        last=(READ_N + "print(sum(xs) / (n - n))\n", "error"),
        stall=(READ_N + "while n >= 1024:\n    pass\nprint(sum(xs) / n)\n", "timeout"),
    ),
    "pairs": Kind(
        starter="",
        answers=[
            (
                "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n"
                "    print(a + b, a * b)\n",
                "passed",
            ),
            (
                "import sys\nlines = sys.stdin.readlines()\nn = int(lines[0])\n"
                "for line in lines[1:n + 1]:\n    a, b = map(int, line.split())\n"
                "    print(a + b, a * b)\n",
                "passed",
            ),
            (
                "n = int(input())\nfor _ in range(n):\n    a, b = map(int, input().split())\n"
                "    print(float(a + b), '', a * b)\n",
                "passed",
            ),
            (
                "n = int(input())\nout = []\nfor _ in range(n):\n"
                "    a, b = map(int, input().split())\n    out.append(f'{a + b} {a * b}')\n"
                "print('\\n'.join(out))\nprint()\nprint()\n",
                "passed",
            ),
            (
                "n = int(input())\nfor i in range(n):\n    a, b = map(int, input().split())\n"
                "    print(a + b, a * b)\n    if i == 0:\n        print()\n",
                "wrong",
            ),
            (
                # Upstream makes a ``Solution()`` for any program whose text
                # says ``class Solution``; a stdin program's is not on the module.
                "class Solution:\n    def row(self, a, b):\n        return a + b, a * b\n\n\n"
                "n = int(input())\nfor _ in range(n):\n"
                "    print(*Solution().row(*map(int, input().split())))\n",
                "error",
            ),
            ("import sys\nfor line in sys.stdin:\n    print(line)\n", "error"),
        ],
        last=(
            "n = int(input())\nfor _ in range(n - 1):\n    a, b = map(int, input().split())\n"
            "    print(a + b, a * b)\n",
            "wrong",
        ),
        stall=(
            SLEEP + "n = int(input())\nif n >= 2000:\n    time.sleep(60)\nfor _ in range(n):\n"
            "    a, b = map(int, input().split())\n    print(a + b, a * b)\n",
            "timeout",
        ),
    ),
    "words": Kind(
        starter="",
        answers=[
            ("print(' '.join(input().split()[::-1]))\n", "passed"),
            (
                "import sys\nwords = sys.stdin.readline().split()\nwords.reverse()\nprint(*words)\n",
                "passed",
            ),
            (
                "import sys\nprint(' '.join(reversed(input().split())))\nsys.exit(0)\nprint('more')\n",
                "passed",
            ),
            (
                "w = input().split()\nfor x in reversed(w):\n    print(x, end=' ')\nprint()\n",
                "passed",
            ),
            ("print(' '.join(input().split()[::-1]).upper())\n", "wrong"),
            ("print(input())\n", "wrong"),
            ("print(' '.join(input().split()[::-1])\n", "error"),
        ],
        last=("import sys\nwords = input().split()\nsys.exit()\nprint(*words[::-1])\n", "wrong"),
        stall=(
            SLEEP + "w = input().split()\nwhile len(w) >= 2000:\n    time.sleep(0.01)\n"
            "print(*w[::-1])\n",
            "timeout",
        ),
    ),
}

KADANE = (
    "        best = cur = nums[0]\n        for x in nums[1:]:\n"
    "            cur = max(x, cur + x)\n            best = max(best, cur)\n"
)
TWO_SUM = (
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n"
)


def _method(name: str, args: str, body: str) -> str:
    return f"class Solution:\n    def {name}(self, {args}):\n{body}"


FUNCTIONAL: dict[str, Kind] = {
    "twoSum": Kind(
        starter="class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
        answers=[
            (_method("twoSum", "nums: List[int], target: int", TWO_SUM), "passed"),
            (
                _method(
                    "twoSum",
                    "nums, target",
                    "        where = {x: i for i, x in enumerate(nums)}\n"
                    "        for i, x in enumerate(nums):\n"
                    "            j = where.get(target - x)\n"
                    "            if j is not None and j > i:\n                return (i, j)\n",
                ),
                "passed",
            ),
            (
                _method(
                    "twoSum",
                    "nums, target",
                    "        for i in range(len(nums)):\n            for j in range(i + 1, len(nums)):\n"
                    "                if nums[i] + nums[j] == target:\n                    return [i, j]\n",
                ),
                "passed",
            ),
            (
                "from typing import List\n\n\ndef find(nums: List[int], target: int) -> List[int]:\n"
                + TWO_SUM.replace("\n    ", "\n")[4:]
                + "    return []\n\n\n"
                + _method("twoSum", "nums, target", "        return find(nums, target)\n"),
                "passed",
            ),
            (
                _method(
                    "twoSum",
                    "nums, target",
                    TWO_SUM.replace("[seen[target - x], i]", "[i, seen[target - x]]"),
                ),
                "wrong",
            ),
            (_method("two_sum", "nums, target", "        return [0, 1]\n"), "error"),
            (_method("twoSum", "nums, target", "        return [nums.index(target)]\n"), "error"),
        ],
        last=(_method("twoSum", "nums, target", "        return [0, 1]\n"), "wrong"),
        stall=(
            _method(
                "twoSum",
                "nums, target",
                "        while len(nums) >= 400:\n            pass\n" + TWO_SUM,
            ),
            "timeout",
        ),
    ),
    "maxSubArray": Kind(
        starter="class Solution:\n    def maxSubArray(self, nums: List[int]) -> int:\n        ",
        answers=[
            (_method("maxSubArray", "nums: List[int]", KADANE + "        return best\n"), "passed"),
            (_method("maxSubArray", "nums", KADANE + "        return float(best)\n"), "passed"),
            (
                _method(
                    "maxSubArray",
                    "nums",
                    "        prefix = list(accumulate(nums, initial=0))\n"
                    "        low, best = prefix[0], -inf\n        for p in prefix[1:]:\n"
                    "            best = max(best, p - low)\n            low = min(low, p)\n"
                    "        return best\n",
                ),
                "passed",
            ),
            (
                "import sys\nsys.setrecursionlimit(10000)\n\n\n"
                + _method("maxSubArray", "nums", KADANE + "        return int(best)\n"),
                "passed",
            ),
            (_method("maxSubArray", "nums", "        return max(nums)\n"), "wrong"),
            (_method("maxSubArray", "nums", "        return sum(nums)\n"), "wrong"),
            (_method("maxSubArray", "nums", "        return nums[len(nums)]\n"), "error"),
        ],
        last=("class Solution:\n    ratio = 1 / 0\n", "error"),
        stall=(
            SLEEP
            + _method(
                "maxSubArray",
                "nums",
                "        if len(nums) >= 2000:\n            time.sleep(60)\n"
                + KADANE
                + "        return best\n",
            ),
            "timeout",
        ),
    ),
    "isPalindrome": Kind(
        starter="class Solution:\n    def isPalindrome(self, s: str) -> bool:\n        ",
        answers=[
            (_method("isPalindrome", "s: str", "        return s == s[::-1]\n"), "passed"),
            (_method("isPalindrome", "s", "        return 1 if s == s[::-1] else 0\n"), "passed"),
            (
                _method(
                    "isPalindrome",
                    "s",
                    "        i, j = 0, len(s) - 1\n        while i < j:\n"
                    "            if s[i] != s[j]:\n                return False\n"
                    "            i, j = i + 1, j - 1\n        return True\n",
                ),
                "passed",
            ),
            (
                _method(
                    "isPalindrome",
                    "s",
                    "        return all(s[i] == s[~i] for i in range(len(s) // 2))\n",
                ),
                "passed",
            ),
            (
                _method(
                    "isPalindrome", "s", "        return 'true' if s == s[::-1] else 'false'\n"
                ),
                "wrong",
            ),
            (_method("isPalindrome", "s", "        return True\n"), "wrong"),
            (_method("isPalindrome", "s", "        return s.isPalindrome()\n"), "error"),
        ],
        last=(_method("isPalindrome", "s", "        pass\n"), "wrong"),
        stall=(
            _method(
                "isPalindrome",
                "s",
                "        while len(s) >= 4000:\n            pass\n        return s == s[::-1]\n",
            ),
            "timeout",
        ),
    ),
    "sortedLengths": Kind(
        starter="class Solution:\n    def sortedLengths(self, words: List[str]) -> List[int]:\n        ",
        answers=[
            (
                _method(
                    "sortedLengths", "words: List[str]", "        return sorted(map(len, words))\n"
                ),
                "passed",
            ),
            (
                _method(
                    "sortedLengths",
                    "words",
                    "        return tuple(sorted(len(w) for w in words))\n",
                ),
                "passed",
            ),
            (
                _method(
                    "sortedLengths",
                    "words",
                    "        out = [len(w) for w in words]\n        out.sort()\n        return out\n",
                ),
                "passed",
            ),
            (
                _method(
                    "sortedLengths",
                    "words",
                    "        c = Counter(len(w) for w in words)\n"
                    "        return [k for k in sorted(c) for _ in range(c[k])]\n",
                ),
                "passed",
            ),
            (
                _method("sortedLengths", "words", "        return [len(w) for w in words]\n"),
                "wrong",
            ),
            (
                _method(
                    "sortedLengths",
                    "words",
                    "        return sorted(map(len, words), reverse=True)\n",
                ),
                "wrong",
            ),
            ("class Solution:\n    def sortedLengths(self, words)\n        return []\n", "error"),
        ],
        last=(
            _method("sortedLengths", "words", "        return sorted(set(map(len, words)))\n"),
            "wrong",
        ),
        stall=(
            SLEEP
            + _method(
                "sortedLengths",
                "words",
                "        if len(words) >= 2000:\n            time.sleep(60)\n        return sorted(map(len, words))\n",
            ),
            "timeout",
        ),
    ),
}
