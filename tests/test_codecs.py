"""Endpoint APIs as codecs: the request and answer shapes of chat and legacy
completions (pure), an unknown ``target.api`` refused before any request,
and a new API added as one codec plus one registry entry, used end to end
against its own aiohttp server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web

from aioeval.config import Params, decode_config
from aioeval.errors import ConfigError
from aioeval.generation import codecs
from aioeval.generation.codecs import Answer, Choice, Malformed, Usage, get_codec
from aioeval.run.evaluate import RunSpec, evaluate
from aioeval.suites.human_eval.suite import load_problems
from aioeval.testing.fake_openai import human_eval_answers
from aioeval.types import Prompt

PROMPT = Prompt(
    messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi"}],
    text="def hi():\n",
)
PARAMS = Params(max_tokens=32, temperature=0.2, stop=["\nclass"], seed=3)
PROBLEMS = load_problems()[:2]


def test_request_body_shapes() -> None:
    chat = get_codec("chat").body("m", PROMPT, 1, PARAMS)
    assert chat == {
        "model": "m",
        "max_tokens": 32,
        "messages": PROMPT.messages,
        "temperature": 0.2,
        "stop": ["\nclass"],
        "seed": 3,
    }
    legacy = get_codec("completions").body("m", PROMPT, 4, Params())
    assert legacy == {"model": "m", "max_tokens": 512, "prompt": "def hi():\n", "n": 4}
    assert get_codec("chat").path == "/chat/completions"
    assert get_codec("completions").path == "/completions"
    assert get_codec("chat").prompt_text(PROMPT) == "be briefsay hi"
    assert get_codec("completions").prompt_text(PROMPT) == "def hi():\n"


def test_parse_orders_choices_and_reads_usage() -> None:
    body = (
        b'{"choices":[{"index":1,"message":{"content":"b"}},'
        b'{"index":0,"message":{"content":null},"finish_reason":"length"}],'
        b'"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12},"extra":1}'
    )
    answer = get_codec("chat").parse(body)
    assert [c.text for c in answer.choices] == ["", "b"]
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage == Usage(prompt_tokens=5, completion_tokens=7)
    legacy = get_codec("completions").parse(
        b'{"choices":[{"index":0,"text":"x","finish_reason":"stop"}],"usage":{}}'
    )
    assert legacy == Answer(choices=[Choice(text="x", finish_reason="stop")], usage=None)


@pytest.mark.parametrize("api", ["chat", "completions"])
@pytest.mark.parametrize(
    "data", [b'{"id": "x", "object": "weird"}', b'{"choices": []}', b"<html>502</html>"]
)
def test_anything_but_an_answer_is_malformed(api: str, data: bytes) -> None:
    with pytest.raises(Malformed):
        get_codec(api).parse(data)


def test_an_unknown_api_is_a_config_error_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"target.api 'chta'.*chat, completions"):
        get_codec("chta")


# ---------------------------------------------------------------- a new API


class TinyCodec:
    """A made-up API unlike OpenAI's in every field: ``POST /generate`` with
    ``{"input", "samples", "limit"}``, answered with ``{"outputs": [{"text",
    "why"}], "tokens": {"in", "out"}}``."""

    path = "/generate"

    class _Output(msgspec.Struct):
        text: str
        why: str

    class _Tokens(msgspec.Struct):
        in_: int = msgspec.field(name="in")
        out: int

    class _Body(msgspec.Struct):
        outputs: list[TinyCodec._Output]
        tokens: TinyCodec._Tokens

    def body(self, model: str, prompt: Prompt, n: int, params: Params) -> dict[str, Any]:
        return {"engine": model, "input": prompt.text, "samples": n, "limit": params.max_tokens}

    def prompt_text(self, prompt: Prompt) -> str:
        return prompt.text

    def parse(self, data: bytes) -> Answer:
        try:
            body = msgspec.json.decode(data, type=TinyCodec._Body)
        except msgspec.DecodeError as exc:
            raise Malformed(str(exc)) from None
        if not body.outputs:
            raise Malformed("no outputs")
        choices = [Choice(text=o.text, finish_reason=o.why) for o in body.outputs]
        usage = Usage(prompt_tokens=body.tokens.in_, completion_tokens=body.tokens.out)
        return Answer(choices=choices, usage=usage)


class TinyServer:
    """Serves only the tiny API (no model listing: the start-up check falls
    back to a one-token request through the codec)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answer = human_eval_answers(PROBLEMS)

    async def generate(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        texts = [self.answer(body["input"], i) for i in range(body["samples"])]
        outputs = [{"text": t, "why": "done"} for t in texts]
        return web.json_response({"outputs": outputs, "tokens": {"in": 3, "out": 5}})


@pytest.mark.anyio
async def test_a_registered_codec_is_used_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(codecs.REGISTRY, "tiny", TinyCodec())
    server = TinyServer()
    app = web.Application()
    app.router.add_post("/v1/generate", server.generate)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    raw = {
        "target": {"endpoint": f"http://127.0.0.1:{port}/v1", "model": "tiny-1", "api": "tiny"},
        "params": {"allow_code_execution": True, "limit": 2, "n_samples": 2, "max_tokens": 600},
    }
    spec = RunSpec(
        benchmark="human-eval",
        platform="llm-endpoint",
        config=decode_config(raw),
        out_dir=str(tmp_path / "o"),
    )
    try:
        summary = await evaluate(spec)
    finally:
        await runner.cleanup()
    assert summary.complete and summary.counts["passed"] == 4
    ping, *runs = server.bodies
    assert ping == {"engine": "tiny-1", "input": "ping", "samples": 1, "limit": 1}
    assert len(runs) == 2
    assert all(b["samples"] == 2 and b["limit"] == 600 and b["engine"] == "tiny-1" for b in runs)
    rows = (tmp_path / "o" / "results.jsonl").read_bytes().splitlines()
    assert [msgspec.json.decode(r)["finish_reason"] for r in rows] == ["done"] * 4
    total = summary.measurement("human-eval.total_tokens")
    assert total is not None and total.value == 2 * (3 + 5)  # the codec's usage, split once
