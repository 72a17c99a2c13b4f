"""Caption text shared by the figures: what lines and bands are, the run facts, the ε assumptions.

Pure functions of stored results (:class:`figures.common.SweepResults`); no drawing. A caption
describes bands only when some curve has two or more seeds (:func:`band_note`), and says when
training losses are medians (model §7.4 for the ε assumptions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .common import RunSet, SweepResults

__all__ = ["SNR_DEFINITION", "BAND_NOTE", "ONE_SEED_NOTE", "LOSS_MEDIAN_NOTE", "band_note", "dataset_name",
           "epsilon_caption", "run_facts"]

SNR_DEFINITION = "SNR = P/σ² (per-symbol transmit power over the noise variance; despread SNR = L·P/σ², model §5)"
BAND_NOTE = "lines: mean over seeds; bands: min–max over seeds"
ONE_SEED_NOTE = "one seed per curve: lines are that seed's values (no bands)"
LOSS_MEDIAN_NOTE = ("training-loss lines: median over seeds (log axis; a seed whose loss is not finite is left "
                    "out of that round)")


def band_note(res: SweepResults, *, loss_median: bool = False) -> str:
    """What the lines and bands of ``res`` are: :data:`BAND_NOTE` only when some curve has ≥ 2 seeds."""
    if max((len(rs.seeds) for rs in res.runsets), default=0) < 2:
        return ONE_SEED_NOTE
    return BAND_NOTE + (f"; {LOSS_MEDIAN_NOTE}" if loss_median else "")


def dataset_name(res: SweepResults) -> str:
    for rs in res.runsets:
        value = rs.value("data.name")
        if value:
            return str(value)
    return "unknown data set"


def epsilon_caption(res: SweepResults, label_of: Callable[[RunSet], str]) -> tuple[str, str]:
    """(short, full) statements of the ε assumptions stored with the runs (model §7.4).

    ``short`` holds the clauses shared by every curve (threat model, relation, sensitivity,
    sampling, normalization caveats, δ, accountant, conversion); ``full`` adds each curve's
    own clauses (its noise scale γ, the order α at which ε was attained) and the
    accountant's warnings, for the caption text file.
    """
    from scenarios.store import privacy_statement, split_statements

    items = [(rs, privacy_statement(rs.configs[0])) for rs in res.runsets if rs.configs]
    items = [(rs, st) for rs, st in items if st["clauses"]]
    if not items:
        return "ε assumptions: none stored with the runs.", "ε assumptions: none stored with the runs."
    common, rest = split_statements([st for _, st in items])
    short = "ε assumptions (all curves): " + "; ".join(common) + "."
    per = []
    for (rs, st), own in zip(items, rest):
        extra = own + [f"warning: {w}" for w in st["warnings"]]
        if extra:
            per.append(f"[{label_of(rs)}] " + "; ".join(extra))
    full = short + (" Per curve: " + " ".join(per) if per else "")
    if per:
        short += " Per-curve clauses (noise scale γ, order α, warnings): see the .caption.txt file."
    return short, full


def run_facts(res: SweepResults, *, loss_median: bool = False) -> str:
    seeds = sorted({s for rs in res.runsets for s in rs.seeds})
    rounds = sorted({int(rs.metrics["round"].shape[1]) for rs in res.runsets})
    rtxt = str(rounds[0]) if len(rounds) == 1 else f"{rounds[0]}–{rounds[-1]}"
    quick = " (--quick variant)" if res.manifest.get("quick") else ""
    text = f"Data set: {dataset_name(res)}{quick}; seeds {seeds}; {rtxt} rounds; {band_note(res, loss_median=loss_median)}."
    if res.missing:
        text += f" {len(res.missing)} run(s) unfinished and left out."
    return text
