"""The answer extractor: every chat style around a program yields that
program (the same AST), for HumanEval, MBPP and LiveCodeBench problems;
how it was taken is recorded; nothing the program needs is dropped and
nothing that exercises it is kept; small adversarial answers end."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aioeval.suites import targets
from aioeval.suites.answer_text import MAX_BLOCKS, fenced_blocks, normalise
from aioeval.suites.extract import Target, extract
from aioeval.suites.human_eval.suite import load_problems
from aioeval.suites.livecodebench import data as lcb_data
from aioeval.suites.mbpp import data as mbpp_data
from aioeval.testing.chat_styles import STYLES, Case
from aioeval.types import Problem

HUMANEVAL = {p.id: p for p in load_problems()}
MBPP = {p.id: p for p in mbpp_data.fixture_problems()}
LCB = {p.id: p for p in lcb_data.fixture_problems()}


def _humaneval(pid: str) -> tuple[Target, Case, str]:
    f = HUMANEVAL[pid].fields
    program = f["prompt"] + f["canonical_solution"]
    case = Case(program=program, body=f["canonical_solution"], call=f"{f['entry_point']}(*EXAMPLE)")
    return targets.humaneval(HUMANEVAL[pid]), case, program


def _mbpp(pid: str) -> tuple[Target, Case, str]:
    p = MBPP[pid]
    target = targets.mbpp(p, mbpp_data.tests_of(p))
    return (
        target,
        Case(program=p.fields["code"], call=f"{target.entry[0]}(*EXAMPLE)"),
        p.fields["code"],
    )


def _lcb(pid: str) -> tuple[Target, Case, str]:
    p: Problem = LCB[pid]
    f = p.fields
    call = f"Solution().{f['func_name']}(*EXAMPLE)" if f["func_name"] else "main()"
    program = f["canonical_solution"]
    return targets.livecodebench(p), Case(program=program, call=call), program


CASES = {
    "humaneval-0": _humaneval("HumanEval/0"),
    "humaneval-11-imports": _humaneval("HumanEval/11"),
    "humaneval-10-helper": _humaneval("HumanEval/10"),
    "mbpp-1": _mbpp("1"),
    "mbpp-9-two-functions": _mbpp("9"),
    "lcb-stdin": _lcb("lcb-range-sum"),
    "lcb-stdin-main": _lcb("lcb-distinct"),
    "lcb-functional": _lcb("lcb-two-sum"),
}


def _same(a: str, b: str) -> bool:
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_style_yields_the_program(style: str, case: str) -> None:
    target, wrapped, program = CASES[case]
    raw = STYLES[style](wrapped)
    if raw is None:
        pytest.skip("style does not apply")
    got = extract(raw, target)
    text = target.prompt + got.text if got.kind == "body" else got.text
    assert _same(text, program), (got.kind, got.text)
    assert got.kind != "none"


@pytest.mark.parametrize(
    ("style", "kind"),
    [
        ("plain", "block"),
        ("example-usage-block", "block"),
        ("asserts-block", "block"),
        ("output-block", "block"),
        ("imports-own-block", "blocks"),
        ("think-draft", "block"),
        ("crlf", "block"),
        ("sentence-then-unfenced", "unfenced"),
        ("list-item-indented", "block"),
        ("tilde-fence", "block"),
        ("long-fence", "block"),
        ("open-last-fence", "block"),
        ("body-only", "body"),
        ("body-fenced", "body"),
        ("two-defining-blocks", "ambiguous"),
    ],
)
def test_how_the_program_was_taken_is_recorded(style: str, kind: str) -> None:
    target, case, _ = CASES["humaneval-11-imports"]
    raw = STYLES[style](case)
    assert raw is not None
    assert extract(raw, target).kind == kind


@pytest.mark.parametrize(
    "raw", ["", "I cannot help with that.", "The answer is 42.\n\nThanks!", "```text\nsorry\n```"]
)
def test_an_answer_without_code_is_none(raw: str) -> None:
    got = extract(raw, CASES["humaneval-0"][0])
    assert (got.kind, got.text) == ("none", "")


def test_a_helper_in_another_block_is_kept_and_a_demo_block_is_not() -> None:
    raw = (
        "```python\ndef helper(x):\n    return x * 2\n```\n"
        "```python\ndef solve(x):\n    return helper(x) + OFFSET\n```\n"
        "```python\nOFFSET = 1\n```\n"
        "```python\nprint(solve(3))\n```\n"
        "```python\nthis is not python(\n```\n"
    )
    got = extract(raw, Target(entry=("solve",)))
    assert got.kind == "blocks"
    assert _same(
        got.text,
        "def helper(x):\n    return x * 2\ndef solve(x):\n    return helper(x) + OFFSET\nOFFSET = 1\n",
    )


def test_a_statement_a_definition_needs_is_never_trimmed() -> None:
    # ``table`` is computed by calling the entry point, and the function reads it.
    code = "def f(x):\n    return x + 1\n\ntable = [f(i) for i in range(3)]\n\ndef g(i):\n    return table[i]\n"
    got = extract(f"```python\n{code}assert g(0) == 1\n```", Target(entry=("f", "g")))
    assert _same(got.text, code)


def test_a_stdin_program_is_never_trimmed() -> None:
    code = "n = int(input())\nprint(n * 2)\nassert n > 0\n"
    got = extract(f"```python\n{code}```\nOutput:\n```\n4\n```", Target())
    assert _same(got.text, code)


def test_the_draft_inside_think_is_never_taken() -> None:
    raw = "<think>\n```python\ndef f():\n    return 1\n```\n</think>\nNo code, sorry."
    assert extract(raw, Target(entry=("f",))).kind == "none"


def test_the_last_of_two_definitions_is_taken_and_marked_ambiguous() -> None:
    raw = "```python\ndef f():\n    return 1\n```\nBetter:\n```python\ndef f():\n    return 2\n```"
    got = extract(raw, Target(entry=("f",)))
    assert got.kind == "ambiguous" and _same(got.text, "def f():\n    return 2\n")
    same_twice = (
        "```python\ndef f():\n    return 1\n```\nAgain:\n```python\ndef f():\n    return 1\n```"
    )
    assert extract(same_twice, Target(entry=("f",))).kind == "block"


def test_a_function_explained_in_two_steps_is_one_program() -> None:
    """A signature and docstring in one block, its body in the next."""
    raw = (
        '**Step 1**\n\n```python\ndef f(n):\n    import math\n    """n, doubled."""\n```\n\n'
        "Next, the logic:\n\n```python\n    return 2 * n\n```\n"
    )
    got = extract(raw, Target(entry=("f",)))
    assert _same(got.text, 'def f(n):\n    import math\n    """n, doubled."""\n    return 2 * n\n')
    done = "```python\ndef f(n):\n    return n\n```\n\n```python\n    return 2 * n\n```\n"
    assert _same(extract(done, Target(entry=("f",))).text, "def f(n):\n    return n\n")


def test_a_body_that_does_not_parse_is_run_as_written() -> None:
    """A cut-off body is the model's broken code (it fails as such), not an
    answer without code."""
    got = extract("    return (\n", Target(entry=("f",), prompt="def f():\n"))
    assert got.kind == "body" and got.text == "    return (\n"


def test_normalise_unifies_line_endings_and_drops_reasoning() -> None:
    assert normalise("a\r\nb\rc") == "a\nb\nc"
    assert normalise("<THINK>x</think>y<reasoning>z") == "y"
    assert normalise("plan\n</think>\nanswer") == "\nanswer"


def test_fences_of_any_length_close_only_on_their_own_kind() -> None:
    text = "````python\n```\ninner\n```\n````\n~~~\nt\n~~~\n"
    blocks = fenced_blocks(text)
    assert [b.text for b in blocks] == ["```\ninner\n```\n", "t\n"]
    assert blocks[0].info == "python"


# --- bounded on adversarial answers (small inputs: they must end) -------------


@pytest.mark.parametrize(
    "raw",
    [
        "Here is the solution.\ndef f():\n    return 1\n",  # a sentence, then code
        "word:\n" * 3000,  # prose that parses as annotations
        "(" * 5000,  # deeper than the parser goes
        "```python\n" * 3000,  # fences that never close
        "```\nx\n```\n" * (MAX_BLOCKS + 50),  # more blocks than are read
        "def f(:\n    pass\n" * 2000,  # code-like lines that never compile
        "a = 1\nnot code here\n" * 2000,  # code and prose interleaved
        "> " * 20000 + "x\n```python\n" + "> " * 20000,  # quote markers, no fence
        " " * 100000 + "x```",  # a long line that almost ends a fence
        "<think>" * 3000 + "</think>" * 3000,  # reasoning markers only
    ],
)
def test_adversarial_answers_end(raw: str) -> None:
    got = extract(raw, Target(entry=("f",), prompt="def f():\n"))
    assert got.kind in {"block", "blocks", "unfenced", "body", "ambiguous", "none"}


# --- any program in any style -------------------------------------------------

_names = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True).filter(
    lambda s: (
        s not in {"print", "input", "main"}
        and s.isidentifier()
        and not __import__("keyword").iskeyword(s)
    )
)


@st.composite
def _programs(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(_names)
    helper = draw(_names.filter(lambda s: s != name))
    value = draw(st.integers(-5, 5))
    use_helper = draw(st.booleans())
    use_import = draw(st.booleans())
    lines = ["import math\n\n"] if use_import else []
    if use_helper:
        lines.append(f"def {helper}(x):\n    return x + {value}\n\n\n")
        ret = f"{helper}(x)"
    else:
        ret = f"x * {value}"
    if use_import:
        ret = f"math.floor({ret})"
    lines.append(f"def {name}(x):\n    return {ret}\n")
    return name, "".join(lines)


@settings(max_examples=60, deadline=None)
@given(_programs(), st.sampled_from(sorted(s for s in STYLES if not s.startswith("body"))))
def test_any_program_in_any_style_extracts_to_the_same_ast(
    program: tuple[str, str], style: str
) -> None:
    name, code = program
    raw = STYLES[style](Case(program=code, call=f"{name}(*EXAMPLE)"))
    if raw is None:
        return
    got = extract(raw, Target(entry=(name,)))
    assert _same(got.text, code), (style, raw, got)


def test_reference_answers_are_taken_as_they_are() -> None:
    """Reference runs (``params.execute``) go through the same path: every
    HumanEval canonical body, MBPP and LiveCodeBench reference is kept
    exactly (up to a final newline), so the official figures cannot move."""
    for p in HUMANEVAL.values():
        got = targets.take(p.fields["canonical_solution"], targets.humaneval(p))
        assert got.text.rstrip("\n") == p.fields["canonical_solution"].rstrip("\n"), p.id
    for p in MBPP.values():
        got = targets.take(p.fields["code"], targets.mbpp(p, mbpp_data.tests_of(p)))
        assert got.text.rstrip("\n") == p.fields["code"].rstrip("\n"), p.id
    for p in LCB.values():
        raw = f"```python\n{p.fields['canonical_solution']}\n```"
        got = targets.take(raw, targets.livecodebench(p))
        assert got.text.rstrip("\n") == p.fields["canonical_solution"].rstrip("\n"), p.id


def _lcb_take(raw: str, pid: str) -> str:
    return targets.take(raw, targets.livecodebench(LCB[pid])).text


def test_a_stdin_test_harness_block_is_not_the_program() -> None:
    prog = "def main():\n    n = int(input())\n    print(n * 2)\n\nmain()\n"
    harness = "import io, sys\nsys.stdin = io.StringIO('3\\n')\nmain()\n"
    raw = f"```python\n{prog}```\nTest:\n```python\n{harness}```"
    assert _same(_lcb_take(raw, "lcb-sum"), prog)


def test_a_stdin_reader_in_its_own_block_supports_the_program() -> None:
    raw = "```python\nimport sys\ninput = sys.stdin.readline\n```\n```python\nn = int(input())\nprint(n)\n```"
    got = targets.take(raw, targets.livecodebench(LCB["lcb-sum"]))
    assert got.kind == "blocks"
    assert _same(got.text, "import sys\ninput = sys.stdin.readline\nn = int(input())\nprint(n)\n")


def test_a_functional_answer_without_the_class_is_taken_by_the_method_name() -> None:
    fn = "def twoSum(nums, target):\n    return [0, 1]\n"
    raw = f"```python\n{fn}```\n```python\nprint(twoSum([2, 7], 9))\n```"
    assert _same(_lcb_take(raw, "lcb-two-sum"), fn)
