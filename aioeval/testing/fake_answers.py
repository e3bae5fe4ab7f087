"""What the fake OpenAI server answers, and how it counts tokens.

An answerer maps ``(prompt_text, sample_number)`` to the answer's text;
`human_eval_answers` answers HumanEval prompts with their canonical
solutions (or a wrong body). A token is four characters here, and an answer
longer than the request's ``max_tokens`` is cut, as real servers cut it.
Its own module because it is the content of the answers, apart from the
server's limits and faults (`fake_openai`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aioeval.types import Problem

Answerer = Callable[[str, int], str]


def default_answer(prompt: str, sample: int) -> str:
    return "```python\npass\n```"


def human_eval_answers(problems: Iterable[Problem], wrong: Iterable[str] = ()) -> Answerer:
    """Answer each HumanEval prompt with its whole function (prompt plus
    canonical solution) in a ```python fence; problems in ``wrong`` get a
    body that fails its check. The problem is found by its prompt text."""
    bad = set(wrong)
    table = [(p.fields["prompt"], p.id, p.fields["canonical_solution"]) for p in problems]

    def answer(text: str, sample: int) -> str:
        for prompt, pid, solution in table:
            if prompt in text:
                body = "    raise AssertionError('wrong on purpose')\n" if pid in bad else solution
                return f"Here you go:\n```python\n{prompt}{body}```\n"
        return "```python\npass\n```"

    return answer


def prompt_text(body: dict[str, Any]) -> str:
    if isinstance(body.get("messages"), list):
        return "\n".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
    return str(body.get("prompt", ""))


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


def cut(answer: str, max_tokens: object) -> tuple[str, str]:
    """An answer as a server returns it: cut at ``max_tokens`` (finish
    reason ``length``) when longer, else whole (``stop``)."""
    if isinstance(max_tokens, int) and tokens(answer) > max_tokens:
        return answer[: max(1, max_tokens) * 4], "length"
    return answer, "stop"
