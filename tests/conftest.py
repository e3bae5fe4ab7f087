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
