"""What a piece of Python does, read with ``ast`` (never run): the names a
block binds and reads, whether it only defines things, reads stdin, or only
exercises a program (asserts, prints, calls of the entry point, a main
guard). The extractor (`extract`) chooses and trims blocks with these.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

_RUNNERS = frozenset({"print", "pprint", "input", "main", "testmod", "run_tests"})
"""Calls that only exercise a program when made at its top level (``print``,
``unittest.main``, ``doctest.testmod``)."""
_READS_STDIN = frozenset({"input", "stdin", "fileinput"})


def is_code(tree: ast.Module | None) -> bool:
    """Does the tree hold a statement that does something (not a bare name,
    literal or ``Label: text`` annotation, which is how prose parses)?"""
    if tree is None:
        return False
    return any(not prose_like(s) for s in tree.body)


def prose_like(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return True
    if isinstance(stmt, ast.Expr):
        return not any(isinstance(n, ast.Call | ast.Await | ast.Yield) for n in ast.walk(stmt))
    return isinstance(stmt, ast.Pass)


def reads_stdin(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _READS_STDIN:
            return True
        if isinstance(node, ast.Attribute) and node.attr in _READS_STDIN:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "open" and node.args and is_zero(node.args[0]):
                return True
    return False


def sets_stdin(tree: ast.AST) -> bool:
    """Does the code replace ``sys.stdin`` (a test feeding the program input)?"""
    return any(
        isinstance(n, ast.Attribute) and n.attr == "stdin" and isinstance(n.ctx, ast.Store)
        for n in ast.walk(tree)
    )


def is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def binds(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.If | ast.Try):
        inner: list[ast.stmt] = [*stmt.body, *stmt.orelse]
        if isinstance(stmt, ast.Try):
            inner += [*stmt.finalbody, *(s for h in stmt.handlers for s in h.body)]
        return set().union(*(binds(s) for s in inner)) if inner else set()
    return set()


def top_names(tree: ast.Module) -> set[str]:
    return set().union(*(binds(s) for s in tree.body)) if tree.body else set()


def only_defines(tree: ast.Module) -> bool:
    """Is every top-level statement a definition (import, def, class,
    constant, a guarded import)? Such a block can only supply names."""
    return bool(tree.body) and all(is_definition(s) for s in tree.body)


def is_definition(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef):
        return True
    if isinstance(stmt, ast.ClassDef):
        return True
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        return stmt.value is not None and not calls(stmt.value, {"input", "print"})
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
    if isinstance(stmt, ast.Try):
        return all(
            is_definition(s) for s in [*stmt.body, *(x for h in stmt.handlers for x in h.body)]
        )
    return False


def calls(node: ast.AST, names: Iterable[str]) -> bool:
    wanted = set(names)
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in wanted:
                return True
    return False


def loads(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def span(stmt: ast.stmt) -> range:
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    return range(first - 1, (stmt.end_lineno or stmt.lineno))


def read_in_defs(tree: ast.Module) -> set[str]:
    """Names read inside the functions and classes of a block."""
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return set().union(*(loads(s) for s in tree.body if isinstance(s, kinds)), set())


def exercises(stmt: ast.stmt, entry: set[str], read: set[str]) -> bool:
    """Does a top-level statement only exercise the program (see `extract`)?"""
    if isinstance(stmt, ast.Assert):
        return True
    if isinstance(stmt, ast.If):
        return is_main_guard(stmt)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return runner_call(stmt.value, entry)
    if isinstance(stmt, ast.For | ast.While):
        has_def = any(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in ast.walk(stmt))
        noisy = calls(stmt, {"print"}) or any(isinstance(n, ast.Assert) for n in ast.walk(stmt))
        return noisy and not has_def
    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
        if calls(stmt.value, {"input", *entry}):
            return not (binds(stmt) & read)
    return False


def runner_call(call: ast.Call, entry: set[str]) -> bool:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if isinstance(f, ast.Name) and name in entry:
        return True
    if name == "main":  # unittest.main(), pytest.main(): not a program's own main()
        return isinstance(f, ast.Attribute)
    return name in _RUNNERS


def is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
