"""The micro-batching dispatcher (aioeval/executors/ray/_dispatch.py), without Ray.

The remote call is a fake that records each batch and answers when the
test says so; every wait is on an event or on ``wait_all_tasks_blocked``
(nothing left to run), never on a sleep.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from aioeval.executors.ray._dispatch import (
    ALL_LOST,
    CANCELLED,
    OUT_OF_STEP,
    BatchFailed,
    Dispatcher,
    Target,
    TargetLost,
)
from aioeval.sandbox.protocol import Outcome, Program, Task

pytestmark = pytest.mark.anyio


class Fake(Target):
    def __init__(self, name: str, slots: int = 1) -> None:
        super().__init__(slots)
        self.name = name


class FakeRemote:
    """Records batches as (target name, programs); answers each job with an
    outcome naming its program, so a misrouted result shows."""

    def __init__(self, *, hold: bool = False) -> None:
        self.hold = hold
        """Calls wait for `release` before answering."""
        self.calls: list[tuple[str, list[str]]] = []
        self.gates: list[anyio.Event] = []
        self.lost: set[str] = set()
        """Targets whose calls raise TargetLost (after their gate)."""
        self.failing: set[str] = set()
        """Programs whose batch raises BatchFailed."""
        self.short: set[str] = set()
        """Programs whose batch is answered one outcome short."""
        self.max_running: dict[str, int] = {}
        self._arrived = anyio.Event()

    def release(self, call: int) -> None:
        self.gates[call].set()

    async def wait_calls(self, n: int) -> None:
        """Until ``n`` batches have been sent. (``wait_all_tasks_blocked``
        cannot tell: a leader waiting out its batch timer counts as blocked.)"""
        while len(self.calls) < n:
            await self._arrived.wait()

    async def __call__(self, target: Fake, jobs: list[Task]) -> list[Outcome]:
        programs = [j.program for j in jobs if isinstance(j, Program)]
        self.calls.append((target.name, programs))
        self._arrived.set()
        self._arrived = anyio.Event()
        gate = anyio.Event()
        self.gates.append(gate)
        if not self.hold:
            gate.set()
        self.max_running[target.name] = max(self.max_running.get(target.name, 0), target.in_flight)
        await gate.wait()
        if target.name in self.lost:
            raise TargetLost
        if self.failing & set(programs):
            raise BatchFailed("ray: sandbox actor raised: boom")
        outcomes = [Outcome(id=0, status="passed", reason=p) for p in programs]
        return outcomes[:-1] if self.short & set(programs) else outcomes


Results = dict[str, Outcome]


def _submit(
    tg: anyio.abc.TaskGroup, dispatch: Dispatcher[Fake], names: list[str], results: Results
) -> None:
    async def one(name: str) -> None:
        results[name] = await dispatch.execute(Program(program=name))

    for name in names:
        tg.start_soon(one, name)


def _dispatcher(
    remote: FakeRemote,
    *targets: Fake,
    batch_max: int = 3,
    in_flight: int = 2,
    lost: list[Fake] | None = None,
    replenish: Callable[[], Awaitable[None]] | None = None,
) -> Dispatcher[Fake]:
    dispatch = Dispatcher(
        remote,
        batch_max=batch_max,
        batch_wait_s=0.0,
        in_flight=in_flight,
        on_lost=lost.append if lost is not None else None,
        replenish=replenish,
    )
    for t in targets:
        dispatch.add(t)
    return dispatch


def _names(n: int) -> list[str]:
    return [f"p{i}" for i in range(n)]


async def test_concurrent_tasks_share_batches_and_each_gets_its_own_outcome() -> None:
    remote = FakeRemote()
    dispatch = _dispatcher(remote, Fake("a", slots=3), batch_max=3, in_flight=3)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(7), results)
    assert remote.calls == [("a", ["p0", "p1", "p2"]), ("a", ["p3", "p4", "p5"]), ("a", ["p6"])]
    assert {name: o.reason for name, o in results.items()} == {n: n for n in _names(7)}
    assert dispatch.batches == 3 and dispatch.redispatched == 0


async def test_results_reach_their_waiters_when_batches_finish_out_of_order() -> None:
    remote = FakeRemote(hold=True)
    dispatch = _dispatcher(remote, Fake("a", slots=2), batch_max=2, in_flight=2)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(4), results)
        await remote.wait_calls(2)
        assert [c[1] for c in remote.calls] == [["p0", "p1"], ["p2", "p3"]]
        remote.release(1)  # the second batch answers first
        await anyio.wait_all_tasks_blocked()
        assert sorted(results) == ["p2", "p3"]
        remote.release(0)
    assert {name: o.reason for name, o in results.items()} == {n: n for n in _names(4)}


async def test_a_lost_target_is_killed_and_its_batch_runs_on_another() -> None:
    remote = FakeRemote()
    remote.lost.add("big")
    big, small = Fake("big", slots=2), Fake("small", slots=1)
    killed: list[Fake] = []
    dispatch = _dispatcher(remote, big, small, lost=killed, batch_max=3)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(3), results)
    # the least loaded per slot goes first: the 2-slot target, which is lost
    assert remote.calls == [("big", ["p0", "p1", "p2"]), ("small", ["p0", "p1", "p2"])]
    assert killed == [big] and not big.alive and small.alive
    assert all(o.status == "passed" and o.reason == n for n, o in results.items())
    assert len(results) == 3 and dispatch.redispatched == 3 and dispatch.batches == 1
    assert big.in_flight == 0 and small.in_flight == 0


async def test_a_failed_batch_is_infra_error_for_its_own_tasks_only() -> None:
    remote = FakeRemote()
    remote.failing.add("p3")
    remote.short.add("p6")
    target = Fake("a", slots=3)
    dispatch = _dispatcher(remote, target, batch_max=3, in_flight=3)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(9), results)
    status = {n: (o.status, o.reason) for n, o in results.items()}
    for n in ("p0", "p1", "p2"):
        assert status[n] == ("passed", n)
    for n in ("p3", "p4", "p5"):
        assert status[n] == ("infra_error", "ray: sandbox actor raised: boom")
    for n in ("p6", "p7", "p8"):
        assert status[n] == ("infra_error", OUT_OF_STEP)
    # a batch failure is no lost target: nothing is sent again, the target stays
    assert target.alive and dispatch.redispatched == 0 and len(remote.calls) == 3


async def test_losing_every_target_asks_once_for_replacements() -> None:
    remote = FakeRemote(hold=True)
    remote.lost.add("a")
    dispatch: Dispatcher[Fake]
    asked: list[int] = []
    go = anyio.Event()

    async def replenish() -> None:
        asked.append(1)
        await go.wait()
        dispatch.add(Fake("b", slots=1))

    dispatch = _dispatcher(remote, Fake("a"), replenish=replenish, batch_max=1, in_flight=2)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(2), results)
        await remote.wait_calls(2)
        assert remote.calls == [("a", ["p0"]), ("a", ["p1"])]  # both batches on "a"
        remote.release(0)
        remote.release(1)
        await anyio.wait_all_tasks_blocked()
        assert asked == [1]  # both leaders found no target; one asks, for both
        go.set()
        await remote.wait_calls(4)
        assert sorted(remote.calls[2:]) == [("b", ["p0"]), ("b", ["p1"])]
        remote.release(2)
        remote.release(3)
    assert asked == [1]
    assert [results[n].reason for n in _names(2)] == _names(2)
    assert dispatch.redispatched == 2 and [t.name for t in dispatch.live] == ["b"]


@pytest.mark.parametrize("with_replenish", [False, True])
async def test_no_target_left_is_infra_error_saying_so(with_replenish: bool) -> None:
    remote = FakeRemote()
    remote.lost.add("a")

    async def refuse() -> None:
        raise BatchFailed(f"{ALL_LOST}; restart failed: no node")

    dispatch = _dispatcher(
        remote, Fake("a"), replenish=refuse if with_replenish else None, batch_max=2
    )
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, _names(2), results)
    reason = f"{ALL_LOST}; restart failed: no node" if with_replenish else ALL_LOST
    assert {(o.status, o.reason) for o in results.values()} == {("infra_error", reason)}
    assert len(results) == 2 and dispatch.redispatched == 2


async def test_backpressure_bounds_batches_in_flight_and_grows_the_next_batch() -> None:
    remote = FakeRemote(hold=True)
    target = Fake("a", slots=1)
    dispatch = _dispatcher(remote, target, batch_max=10, in_flight=1)
    results: Results = {}
    async with anyio.create_task_group() as tg:
        _submit(tg, dispatch, ["first"], results)
        await remote.wait_calls(1)
        assert remote.calls == [("a", ["first"])]
        _submit(tg, dispatch, _names(5), results)
        await anyio.wait_all_tasks_blocked()
        # the target is full: nothing more is sent, and the waiting leader's
        # batch keeps taking company
        assert len(remote.calls) == 1 and target.in_flight == 1 and not results
        remote.release(0)
        await remote.wait_calls(2)
        assert remote.calls[1] == ("a", _names(5))
        remote.release(1)
    assert len(results) == 6 and remote.max_running == {"a": 1}


async def test_a_cancelled_leader_fails_its_followers_and_frees_its_target() -> None:
    remote = FakeRemote(hold=True)
    target = Fake("a", slots=1)
    dispatch = _dispatcher(remote, target, batch_max=10, in_flight=1)
    results: Results = {}
    busy, waiting = anyio.CancelScope(), anyio.CancelScope()

    async def lead(name: str, scope: anyio.CancelScope) -> None:
        with scope:
            await dispatch.execute(Program(program=name))

    async with anyio.create_task_group() as tg:
        tg.start_soon(lead, "busy", busy)
        await remote.wait_calls(1)
        tg.start_soon(lead, "lead", waiting)  # waits for room
        await anyio.wait_all_tasks_blocked()
        _submit(tg, dispatch, ["f1", "f2"], results)  # they join its batch
        await anyio.wait_all_tasks_blocked()
        assert remote.calls == [("a", ["busy"])] and target.in_flight == 1
        waiting.cancel()
        await anyio.wait_all_tasks_blocked()
        assert {n: (o.status, o.reason) for n, o in results.items()} == {
            "f1": ("infra_error", CANCELLED),
            "f2": ("infra_error", CANCELLED),
        }
        busy.cancel()  # while its call is out
    assert target.in_flight == 0 and target.alive and len(remote.calls) == 1


async def test_ping_sends_an_empty_batch() -> None:
    remote = FakeRemote()
    dispatch = _dispatcher(remote, Fake("a"))
    assert await dispatch.ping() >= 0
    assert remote.calls == [("a", [])] and dispatch.batches == 1
