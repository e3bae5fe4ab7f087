"""The layer contract, read from the code's own imports (function-local and
TYPE_CHECKING imports included: a dependency is a dependency).

Dependencies run one way::

    cli -> testing -> reporting -> analysis -> service -> run
        -> generation | executors | suites   (siblings: none imports another)
        -> contracts (errors, types, config, events, metrics, run.contract,
           executors.base: the data and protocols the stages share)
        -> sandbox (imports nothing else of the engine)

Inside the sandbox, four rooms run one way too, beside the shared modules
every process uses (the protocol, frame I/O, the launcher)::

    strict (the verifier) -> process (templates, their children)
        -> values (what a strict job's ends exchange) -> isolation (layers)
        -> shared

and a benchmark's folder in suites/ imports only the shared pieces beside
the folders (``base``, ...), never another benchmark's folder.

No module or function grows past what a reader takes in at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"aioeval": "aioeval", "sandbox": "aioeval.sandbox", "suites": "aioeval.suites"}
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450

CONTRACTS = {
    "aioeval.errors",
    "aioeval.types",
    "aioeval.config",
    "aioeval._config_errors",
    "aioeval._config_schema",
    "aioeval.events",
    "aioeval.metrics",
    "aioeval.run.contract",
    "aioeval.executors.base",
}
SIBLINGS = ("aioeval.generation", "aioeval.executors", "aioeval.suites")
ORDER = (
    "aioeval.run",
    "aioeval.service",
    "aioeval.analysis",
    "aioeval.reporting",
    "aioeval.testing",
)
TOP = {
    "aioeval",
    "aioeval.__main__",
    "aioeval.cli",
    "aioeval._cli_args",
    "aioeval._termination",
    "aioeval.catalog",
    "aioeval.fake_openai",
}
"""The public facade, the CLI (its arguments, signals and ``aioeval list``)
and the ``python -m aioeval.fake_openai`` shim."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _imports(name: str, path: Path, modules: dict[str, Path] = MODULES) -> set[str]:
    """Engine modules ``name`` imports (the deepest known module per import)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join([*base, *([node.module] if node.module else [])])
            names = [f"{prefix}.{a.name}" for a in node.names]
            # ``from pkg import module`` imports the module; ``from pkg
            # import name`` imports pkg itself.
            targets = names + ([] if all(n in modules for n in names) else [prefix])
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _rank(name: str) -> tuple[int, str]:
    """(layer, column): a module may import lower layers, and its own
    column within a layer."""
    if _within(name, "aioeval.sandbox"):
        return 0, "sandbox"
    if name in CONTRACTS:
        return 1, "contracts"
    for sibling in SIBLINGS:
        if _within(name, sibling):
            return 2, sibling
    for layer, package in enumerate(ORDER, start=3):
        if _within(name, package):
            return layer, package
    assert name in TOP, f"{name}: not placed in any layer (add it to the contract)"
    return 3 + len(ORDER), "top"


def _violations(modules: dict[str, Path] = MODULES) -> list[str]:
    bad = []
    for name, path in modules.items():
        layer, column = _rank(name)
        for dep in sorted(_imports(name, path, modules)):
            dep_layer, dep_column = _rank(dep)
            if dep_layer > layer or (dep_layer == layer and dep_column != column):
                bad.append(f"{name} ({column}) imports {dep} ({dep_column})")
    return bad


SANDBOX_SHARED = {
    "aioeval.sandbox",
    "aioeval.sandbox._launch",
    "aioeval.sandbox.frames",
    "aioeval.sandbox.protocol",
}
"""What every sandbox process shares: the protocol the engine speaks, frame
I/O, and the launcher (with the modules of the `protocol` package). They
import no room."""
ROOMS = (
    "aioeval.sandbox.isolation",
    "aioeval.sandbox.values",
    "aioeval.sandbox.process",
    "aioeval.sandbox.strict",
)
"""Lowest first: a room imports the shared modules, the rooms below it and itself."""
ROOMS_BUILT = all((ROOT / "sandbox" / room.rpartition(".")[2]).is_dir() for room in ROOMS)
SUITES_BUILT = any(path.is_dir() for path in (ROOT / "suites").glob("*/"))


def _room(name: str) -> int:
    """0 for the shared modules, 1 + its index for a room's module."""
    for index, room in enumerate(ROOMS, start=1):
        if _within(name, room):
            return index
    assert _shared(name), f"{name}: in no room of the sandbox (place it in one)"
    return 0


def _shared(name: str) -> bool:
    """A shared module, or a module of a shared package (`protocol`)."""
    packages = SANDBOX_SHARED - {"aioeval.sandbox"}
    return name in SANDBOX_SHARED or any(_within(name, package) for package in packages)


def _room_violations(modules: dict[str, Path] = MODULES) -> list[str]:
    bad = []
    for name, path in modules.items():
        if not _within(name, "aioeval.sandbox"):
            continue
        room = _room(name)
        for dep in sorted(_imports(name, path, modules)):
            if _within(dep, "aioeval.sandbox") and _room(dep) > room:
                bad.append(f"{name} imports {dep}")
    return bad


def _folder(name: str, modules: dict[str, Path]) -> str | None:
    """The benchmark folder a suites module is in (None: a shared piece)."""
    parts = name.split(".")
    if len(parts) > 2 and parts[:2] == ["aioeval", "suites"]:
        candidate = ".".join(parts[:3])
        if candidate in modules and modules[candidate].name == "__init__.py":
            return candidate
    return None


def _folder_violations(modules: dict[str, Path] = MODULES) -> list[str]:
    bad = []
    for name, path in modules.items():
        if not _within(name, "aioeval.suites") or name == "aioeval.suites":
            continue  # the registry imports every folder
        own = _folder(name, modules)
        for dep in sorted(_imports(name, path, modules)):
            if not _within(dep, "aioeval.suites"):
                continue
            theirs = _folder(dep, modules)
            if dep == "aioeval.suites" or (theirs is not None and theirs != own):
                bad.append(f"{name} imports {dep}")
    return bad


def test_every_engine_module_is_seen() -> None:
    assert "aioeval.run.evaluate" in MODULES and "aioeval.sandbox.process.worker" in MODULES
    assert len(MODULES) > 50


def test_dependencies_run_one_way() -> None:
    assert _violations() == []


def test_the_sandbox_imports_nothing_of_the_engine() -> None:
    for name, path in MODULES.items():
        if _within(name, "aioeval.sandbox"):
            assert all(_within(d, "aioeval.sandbox") for d in _imports(name, path)), name


def _write(
    tmp_path: Path, files: dict[str, str], packages: frozenset[str] = frozenset()
) -> dict[str, Path]:
    """Modules for a checker's own test: ``name -> source``, each a file
    (``packages`` as ``__init__.py`` of a folder)."""
    modules = {}
    for name, text in files.items():
        path = tmp_path.joinpath(*name.split("."))
        path = path / "__init__.py" if name in packages else path.with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        modules[name] = path
    return modules


def test_a_violation_is_caught(tmp_path: Path) -> None:
    """The checker itself: upward and sideways imports, relative or not,
    function-local or not, are reported; downward ones are not."""
    files = {
        "aioeval.errors": "def f():\n    from .run import evaluate\n",
        "aioeval.run.evaluate": "from ..errors import X\nfrom aioeval.suites import base\n",
        "aioeval.suites.base": "from aioeval.executors.local import LocalPool\n",
        "aioeval.executors.local": "import aioeval.sandbox.process.worker\n",
        "aioeval.sandbox.process.worker": "from aioeval import config\n",
        "aioeval.config": "",
    }
    modules = _write(tmp_path, files)
    assert sorted(_violations(modules)) == [
        "aioeval.errors (contracts) imports aioeval.run.evaluate (aioeval.run)",
        "aioeval.sandbox.process.worker (sandbox) imports aioeval.config (contracts)",
        "aioeval.suites.base (aioeval.suites) imports aioeval.executors.local (aioeval.executors)",
    ]


@pytest.mark.skipif(not ROOMS_BUILT, reason="the sandbox has no rooms in this tree")
def test_the_sandbox_rooms_run_one_way() -> None:
    assert _room_violations() == []


@pytest.mark.skipif(not SUITES_BUILT, reason="suites/ has no benchmark folders in this tree")
def test_a_benchmark_folder_imports_only_the_shared_pieces() -> None:
    assert _folder_violations() == []


def test_a_room_violation_is_caught(tmp_path: Path) -> None:
    """Upward imports between rooms, and from the shared modules into a room,
    are reported; downward ones are not."""
    files = {
        "aioeval.sandbox.protocol": "from .isolation import layers\n",
        "aioeval.sandbox.isolation.layers": "from .. import frames\nfrom ..values import wire\n",
        "aioeval.sandbox.values.wire": "def f():\n    from ..process import harness\n",
        "aioeval.sandbox.process.harness": "from ..values import wire\nfrom ..isolation import layers\n",
        "aioeval.sandbox.strict.verifier": "from ..process import harness\n",
        "aioeval.sandbox.frames": "",
    }
    modules = _write(tmp_path, files)
    assert sorted(_room_violations(modules)) == [
        "aioeval.sandbox.isolation.layers imports aioeval.sandbox.values.wire",
        "aioeval.sandbox.protocol imports aioeval.sandbox.isolation.layers",
        "aioeval.sandbox.values.wire imports aioeval.sandbox.process.harness",
    ]


def test_a_folder_violation_is_caught(tmp_path: Path) -> None:
    """A benchmark folder's module that imports another folder or the
    registry is reported; the shared pieces and its own folder are not."""
    files = {
        "aioeval.suites": "from .crux import suite\n",
        "aioeval.suites.base": "",
        "aioeval.suites.crux": "",
        "aioeval.suites.crux.data": "from ..base import X\n",
        "aioeval.suites.crux.suite": "from . import data\nfrom ..plus.truth import Y\n",
        "aioeval.suites.plus": "",
        "aioeval.suites.plus.truth": "from aioeval.suites import get_suite\n",
    }
    packages = frozenset({"aioeval.suites", "aioeval.suites.crux", "aioeval.suites.plus"})
    modules = _write(tmp_path, files, packages)
    assert sorted(_folder_violations(modules)) == [
        "aioeval.suites.crux.suite imports aioeval.suites.plus.truth",
        "aioeval.suites.plus.truth imports aioeval.suites",
    ]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_stay_short(name: str) -> None:
    path = MODULES[name]
    source = path.read_text(encoding="utf-8")
    lines = source.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path}: {lines} lines"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{path}:{node.lineno} {node.name}: {length}"
