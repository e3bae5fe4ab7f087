"""Red team: kernel state a candidate could leave behind for the template,
later candidates or the host, and the sandbox failing closed.

Each attack runs through the real sandbox with every layer the machine
offers, then an honest follower runs on the same slot: the attack must be
refused, the follower judged as it would be on a fresh slot, and nothing
left on the host. Run inside the safety net
(``tests/safety_net.sh python -m pytest tests/test_red_team_hoststate.py``).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import resource
import textwrap

import anyio
import msgspec
import pytest
from hostcheck import require_layers, template_pids
from test_sandbox_layers import run_as_nobody
from test_seccomp_filter import run_filter

from aioeval.errors import SandboxError
from aioeval.executors import _slot
from aioeval.executors.local import LocalPool
from aioeval.sandbox.isolation import seccomp_filter as sf
from aioeval.sandbox.protocol import Limits, Outcome, VerifierReady

HOST_LIMITS = Limits(cpu_s=2.0, wall_s=6.0, memory_mb=512, fsize_mb=8, disk_mb=32)

ENGINE = r"""
import anyio, json, sys
from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Limits

async def main(programs):
    limits = Limits(cpu_s=2.0, wall_s=6.0, memory_mb=512, fsize_mb=8, disk_mb=32)
    async with LocalPool(workers=1, limits=limits) as pool:
        outs = [await pool.run(p) for p in programs]
        report = {"layers": pool.layers, "warnings": pool.warnings}
    report["outs"] = [[o.status, o.reason, o.output_tail] for o in outs]
    return report

print(json.dumps(anyio.run(main, json.loads(sys.stdin.read()))))
"""


def _run_unprivileged(*programs: str) -> dict[str, object]:
    """Run the programs in turn on one slot of an engine running as uid
    65534 (so its candidates share the template's uid in a user namespace)."""
    report = run_as_nobody(ENGINE, json.dumps([textwrap.dedent(p) for p in programs]))
    layers = report["layers"]
    assert isinstance(layers, list)
    if "user-namespace" not in layers:
        pytest.skip(f"no unprivileged user namespaces here: {report['warnings']}")
    return report


@pytest.mark.parametrize("machine", sorted(sf.ARCHES))
def test_the_filter_refuses_limits_of_other_processes(machine: str) -> None:
    arch = sf.ARCHES[machine]
    code = sf.build(arch)
    nr = arch.nr["prlimit64"]
    assert run_filter(code, arch.audit, nr, (0, 7, 0x1000, 0)) == "allow"  # setrlimit
    assert run_filter(code, arch.audit, nr, (0, 7, 0, 0x1000)) == "allow"  # getrlimit
    for pid in (1, 2, 0x7FFFFFFF, (1 << 32) | 1):
        assert run_filter(code, arch.audit, nr, (pid, 7, 0x1000, 0)) == errno.EPERM


LIMITS_SEEN = """
    import json, resource
    names = ("RLIMIT_STACK", "RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_MEMLOCK")
    print(json.dumps({n: resource.getrlimit(getattr(resource, n)) for n in names}))
    """


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_a_candidate_cannot_lower_its_template_s_limits() -> None:
    """Under a user namespace a candidate shares the template's uid, which
    is all the kernel asks before one process sets another's limits. A
    candidate that lowered the template's limits would reach every later
    candidate of the slot: a lower open-file limit makes each one's setup
    fail, a smaller stack makes deep recursion crash."""
    attack = """
        import resource
        for res, lim in ((resource.RLIMIT_NOFILE, (40, 40)),
                         (resource.RLIMIT_STACK, (200 << 10, 200 << 10)),
                         (resource.RLIMIT_CPU, (1, 1))):
            try:
                resource.prlimit(1, res, lim)
            except PermissionError:
                continue
            raise AssertionError(f"the template's limit {res} was lowered")
        """
    report = _run_unprivileged(LIMITS_SEEN, attack, LIMITS_SEEN)
    outs = report["outs"]
    assert isinstance(outs, list)
    (first, _, seen_before), (status, reason, _), (after, _, seen_after) = outs
    assert status == "passed", reason
    assert first == after == "passed", outs
    assert seen_after == seen_before, outs


HONEST = "assert sorted([3, 1, 2]) == [1, 2, 3]"


def _lower_template_files(pool: LocalPool, spare: int) -> None:
    """Poison the template from outside: its open-file limit set to what it
    holds plus ``spare`` (a candidate under a user namespace could do this
    before the filter refused it; any fault of the engine's could too)."""
    (pid,) = template_pids(pool)
    held = max(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")) + 1
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (held + spare, held + spare))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to set the template's limits")
@pytest.mark.parametrize("spare", [0, 100], ids=["template-cannot-open", "child-cannot-set-up"])
def test_a_poisoned_template_is_replaced_not_blamed_on_candidates(spare: int) -> None:
    """A template whose own state breaks the next job (here: too few files
    for itself, or a limit its children cannot set) fails that job before
    any of the candidate's code runs: an engine fault, never the candidate's
    ``error``; the template is replaced and the job run on a fresh one, so
    no later candidate of the slot inherits the fault."""

    async def go() -> list[Outcome]:
        async with LocalPool(workers=1, limits=HOST_LIMITS) as pool:
            first = await pool.run(HONEST)
            _lower_template_files(pool, spare)
            return [first, await pool.run(HONEST), await pool.run(HONEST)]

    outs = anyio.run(go)
    assert [o.status for o in outs] == ["passed"] * 3, outs


def test_an_engine_fault_in_every_template_stays_an_infra_error() -> None:
    """A fault no fresh template mends (a limit no child can set) is the
    engine's, however often it recurs: ``infra_error``, never the
    candidate's ``error``."""
    limits = msgspec.structs.replace(HOST_LIMITS, nofile=1 << 30)

    async def go() -> list[Outcome]:
        async with LocalPool(workers=1, limits=limits) as pool:
            return [await pool.run(HONEST) for _ in range(2)]

    outs = anyio.run(go)
    assert [o.status for o in outs] == ["infra_error"] * 2, outs
    assert all("sandbox setup failed" in o.reason for o in outs), outs


def test_strict_refuses_a_verifier_without_its_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifier decodes what candidates send and runs the test on it,
    under cgroups of its own; ``isolation: strict`` must refuse to run when
    it could not have them, as it does for the template's layers, rather
    than run the checks unbounded."""

    async def start(isolation: str) -> list[str]:
        async with LocalPool(
            workers=1, limits=HOST_LIMITS, isolation=isolation, verifiers=True
        ) as pool:
            return pool.layers

    try:
        anyio.run(start, "strict")
    except SandboxError as exc:
        pytest.skip(f"this host cannot run isolation=strict: {exc}")
    real = _slot._verifier_ready

    class Lacking:
        @staticmethod
        def decode(data: bytes) -> VerifierReady:
            return msgspec.structs.replace(real.decode(data), missing=["memory"])

    monkeypatch.setattr(_slot, "_verifier_ready", Lacking)
    with pytest.raises(SandboxError, match="strict refused: the verifier has no memory"):
        anyio.run(start, "strict")
    assert anyio.run(start, "best")  # best mode runs with what it has


def test_a_template_restarted_with_fewer_layers_stops_the_run() -> None:
    """The run reports the layers of the templates it started with; a
    template started later (a restart after a crash or a retirement) that
    comes up with fewer must stop the run with a clear error, not run the
    rest of it with less isolation than summary.json says. A template
    asked for ``minimal`` isolation stands in for a host that failed to
    give a restarted template its namespaces."""

    async def go() -> None:
        async with LocalPool(workers=1, limits=HOST_LIMITS) as pool:
            require_layers(pool, ("pid-namespace", "network-namespace", "seccomp"))
            assert (await pool.run(HONEST)).status == "passed"
            (slot,) = pool._slots
            slot.pool = dataclasses.replace(slot.pool, isolation="minimal")
            slot.broken = True  # the next job starts a fresh template
            with pytest.raises(SandboxError, match=r"started without .*network-namespace"):
                await pool.run(HONEST)

    anyio.run(go)
