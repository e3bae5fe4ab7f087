"""Start a sandbox process's entry module without the engine.

The engine starts its templates and verifiers as::

    <abs python> -s -S -P -B <sandbox dir>/_launch.py aioeval.sandbox.<entry> SITE_DIR...

(``-I -S -B`` when no hash seed is pinned) with an allowlisted environment.
This script registers ``aioeval`` as a package with no directories to search
(``aioeval/__init__`` never runs, and no module of the engine can be imported
here or in any child forked from here), registers ``aioeval.sandbox`` at the
directory this file is in, appends the site directories from argv (msgspec,
and what candidates may import, as under the official harnesses), and runs
the entry module as ``__main__`` with `runpy`. Every sandbox module can then
use ordinary relative imports, whichever folder it is in.

Standard library only, and nothing imported at module level beyond it: the
launcher runs before the site directories are on ``sys.path``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import runpy
import sys

ROOT = "aioeval"
PACKAGE = "aioeval.sandbox"


def register(sandbox_dir: str) -> None:
    """Put ``aioeval`` (empty) and ``aioeval.sandbox`` (at `sandbox_dir`,
    its ``__init__`` run) in ``sys.modules``."""
    root = importlib.util.module_from_spec(
        importlib.machinery.ModuleSpec(ROOT, None, is_package=True)
    )
    root.__doc__ = "The engine's namespace: empty in a sandbox process."
    sys.modules[ROOT] = root
    spec = importlib.util.spec_from_file_location(
        PACKAGE,
        os.path.join(sandbox_dir, "__init__.py"),
        submodule_search_locations=[sandbox_dir],
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    root.sandbox = package  # type: ignore[attr-defined]


def main(argv: list[str]) -> None:
    """Run ``argv[1]`` (a module of ``aioeval.sandbox``) as ``__main__``,
    with the site directories ``argv[2:]`` appended to ``sys.path``."""
    if len(argv) < 2 or not argv[1].startswith(PACKAGE + "."):
        raise SystemExit(f"usage: _launch.py {PACKAGE}.<module> [SITE_DIR...]; got {argv[1:2]}")
    entry, sites = argv[1], argv[2:]
    for site in sites:
        if site not in sys.path:
            sys.path.append(site)
    register(os.path.dirname(os.path.abspath(__file__)))
    sys.argv = [entry, *sites]
    runpy.run_module(entry, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv)
