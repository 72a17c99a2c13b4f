"""Receive antennas in a cell (``scenarios/cell_antennas.toml``; model §5.2, §10), from stored results only:
final test accuracy against N_r per case (mean over seeds, min–max band) and its ``.table.md``."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import draw_accuracy, write_cell_table
from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import facts, finish_single_panel, privacy_caption, read_matched

SWEEP = "cell_antennas"
STEM = "cell_accuracy_vs_antennas"
KEY = "phy.rx_antennas"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    xs = draw_accuracy(ax, res, record, KEY)
    ax.set_xticks(xs, [f"{x:g}" for x in xs])
    finish_single_panel(fig, ax, xlabel="receive antennas N_r", title="Accuracy in a cell against the receive antennas")
    cfg = res.config().get("config", {}).get("phy", {})
    caption = (f"Final test accuracy against the base station's receive antennas N_r (model §5.2: the AirComp receive "
               f"beamformer; analog Gaussian counts only the clients' artificial noise for N_r > 1), cell "
               f"{cfg.get('pathloss')} R = {cfg.get('cell_radius')} m, SNR {cfg.get('snr_db')} dB referred to the "
               f"{cfg.get('snr_reference')}; dashed: channel inversion (ε = ∞). {privacy_caption(res, record)} "
               f"{SNR_DEFINITION}. {facts(res)}")
    paths = save_figure(fig, out_dir, STEM, caption)
    paths.append(write_cell_table(res, record, out_dir, STEM, KEY, ""))
    return paths
