"""``aioeval compare RUN_A RUN_B``: is B really different from A?

Per benchmark present in both runs (keyed on the summary's ``benchmark``):

- the two runs must share the dataset digest, otherwise the problems differ
  and nothing is paired: `compare_runs` refuses with the two identities;
- pass@1 of each run is the mean over problems of c/n (all scored samples);
  ``diff`` is b - a, with a 95% paired-bootstrap interval over problems;
- ``p_value`` is the exact McNemar test on one binary outcome per problem:
  solved = more than half of its scored samples passed (with one sample per
  problem, that sample's verdict). The flipped lists are exactly McNemar's
  discordant problems: ``flipped_a_to_b`` failed in A and passed in B,
  ``flipped_b_to_a`` passed in A and failed in B;
- pass@k for every k both runs reported (k <= the fewest samples of any
  problem): the same bootstrap on the per-problem unbiased estimator.

Problems with no scored sample in one run (all infra_error) are left out of
the pairing and counted in ``notes``.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from rich.console import Console
from rich.table import Table
from rich.text import Text

from aioeval.analysis.runs import RunDir, load_runs, natural_key, read_tally
from aioeval.analysis.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    majority_passed,
    mcnemar_exact,
    paired_bootstrap,
    pass_at_k_values,
)
from aioeval.errors import ConfigError, InputError
from aioeval.types import DatasetInfo

DEFINITIONS = {
    "a": "pass@1 of run A: mean over paired problems of c/n",
    "diff": "b - a",
    "ci_low/ci_high": "paired bootstrap percentile interval over problems (seeded)",
    "p_value": "exact two-sided McNemar test on the per-problem majority outcome",
    "majority outcome": "solved when more than half of the problem's scored samples passed",
    "flipped_a_to_b": "problems not solved in A and solved in B (majority outcome)",
    "flipped_b_to_a": "problems solved in A and not solved in B (majority outcome)",
}

_PASS_AT = re.compile(r"\.pass_at_(\d+)$")


class PassAtK(msgspec.Struct, frozen=True, kw_only=True):
    k: int
    a: float
    b: float
    diff: float
    ci_low: float
    ci_high: float


class BenchmarkComparison(msgspec.Struct, frozen=True, kw_only=True):
    benchmark: str
    dataset: DatasetInfo
    a: float
    b: float
    diff: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    n_problems: int
    samples_a: int
    """Fewest scored samples of any paired problem in run A."""
    samples_b: int
    flipped_a_to_b: list[str]
    flipped_b_to_a: list[str]
    pass_at_k: list[PassAtK]
    notes: list[str]


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    run_a: str
    run_b: str
    seed: int
    resamples: int
    benchmarks: dict[str, BenchmarkComparison]
    definitions: dict[str, str]


def _identity(d: DatasetInfo) -> str:
    return f"{d.name} {d.version}, {d.size} problems, digest {d.digest[:12]}"


def check_same_dataset(benchmark: str, a: RunDir, b: RunDir) -> None:
    da, db = a.summary.dataset, b.summary.dataset
    if da.digest != db.digest:
        raise InputError(
            f"cannot compare {benchmark}: the runs used different datasets "
            f"(A {a.path}: {_identity(da)}; B {b.path}: {_identity(db)}); "
            "a paired comparison needs the same problems"
        )


def reported_ks(run: RunDir) -> set[int]:
    ks = set()
    for m in run.summary.measurements:
        match = _PASS_AT.search(m.name)
        if match and m.name.startswith(f"{run.benchmark}."):
            ks.add(int(match.group(1)))
    return ks


def compare_counts(
    benchmark: str,
    dataset: DatasetInfo,
    counts_a: dict[str, tuple[int, int]],
    counts_b: dict[str, tuple[int, int]],
    *,
    ks: set[int],
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
) -> BenchmarkComparison:
    """The statistics for one benchmark from per-problem (n, c): pure."""
    ids = sorted(counts_a.keys() & counts_b.keys(), key=natural_key)
    if not ids:
        raise InputError(f"cannot compare {benchmark}: no problem was scored in both runs")
    notes = []
    left_out = len(counts_a.keys() ^ counts_b.keys())
    if left_out:
        notes.append(f"{left_out} problems left out: scored in only one run (infra_error)")
    pa = [counts_a[i] for i in ids]
    pb = [counts_b[i] for i in ids]
    rate_a = [c / n for n, c in pa]
    rate_b = [c / n for n, c in pb]
    ci = paired_bootstrap(rate_a, rate_b, resamples=resamples, seed=seed, confidence=confidence)
    win_a = [majority_passed(*x) for x in pa]
    win_b = [majority_passed(*x) for x in pb]
    a_to_b = [i for i, x, y in zip(ids, win_a, win_b, strict=True) if y and not x]
    b_to_a = [i for i, x, y in zip(ids, win_a, win_b, strict=True) if x and not y]
    min_a, min_b = min(n for n, _ in pa), min(n for n, _ in pb)
    if max(n for n, _ in pa + pb) > 1:
        notes.append("several samples per problem: McNemar and the flips use the majority outcome")
    per_k = []
    for k in sorted(k for k in ks if 1 < k <= min(min_a, min_b)):
        va, vb = pass_at_k_values(pa, k), pass_at_k_values(pb, k)
        ci_k = paired_bootstrap(va, vb, resamples=resamples, seed=seed, confidence=confidence)
        per_k.append(
            PassAtK(
                k=k,
                a=sum(va) / len(va),
                b=sum(vb) / len(vb),
                diff=ci_k.diff,
                ci_low=ci_k.low,
                ci_high=ci_k.high,
            )
        )
    return BenchmarkComparison(
        benchmark=benchmark,
        dataset=dataset,
        a=sum(rate_a) / len(rate_a),
        b=sum(rate_b) / len(rate_b),
        diff=ci.diff,
        ci_low=ci.low,
        ci_high=ci.high,
        confidence=confidence,
        p_value=mcnemar_exact(len(b_to_a), len(a_to_b)),
        n_problems=len(ids),
        samples_a=min_a,
        samples_b=min_b,
        flipped_a_to_b=a_to_b,
        flipped_b_to_a=b_to_a,
        pass_at_k=per_k,
        notes=notes,
    )


def compare_runs(
    path_a: Path | str,
    path_b: Path | str,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Load both runs, refuse mismatched datasets, compare every shared benchmark."""
    if resamples < 1:
        raise ConfigError(f"--resamples must be at least 1 (got {resamples})")
    runs_a, runs_b = load_runs(path_a), load_runs(path_b)
    common = sorted(runs_a.keys() & runs_b.keys())
    if not common:
        raise InputError(
            f"no benchmark in common (A {path_a}: {', '.join(sorted(runs_a))}; "
            f"B {path_b}: {', '.join(sorted(runs_b))})"
        )
    for bench in common:
        check_same_dataset(bench, runs_a[bench], runs_b[bench])
    out = {}
    for bench in common:
        ra, rb = runs_a[bench], runs_b[bench]
        ta, tb = read_tally(ra), read_tally(rb)
        result = compare_counts(
            bench,
            ra.summary.dataset,
            ta.pass_counts(),
            tb.pass_counts(),
            ks=reported_ks(ra) & reported_ks(rb),
            seed=seed,
            resamples=resamples,
        )
        extra = [
            f"run {tag} is incomplete ({r.summary.counts.get('infra_error', 0)} infra_error samples)"
            for tag, r in (("A", ra), ("B", rb))
            if not r.summary.complete
        ]
        extra += [
            f"run {tag}: {t.duplicates} journal lines repeat an earlier (problem, sample)"
            for tag, t in (("A", ta), ("B", tb))
            if t.duplicates
        ]
        out[bench] = msgspec.structs.replace(result, notes=result.notes + extra)
    return Comparison(
        run_a=str(path_a),
        run_b=str(path_b),
        seed=seed,
        resamples=resamples,
        benchmarks=out,
        definitions=DEFINITIONS,
    )


def to_json(comparison: Comparison) -> bytes:
    return msgspec.json.encode(comparison)


def _pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def _pp(x: float) -> str:
    return f"{x * 100:+.2f} pp"


def _ids(ids: list[str], limit: int = 40) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" ... and {len(ids) - limit} more" if len(ids) > limit else "") or "none"


def print_comparison(comparison: Comparison, console: Console) -> None:
    """Terminal rendering: one table per benchmark plus the flipped problems."""
    for bench, c in comparison.benchmarks.items():
        table = Table(
            title=Text(
                f"{bench} · {c.n_problems} paired problems · {c.dataset.name} "
                f"{c.dataset.version} · digest {c.dataset.digest[:12]}"
            ),
            title_justify="left",
        )
        for col in ("metric", "A", "B", "B - A", f"{c.confidence:.0%} CI", "p (McNemar)"):
            table.add_column(col, justify="left" if col == "metric" else "right")
        rows = [
            (
                f"pass@1 (A n={c.samples_a}, B n={c.samples_b})",
                c.a,
                c.b,
                c.diff,
                c.ci_low,
                c.ci_high,
                f"{c.p_value:.4g}",
            )
        ]
        rows += [(f"pass@{k.k}", k.a, k.b, k.diff, k.ci_low, k.ci_high, "") for k in c.pass_at_k]
        for name, a, b, diff, low, high, p in rows:
            cells = (name, _pct(a), _pct(b), _pp(diff), f"[{_pp(low)}, {_pp(high)}]", p)
            table.add_row(*(Text(x) for x in cells))
        console.print(table)
        console.print(
            f"failed in A, passed in B ({len(c.flipped_a_to_b)}): {_ids(c.flipped_a_to_b)}",
            markup=False,
            highlight=False,
        )
        console.print(
            f"passed in A, failed in B ({len(c.flipped_b_to_a)}): {_ids(c.flipped_b_to_a)}",
            markup=False,
            highlight=False,
        )
        for note in c.notes:
            console.print(f"note: {note}", markup=False, highlight=False)
    console.print(
        f"A = {comparison.run_a}, B = {comparison.run_b}; bootstrap: "
        f"{comparison.resamples} resamples over problems, seed {comparison.seed}",
        markup=False,
        highlight=False,
    )
