"""The matched comparison against the path-loss exponent (``scenarios/cell_exponent.toml``; model §5.1, §10), from
stored results only: final test accuracy against the log-distance exponent n per case (mean over seeds, min–max
band, infeasible points × on the floor), with its ``.table.md`` (accuracy and mean admitted clients per n), and the
drop of every exponent (:func:`figures.cell.make_drop`: the same positions, the gains coloured)."""

from __future__ import annotations

from pathlib import Path

from .cell import make_drop
from .cell_accuracy import draw_accuracy, write_cell_table
from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, finish_single_panel, privacy_caption, read_matched

SWEEP = "cell_exponent"
STEM = "cell_exponent_accuracy"
DROP_STEM = "cell_exponent_drop"
KEY = "phy.pathloss_exponent"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    paths = make_drop(res, out_dir, stem=DROP_STEM)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    xs = draw_accuracy(ax, res, record, KEY)
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    cfg = res.config().get("config", {})
    part, phy = cfg.get("partition", {}), cfg.get("phy", {})
    finish_single_panel(fig, ax, xlabel="path-loss exponent n (log-distance)",
                        title=f"Accuracy against the path-loss exponent ({phy.get('cell_radius'):g} m cell, "
                              f"{phy.get('snr_db'):g} dB)")
    caption = (f"Final test accuracy against the exponent n of the log-distance path loss PL ∝ dⁿ with log-normal "
               f"shadowing σ = {phy.get('shadowing_db')} dB (R = {phy.get('cell_radius'):g} m, r₀ = "
               f"{phy.get('cell_min_distance')} m, one fixed drop per seed), SNR {phy.get('snr_db')} dB referred to the "
               f"{phy.get('snr_reference')} (model §5.1), partition {part.get('kind')}; dashed: channel inversion (no "
               f"privacy noise, ε = ∞). {privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths += save_figure(fig, out_dir, STEM, caption)
    paths.append(write_cell_table(res, record, out_dir, STEM, KEY, ""))
    return paths
