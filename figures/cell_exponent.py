"""The matched comparison against the path-loss exponent (``scenarios/cell_exponent.toml``; model §5.1, §10), from
stored results only: final test accuracy against the log-distance exponent n per case (mean over seeds, min–max
band, infeasible points × on the floor), with its ``.table.md`` (accuracy and mean admitted clients per n), and the
drop of every exponent (:func:`figures.cell.make_drop`: the same positions, the gains coloured)."""

from __future__ import annotations

from pathlib import Path

from .cell import make_drop
from .cell_accuracy import accuracy_figure
from .common import SNR_DEFINITION, load_finished
from .matched import facts, privacy_caption

SWEEP = "cell_exponent"
STEM = "cell_exponent_accuracy"
DROP_STEM = "cell_exponent_drop"
KEY = "phy.pathloss_exponent"


def _title(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return f"Accuracy against the path-loss exponent ({phy.get('cell_radius'):g} m cell, {phy.get('snr_db'):g} dB)"


def _caption(res, record, cfg) -> str:
    part, phy = cfg.get("partition", {}), cfg.get("phy", {})
    return (f"Final test accuracy against the exponent n of the log-distance path loss PL ∝ dⁿ with log-normal "
            f"shadowing σ = {phy.get('shadowing_db')} dB (R = {phy.get('cell_radius'):g} m, r₀ = "
            f"{phy.get('cell_min_distance')} m, one fixed drop per seed), SNR {phy.get('snr_db')} dB referred to the "
            f"{phy.get('snr_reference')} (model §5.1), partition {part.get('kind')}; dashed: channel inversion (no "
            f"privacy noise, ε = ∞). {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    res = load_finished(results_dir)
    paths = make_drop(res, out_dir, stem=DROP_STEM)
    return paths + accuracy_figure(results_dir, out_dir, stem=STEM, key=KEY, res=res,
                                   xlabel="path-loss exponent n (log-distance)", title=_title, caption=_caption)
