"""Truncated channel inversion against its threshold g_th, with and without a cell, IID and non-IID clients
(``scenarios/cell_truncation.toml``; model §5.1, §6.2, §10), from stored results only: final test accuracy against
g_th per case (mean over seeds, min–max band), with its ``.table.md`` (accuracy and mean admitted clients per g_th;
without a cell the admitted mean is K·e^(−g_th), in a cell the mean of e^(−g_th/β_eff) over whom the round samples)."""

from __future__ import annotations

from pathlib import Path

from .cell_accuracy import accuracy_figure
from .common import SNR_DEFINITION
from .matched import facts, privacy_caption

SWEEP = "cell_truncation"
STEM = "cell_truncation_accuracy"
KEY = "phy.g_th"


def _caption(res, record, cfg) -> str:
    phy = cfg.get("phy", {})
    return (f"Final test accuracy of channel inversion (no privacy noise, ε = ∞; ρ = g_th) against its truncation "
            f"threshold g_th (model §6.2), IID and non-IID (two label shards per client) clients, without a cell "
            f"(every client at the reference SNR) and in a {phy.get('cell_radius'):g} m TR 38.901 UMi cell (one fixed "
            f"drop per seed), SNR {phy.get('snr_db')} dB referred to the {phy.get('snr_reference')} (model §5.1). "
            f"{privacy_caption(res, record)} {SNR_DEFINITION}. {facts(res)}")


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return accuracy_figure(results_dir, out_dir, stem=STEM, key=KEY, log_x=True,
                           xlabel="truncation threshold g_th (admitted if β_eff·|h̃|² ≥ g_th)",
                           title="Truncated channel inversion: who is heard, with and without a cell", caption=_caption)
