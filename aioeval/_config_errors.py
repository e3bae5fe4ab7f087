"""Turn a msgspec validation error into the one line a person needs.

msgspec reports ``Invalid enum value 'x' - at `$.params.scoring```. A person
needs more: which input said so (the ``--set`` flag or the file and line),
what the field accepts (the values of a Literal), and for a typo the field
that was probably meant. The config's own types answer those questions, so
they are read from ``msgspec.inspect`` rather than kept in a second table.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

import msgspec
import yaml

_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]*)`$")
_BAD_VALUE = re.compile(r"^Invalid (?:enum )?value (?P<value>.+)$")
_LISTED = 8
"""Known fields are listed after an unknown one only when this few."""
_EXPECTED = re.compile(r"^Expected `(?P<want>[^`]*)`, got `(?P<got>[^`]*)`$")

Path = tuple[str | int, ...]


def parse(error: msgspec.ValidationError) -> tuple[Path, str]:
    """The path of the offending field and msgspec's message, apart."""
    match = _AT.match(str(error))
    assert match is not None  # the pattern matches any text
    message, where = match["message"], match["path"] or ""
    path: Path = tuple(name if name else int(index) for name, index in _SEGMENT.findall(where))
    unknown = _UNKNOWN.match(message)
    if unknown:
        path = (*path, unknown["name"])
    return path, message


def dotted(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out or "the config"


def describe(root: type, path: Path, message: str) -> str:
    """msgspec's message, reworded, with the allowed values or a suggestion."""
    unknown = _UNKNOWN.match(message)
    if unknown:
        return _unknown_field(root, path)
    expected = _EXPECTED.match(message)
    if expected:
        return f"expected {expected['want']}, got {expected['got']}"
    bad = _BAD_VALUE.match(message)
    if bad:
        allowed = _allowed_values(root, path)
        if allowed:
            return f"{bad['value']} is not one of: {', '.join(allowed)}"
        return f"invalid value {bad['value']}"
    return message


def _unknown_field(root: type, path: Path) -> str:
    name = str(path[-1])
    known = sorted(_field_names(root, path[:-1]))
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f"unknown field; did you mean {dotted((*path[:-1], close[0]))}?"
    if 0 < len(known) <= _LISTED:
        return f"unknown field; known here: {', '.join(known)}"
    return "unknown field"


def _types_at(root: type, path: Path) -> list[msgspec.inspect.Type]:
    """Every type the value at ``path`` may have (several for a union)."""
    types: list[msgspec.inspect.Type] = [msgspec.inspect.type_info(root)]
    for part in path:
        nxt: list[msgspec.inspect.Type] = []
        for t in _flatten(types):
            if isinstance(part, int) and isinstance(t, msgspec.inspect.ListType):
                nxt.append(t.item_type)
            elif isinstance(part, str) and isinstance(t, msgspec.inspect.StructType):
                nxt.extend(f.type for f in t.fields if f.encode_name == part)
                if t.tag_field == part and t.tag is not None:
                    nxt.append(msgspec.inspect.LiteralType(values=(t.tag,)))
        types = nxt
    return list(_flatten(types))


def _flatten(types: list[msgspec.inspect.Type]) -> Iterator[msgspec.inspect.Type]:
    for t in types:
        if isinstance(t, msgspec.inspect.UnionType):
            yield from _flatten(list(t.types))
        else:
            yield t


def _field_names(root: type, path: Path) -> set[str]:
    names: set[str] = set()
    for t in _types_at(root, path):
        if isinstance(t, msgspec.inspect.StructType):
            names.update(f.encode_name for f in t.fields)
    return names


def _allowed_values(root: type, path: Path) -> list[str]:
    values: list[str] = []
    for t in _types_at(root, path):
        if isinstance(t, msgspec.inspect.LiteralType):
            values.extend(str(v) for v in t.values)
        elif isinstance(t, msgspec.inspect.StructType) and t.tag is not None:
            values.append(f"{{{t.tag_field}: {t.tag}, ...}}")
    return list(dict.fromkeys(values))


def yaml_line(text: str, path: Path) -> int | None:
    """The 1-based line of the deepest node of ``path`` present in a YAML
    text (the key itself for a mapping entry), or None."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for part in path:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            entry = next((kv for kv in node.value if kv[0].value == part), None)
            if entry is None:
                break
            line, node = entry[0].start_mark.line + 1, entry[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
