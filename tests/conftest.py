from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a skip with the reason when this checkout has none."""
    if not (SHARED_DATA / "cruxeval" / "cruxeval.jsonl").exists():
        pytest.skip(f"real data not present at {SHARED_DATA} (only in the project workspace/CI)")
    return SHARED_DATA


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "one_loop: runs on plain asyncio only; for what a candidate does inside the "
        "sandbox, where the engine's event loop only waits (the uvloop run adds nothing)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the uvloop run of a ``one_loop`` test (reported as deselected)."""
    dropped = [
        item
        for item in items
        if item.get_closest_marker("one_loop")
        and getattr(item, "callspec", None) is not None
        and item.callspec.params.get("anyio_backend") == ("asyncio", {"use_uvloop": True})
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        drop = set(dropped)
        items[:] = [item for item in items if item not in drop]


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="asyncio+uvloop"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, object]]:
    """Engine tests run on plain asyncio and on asyncio with uvloop."""
    return request.param  # type: ignore[no-any-return]
