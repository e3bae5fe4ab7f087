"""Every request shape ``aioeval serve`` can be sent gets a verdict or a
one-line 4xx/503 JSON error, never a 500: generated bodies and headers
(hypothesis) against one real server on 127.0.0.1, and a benchmark whose
dataset cannot be had."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from servecheck import TOKEN, free_port, serving

from aioeval.service import ServeLimits

NOWHERE = f"http://127.0.0.1:{free_port()}/cruxeval.jsonl"
"""A CRUXEval download that cannot succeed (nothing listens there)."""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for every generated request, its CRUXEval cache empty."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AIOEVAL_CACHE_DIR", str(cache))
        with anyio.from_thread.start_blocking_portal() as portal:
            server = serving(
                f"params.dataset_url={NOWHERE}",
                limits=ServeLimits(max_body_mb=0.25),
                problem_bytes=8192,
                field_bytes=4096,
            )
            with portal.wrap_async_context_manager(server) as (url, _):
                yield url


def _send(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    try:
        conn.request("POST", "/v1/score", body=body, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
CODE = st.sampled_from(
    [
        "",
        "def f(x):\n    return x\n",
        "    return 1\n",
        "def check(candidate):\n    assert candidate(1) == 1\n",
        "assert f(1) == 1",
        "[ANSWER]f(1) == 1[/ANSWER]",
        "(",
        "1+",
        "\x00",
    ]
)
TEXT = CODE | st.text(max_size=30)
OWN_PROBLEMS = st.one_of(
    st.fixed_dictionaries(
        {"prompt": TEXT, "test": TEXT, "entry_point": st.sampled_from(["f", "1x", ""]) | TEXT},
        optional={"task_id": TEXT | JSON_VALUES, "canonical_solution": TEXT},
    ),
    st.fixed_dictionaries(
        {"text": TEXT, "test_list": st.lists(TEXT, max_size=3)},
        optional={"task_id": st.integers() | TEXT, "test_setup_code": TEXT, "code": TEXT},
    ),
    st.fixed_dictionaries({"code": TEXT, "input": TEXT, "output": TEXT}),
    st.dictionaries(st.text(max_size=8), TEXT | JSON_VALUES, max_size=4),
)
BENCHMARKS = st.sampled_from(["human-eval", "mbpp", "cruxeval-o", "cruxeval-i"])
CHECK = "def check(candidate):\n    assert candidate(1) == 1\n"
PROBLEMS_BY_ID = st.sampled_from(
    [
        ("human-eval", "HumanEval/0"),
        ("mbpp", "2"),
        ("cruxeval-o", "sample_0"),
        ("human-eval", "HumanEval/999"),
        ("mbpp", "HumanEval/0"),
    ]
)
ITEMS = st.one_of(
    st.tuples(PROBLEMS_BY_ID, TEXT, st.booleans()).map(
        lambda t: {"benchmark": t[0][0], "problem_id": t[0][1], "completion": t[1], "wait": t[2]}
    ),
    st.fixed_dictionaries(
        {
            "benchmark": st.just("human-eval"),
            "problem": st.fixed_dictionaries(
                {"prompt": TEXT, "test": st.just(CHECK) | TEXT, "entry_point": st.just("f")}
            ),
            "completion": TEXT,
        }
    ),
    st.fixed_dictionaries({"benchmark": BENCHMARKS, "problem": OWN_PROBLEMS, "completion": TEXT}),
    st.fixed_dictionaries(
        {},
        optional={
            "benchmark": BENCHMARKS | JSON_VALUES,
            "problem_id": JSON_VALUES,
            "problem": OWN_PROBLEMS | JSON_VALUES,
            "completion": TEXT | JSON_VALUES,
            "wait": JSON_VALUES,
            "extra": JSON_VALUES,
        },
    ),
)
BODIES = st.one_of(
    ITEMS.map(lambda item: json.dumps(item).encode()),
    st.lists(ITEMS, max_size=3).map(lambda items: json.dumps({"items": items}).encode()),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=64),
    st.integers(1, 200_000).map(lambda depth: b"[" * depth + b"]" * depth),
)
LATIN1 = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=20
)
"""Header text an HTTP parser accepts (what it refuses is aiohttp's own 400)."""
HEADERS = st.fixed_dictionaries(
    {
        "Content-Type": st.sampled_from(["application/json", "application/json; charset=utf-8"])
        | LATIN1,
        "Authorization": st.just(f"Bearer {TOKEN}") | LATIN1,
    },
    optional={
        "Origin": st.sampled_from(["null", "http://evil.example"]) | LATIN1,
        "Host": st.sampled_from(["localhost", "evil.example", "[::1]:1"]) | LATIN1,
    },
)
GOOD_HEADERS = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}


def _judged(status: int, answer: bytes) -> None:
    """A verdict, or a one-line JSON refusal that is not the engine's fault."""
    event(f"status {status}")
    assert status in (200, 400, 401, 403, 404, 413, 415, 429, 503), (status, answer)
    parsed: Any = json.loads(answer)
    if status != 200:
        assert isinstance(parsed["error"], str) and "\n" not in parsed["error"]
        assert "internal error" not in parsed["error"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES)
@example(body=b'{"\\n": null}')  # a field name that breaks the line of the error
def test_no_body_gets_a_500(live: str, body: bytes) -> None:
    _judged(*_send(live, body, GOOD_HEADERS))


@settings(max_examples=100, deadline=None)
@given(headers=HEADERS)
def test_no_headers_get_a_500(live: str, headers: dict[str, str]) -> None:
    body = {"benchmark": "human-eval", "problem_id": "HumanEval/0", "completion": "    return 1\n"}
    _judged(*_send(live, json.dumps(body).encode(), headers))


def test_a_benchmark_whose_dataset_is_missing_says_what_to_do(live: str, tmp_path: Path) -> None:
    item = {"benchmark": "cruxeval-o", "problem_id": "sample_0", "completion": "[ANSWER]1[/ANSWER]"}
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
    status, answer = _send(live, json.dumps(item).encode(), headers)
    error = json.loads(answer)["error"]
    assert status == 503 and "cruxeval-o" in error and "--dataset" in error, error
    assert NOWHERE in error
