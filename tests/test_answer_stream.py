"""A data test's inputs sent at once and the answers read as they come
(`sandbox.strict.answers`): honest use, and a child that writes its own
frames on the stream (it controls its process, so the socket is its to
write) -- answers out of order, twice, before it is asked, a flood, a stall,
a hang-up, a frame that is no value. Each ends in the candidate's failure or
timeout with a reason, never a pass it did not earn, never a hung verifier.
"""

from __future__ import annotations

import json
from importlib import resources

import anyio
import pytest
from servecheck import config
from test_channel_attacks import RAW
from test_handle_reads import check_strict

from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits
from aioeval.service import Scorer

INPUTS = 12

# A data test as the EvalPlus and LiveCodeBench harnesses run one: every
# input sent at once, each answer read under its own limit.
DATA_TEST = f"""
INPUTS = [(i,) for i in range({INPUTS})]
def check(candidate):
    answers = __aioeval_map__(candidate, INPUTS)
    for (x,) in INPUTS:
        assert __aioeval_within__(2.0, next, answers) == 2 * x, x
"""

HONEST = "def f(x):\n    return 2 * x\n"

# Replaces the child's loop over a stream's inputs with ``BODY``.
PATCH = (
    RAW
    + """
import msgspec, time
def f(x):
    return 2 * x
def _reply(value):
    return msgspec.msgpack.encode(["reply", True, value, [], "", ""])
def _answer_each(self, op):
    args = [a[1][0][1][0] for a in op.args]
BODY
for _m in list(sys.modules.values()):
    _peer = getattr(_m, "_Peer", None)
    if isinstance(_peer, type) and hasattr(_peer, "answer_each"):
        _peer.answer_each = _answer_each
"""
)


def _patched(body: str) -> str:
    return PATCH.replace("BODY", "\n".join("    " + line for line in body.splitlines()))


def test_honest_answers_pass_and_a_wrong_one_fails_at_its_input() -> None:
    assert check_strict(HONEST, DATA_TEST, "f") == ("passed", "")
    wrong = "def f(x):\n    return 2 * x + (x == 7)\n"
    status, reason = check_strict(wrong, DATA_TEST, "f")
    assert status == "failed" and reason.endswith("7"), reason


def test_an_answer_that_raises_fails_that_input_and_the_stream_goes_on() -> None:
    test = f"""
INPUTS = [(i,) for i in range({INPUTS})]
def check(candidate):
    answers = __aioeval_map__(candidate, INPUTS)
    raised = []
    for (x,) in INPUTS:
        try:
            assert next(answers) == 2 * x
        except ZeroDivisionError:
            raised.append(x)
    assert raised == [0], raised
"""
    assert check_strict("def f(x):\n    return 2 * x // x * x // x * x\n", test, "f")[0] == "passed"


def test_each_input_has_its_own_limit_timed_from_the_previous_answer() -> None:
    """Twelve answers of 0.3 s each take longer than one input's limit of
    2 s in all, and pass; one input past it is the answer's timeout."""
    slow = "import time\ndef f(x):\n    time.sleep(0.3)\n    return 2 * x\n"
    assert check_strict(slow, DATA_TEST, "f") == ("passed", "")
    stalls = "import time\ndef f(x):\n    time.sleep(30 if x == 3 else 0)\n    return 2 * x\n"
    status, reason = check_strict(stalls, DATA_TEST, "f")
    assert status == "timeout" and "time limit of 2s" in reason, reason


ATTACKS = {
    "out of order": "for x in reversed(args):\n    self.send_frame(x)",
    "twice": "for x in args:\n    self.send_frame(x)\n    self.send_frame(x)",
    "a flood": "for x in args[:3]:\n    self.send_frame(x)\nwhile True:\n    _send(_reply(-1))",
    "one before it is asked, then honest": "self.send_frame(0)\nfor x in args:\n    self.send_frame(x)",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_answers_the_child_sends_out_of_turn_are_only_its_own_wrong_answers(attack: str) -> None:
    body = "def _send_frame(x):\n    _send(_reply(2 * x))\nself.send_frame = _send_frame\n"
    status, reason = check_strict(_patched(body + ATTACKS[attack]), DATA_TEST, "f")
    assert status == "failed" and "AssertionError" in reason, (attack, status, reason)


def test_answers_sent_as_the_program_loads_are_out_of_turn() -> None:
    """Right answers the child sends before its names, before any request."""
    early = (
        RAW
        + """
import msgspec
def f(x):
    return 2 * x
"""
        + "\n".join(
            f"_send(msgspec.msgpack.encode(['reply', True, {2 * x}, [], '', '']))"
            for x in range(INPUTS)
        )
    )
    status, reason = check_strict(early, DATA_TEST, "f")
    assert status == "failed" and "out of turn" in reason, reason


def test_a_stall_between_answers_is_the_answers_timeout() -> None:
    body = "for x in args[:4]:\n    _send(_reply(2 * x))\ntime.sleep(60)"
    status, reason = check_strict(_patched(body), DATA_TEST, "f")
    assert status == "timeout" and "time limit of 2s" in reason, reason


def test_a_child_that_hangs_up_mid_stream_fails() -> None:
    body = "for x in args[:4]:\n    _send(_reply(2 * x))\nos._exit(0)"
    status, reason = check_strict(_patched(body), DATA_TEST, "f")
    assert status == "failed" and "ended before" in reason, reason


@pytest.mark.parametrize(
    "frame",
    [
        "_send(msgspec.msgpack.encode(['reply', True, ['no such tag'], [], '', '']))",
        "_send(b'\\xc1' * 64)",
        "os.write(_fd(), struct.pack('<I', 2**31))",
    ],
    ids=["unknown tag", "not msgpack", "past the frame cap"],
)
def test_a_frame_that_is_no_answer_fails_the_answer(frame: str) -> None:
    body = f"_send(_reply(0))\n{frame}\ntime.sleep(60)"
    status, reason = check_strict(_patched(body), DATA_TEST, "f")
    assert status == "failed", (status, reason)
    assert "malformed" in reason or "sent" in reason or "too large" in reason, reason


# Honest code whose process, once loaded, answers every stream with None:
# a check that reads the stream fails it, one that calls input by input passes.
SPOILS_STREAMS = """
import sys
def _spoil():
    for _m in list(sys.modules.values()):
        _peer = getattr(_m, "_Peer", None)
        if isinstance(_peer, type) and hasattr(_peer, "answer_each"):
            def _answer_each(self, op, _reply=_m.protocol.Reply):
                for _ in op.args:
                    self.send(_reply(ok=True, value=None))
            _peer.answer_each = _answer_each
_spoil()
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("suite", "fixture"),
    [
        ("humaneval-plus", "evalplus/humaneval_plus.jsonl"),
        ("mbpp-plus", "evalplus/mbpp_plus.jsonl"),
    ],
)
async def test_evalplus_parts_read_their_answers_from_one_stream(suite: str, fixture: str) -> None:
    row = json.loads(
        resources.files("aioeval.fixtures").joinpath(fixture).read_text().splitlines()[0]
    )
    honest = row["prompt"] + row["canonical_solution"]
    async with Scorer(config()) as scorer:
        assert (await scorer.score(suite, row, _fenced(honest))).status == "passed"
        spoiled = await scorer.score(suite, row, _fenced(honest + SPOILS_STREAMS))
    assert spoiled.status == "failed" and "input 0" in spoiled.reason, spoiled.reason


@pytest.mark.anyio
async def test_io_tests_read_their_answers_from_one_stream() -> None:
    call = {
        "problem_id": 3,
        "starter_code": "class Solution:\n    def twice(self, x):\n",
        "input_output": {"fn_name": "twice", "inputs": [[1], [4]], "outputs": [2, 8]},
    }
    twice = "class Solution:\n    def twice(self, x):\n        return x * 2\n"
    async with Scorer(config()) as scorer:
        assert (await scorer.score("io-tests", call, _fenced(twice))).status == "passed"
        spoiled = await scorer.score("io-tests", call, _fenced(twice + SPOILS_STREAMS))
    assert spoiled.status == "failed" and "test 1" in spoiled.reason, spoiled.reason


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```\n"


def test_the_child_is_stopped_once_the_check_has_decided() -> None:
    """A wrong answer at input 1, then inputs that would take minutes: the
    verdict is the wrong answer, not the wall-clock backstop the child
    would reach if left to compute what no one reads."""
    program = "import time\ndef f(x):\n    if x >= 2:\n        time.sleep(600)\n    return 2 * x + (x == 1)\n"

    async def go() -> tuple[str, str]:
        async with LocalPool(workers=1, limits=Limits(cpu_s=2.0, wall_s=6.0)) as pool:
            task = Checked(
                program=program,
                entry="f",
                setup=DATA_TEST.replace("2.0", "30.0"),
                driver="check(f)",
            )
            out = await pool.execute(task)
            return out.status, out.reason

    status, reason = anyio.run(go)
    assert status == "failed" and reason.endswith("1"), (status, reason)


def test_inputs_that_hold_the_tests_objects_go_one_call_at_a_time() -> None:
    """A callback among the inputs runs the test's code when the candidate
    uses it, which must not happen while the test reads earlier answers:
    such inputs are not streamed (the child's stream loop, spoiled here,
    is never used)."""
    test = """
def check(candidate):
    calls = [(lambda v, i=i: v + i, 1) for i in range(5)]
    answers = __aioeval_map__(candidate, calls)
    assert [next(answers) for _ in calls] == [1, 2, 3, 4, 5]
"""
    program = "def f(g, x):\n    return g(x)\n" + SPOILS_STREAMS
    assert check_strict(program, test, "f") == ("passed", "")


def test_inputs_larger_in_all_than_one_frame_go_in_several_requests() -> None:
    """Eighty inputs of a MiB each: more than the child's frame cap in
    all, each well under it; they are answered, not lost to the cap."""
    test = """
INPUTS = [("x" * (1 << 20) + str(i),) for i in range(80)]
def check(candidate):
    answers = __aioeval_map__(candidate, INPUTS)
    for (s,) in INPUTS:
        assert next(answers) == len(s)
"""
    assert check_strict("def f(s):\n    return len(s)\n", test, "f") == ("passed", "")
