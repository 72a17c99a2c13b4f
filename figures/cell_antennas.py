"""Receive antennas in a cell (``scenarios/cell_antennas.toml``; model §5.2, §10), from stored results only:
final test accuracy against N_r per case (mean over seeds, min–max band) and its ``.table.md``."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import accuracy_figure
from .common import SNR_DEFINITION
from .matched import facts, privacy_caption

SWEEP = "cell_antennas"
STEM = "cell_accuracy_vs_antennas"
KEY = "phy.rx_antennas"


def _caption(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return (f"Final test accuracy against the base station's receive antennas N_r (model §5.2: the AirComp receive "
            f"beamformer; analog Gaussian counts only the clients' artificial noise for N_r > 1), cell "
            f"{phy.get('pathloss')} R = {phy.get('cell_radius')} m, SNR {phy.get('snr_db')} dB referred to the "
            f"{phy.get('snr_reference')}; dashed: channel inversion (ε = ∞). {privacy_caption(res, record)} "
            f"{SNR_DEFINITION}. {facts(res)}")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return accuracy_figure(results_dir, out_dir, stem=STEM, key=KEY, xlabel="receive antennas N_r",
                           title="Accuracy in a cell against the receive antennas", caption=_caption)
