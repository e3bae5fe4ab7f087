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


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="asyncio+uvloop"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, object]]:
    """Engine tests run on plain asyncio and on asyncio with uvloop."""
    return request.param  # type: ignore[no-any-return]
