"""CRUXEval answer extraction and the strict/official answer rules (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aioeval.suites import crux_answers as ca

ASSERT_O = "assert f('ab', 2) == 'abab'"


@pytest.mark.parametrize(
    ("raw", "task", "expected"),
    [
        # tagged form, with and without the closing tag (stop sequences eat it)
        ("[ANSWER]\nassert f('ab', 2) == 'abab'\n[/ANSWER]", "o", "'abab'"),
        ("[ANSWER]\nassert f('ab', 2) == 'abab'\n[/ANSWER]", "i", "f('ab', 2)"),
        ("[ANSWER]assert f(3) == [1, 2]", "o", "[1, 2]"),
        # reasoning first, the last tagged block wins
        (
            "Let me think. [ANSWER]assert f(0) == 1[/ANSWER] no wait\n[ANSWER]assert f(0) == 2[/ANSWER]",
            "o",
            "2",
        ),
        # bare assertion line with chatter around it
        ("The result is:\n" + ASSERT_O + "\nbecause strings repeat.", "o", "'abab'"),
        ("Sure!\n" + ASSERT_O + "\n", "i", "f('ab', 2)"),
        # bare expressions
        ("'abab'", "o", "'abab'"),
        ("  {1: 'x', -2: (3.5, None)}  ", "o", "{1: 'x', -2: (3.5, None)}"),
        ("f([1, 2], k=-1)", "i", "f([1, 2], k=-1)"),
        ("f('a') == 'b'", "i", "f('a')"),
        ("f('a') == 'b'", "o", "'b'"),
        # inside a python fence, with chatter; the fence with the assert wins
        ("Here:\n```python\n" + ASSERT_O + "\n```\nDone.", "o", "'abab'"),
        ("```\nf(7)\n```", "i", "f(7)"),
        (
            "```python\ndef f(x):\n    return x\n```\nso\n```python\nassert f(5) == 5\n```",
            "i",
            "f(5)",
        ),
        ("[ANSWER]\n```python\nassert f(1) == {2}\n```\n[/ANSWER]", "o", "{2}"),
        # strings containing '==' and multi-line values are parsed, not split
        ("assert f('a==b') == 'x == y'", "o", "'x == y'"),
        ("assert f('a==b') == 'x == y'", "i", "f('a==b')"),
        ("assert f(1) == [\n    1,\n    2,\n]", "o", "[\n    1,\n    2,\n]"),
        ("assert f(1) == 2, 'message'", "o", "2"),
        # unparsable assertion: split at the first ==
        ("assert f(1 == [1, 2", "o", "[1, 2"),
        ("assert f([1, 2) == 3", "i", "f([1, 2)"),
    ],
)
def test_extract_answer(raw: str, task: ca.Task, expected: str) -> None:
    assert ca.extract_answer(raw, task) == expected


def test_extraction_is_idempotent_on_answers() -> None:
    for text, task in [("'abab'", "o"), ("f('a', [1])", "i"), ("[1, 2]", "o")]:
        assert ca.extract_answer(ca.extract_answer(text, task), task) == text  # type: ignore[arg-type]


def test_official_program_is_the_upstream_one() -> None:
    assert ca.official_program("def f(x):\n    return x", "3", "f(3)") == (
        "def f(x):\n    return x\nassert 3 == f(3)"
    )


@pytest.mark.parametrize(
    ("task", "generation", "skipped"),
    [
        ("i", "f(1)", False),
        ("i", "1", True),  # no 'f(' at all
        ("i", "g(f(1))", False),  # contains 'f(' -> executed, as upstream
        ("o", "[1, 2]", False),
        ("o", "f('a', 1)", True),  # exactly f(input)
        ("o", "f('a', 1) + 0", True),
        ("o", "f('a',1)", False),  # upstream matches the text, not the meaning
    ],
)
def test_official_skip_rules(task: ca.Task, generation: str, skipped: bool) -> None:
    assert (ca.official_skip(task, generation, "'a', 1") is not None) is skipped


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("'abc'", "abc"),
        ("-3", -3),
        ("-2.5e-3", -0.0025),
        ("{1, 2}", {1, 2}),
        ("(1,)", (1,)),
        ("{'a': [1, (2, None)], 'b': {}}", {"a": [1, (2, None)], "b": {}}),
        ("True", True),
        (" [1, 2]  # trailing comment", [1, 2]),
    ],
)
def test_output_literal_accepts(text: str, value: object) -> None:
    got, _ = ca.output_literal(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "text",
    [
        "'a' * 3",
        "f('a')",
        "list(range(3))",
        "x",
        "type('E', (), {'__eq__': lambda s, o: True})()",
        "[1, 2",
        "1; 2",
        "[" * 5000 + "]" * 5000,
        "9" * 10000,
    ],
)
def test_output_literal_rejects(text: str) -> None:
    with pytest.raises(ca.AnswerRejected, match="strict: the output answer"):
        ca.output_literal(text)


def test_output_normal_form_ignores_layout_only() -> None:
    assert ca.output_literal("[1,2]")[1] == ca.output_literal("[ 1, 2 ]  ")[1]
    assert ca.output_literal("1")[1] != ca.output_literal("1.0")[1]
    assert ca.output_literal("1")[1] != ca.output_literal("True")[1]


NAMES = frozenset({"table"})


@pytest.mark.parametrize(
    "text",
    [
        "f()",
        "f(1, -2.5, 'x')",
        "f(*[1, 2], key='v', **{'z': 3})",
        "f(lambda x: x < 2, [0, 3])",
        "f([6, 4], (lambda x: x.reverse()))",
        "f(dict(e=1, d=2), dict())",
        "f(range(100, 120))",
        "f(''.join(['A'] * 20))",
        "f('a-b'.split('-'), 'st ' + '0\\t')",
        "f(table[:], 3)",  # a module-level name of the problem's code
        "f([x * 2 for x in range(3)], {k: v for k, v in [(1, 2)]})",
        "f('l000*',)",
    ],
)
def test_input_call_accepts(text: str) -> None:
    call, _ = ca.input_call(text, NAMES)
    assert call == text.strip()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("f(1) or True", "exactly one call"),
        ("True or f(1)", "exactly one call"),
        ("f(1) == f(1)", "exactly one call"),
        ("g(1)", "exactly one call"),
        ("f(1)(2)", "exactly one call"),
        ("f.__call__(1)", "exactly one call"),
        ("[f(1)][0]", "exactly one call"),
        ("f(1); x = 2", "not valid Python"),
        ("f(1", "not valid Python"),
        ("f(setattr(f, '__code__', (lambda: 3).__code__))", "may not use 'setattr'"),
        ("f(f)", "may not use 'f'"),
        ("f(__import__('sys').modules)", "may not use '__import__'"),
        ("f(globals())", "may not use 'globals'"),
        ("f(eval('1'))", "may not use 'eval'"),
        ("f(type('E', (), {}))", "may not use 'type'"),
        ("f((lambda: 0).__globals__)", "attribute '__globals__'"),
        ("f(().__class__)", "attribute '__class__'"),
        ("f((x := 3))", "may not assign"),
        ("f(lambda f: 0)", "may not bind 'f'"),
        ("f(unknown_name)", "may not use 'unknown_name'"),
    ],
)
def test_input_call_rejects(text: str, why: str) -> None:
    with pytest.raises(ca.AnswerRejected, match=why.replace("(", r"\(")):
        ca.input_call(text, NAMES)


def test_input_normal_form_ignores_layout_only() -> None:
    assert ca.input_call("f( 1,2 )", NAMES)[1] == ca.input_call("f(1, 2)", NAMES)[1]
    assert ca.input_call("f(1)", NAMES)[1] != ca.input_call("f(1.0)", NAMES)[1]


def test_module_names() -> None:
    code = "import os.path as p, re\nA = B = 1\nC: int = 2\ndef f(x):\n    return x\nclass K: pass"
    assert ca.module_names(code) == {"p", "re", "A", "B", "C", "K"}


def test_every_reference_answer_is_accepted(shared_data: Path) -> None:
    """All 800 upstream reference inputs/outputs pass the strict answer rules
    after going through extraction from a full assertion line."""
    lines = (shared_data / "cruxeval" / "cruxeval.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert len(rows) == 800
    for row in rows:
        ref = f"assert f({row['input']}) == {row['output']}"
        value, _ = ca.output_literal(ca.extract_answer(ref, "o"))
        assert value == ca.expected_value(row["output"]), row["id"]
        call, _ = ca.input_call(ca.extract_answer(ref, "i"), ca.module_names(row["code"]))
        assert call == f"f({row['input']})", row["id"]


# --- official mode decided without a process --------------------------------

CODE = "def f(x):\n    return x + 1"


@pytest.mark.parametrize(
    ("code", "output", "generation", "expected"),
    [
        (CODE, "2", "2", True),
        (CODE, "2", "3", False),
        (CODE, "[1, (2, 'a')]", "[1, (2, 'a')]", True),
        (CODE, "{1, 2}", "{2, 1}", True),
        (CODE, "1.0", "1", True),  # Python equality, as the executed assert
        (CODE, "-3", "-3", True),
        (CODE, "'a'", "'a' # trailing comment", True),
        (CODE, "2", "f(1)", None),  # a call: must run
        (CODE, "2", "x", None),  # a name: NameError when run
        (CODE, "2", "2, 'message'", None),  # becomes an assert message
        (CODE, "2", "2\nimport os", None),  # a second statement
        (CODE, "2", "'unterminated", None),  # syntax error: run to get its verdict
        (CODE, "2", "2 if True else 3", None),
        (CODE, "set()", "set()", None),  # set could be shadowed: run it
        ("import os\n" + CODE, "2", "2", None),  # an import may fail: run it
        ("def f(x: List[int]):\n    return x", "2", "2", None),  # annotation runs at def time
        ("def f(x=print(1)):\n    return x", "2", "2", None),
        ("K = [1, 2]\n" + CODE, "2", "2", True),
        ("K = g()\n" + CODE, "2", "2", None),
    ],
)
def test_static_official_verdict(
    code: str, output: str, generation: str, expected: bool | None
) -> None:
    assert ca.static_official_verdict(code, output, generation) is expected
