"""Problems callers bring (`aioeval.service._problems`, `_parsing`): bounded
in size, parsed off the event loop in a bounded child, kept by bytes, and
named by their whole digest. Through a real server on 127.0.0.1 and the
real `Scorer`."""

from __future__ import annotations

from typing import Any

import aiohttp
import anyio
import pytest
from servecheck import ADD, AUTH, config, post, serving

from aioeval.errors import InputError
from aioeval.service import Scorer
from aioeval.service._parsing import ParserProcess
from aioeval.suites.human_eval.data import parse_humaneval

pytestmark = pytest.mark.anyio

RIGHT = "    return a + b\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _item(problem: object, completion: str = RIGHT) -> dict[str, object]:
    return {"benchmark": "human-eval", "problem": problem, "completion": completion}


async def test_a_problem_or_field_over_its_limit_is_a_413_naming_it() -> None:
    async with serving(problem_bytes=4096, field_bytes=1024) as (url, service):
        big_test = {**ADD, "test": ADD["test"] + "#" * 2000}
        status, answer = await post(url, _item(big_test))
        assert status == 413 and "problem.test" in answer["error"], answer
        many = {**ADD, **{f"extra{i}": "x" * 900 for i in range(5)}}
        status, answer = await post(url, _item(many))
        assert status == 413 and "problem:" in answer["error"], answer
        status, row = await post(url, _item(ADD))
        assert status == 200 and row["status"] == "passed"
    assert service.scorer.callers.parser.started == 1  # the large ones were never parsed


async def test_caller_problems_are_kept_by_bytes() -> None:
    async with Scorer(config(), problems_bytes=20_000) as scorer:
        for i in range(40):
            problem = {**ADD, "test": ADD["test"] + f"# {i}\n" + "#" * 1000}
            result = await scorer.score("human-eval", problem, RIGHT)
            assert result.status == "passed"
        assert 0 < scorer.callers.kept.held <= 20_000
        assert len(scorer.callers) < 40


async def test_a_huge_problem_is_parsed_off_the_event_loop_within_limits() -> None:
    """1.5 million statements (3 MB; parsing them takes a few GB): with the
    size limits raised so that it reaches the parser, ``/healthz`` answers
    while the child parses, and the problem is refused with a 400 when the
    child runs out of its memory."""
    test = "def check(candidate):\n    pass\n" + "x\n" * 1_500_000
    huge = {**ADD, "test": test}
    size = 8 * 2**20
    async with serving(problem_bytes=size, field_bytes=size) as (url, service):
        parser = service.scorer.callers.parser
        box: list[tuple[int, Any]] = []

        async def send() -> None:
            box.append(await post(url, _item(huge)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            with anyio.fail_after(60):
                while not parser._lock.locked():
                    await anyio.sleep(0.01)
            status, health = await _health(url)
            assert status == 200 and health["ok"] and not box  # answered mid-parse
        status, answer = box[0]
        assert status == 400 and "smaller" in answer["error"], answer
        status, row = await post(url, _item(ADD))  # a new child parses the next one
        assert status == 200 and row["status"] == "passed" and parser.started == 2


async def test_deep_json_and_a_huge_expression_are_400s() -> None:
    deep = b'{"benchmark": "human-eval", "problem": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    terms = {**ADD, "test": ADD["test"] + "    assert candidate(1, 1) == " + "1+" * 30_000 + "1\n"}
    size = 8 * 2**20
    async with serving(problem_bytes=size, field_bytes=size) as (url, _):
        status, answer = await post(url, deep)
        assert status == 400 and "nested too deeply" in answer["error"], answer
        status, answer = await post(url, _item(terms))
        assert status == 400 and "nested too deeply" in answer["error"], answer


async def test_two_problems_whose_digests_share_48_bits_keep_their_own_verdicts() -> None:
    """These two problems' BLAKE2b-128 digests begin with the same 48 bits
    (found by a cycle search in a minute): an id made of that prefix
    handed the second one the first one's cached verdict."""
    sums_to_5 = {**ADD, "test": ADD["test"] + "# e 369184d7bb30\n"}
    sums_to_6 = {
        **ADD,
        "test": "def check(candidate):\n    assert candidate(2, 3) == 6\n# e ce58e94d54f3\n",
    }
    async with Scorer(config()) as scorer:
        first = await scorer.score("human-eval", sums_to_5, RIGHT)
        second = await scorer.score("human-eval", sums_to_6, RIGHT)
    assert (first.status, second.status) == ("passed", "failed")
    assert first.problem_id != second.problem_id
    assert len(first.problem_id.split("@")[1]) == 64  # the whole 256-bit digest


async def test_a_parser_child_that_overruns_is_killed_and_replaced() -> None:
    parser = ParserProcess(timeout_s=0.5)
    row = b'{"task_id": "t", "prompt": "", "entry_point": "f", "test": "def check(c):\\n    pass\\n'
    try:
        slow = row + b"x\\n" * 2_000_000 + b'"}'
        with pytest.raises(InputError, match="not parsed within"):
            await parser.parse(parse_humaneval, slow, "problem")
        (problem,) = await parser.parse(parse_humaneval, row + b'"}', "problem")
        assert problem.id == "t" and parser.started == 2
    finally:
        await parser.aclose()


async def _health(url: str) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as http, http.get(url + "/healthz", headers=AUTH) as r:
        return r.status, await r.json()
