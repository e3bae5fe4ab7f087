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
        ("params: {limt: 3}\n", [], ":1: params.limt: unknown field; did you mean params.limit?"),
        ("params: {limit: 3}\n", [], None),
        ("target: {mode: cloud}\n", [], "target.mode: 'cloud' is not one of: mock, runtime"),
        ("params: {timeout_s: fast}\n", [], "params.timeout_s: expected float, got str"),
        ("params: {retry: {max_attempts: 0}}\n", [], "max_attempts"),
        ("", ["params.nope=1"], "--set params.nope=1: unknown field"),
        ("", ["params.limit"], "expected dotted.key=value"),
        (
            "",
            ["params.sandbox.isolation=paranoid"],
            "--set params.sandbox.isolation=paranoid: 'paranoid' is not one of: best, minimal, strict",
        ),
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


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["params.n_samples=x"], "--set params.n_samples=x: expected int, got str"),
        (["params.scoring=offical"], "'offical' is not one of: both, official, strict"),
        (["params.executor.kind=dask"], "--set params.executor.kind=dask: 'dask' is not one of"),
        (["params.retyr.max_attempts=2"], "unknown field; did you mean params.retry?"),
        (["parms.limit=3"], "--set parms.limit=3: unknown field; did you mean params?"),
        (["params.k=[1, x]"], "--set params.k=[1, x]: expected int, got str"),
        (["params.limit=2", "params.limit=0"], "--set params.limit=0: limit must be >= 1"),
    ],
)
def test_set_errors_name_the_flag(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    assert message in str(info.value) and "<defaults>" not in str(info.value)


def test_the_flag_or_the_file_is_blamed_whichever_caused_it(tmp_path: Path) -> None:
    path = write(tmp_path, "params:\n  retry: {max_attempts: 0}\n  k: [1, x]\n")
    # The file is wrong twice; an override fixing one error leaves the file to blame.
    with pytest.raises(ConfigError, match=r"cfg\.yaml:3: params\.k\[1\]: expected int, got str"):
        load_config(path, ["params.retry.max_attempts=2"])
    # An override below a section checked as a whole is blamed only if it is the cause.
    with pytest.raises(ConfigError, match=r"cfg\.yaml:2: params\.retry: max_attempts must be"):
        load_config(path, ["params.retry.backoff_base_s=1", "params.k=[1]"])
    with pytest.raises(ConfigError, match=r"^--set params\.retry\.backoff_base_s=-1: backoff"):
        load_config(write(tmp_path, "params: {k: [1]}\n"), ["params.retry.backoff_base_s=-1"])


@pytest.mark.parametrize(
    "ref", ["sk-proj-abcdef0123456789", "env:sk-abc123", "Bearer sk-xyz9876", "env:9KEY"]
)
def test_a_raw_key_as_credentials_ref_is_refused_without_echoing_it(
    tmp_path: Path, ref: str
) -> None:
    secret = ref.removeprefix("env:").removeprefix("Bearer ")
    for path, overrides in [
        (write(tmp_path, f"target:\n  credentials_ref: '{ref}'\n"), []),
        (None, [f"target.credentials_ref={ref}"]),
    ]:
        with pytest.raises(ConfigError) as info:
            load_config(path, overrides)
        msg = str(info.value)
        assert "env:NAME" in msg and "\n" not in msg
        assert not secret or secret not in msg


def test_an_unparsable_secret_is_not_echoed_either() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, ["target.credentials_ref=[sk-abc123"])
    assert "cannot parse" in str(info.value) and "sk-abc123" not in str(info.value)


def test_env_name_is_the_accepted_form() -> None:
    assert load_config(None, ["target.credentials_ref=env:OPENAI_API_KEY"]).target.credentials_ref
