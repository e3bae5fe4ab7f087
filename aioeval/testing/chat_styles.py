"""Chat answers in the styles today's chat models write them, around a
given program: for tests of the answer extractor and for
``bench/extraction.py``'s tuning corpus.

A `Case` is the program an answer is meant to carry (a whole program, and
for a function-completion problem the body alone) and a line that
exercises it (a call of the entry point). Each style in `STYLES` wraps a
case in prose, fences, examples, tests and reasoning the way one kind of
answer does; a style returns None when it does not apply to the case (a
body-only style for a stdin program). Exercising code the styles add
never succeeds when run (it names ``EXAMPLE``, which nothing defines), so
an extractor that keeps it turns the answer into a failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec


class Case(msgspec.Struct, frozen=True, kw_only=True):
    """The program an answer carries."""

    program: str
    """The whole program (a function problem: imports, helpers, the function)."""
    body: str = ""
    """The function's body alone, for problems whose prompt it completes."""
    call: str = "main()"
    """An expression that exercises the program (``f(*EXAMPLE)``)."""
    other: str = ""
    """A program the answer shows and then drops (a draft); empty: a
    wrong first try made from the program's first line."""


Style = Callable[[Case], str | None]


def _fence(code: str, info: str = "python", mark: str = "```") -> str:
    return f"{mark}{info}\n{code.rstrip(chr(10))}\n{mark}\n"


def _indent(code: str, by: str) -> str:
    return "".join(by + line if line.strip() else line for line in code.splitlines(True))


_IMPORT = re.compile(r"^(?:import|from)\s", re.MULTILINE)


def _split_imports(program: str) -> tuple[str, str] | None:
    """(import lines, the rest) when the program starts with imports."""
    lines = program.splitlines(True)
    head = [ln for ln in lines if _IMPORT.match(ln)]
    if not head:
        return None
    return "".join(head), "".join(ln for ln in lines if not _IMPORT.match(ln)).lstrip("\n")


def _split_last_def(program: str) -> tuple[str, str] | None:
    """(everything before the last top-level def or class, that definition)
    when there is something before it that defines (a helper)."""
    starts = [m.start() for m in re.finditer(r"^(?:def|class|async def) ", program, re.M)]
    if len(starts) < 2:
        return None
    return program[: starts[-1]], program[starts[-1] :]


def _reads_stdin(case: Case) -> bool:
    """A stdin program runs at its top level: tests after it are part of it."""
    return "input(" in case.program or "stdin" in case.program


def _draft(case: Case) -> str:
    """A first attempt the answer throws away (`Case.other`, or a wrong
    definition of what the program defines)."""
    if case.other:
        return case.other
    first = re.search(r"^(def|class) (\w+)(.*)$", case.program, re.M)
    if first is None:
        return "x = int(input())\nprint(x)\n"
    kind, name, rest = first.groups()
    if kind == "class":
        return f"class {name}:\n    pass\n"
    return f"def {name}{rest}\n    return None\n"


STYLES: dict[str, Style] = {
    "plain": lambda c: _fence(c.program),
    "prose-around": lambda c: (
        "Here is a solution:\n\n" + _fence(c.program) + "\nIt runs in linear time.\n"
    ),
    "example-usage-block": lambda c: (
        "Solution:\n" + _fence(c.program) + "\nExample usage:\n" + _fence(f"print({c.call})")
    ),
    "asserts-block": lambda c: (
        _fence(c.program)
        + "\nSome tests:\n"
        + _fence(f"assert {c.call} == EXAMPLE\nassert {c.call} is not None")
    ),
    "output-block": lambda c: (
        _fence(c.program)
        + "\nExample:\n"
        + _fence(f"print({c.call})")
        + "Output:\n"
        + _fence("[1, 2, 3]\nTrue", info="")
    ),
    "imports-own-block": lambda c: (
        None
        if (parts := _split_imports(c.program)) is None
        else "First the imports:\n" + _fence(parts[0]) + "\nThen the code:\n" + _fence(parts[1])
    ),
    "helper-own-block": lambda c: (
        None
        if (parts := _split_last_def(c.program)) is None
        else "A helper first:\n" + _fence(parts[0]) + "\nAnd the main part:\n" + _fence(parts[1])
    ),
    "think-draft": lambda c: (
        "<think>\nLet me try something simple first.\n"
        + _fence(_draft(c))
        + "No, that is wrong.\n</think>\n\n"
        + _fence(c.program)
    ),
    "think-close-only": lambda c: (
        "The prompt wants a function. I will write it.\n</think>\n" + _fence(c.program)
    ),
    "thinking-tag": lambda c: (
        "<thinking>\nEdge cases: empty input.\n</thinking>\n" + _fence(c.program)
    ),
    "crlf": lambda c: ("Here you go:\n" + _fence(c.program)).replace("\n", "\r\n"),
    "sentence-then-unfenced": lambda c: "Here is the complete solution.\n\n" + c.program,
    "unfenced-prose-after": lambda c: c.program + "\n\nThis handles every case in the statement.\n",
    "list-item-indented": lambda c: (
        "1. Read the problem.\n2. Write the code:\n\n"
        + _indent(_fence(c.program), "   ")
        + "\n3. Done.\n"
    ),
    "tilde-fence": lambda c: _fence(c.program, mark="~~~"),
    "long-fence": lambda c: _fence(c.program, mark="````"),
    "open-last-fence": lambda c: "Sure, here it is:\n\n```python\n" + c.program,
    "no-info-string": lambda c: _fence(c.program, info=""),
    "py-info-string": lambda c: _fence(c.program, info="py"),
    "python3-info-trailing-space": lambda c: _fence(c.program, info="python3   "),
    "markdown-headings": lambda c: (
        "## Approach\n\nUse a loop.\n\n## Code\n\n"
        + _fence(c.program)
        + "\n## Complexity\n\n- Time: O(n)\n- Space: O(1)\n"
    ),
    "inline-asserts": lambda c: (
        _fence(c.program.rstrip("\n") + f"\n\n\n# Tests\nassert {c.call} == EXAMPLE\nprint('ok')\n")
        if not _reads_stdin(c)
        else None
    ),
    "main-guard-demo": lambda c: (
        _fence(c.program.rstrip("\n") + f"\n\n\nif __name__ == '__main__':\n    print({c.call})\n")
        if not _reads_stdin(c)
        else None
    ),
    "unittest-block": lambda c: (
        _fence(c.program)
        + "\nTests:\n"
        + _fence(
            "import unittest\n\nclass TestIt(unittest.TestCase):\n"
            f"    def test_example(self):\n        self.assertEqual({c.call}, EXAMPLE)\n\n"
            "unittest.main()"
        )
    ),
    "shell-block": lambda c: (
        _fence(c.program)
        + "\nRun it with:\n"
        + _fence("python3 solution.py < input.txt", info="bash")
    ),
    "pycon-block": lambda c: (
        _fence(c.program) + "\nIn the REPL:\n" + _fence(f">>> {c.call}\nEXAMPLE", info="pycon")
    ),
    "two-defining-blocks": lambda c: (
        "A first version:\n"
        + _fence(_draft(c))
        + "\nWait, that misses a case. Corrected:\n"
        + _fence(c.program)
    ),
    "body-only": lambda c: c.body or None,
    "body-fenced": lambda c: _fence(c.body) if c.body else None,
    "blockquote": lambda c: "> Here is my answer:\n>\n" + _indent(_fence(c.program), "> "),
    "fence-closed-on-last-line": lambda c: "```python\n" + c.program.rstrip("\n") + "```\n",
    "thought-markers": lambda c: (
        "<|begin_of_thought|>\n"
        + _fence(_draft(c))
        + "<|end_of_thought|>\n<|begin_of_solution|>\n"
        + _fence(c.program)
        + "<|end_of_solution|>\n"
    ),
    "bracket-think": lambda c: "[THINK]\n" + _fence(_draft(c)) + "[/THINK]\n" + _fence(c.program),
    "triangle-think": lambda c: (
        "\u25c1think\u25b7\n" + _fence(_draft(c)) + "\u25c1/think\u25b7\n" + _fence(c.program)
    ),
    "capitalised-info": lambda c: "**Solution**\n" + _fence(c.program, info="Python"),
    "filename-comment": lambda c: _fence("# solution.py\n" + c.program),
    "unfenced-doctest-after": lambda c: c.program + f"\nExample:\n>>> {c.call}\nEXAMPLE\n",
    "sentence-then-body": lambda c: "Here is the completion:\n" + c.body if c.body else None,
    "think-then-body": lambda c: "<think>\nThe body only.\n</think>\n" + c.body if c.body else None,
    "explanation-list-after": lambda c: (
        _fence(c.program)
        + "\n**Explanation:**\n1. We go through the input once.\n2. We return the result.\n"
    ),
}
"""Every style by name (see the module docstring)."""
