"""The client against the real fake server on 127.0.0.1: n, usage, every
error mapping, the start-up check, and credentials handling (request and
answer shapes per endpoint API: test_codecs)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest

from aioeval.config import Params, RetryConfig, Target
from aioeval.errors import ConfigError, EndpointError
from aioeval.generation.client import Client, RequestError, server_message
from aioeval.generation.credentials import ApiKey, resolve_credentials
from aioeval.testing.fake_openai import FakeConfig, FakeOpenAI
from aioeval.types import Prompt

PROMPT = Prompt(
    messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi"}],
    text="def hi():\n",
)
PARAMS = Params(max_tokens=32, temperature=0.2, stop=["\nclass"], seed=3)
KEY = "sk-test-123456"


def target(url: str, **kw: object) -> Target:
    return Target(
        mode="runtime",
        endpoint=url,
        model="fake-model",
        retries=RetryConfig(max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.02),
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeOpenAI]:
    cfg = getattr(request, "param", None) or FakeConfig(require_key=KEY)
    async with FakeOpenAI(cfg, lambda text, i: f"answer {i} to [{text[-6:]}]") as server:
        yield server


@pytest.mark.anyio
async def test_chat_with_n_and_usage(fake: FakeOpenAI) -> None:
    async with Client(target(fake.url), ApiKey(KEY)) as client:
        comp = await client.generate(PROMPT, 3, PARAMS, who=("P/0", 0, 1))
    assert [c.text for c in comp.choices] == [f"answer {i} to [say hi]" for i in range(3)]
    assert comp.usage is not None and comp.usage.completion_tokens is not None
    assert comp.latency_ms > 0
    assert fake.auth_seen == {f"Bearer {KEY}"}
    assert fake.n_asked == {3: 1}


@pytest.mark.anyio
async def test_completions_api(fake: FakeOpenAI) -> None:
    async with Client(target(fake.url, api="completions"), ApiKey(KEY)) as client:
        comp = await client.generate(PROMPT, 1, PARAMS, who=("P/0", 0, 1))
    assert [c.text for c in comp.choices] == ["answer 0 to [hi():\n]"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fake", [FakeConfig(honour_n=False), FakeConfig(faults=["nousage"])], indirect=True
)
async def test_n_ignored_or_usage_missing(fake: FakeOpenAI) -> None:
    async with Client(target(fake.url), None) as client:
        comp = await client.generate(PROMPT, 4, PARAMS, who=("P/0", 0, 1))
    if fake.config.honour_n:
        assert len(comp.choices) == 4 and comp.usage is None
    else:
        assert len(comp.choices) == 1 and comp.usage is not None
    assert fake.auth_seen == {""}  # no key configured: no Authorization header


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        ("429", "status", 429),
        ("500", "status", 500),
        ("503", "status", 503),
        ("400", "status", 400),
        ("drop", "connection", None),
        ("malformed", "malformed", None),
        ("nonjson", "malformed", None),
        ("slow", "timeout", None),
    ],
)
async def test_error_mapping(fault: str, kind: str, status: int | None) -> None:
    cfg = FakeConfig(faults=[fault], slow_s=5.0, retry_after_s=2.0)
    async with FakeOpenAI(cfg) as fake:
        tgt = target(fake.url, request_timeout_s=0.3)
        async with Client(tgt, ApiKey(KEY)) as client:
            with pytest.raises(RequestError) as info:
                await client.generate(PROMPT, 1, PARAMS, who=("HumanEval/7", 3, 2))
            # the fault was one-shot: the same client works again
            ok = await client.generate(PROMPT, 1, PARAMS, who=("HumanEval/7", 3, 3))
    err = info.value
    assert (err.failure.kind, err.failure.status) == (kind, status)
    assert (err.problem_id, err.sample_index, err.attempt) == ("HumanEval/7", 3, 2)
    assert str(err).startswith("HumanEval/7 sample 3 attempt 2: ")
    assert "\n" not in str(err) and KEY not in str(err)
    if fault == "429":
        assert err.failure.retry_after_s == 2.0
    assert len(ok.choices) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.anyio
async def test_check_unreachable_is_one_line() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    async with Client(target(url), None) as client:
        with pytest.raises(EndpointError) as info:
            await client.check()
    msg = str(info.value)
    assert "unreachable after 2 attempt(s)" in msg and url.rstrip("/") in msg
    assert "\n" not in msg


@pytest.mark.anyio
async def test_check_bad_key_and_unknown_model(fake: FakeOpenAI) -> None:
    async with Client(target(fake.url), ApiKey("sk-wrong")) as client:
        with pytest.raises(EndpointError, match="rejected the credentials"):
            await client.check()
    async with Client(target(fake.url), ApiKey(KEY)) as client:
        assert await client.check() == ["fake-model"]
    bad = Target(endpoint=fake.url, model="other-model")
    async with Client(bad, ApiKey(KEY)) as client:
        with pytest.raises(EndpointError, match="does not serve model 'other-model'"):
            await client.check()
    assert fake.model_requests == 3


@pytest.mark.anyio
async def test_check_without_a_listing_sends_one_tiny_request() -> None:
    async with FakeOpenAI(FakeConfig(models_status=404)) as fake:
        for api in ("chat", "completions"):
            async with Client(target(fake.url, api=api), None) as client:
                assert await client.check() == []
        assert fake.requests == 2 and fake.model_requests == 2


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("cfg", "url_suffix", "message"),
    [
        # a base URL without /v1: 404 to the listing and to the tiny request
        (FakeConfig(), "", "answers 404 to /models and to /chat/completions"),
        # an unusable backend answers 400 to the listing: stop, with its words
        (
            FakeConfig(models_status=400, models_message="No connected db."),
            "/v1",
            "No connected db.",
        ),
        (
            FakeConfig(models_status=403, models_message="key disabled"),
            "/v1",
            "rejected the credentials",
        ),
        (FakeConfig(models_status=404, faults=["400"]), "/v1", "refused a one-token test request"),
        (FakeConfig(models_status=404, faults=["nonjson"]), "/v1", "not an OpenAI-compatible"),
    ],
)
async def test_check_stops_on_a_refusal_with_the_servers_message(
    cfg: FakeConfig, url_suffix: str, message: str
) -> None:
    async with FakeOpenAI(cfg) as fake:
        url = fake.url.removesuffix("/v1") + url_suffix
        async with Client(target(url), ApiKey(KEY)) as client:
            with pytest.raises(EndpointError) as info:
                await client.check()
    text = str(info.value)
    assert message in text and "\n" not in text and KEY not in text
    if cfg.models_status == 400:
        assert fake.requests == 0  # nothing spent
    if cfg.models_status == 403:
        assert "key disabled" in text and fake.model_requests == 1  # not retried


@pytest.mark.anyio
async def test_check_a_busy_endpoint_is_reachable() -> None:
    cfg = FakeConfig(models_status=404, faults=["429", "429"], retry_after_s=0.01)
    async with FakeOpenAI(cfg) as fake, Client(target(fake.url), None) as client:
        assert await client.check() == []


def test_server_message_and_the_key_never_echoed() -> None:
    assert server_message(b'{"error": {"message": "No connected db.", "type": "x"}}') == (
        "No connected db."
    )
    assert server_message(b'{"detail": [{"msg": "field required"}]}') == "field required"
    assert server_message(b'{"error": "quota"}') == "quota"
    assert server_message(b"<html>  502\n Bad Gateway</html>") == "<html> 502 Bad Gateway</html>"


@pytest.mark.anyio
async def test_a_server_echoing_the_key_does_not_put_it_in_a_message() -> None:
    cfg = FakeConfig(models_status=401, models_message=f"Incorrect API key provided: {KEY}")
    async with FakeOpenAI(cfg) as fake, Client(target(fake.url), ApiKey(KEY)) as client:
        with pytest.raises(EndpointError) as info:
            await client.check()
    assert KEY not in str(info.value) and "Incorrect API key provided: ***" in str(info.value)


def test_credentials() -> None:
    env = {"MY_KEY": "sk-abc", "EMPTY": ""}
    key = resolve_credentials("env:MY_KEY", env)
    assert key is not None and key.reveal() == "sk-abc"
    assert "sk-abc" not in repr(key) and "sk-abc" not in str(key)
    assert resolve_credentials(None, env) is None
    for ref, message in [
        ("env:MISSING", "MISSING is not set"),
        ("env:EMPTY", "EMPTY is not set"),
        ("file:/etc/key", "unsupported; use env:NAME"),
        ("sk-abc", "unsupported"),
        ("env:BAD-NAME", "not a variable name"),
    ]:
        with pytest.raises(ConfigError, match=message):
            resolve_credentials(ref, env)
