"""Honest-but-wrong HumanEval completions, made from the canonical solutions.

Each variant is what an honest model gets wrong, never an attack on the
grader: a wrong value (a mutated constant or comparison, ``None``), a wrong
type (the right value as a string, a list for a tuple), an exception, a
print, an early ``sys.exit`` inside the function or at module level, a
generator instead of a list, a completion cut off halfway (as by
``max_tokens``), and (for a few problems) an endless loop.
Used to show that the strict and the official scoring models give the same
verdicts on honest candidates.
"""

from __future__ import annotations

import ast
import textwrap

from aioeval.types import Problem

KINDS = (
    "canonical",
    "prints",
    "returns-none",
    "raises",
    "constant+1",
    "comparison-flipped",
    "stringified",
    "exits-in-function",
    "exits-at-import",
    "as-generator",
    "listed",
    "truncated",
    "endless-loop",
)


def _module(problem: Problem) -> ast.Module:
    return ast.parse(problem.fields["prompt"] + problem.fields["canonical_solution"])


def _entry(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise LookupError(name)


def _whole(tree: ast.Module) -> str:
    """A completion that redefines the whole module (the prompt's stub stays a
    docstring-only function; the redefinition replaces it)."""
    return "\n" + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


class _FirstConstant(ast.NodeTransformer):
    def __init__(self) -> None:
        self.done = False

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if not self.done and type(node.value) is int:
            self.done = True
            return ast.Constant(node.value + 1)
        return node


_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq}


class _FirstComparison(ast.NodeTransformer):
    def __init__(self) -> None:
        self.done = False

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if not self.done and type(node.ops[0]) in _FLIP:
            self.done = True
            node.ops[0] = _FLIP[type(node.ops[0])]()
        return node


class _Returns(ast.NodeTransformer):
    """Wrap every ``return X`` of the entry function as ``return wrap(X)``."""

    def __init__(self, wrap: str) -> None:
        self.wrap = wrap

    def visit_Return(self, node: ast.Return) -> ast.AST:
        if node.value is None:
            return node
        call = ast.Call(func=ast.Name(self.wrap, ast.Load()), args=[node.value], keywords=[])
        return ast.Return(value=call)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self.generic_visit(node) if node.name == "__entry__" else node


def _mutated(problem: Problem, transformer: ast.NodeTransformer) -> str:
    tree = _module(problem)
    entry = _entry(tree, problem.fields["entry_point"])
    transformer.visit(entry)
    return _whole(tree)


def _wrapped(problem: Problem, wrap: str, helper: str) -> str:
    tree = _module(problem)
    entry = _entry(tree, problem.fields["entry_point"])
    name = entry.name
    entry.name = "__entry__"
    _Returns(wrap).visit(entry)
    entry.name = name
    return _whole(tree) + textwrap.dedent(helper)


def variants(problem: Problem, *, loops: bool) -> list[tuple[str, str]]:
    """(kind, completion) pairs for one problem."""
    canonical = problem.fields["canonical_solution"]
    out = [
        ("canonical", canonical),
        ("prints", "    print('thinking...')\n" + canonical + "\nprint('done')\n"),
        ("returns-none", "    return None\n"),
        ("raises", "    raise ValueError('not implemented yet')\n"),
        ("constant+1", _mutated(problem, _FirstConstant())),
        ("comparison-flipped", _mutated(problem, _FirstComparison())),
        ("stringified", _wrapped(problem, "str", "")),
        ("exits-in-function", "    import sys\n    sys.exit(0)\n"),
        ("exits-at-import", canonical + "\nimport sys\nsys.exit(0)\n"),
        (
            "as-generator",
            _wrapped(
                problem,
                "_gen",
                "\ndef _gen(x):\n    yield from x if isinstance(x, list) else [x]\n",
            ),
        ),
        (
            "listed",
            _wrapped(
                problem,
                "_listed",
                "\ndef _listed(x):\n    return list(x) if isinstance(x, tuple) else x\n",
            ),
        ),
        ("truncated", canonical[: max(1, len(canonical) // 2)]),
    ]
    if loops:
        out.append(("endless-loop", "    while True:\n        pass\n"))
    return out


def corpus(problems: list[Problem], *, loops_every: int = 40) -> list[tuple[str, str, str]]:
    """(task_id, kind, completion) for every problem; an endless loop for
    every ``loops_every``-th problem (timeouts cost a CPU budget each)."""
    rows = []
    for i, p in enumerate(problems):
        for kind, completion in variants(p, loops=i % loops_every == 0):
            rows.append((p.id, kind, completion))
    return rows
