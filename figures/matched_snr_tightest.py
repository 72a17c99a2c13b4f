"""Matched comparison against SNR at ε = 8 with each uplink calibrated under its tightest accountant
(``scenarios/matched_snr_tightest.toml``; model §9.4), to set beside :mod:`figures.matched_snr` (every scheme under RDP)."""

from __future__ import annotations

from pathlib import Path

from .matched_snr import make as _make

SWEEP = "matched_snr_tightest"
STEM = "matched_tightest_accuracy_vs_snr"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM, title="Accuracy against SNR at ε = 8, each uplink under its tightest accountant")
