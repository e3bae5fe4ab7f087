"""Problems whose tests are data (stdin/stdout or call-based), in the shapes
of the code datasets RL trainers use: APPS and TACO, CodeContests,
LiveCodeBench's test lists (see `data` for the format).

Judged exactly as the ``livecodebench`` suite judges (its wrapper, limits,
comparison rules and both scoring models): only the dataset format, the
bundled fixture and the name differ. ``--dataset FILE`` runs a dataset
file; without it the bundled fixture runs.
"""

from pathlib import Path

from aioeval.errors import ConfigError
from aioeval.types import Dataset

from ..base import MockRecord, Mode, dataset_of, fixture_records, require_references
from . import io_data
from .suite import LiveCodeBench

MOCK_FIXTURE = "io_tests/mock.jsonl"


class IoTests(LiveCodeBench):
    """Stdin/stdout and call-based problems, from ``--dataset FILE`` or the fixture."""

    name = "io-tests"
    default_k: tuple[int, ...] = (1,)

    async def load(self, *, mode: Mode) -> Dataset:
        if self.dataset_path is None:
            problems = io_data.fixture_problems()
            return dataset_of(io_data.FIXTURE_NAME, io_data.FIXTURE_VERSION, problems, self.params)
        path = Path(self.dataset_path)
        if mode == "replay":
            raise ConfigError(
                f"--dataset {path}: llm-mock replays the bundled pre-scored io-tests "
                "fixture, which is not for this dataset; score samples with aioeval score"
            )
        problems, name, version = io_data.read_io_file(path)
        if mode == "reference":
            require_references(path, problems, "canonical_solution", runs="reference solutions")
        return dataset_of(name, version, problems, self.params)

    def mock_records(self) -> list[MockRecord]:
        return fixture_records(MOCK_FIXTURE)
