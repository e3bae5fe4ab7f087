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

_REASONING = (
    *((f"<{tag}>", f"</{tag}>") for tag in ("think", "thinking", "reasoning", "reflection")),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("[think]", "[/think]"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ("<seed:think>", "</seed:think>"),
)
"""Markers around the reasoning models show before they answer (the
``<think>`` family, OpenThoughts, Magistral, Kimi and Seed models), compared
case-insensitively."""
_OPEN = re.compile(
    r"(?P<quote>[ \t]*(?:>[ \t]?)+)?(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)"
)
_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")
_ENDS_WITH_FENCE = re.compile(r"(.*[^`~ \t])[ \t]*(`{3,}|~{3,})[ \t]*")


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of an answer that may be code."""

    text: str
    info: str = ""
    """The fence's info string (``python``, ``text``; empty when none)."""
    fenced: bool = True


def normalise(raw: str) -> str:
    """The answer with unified line endings and shown reasoning removed."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    for start, end in _REASONING:
        text = _drop_reasoning(text, start, end)
    return text[:MAX_CHARS]


def _drop_reasoning(text: str, start: str, end: str) -> str:
    """Text outside ``start...end`` spans (case-insensitive). A close with
    no open drops everything before it; an open with no close, everything
    after it."""
    opens = re.compile(re.escape(start), re.IGNORECASE)
    closes = re.compile(re.escape(end), re.IGNORECASE)
    first_open, first_close = opens.search(text), closes.search(text)
    if first_open is None and first_close is None:
        return text
    pos = 0
    if first_close is not None and (first_open is None or first_close.start() < first_open.start()):
        pos = first_close.end()
    out: list[str] = []
    while (opened := opens.search(text, pos)) is not None:
        out.append(text[pos : opened.start()])
        closed = closes.search(text, opened.end())
        if closed is None:
            return "".join(out)
        pos = closed.end()
    out.append(text[pos:])
    return "".join(out)


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of ``text``, in order (see the module docstring)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines) and len(blocks) < MAX_BLOCKS:
        opened = _OPEN.fullmatch(lines[i])
        if opened is None or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        fence, quotes = opened["fence"], (opened["quote"] or "").count(">")
        indent = len(opened["indent"])
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = _unindent(_unquote(lines[i], quotes), indent)
            closed = _CLOSE.fullmatch(line)
            if closed and closed[1][0] == fence[0] and len(closed[1]) >= len(fence):
                break
            ends = _ENDS_WITH_FENCE.fullmatch(line)
            if ends and ends[2][0] == fence[0] and len(ends[2]) >= len(fence):
                body.append(ends[1])  # the closing fence written after the last line's code
                break
            body.append(line)
            i += 1
        i += 1
        info = opened["info"].strip().split(" ")[0].lower()
        blocks.append(Block(text="\n".join(body) + "\n" if body else "", info=info))
    return blocks


def _unquote(line: str, quotes: int) -> str:
    """``line`` without up to ``quotes`` blockquote markers (``> ``)."""
    for _ in range(quotes):
        stripped = line.lstrip(" \t")
        if not stripped.startswith(">"):
            break
        line = stripped[2:] if stripped[1:2] in (" ", "\t") else stripped[1:]
    return line


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
