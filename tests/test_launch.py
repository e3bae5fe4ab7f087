"""How the sandbox's processes start: through `_launch`, with no site hooks,
an allowlisted environment, and no module of the engine in them."""

from __future__ import annotations

import subprocess

import anyio
import pytest

from aioeval.executors._process import BASE_ENV, TEMPLATE, VERIFIER, worker_command
from aioeval.executors.local import LocalPool
from aioeval.sandbox.protocol import Checked, Limits

# What each side reports about its own process: the names of engine modules
# loaded (anything under ``aioeval`` but the sandbox), whether the engine's
# package could be searched at all, and the interpreter's isolation flags.
REPORT = """
import sys
def _report():
    engine = sorted(
        m for m in sys.modules
        if m.startswith("aioeval.") and not m.startswith("aioeval.sandbox")
    )
    try:
        import aioeval.run  # noqa: F401
        searchable = True
    except ImportError:
        searchable = False
    flags = sys.flags
    return [engine, searchable, flags.no_site, flags.no_user_site, flags.safe_path]
"""

# The candidate's child is forked from the template: its modules are the template's.
PROGRAM = REPORT + "def report():\n    return _report()\n"
TEST = (
    REPORT
    + """
def check(candidate):
    assert _report() == [[], False, 1, 1, True], _report()
    assert candidate() == [[], False, 1, 1, True]
"""
)


@pytest.mark.parametrize("hash_seed", [0, None], ids=["seeded", "isolated"])
def test_template_and_verifier_hold_nothing_of_the_engine(hash_seed: int | None) -> None:
    async def go() -> tuple[str, str]:
        limits = Limits(cpu_s=5.0, wall_s=30.0)
        async with LocalPool(workers=1, limits=limits, hash_seed=hash_seed) as pool:
            task = Checked(program=PROGRAM, entry="report", setup=TEST, driver="check(report)")
            out = await pool.execute(task)
        return out.status, out.reason

    assert anyio.run(go) == ("passed", "")


@pytest.mark.parametrize("entry", [TEMPLATE, VERIFIER])
@pytest.mark.parametrize("hash_seed", [0, None])
def test_the_command_has_no_site_hooks_and_an_allowlisted_environment(
    entry: str, hash_seed: int | None
) -> None:
    cmd, env = worker_command(hash_seed, entry)
    flags = cmd[1 : cmd.index(entry) - 1]
    assert "-S" in flags and ("-I" in flags or {"-s", "-P"} <= set(flags))
    assert cmd[cmd.index(entry) - 1].endswith("_launch.py")
    assert set(env) <= {*BASE_ENV, "PYTHONHASHSEED"}


def test_the_launcher_starts_only_modules_of_the_sandbox() -> None:
    cmd, env = worker_command(0)
    launcher = cmd.index(TEMPLATE) - 1
    cmd[launcher + 1] = "aioeval.cli"
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "aioeval.sandbox.<module>" in out.stderr
    assert "Traceback" not in out.stderr
