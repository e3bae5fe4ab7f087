"""How numbers and foreign text are written, in the terminal and in HTML alike.

Pure functions, so the two renderings print the same figure the same way.
"""

from __future__ import annotations

import re

from aioeval.types import Measurement

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-_]"  # any other two-byte escape
)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def clean(text: str, limit: int = 300) -> str:
    """Server or model text made safe to print on one line: terminal escape
    sequences removed (a server could otherwise recolour, move the cursor or
    retitle the operator's terminal), other control characters and line
    breaks turned into a space, cut to ``limit`` characters."""
    text = " ".join(_CONTROLS.sub(" ", _ESCAPES.sub("", text)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count(n: int) -> str:
    """A whole number with thousands separators: ``299,245``."""
    return f"{n:,}"


def value(m: Measurement) -> str:
    """A measurement's value: fractions and dollars to four places, whole
    numbers as integers with separators (tokens, counts), anything else to
    two places."""
    if m.unit == "fraction":
        return f"{m.value:.4f}"
    if m.unit == "USD":
        return f"{m.value:,.4f}"
    if float(m.value).is_integer():
        return count(int(m.value))
    return f"{m.value:,.2f}"


def duration(seconds: float) -> str:
    """``0:01:05`` style, as rich's progress columns write time."""
    s = max(0, int(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
