"""Matched comparison against the channel budget at ε = 8 with each uplink calibrated under its tightest accountant
(``scenarios/matched_budget_tightest.toml``; model §9.4), to set beside :mod:`figures.matched_budget` (RDP)."""

from __future__ import annotations

from pathlib import Path

from .matched_budget import make as _make

SWEEP = "matched_budget_tightest"
STEM = "matched_tightest_accuracy_vs_channel_uses"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM,
                 title="Accuracy against channel budget at ε = 8, each uplink under its tightest accountant")
