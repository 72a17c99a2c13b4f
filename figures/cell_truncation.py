"""Truncated channel inversion against its threshold g_th, with and without a cell, IID and non-IID clients
(``scenarios/cell_truncation.toml``; model §5.1, §6.2, §10), from stored results only: final test accuracy against
g_th per case (mean over seeds, min–max band), with its ``.table.md`` (accuracy and mean admitted clients per g_th;
without a cell the admitted mean is K·e^(−g_th), in a cell the mean of e^(−g_th/β_eff) over whom the round samples)."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import draw_accuracy, write_cell_table
from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, finish_single_panel, privacy_caption, read_matched

SWEEP = "cell_truncation"
STEM = "cell_truncation_accuracy"
KEY = "phy.g_th"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    xs = draw_accuracy(ax, res, record, KEY)
    ax.set_xscale("log")
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    ax.minorticks_off()
    cfg = res.config().get("config", {})
    phy = cfg.get("phy", {})
    finish_single_panel(fig, ax, xlabel="truncation threshold g_th (admitted if β_eff·|h̃|² ≥ g_th)",
                        title="Truncated channel inversion: who is heard, with and without a cell")
    caption = (f"Final test accuracy of channel inversion (no privacy noise, ε = ∞; ρ = g_th) against its truncation "
               f"threshold g_th (model §6.2), IID and non-IID (two label shards per client) clients, without a cell "
               f"(every client at the reference SNR) and in a {phy.get('cell_radius'):g} m TR 38.901 UMi cell (one fixed "
               f"drop per seed), SNR {phy.get('snr_db')} dB referred to the {phy.get('snr_reference')} (model §5.1). "
               f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(write_cell_table(res, record, out_dir, STEM, KEY, ""))
    return paths
