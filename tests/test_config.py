from __future__ import annotations

from pathlib import Path

import pytest

from aioeval.config import RunConfig, load_config
from aioeval.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cfg.yaml"
    p.write_text(text)
    return p


def test_defaults() -> None:
    cfg = load_config()
    assert cfg == RunConfig()
    assert cfg.target.mode is None  # unset: --platform decides
    assert cfg.params.retry is None  # generation retries are off by default
    assert cfg.params.timeout_s == 3.0
    assert cfg.params.k is None  # the benchmark's own list
    assert cfg.workers >= 1


def test_seed_shape_decodes(tmp_path: Path) -> None:
    cfg = load_config(
        write(
            tmp_path,
            """
target:
  mode: runtime
  endpoint: http://127.0.0.1:9/v1
  model: m
  credentials_ref: env:KEY
  retries: {max_attempts: 2}
params:
  execute: true
  limit: 5
  allow_code_execution: true
  retry: {max_attempts: 4, backoff_base_s: 0.1, backoff_max_s: 2}
""",
        )
    )
    assert cfg.target.mode == "runtime" and cfg.target.retries.max_attempts == 2
    assert cfg.params.retry is not None and cfg.params.retry.max_attempts == 4
    assert cfg.params.limit == 5 and cfg.params.execute


def test_set_overrides_any_field(tmp_path: Path) -> None:
    cfg = load_config(
        write(tmp_path, "params: {limit: 3}\n"),
        [
            "params.limit=7",
            "params.retry.max_attempts=5",
            "target.rate_limit.rpm=60",
            "params.k=[1, 5]",
        ],
    )
    assert cfg.params.limit == 7
    assert cfg.params.retry is not None and cfg.params.retry.max_attempts == 5
    assert cfg.params.retry.backoff_base_s == 0.2
    assert cfg.target.rate_limit.rpm == 60
    assert cfg.params.k == [1, 5]


@pytest.mark.parametrize(
    ("text", "overrides", "fragment"),
    [
        ("params: {limt: 3}\n", [], "unknown field `limt`"),
        ("params: {limit: 3}\n", [], None),
        ("target: {mode: cloud}\n", [], "$.target.mode"),
        ("params: {timeout_s: fast}\n", [], "$.params.timeout_s"),
        ("params: {retry: {max_attempts: 0}}\n", [], "max_attempts"),
        ("", ["params.nope=1"], "unknown field `nope`"),
        ("", ["params.limit"], "expected dotted.key=value"),
        ("", ["params.sandbox.isolation=paranoid"], "$.params.sandbox.isolation"),
        ("- a list\n", [], "must be a mapping"),
    ],
)
def test_bad_config_is_one_line_error_with_path(
    tmp_path: Path, text: str, overrides: list[str], fragment: str | None
) -> None:
    path = write(tmp_path, text)
    if fragment is None:
        load_config(path, overrides)
        return
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    msg = str(info.value)
    assert fragment in msg
    assert "\n" not in msg
    assert str(path) in msg or msg.startswith("--set")


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "params:\n  limit: 3\n  k: [1, 2\n")
    with pytest.raises(ConfigError, match=r"cfg\.yaml:\d+: invalid YAML"):
        load_config(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "absent.yaml")
