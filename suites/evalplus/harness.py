"""EvalPlus's test, as trusted code: call the entry point on each input
under its time limit and compare with the reference's output.

This module's source is the test's text: in strict scoring it runs in the
slot's verifier (the candidate is a proxy, its outputs arrive as plain
values); in official scoring it runs after the candidate's code in one
program, as EvalPlus's own checker does. It imports only the standard
library, and every name it binds starts with ``_aioeval_``. The data names
(`_aioeval_inputs`, `_aioeval_expected`, ...) are bound by the text the
suite appends.

The rules are EvalPlus's (``evalplus/eval/__init__.py``, ``unsafe_execute``;
special oracles in ``evalplus/eval/_special_oracle.py``): exact equality,
else, where a tolerance applies, the same type and length and
``numpy.allclose(out, exp, rtol=1e-07, atol=atol)``; a float answer gets
``atol = 1e-6`` when the task sets none, and that tolerance then holds for
the inputs after it, as it does there. A handful of tasks have their own
oracle, by dataset and entry point.
"""

import marshal as _aioeval_marshal  # noqa: F401 (the data lines the suite appends use it)
import math as _aioeval_math
from typing import Any

_aioeval_inputs: list[Any] = []
_aioeval_expected: list[Any] = []
_aioeval_limits: list[float] = []
_aioeval_atol: float = 0.0
_aioeval_flavor: str = "humaneval"
_aioeval_entry: str = ""
_aioeval_part: str = "base"
_aioeval_details: bool = False

_AIOEVAL_SET_EQ = frozenset(
    {
        "similar_elements",
        "find_char_long",
        "common_in_nested_lists",
        "extract_singly",
        "larg_nnum",
        "intersection_array",
        "find_dissimilar",
        "Diff",
    }
)
_AIOEVAL_NOT_NONE = frozenset({"check_str", "text_match_three", "text_starta_endb"})
_AIOEVAL_RTOL = 1e-07


def _aioeval_is_floats(x: Any) -> bool:
    if isinstance(x, float):
        return True
    if isinstance(x, list | tuple) and x:
        return all(isinstance(i, float) for i in x)
    return False


def _aioeval_shape(x: Any) -> list[int]:
    shape = []
    while isinstance(x, list | tuple):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    return shape


def _aioeval_flat(x: Any, shape: list[int], depth: int, out: list[Any]) -> bool:
    """Append the numbers of ``x`` (row-major) if it has ``shape`` and holds
    only numbers numpy reads as such (ragged or other values: False)."""
    if depth == len(shape):
        if type(x) in (int, bool):
            out.append(x)
            return bool(-(2**63) <= x < 2**63)
        if type(x) in (float, complex):
            out.append(x)
            return True
        return False
    if not isinstance(x, list | tuple) or len(x) != shape[depth]:
        return False
    return all(_aioeval_flat(item, shape, depth + 1, out) for item in x)


def _aioeval_pairs(a: Any, b: Any) -> list[tuple[Any, Any]] | None:
    """The element pairs numpy compares after broadcasting ``a`` and ``b``."""
    sa, sb = _aioeval_shape(a), _aioeval_shape(b)
    fa: list[Any] = []
    fb: list[Any] = []
    if not (_aioeval_flat(a, sa, 0, fa) and _aioeval_flat(b, sb, 0, fb)):
        return None
    n = max(len(sa), len(sb))
    sa, sb = [1] * (n - len(sa)) + sa, [1] * (n - len(sb)) + sb
    shape = []
    for x, y in zip(sa, sb, strict=True):
        if x != y and x != 1 and y != 1:
            return None
        shape.append(y if x == 1 else x)
    total = 1
    for d in shape:
        total *= d
    pairs = []
    for flat in range(total):
        ia = ib = 0
        stride = total
        for k, d in enumerate(shape):
            stride //= d
            i = (flat // stride) % d
            ia = ia * sa[k] + (i if sa[k] != 1 else 0)
            ib = ib * sb[k] + (i if sb[k] != 1 else 0)
        pairs.append((fa[ia], fb[ib]))
    return pairs


def _aioeval_isclose(a: Any, b: Any, atol: float) -> bool:
    if a != a or b != b:
        return False
    if isinstance(a, complex) or isinstance(b, complex):
        finite = _aioeval_math.isfinite(abs(a)) and _aioeval_math.isfinite(abs(b))
    else:
        finite = _aioeval_math.isfinite(a) and _aioeval_math.isfinite(b)
    if not finite:
        return bool(a == b)
    return bool(abs(a - b) <= atol + _AIOEVAL_RTOL * abs(b))


def _aioeval_allclose(out: Any, exp: Any, atol: float) -> bool:
    """``numpy.allclose(out, exp, rtol=1e-07, atol=atol)`` for numbers and
    (nested) lists of them, broadcast as numpy broadcasts them."""
    pairs = _aioeval_pairs(out, exp)
    return pairs is not None and all(_aioeval_isclose(x, y, atol) for x, y in pairs)


def _aioeval_poly(xs: Any, x: Any) -> Any:
    return sum([coeff * _aioeval_math.pow(x, i) for i, coeff in enumerate(xs)])


def _aioeval_surface_area(base_edge: Any, height: Any) -> Any:
    slant = _aioeval_math.sqrt((base_edge / 2) ** 2 + height**2)
    return round(base_edge**2 + 4 * (base_edge * slant) / 2)


def _aioeval_digit_distance(num1: Any, num2: Any) -> int:
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))


def _aioeval_mbpp_exact(exact: Any, out: Any, exp: Any, args: Any, atol: float) -> Any:
    """Exact match as an MBPP+ task with its own oracle sees it."""
    entry = _aioeval_entry
    if entry == "are_equivalent":
        return exact or True
    if entry == "sum_div":
        return exact or out == 0
    if entry == "surface_Area":
        return exact or abs(out - _aioeval_surface_area(*args)) <= atol
    if entry == "digit_distance_nums":
        return exact or out == _aioeval_digit_distance(*args)
    if entry in _AIOEVAL_SET_EQ:
        return set(out) == set(exp)
    if entry in _AIOEVAL_NOT_NONE:
        return out == exp if isinstance(out, bool) else exp == (out is not None)
    return exact


def _aioeval_matches(out: Any, exp: Any, args: Any, atol: float) -> tuple[bool, float]:
    """Does ``out`` pass for ``exp``? And the tolerance from here on."""
    exact = out == exp
    if _aioeval_flavor == "mbpp":
        exact = _aioeval_mbpp_exact(exact, out, exp, args, atol)
    elif _aioeval_entry == "find_zero":
        return bool(abs(_aioeval_poly(*args, out)) <= atol), atol  # type: ignore[call-arg]
    if atol == 0 and _aioeval_is_floats(exp):
        atol = 1e-6
    if exact or atol == 0:
        return bool(exact), atol
    if type(out) is not type(exp):
        return False, atol
    if isinstance(exp, list | tuple) and len(out) != len(exp):
        return False, atol
    return _aioeval_allclose(out, exp, atol), atol


class _AioevalTimeLimit(Exception):
    pass


def _aioeval_alarm_within(seconds: float, fn: Any, *args: Any) -> Any:
    """Official scoring's per-input limit, a wall-clock alarm in the
    candidate's own process (as EvalPlus sets it)."""
    import signal

    def ring(signum: int, frame: object) -> None:
        raise _AioevalTimeLimit(f"past its time limit of {seconds:g}s")

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _aioeval_run(fn: Any) -> None:
    """Every input in order; the first that fails ends the test (all of
    them with ``_aioeval_details``, which then lists the failures). Under
    strict scoring the inputs go to the candidate's process at once and its
    answers are read as they come (``__aioeval_map__``), each under its
    input's limit."""
    within = globals().get("__aioeval_within__") or _aioeval_alarm_within
    stream = globals().get("__aioeval_map__")
    answers = None if stream is None else stream(fn, _aioeval_inputs)
    atol = _aioeval_atol
    failed: list[int] = []
    for i, args in enumerate(_aioeval_inputs):
        try:
            if answers is None:
                out = within(_aioeval_limits[i], fn, *args)
            else:
                out = within(_aioeval_limits[i], next, answers)
            ok, atol = _aioeval_matches(out, _aioeval_expected[i], args, atol)
            why = "wrong output"
        except Exception as exc:
            ok, why = False, f"{type(exc).__name__}: {exc}"[:300]
        if ok:
            continue
        if not _aioeval_details:
            raise AssertionError(f"{_aioeval_part} input {i}: {why}")
        failed.append(i)
    if failed:
        n = len(_aioeval_inputs)
        raise AssertionError(f"{_aioeval_part}: {len(failed)} of {n} inputs failed: {failed[:50]}")
