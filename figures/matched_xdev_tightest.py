"""Matched comparison at K = 100 of 1 000 with each uplink calibrated under its tightest accountant
(``scenarios/matched_xdev_tightest.toml``; model §9.4): accuracy against the target ε, to set beside
:mod:`figures.matched_xdev` (every scheme under RDP)."""

from __future__ import annotations

from pathlib import Path

from .matched import make as _make

SWEEP = "matched_xdev_tightest"
STEM = "matched_xdev_tightest_accuracy_vs_epsilon"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM,
                 title="Accuracy at equal (ε, δ), K = 100 of 1 000, each uplink under its tightest accountant")
