"""Problems whose tests are data (stdin/stdout or call-based), in the shapes
of the code datasets RL trainers use: APPS and TACO, CodeContests,
LiveCodeBench's test lists (see `data` for the format).

Judged exactly as the ``livecodebench`` suite judges (its wrapper, limits,
comparison rules and both scoring models): only the dataset format, the
bundled fixture and the name differ. ``--dataset FILE`` runs a dataset
file; without it the bundled fixture runs.
"""

from pathlib import Path

from aioeval.types import Problem

from ..base import MockRecord, fixture_records
from . import io_data
from .suite import LiveCodeBench

MOCK_FIXTURE = "io_tests/mock.jsonl"


class IoTests(LiveCodeBench):
    """Stdin/stdout and call-based problems, from ``--dataset FILE`` or the fixture."""

    name = "io-tests"
    default_k: tuple[int, ...] = (1,)

    label = "io-tests"

    def fixture(self) -> tuple[list[Problem], str, str]:
        return io_data.fixture_problems(), io_data.FIXTURE_NAME, io_data.FIXTURE_VERSION

    def read_file(self, path: Path) -> tuple[list[Problem], str, str]:
        return io_data.read_io_file(path)

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(MOCK_FIXTURE)
