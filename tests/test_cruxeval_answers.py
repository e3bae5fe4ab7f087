"""CRUXEval answer extraction and the strict/official answer rules (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aioeval.sandbox.values import plain
from aioeval.suites.cruxeval import answers as ca

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


def test_output_key_ignores_layout_only() -> None:
    assert ca.output_literal("[1,2]")[1] == ca.output_literal("[ 1, 2 ]  ")[1]
    assert ca.output_literal("1")[1] != ca.output_literal("1.0")[1]
    assert ca.output_literal("1")[1] != ca.output_literal("True")[1]
    assert ca.output_literal("[1]")[1] != ca.output_literal("(1,)")[1]


DATASET_INPUT = "''.join(['A'] * 20), 3"


@pytest.mark.parametrize(
    ("text", "args", "kwargs"),
    [
        ("f()", [], {}),
        ("f(1, -2.5, 'x')", [1, -2.5, "x"], {}),
        ("f([6, 4], key='v')", [[6, 4]], {"key": "v"}),
        (
            "f({'a': (1, 2)}, {3}, set(), b'x', None, True)",
            [{"a": (1, 2)}, {3}, set(), b"x", None, True],
            {},
        ),
        ("f('l000*',)", ["l000*"], {}),
        ("f(1+2j, -0.0)", [1 + 2j, -0.0], {}),
    ],
)
def test_input_answer_accepts_literals(
    text: str, args: list[object], kwargs: dict[str, object]
) -> None:
    answer = ca.input_answer(text, DATASET_INPUT)
    assert answer.source is None
    got_args, got_kwargs = plain.loads(answer.args)
    assert got_args == args and got_kwargs == kwargs
    assert [type(x) for x in got_args] == [type(x) for x in args]


def test_input_answer_accepts_the_dataset_input_as_written() -> None:
    answer = ca.input_answer("f(''.join( ['A']*20 ), 3)", DATASET_INPUT)
    assert answer.source == DATASET_INPUT and answer.args == b""
    # anything else that is not a literal is refused
    with pytest.raises(ca.AnswerRejected, match="not a literal"):
        ca.input_answer("f(''.join(['A'] * 21), 3)", DATASET_INPUT)


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
        ("f(setattr(f, '__code__', (lambda: 3).__code__))", "not a literal"),
        ("f((x for x in ()).gi_frame.f_builtins)", "not a literal"),
        ("f(f)", "not a literal"),
        ("f(__import__('sys').modules)", "not a literal"),
        ("f(lambda x: x < 2, [0, 3])", "not a literal"),
        ("f(list(range(3)))", "not a literal"),
        ("f('a' * 3)", "not a literal"),
        ("f(table[:], 3)", "not a literal"),
        ("f(*[1, 2])", "unpacking"),
        ("f(**{'z': 3})", "unpacking"),
        ("f(...)", "not plain data"),
        ("f(" + "9" * 5000 + ")", "not valid Python|not a literal"),
        ("f(" + "[" * 5000 + "]" * 5000 + ")", "not valid Python"),
        ("f(" + "+".join(["1"] * 3000) + ")", "not valid Python|not a literal"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
def test_input_answer_rejects(text: str, why: str) -> None:
    with pytest.raises(ca.AnswerRejected, match=why.replace("(", r"\(")):
        ca.input_answer(text, DATASET_INPUT)


def test_input_key_is_the_exact_data() -> None:
    key = ca.input_answer("f( 1,2 )", DATASET_INPUT).key
    assert key == ca.input_answer("f(1, 2)", DATASET_INPUT).key
    assert key != ca.input_answer("f(1, 2.0)", DATASET_INPUT).key
    assert key != ca.input_answer("f(1, True)", DATASET_INPUT).key
    assert ca.input_answer("f(x=1)", "").key != ca.input_answer("f(1)", "").key


def test_every_reference_answer_is_accepted(shared_data: Path) -> None:
    """All 800 upstream reference inputs/outputs pass the strict answer rules
    after going through extraction from a full assertion line; the inputs
    that are not literals (12 of 800) are accepted as the dataset's own text."""
    lines = (shared_data / "cruxeval" / "cruxeval.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert len(rows) == 800
    vetted = 0
    for row in rows:
        ref = f"assert f({row['input']}) == {row['output']}"
        value, _ = ca.output_literal(ca.extract_answer(ref, "o"))
        assert plain.exact_equal(value, ca.expected_value(row["output"])), row["id"]
        answer = ca.input_answer(ca.extract_answer(ref, "i"), row["input"])
        vetted += answer.source is not None
    assert vetted == 800  # the reference text itself is always the vetted input
    literal = 0
    for row in rows:
        try:
            ca.input_answer(f"f({row['input']})", "")
            literal += 1
        except ca.AnswerRejected:
            pass
    assert literal == 788


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
