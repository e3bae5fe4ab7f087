"""The text side of answer extraction: a chat answer normalised, and cut
into the pieces that may hold code. No Python semantics here (that is
`extract`'s job, with ``ast``); every pass is linear in the answer's length.

- `normalise`: ``\\r\\n`` and lone ``\\r`` become ``\\n``; reasoning the
  model shows before its answer (``<think>...</think>``, ``<thinking>``,
  ``<reasoning>``, ``<reflection>``) is dropped, including an opening tag
  that was left in the prompt (only the close is in the answer) and one
  that is never closed (the answer was cut while reasoning). Text past
  `MAX_CHARS` is not looked at.
- `fenced_blocks`: every fenced block, CommonMark's rule: a line of three or
  more backticks or tildes opens a block, any info string after it, and a
  line of the same character, at least as long, closes it; a block left
  open by a cut-off answer runs to the end. A fence indented inside a list
  item has that indentation removed from its lines.
- `prose_and_code`: for answers without fences, the text cut into chunks
  (a line at column 0 and the lines indented under it), for `extract` to
  tell prose from code.
"""

from __future__ import annotations

import re

import msgspec

MAX_CHARS = 400_000
"""Characters of an answer that extraction reads (after reasoning is
dropped); a longer answer is cut there, so extraction's time is bounded."""
MAX_BLOCKS = 200
"""Fenced blocks read per answer; any after these are ignored."""

_REASONING = ("think", "thinking", "reasoning", "reflection")
_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([^\n]*)")
_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of an answer that may be code."""

    text: str
    info: str = ""
    """The fence's info string (``python``, ``text``; empty when none)."""
    fenced: bool = True


def normalise(raw: str) -> str:
    """The answer with unified line endings and shown reasoning removed."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    for tag in _REASONING:
        text = _drop_reasoning(text, tag)
    return text[:MAX_CHARS]


def _drop_reasoning(text: str, tag: str) -> str:
    """Text outside ``<tag>...</tag>`` spans (case-insensitive). A close with
    no open drops everything before it; an open with no close, everything
    after it."""
    lower = text.lower()
    start, end = f"<{tag}>", f"</{tag}>"
    if start not in lower and end not in lower:
        return text
    out: list[str] = []
    pos = 0
    first_close = lower.find(end)
    first_open = lower.find(start)
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        pos = first_close + len(end)
    while True:
        opened = lower.find(start, pos)
        if opened == -1:
            out.append(text[pos:])
            break
        out.append(text[pos:opened])
        closed = lower.find(end, opened + len(start))
        if closed == -1:
            break
        pos = closed + len(end)
    return "".join(out)


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of ``text``, in order (see the module docstring)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines) and len(blocks) < MAX_BLOCKS:
        opened = _OPEN.fullmatch(lines[i])
        if opened is None or (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            i += 1
            continue
        fence = opened.group(1)
        indent = len(lines[i]) - len(lines[i].lstrip(" \t"))
        body: list[str] = []
        i += 1
        while i < len(lines):
            closed = _CLOSE.fullmatch(lines[i])
            if closed and closed.group(1)[0] == fence[0] and len(closed.group(1)) >= len(fence):
                break
            body.append(_unindent(lines[i], indent))
            i += 1
        i += 1
        info = opened.group(2).strip().split(" ")[0].lower() if opened.group(2).strip() else ""
        blocks.append(Block(text="\n".join(body) + "\n" if body else "", info=info))
    return blocks


def _unindent(line: str, indent: int) -> str:
    """``line`` with up to ``indent`` leading blanks removed (the fence's own
    indentation inside a list item)."""
    cut = 0
    while cut < indent and cut < len(line) and line[cut] in " \t":
        cut += 1
    return line[cut:]


def chunks(text: str) -> list[str]:
    """``text`` cut before each non-blank line at column 0 that does not
    continue the statement above it (``else``, ``elif``, ``except``,
    ``finally``, a closing bracket) or follow a decorator; each chunk keeps
    the indented and blank lines under its first line. Leading indented
    lines form a chunk of their own."""
    out: list[list[str]] = []
    decorated = False
    for line in text.split("\n"):
        starts = bool(line) and not line[0].isspace() and not _CONTINUES.match(line)
        if not out or (starts and not decorated):
            out.append([line])
        else:
            out[-1].append(line)
        if line.strip():
            decorated = (starts and line.startswith("@")) or (decorated and not starts)
    return ["\n".join(c).rstrip("\n ") + "\n" for c in out if any(x.strip() for x in c)]


_CONTINUES = re.compile(r"(?:else|elif|except|finally|case)\b|[)\]}]")
