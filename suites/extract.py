"""The program in a model's answer, taken the way a reader takes it.

One extractor for every suite that runs a program (HumanEval and its
format, MBPP, HumanEval+/MBPP+, LiveCodeBench). Pure and deterministic: it
only parses (``ast``, ``compile`` without running), never executes, never
raises, and its time is bounded by `answer_text.MAX_CHARS` and
`MAX_COMPILES`.

1. The answer is normalised (`answer_text.normalise`: line endings, shown
   reasoning dropped) and cut into blocks: its fenced blocks, or, when it has
   no fence, the runs of lines that parse as Python (prose lines between
   them end a run; a bare name, a literal or ``Label: text`` is prose).
2. Each block is read with ``ast``. A block *defines the entry* when it
   binds one of the target's names at top level (the function, or
   ``Solution``); for a stdin problem, when it reads the input (``input``,
   ``sys.stdin``, ``open(0)``). A block is a *body* when it only parses
   after the problem's prompt (a completion of the given function).
3. The program is the last block that defines the entry, plus the blocks
   made only of definitions (imports, functions, classes, constants) that
   define a name it uses, transitively, in the answer's order. Blocks that
   only exercise it (calls, prints, asserts, output listings) and blocks
   that do not parse are left out. With no such block, the last body block
   is the program; with neither, the last block that looks like code (it
   fails as the model wrote it); with none of those, there is no code.
4. For a function problem, statements at the top level of the program that
   only exercise it are dropped: ``assert``, ``print(...)``, a call of the
   entry point, ``if __name__ == "__main__":``, test-runner calls, loops that
   print or assert, and assignments that read ``input()`` or call the entry
   point (when no function reads the name). Nothing a definition uses is
   dropped, and a body or a stdin program is never trimmed.

How the program was taken is the answer's `Kind`: ``block`` (one block),
``blocks`` (several), ``unfenced`` (code without a fence), ``body`` (a
completion of the prompt's function), ``ambiguous`` (two blocks define the
entry differently: the last one is taken), ``none`` (no code at all).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from typing import Literal

import msgspec

from . import code_reading as reading
from .answer_text import Block, chunks, fenced_blocks, normalise

Kind = Literal["block", "blocks", "unfenced", "body", "ambiguous", "none"]
KINDS: tuple[Kind, ...] = ("block", "blocks", "unfenced", "body", "ambiguous", "none")
NO_CODE = "no code in the answer"
MAX_COMPILES = 2000
"""Compilations one answer may cost; pieces past the budget count as prose."""

_PYTHON_INFOS = frozenset({"", "python", "py", "python3", "py3", "pycon", "ipython"})


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """What the answer's program has to be."""

    entry: tuple[str, ...] = ()
    """Names whose definition makes a block the program (empty: stdin)."""
    prompt: str = ""
    """Code the answer may continue (HumanEval's prompt), for body answers."""

    @property
    def stdin(self) -> bool:
        return not self.entry


class Extracted(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    """The program as taken (a body: the text to append to the prompt)."""
    kind: Kind


class _Piece(msgspec.Struct, kw_only=True):
    """A block read with ``ast``: its tree (None: it does not compile alone)."""

    block: Block
    text: str
    tree: ast.Module | None
    body: bool = False


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_COMPILES

    def compiles(self, source: str) -> ast.Module | None:
        """The tree of ``source`` if it compiles as a module (``compile``
        also refuses ``return`` outside a function, which ``ast.parse``
        accepts), else None; None too once the budget is spent."""
        if self.left <= 0 or not source.strip():
            return None
        self.left -= 1
        try:
            tree = ast.parse(source)
            compile(tree, "<answer>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            return None
        return tree


def extract(raw: str, target: Target) -> Extracted:
    """The program in ``raw`` for ``target`` (see the module docstring)."""
    try:
        return _extract(raw, target)
    except (RecursionError, MemoryError):
        return Extracted(text=raw, kind="unfenced")


def _extract(raw: str, target: Target) -> Extracted:
    text = normalise(raw)
    budget = _Budget()
    blocks = fenced_blocks(text)
    if not blocks:
        blocks = _unfenced(text, target, budget)
    pieces = _joined([_read(b, target, budget) for b in blocks], target, budget)
    got = _choose(pieces, target)
    if got.kind == "none" and target.prompt and _indented(text):
        # A body that does not parse (cut off, or wrong): the model's code
        # as it wrote it, which fails as such, not an answer without code.
        return Extracted(text=text, kind="body")
    return got


def _indented(text: str) -> bool:
    """Is every non-blank line indented, as a function's body is?"""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(line[:1].isspace() for line in lines)


def _joined(pieces: list[_Piece], target: Target, budget: _Budget) -> list[_Piece]:
    """A block that ends in the entry point's signature and docstring, and
    the indented block right after it that is its body (an answer that
    explains a function in steps), as one block."""
    out: list[_Piece] = []
    for p in pieces:
        prev = out[-1] if out else None
        if prev is not None and prev.tree is not None and _stub_end(prev.tree, target):
            if p.block.text[:1].isspace():
                text = (prev.text if prev.text.endswith("\n") else prev.text + "\n") + p.block.text
                tree = budget.compiles(text)
                if tree is not None and not _stub_end(tree, target):
                    out[-1] = _Piece(block=prev.block, text=text, tree=tree)
                    continue
        out.append(p)
    return out


def _stub_end(tree: ast.Module, target: Target) -> bool:
    """Does the code end in a definition of an entry point whose body stops
    at its docstring, ``pass`` or ``...`` (no ``return`` yet)?"""
    last = tree.body[-1] if tree.body else None
    if (
        not isinstance(last, ast.FunctionDef | ast.AsyncFunctionDef)
        or last.name not in target.entry
    ):
        return False
    end = last.body[-1]
    stub = isinstance(end, ast.Pass) or (
        isinstance(end, ast.Expr) and isinstance(end.value, ast.Constant)
    )
    return stub and not any(isinstance(n, ast.Return) for n in ast.walk(last))


def _read(block: Block, target: Target, budget: _Budget) -> _Piece:
    """A block, dedented, with its tree; or, when it only makes sense after
    the prompt, marked a body (text kept exactly)."""
    dedented = textwrap.dedent(block.text)
    tree = budget.compiles(dedented)
    if tree is not None and (_defines(tree, target) or dedented == block.text):
        return _Piece(block=block, text=dedented, tree=tree)
    if target.prompt and block.text[:1].isspace():
        if budget.compiles(target.prompt + block.text) is not None:
            return _Piece(block=block, text=block.text, tree=None, body=True)
    return _Piece(block=block, text=dedented, tree=tree)


def _unfenced(text: str, target: Target, budget: _Budget) -> list[Block]:
    """Code in an answer without fences: the whole text when it compiles
    (alone, or after the prompt), else the runs of chunks that are code."""
    if reading.is_code(budget.compiles(text)):
        return [Block(text=text, fenced=False)]
    if target.prompt and text[:1].isspace():
        if budget.compiles(target.prompt + text) is not None:
            return [Block(text=text, fenced=False)]
    runs: list[list[str]] = []
    joined = True
    for piece, code in _classified(chunks(text), target, budget):
        if not code:
            joined = False
            continue
        if not joined or not runs:
            runs.append([])
        runs[-1].append(piece)
        joined = True
    return [Block(text="".join(run), fenced=False) for run in runs]


def _classified(pieces: list[str], target: Target, budget: _Budget) -> Iterator[tuple[str, bool]]:
    """Each chunk with whether it is code. A chunk that does not compile is
    tried joined with the next few (a string or bracket across column 0);
    a prose line with an indented block under it gives up the block (code
    indented under a sentence)."""
    i = 0
    while i < len(pieces):
        width = _code_width(pieces, i, budget)
        if width:
            yield "".join(pieces[i : i + width]), True
            i += width
            continue
        head, _, rest = pieces[i].partition("\n")
        yield head + "\n", False
        if rest.strip():
            dedented = textwrap.dedent(rest)
            body = target.prompt and budget.compiles(target.prompt + rest) is not None
            if body:
                yield rest, True
            elif reading.is_code(budget.compiles(dedented)):
                yield dedented, True
        i += 1


def _code_width(pieces: list[str], i: int, budget: _Budget) -> int:
    """How many chunks from ``i`` (1 to 3) first compile together as code;
    0 when none do."""
    for width in range(1, min(3, len(pieces) - i) + 1):
        if reading.is_code(budget.compiles("".join(pieces[i : i + width]))):
            return width
    return 0


# --- choosing ---------------------------------------------------------------


def _choose(pieces: list[_Piece], target: Target) -> Extracted:
    entries = [p for p in pieces if p.tree is not None and _defines(p.tree, target)]
    if target.stdin:
        entries = _stdin_programs(entries)
    if entries:
        return _program(pieces, entries, target)
    bodies = [p for p in pieces if p.body]
    if bodies:
        return Extracted(text=bodies[-1].text, kind="body")
    code = [p for p in pieces if _looks_like_code(p)]
    if code:
        return Extracted(text=code[-1].text, kind=_kind([code[-1]]))
    return Extracted(text="", kind="none")


def _program(pieces: list[_Piece], entries: list[_Piece], target: Target) -> Extracted:
    chosen = entries[-1]
    assert chosen.tree is not None
    ambiguous = _ambiguous(entries, target)
    support = [p for p in pieces if p is not chosen and p.tree and reading.only_defines(p.tree)]
    used = _support(chosen, support, set(target.entry))
    # A block of imports before the program is part of it even where no
    # name it binds is read (an import can matter by what it loads).
    before = pieces[: pieces.index(chosen)]
    used += [p for p in before if p in support and p not in used and _imports(p)]
    if target.stdin and not _runs_something(chosen.tree):
        used += _runners(pieces, chosen, support)
    taken = [p for p in pieces if p is chosen or p in used]
    if target.stdin:
        texts = [p.text for p in taken]
    else:
        texts = [_trimmed(p, target, taken) for p in taken]
    text = "".join(t if t.endswith("\n") else t + "\n" for t in texts)
    return Extracted(text=text, kind="ambiguous" if ambiguous else _kind(taken))


def _kind(taken: list[_Piece]) -> Kind:
    if not taken[0].block.fenced:
        return "unfenced"
    return "blocks" if len(taken) > 1 else "block"


def _looks_like_code(piece: _Piece) -> bool:
    """A block that fails as the model wrote it: code that compiles, or a
    Python-labelled fence that does not (a syntax error is the model's)."""
    if piece.tree is not None:
        return reading.is_code(piece.tree)
    if piece.block.fenced and piece.block.info in _PYTHON_INFOS:
        first = piece.text.lstrip().split(None, 1)[:1]
        return bool(first) and first[0] in {"def", "class", "import", "from", "@", "async"}
    return False


def _defines(tree: ast.Module, target: Target) -> bool:
    if target.stdin:
        return reading.is_code(tree) and reading.reads_stdin(tree)
    return bool(reading.top_names(tree) & set(target.entry))


def _stdin_programs(entries: list[_Piece]) -> list[_Piece]:
    """Of the blocks that read stdin, those that are the program: a block
    that replaces ``sys.stdin`` is a test harness, and a block of
    definitions (``input = sys.stdin.readline``) supports a block that runs;
    where no block is left, all of them."""
    runs = [
        p
        for p in entries
        if p.tree is not None and not reading.sets_stdin(p.tree) and _runs_something(p.tree)
    ]
    if runs:
        return runs
    plain = [p for p in entries if p.tree is not None and not reading.sets_stdin(p.tree)]
    return plain or entries


def _ambiguous(entries: list[_Piece], target: Target) -> bool:
    """Do two blocks define the same entry name differently (a stdin
    program: are two programs different)?"""
    trees = [p.tree for p in entries if p.tree is not None]
    if target.stdin:
        return len({ast.dump(t) for t in trees}) > 1
    for name in target.entry:
        versions = {
            ast.dump(ast.Module(body=kept, type_ignores=[]))
            for t in trees
            if (kept := [s for s in t.body if name in reading.binds(s)])
        }
        if len(versions) > 1:
            return True
    return False


def _support(chosen: _Piece, support: list[_Piece], entry: set[str]) -> list[_Piece]:
    """The definition-only blocks that supply a name the program uses, or
    an entry name (of several) it does not define itself, transitively."""
    assert chosen.tree is not None
    defined = reading.top_names(chosen.tree)
    needed = (reading.loads(chosen.tree) | entry) - defined
    used: list[_Piece] = []
    changed = True
    while changed:
        changed = False
        for piece in support:
            assert piece.tree is not None
            if piece not in used and reading.top_names(piece.tree) & needed:
                used.append(piece)
                defined |= reading.top_names(piece.tree)
                needed = (needed | reading.loads(piece.tree)) - defined
                changed = True
    return used


def _imports(piece: _Piece) -> bool:
    tree = piece.tree
    return tree is not None and all(isinstance(s, ast.Import | ast.ImportFrom) for s in tree.body)


def _runs_something(tree: ast.Module) -> bool:
    return not reading.only_defines(tree)


def _runners(pieces: list[_Piece], chosen: _Piece, support: list[_Piece]) -> list[_Piece]:
    """For a stdin program made only of definitions: the later blocks that
    call what it defines (its ``main()`` in a block of its own)."""
    assert chosen.tree is not None
    names = reading.top_names(chosen.tree)
    after = pieces[pieces.index(chosen) + 1 :]
    return [
        p
        for p in after
        if p.tree is not None
        and p not in support
        and reading.calls(p.tree, names)
        and reading.is_code(p.tree)
    ]


# --- trimming ---------------------------------------------------------------


def _trimmed(piece: _Piece, target: Target, taken: list[_Piece]) -> str:
    """The block without its top-level statements that only exercise the
    program (see the module docstring); lines shared with a kept statement
    are kept."""
    tree = piece.tree
    if tree is None:
        return piece.text
    read = set().union(*(reading.read_in_defs(p.tree) for p in taken if p.tree))
    drop = [s for s in tree.body if reading.exercises(s, set(target.entry), read)]
    if not drop:
        return piece.text
    lines = piece.text.split("\n")
    keep = [True] * len(lines)
    kept_lines = {n for s in tree.body if s not in drop for n in reading.span(s)}
    for stmt in drop:
        for n in reading.span(stmt):
            if n not in kept_lines:
                keep[n] = False
    return "\n".join(line for line, k in zip(lines, keep, strict=True) if k)
