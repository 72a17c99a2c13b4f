"""Matched comparison, cross-device population (``scenarios/matched_xdev.toml``): accuracy against the target ε."""

from __future__ import annotations

from pathlib import Path

from .matched import make as _make

SWEEP = "matched_xdev"
STEM = "matched_xdev_accuracy_vs_epsilon"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM, title="Accuracy at equal (ε, δ), cross-device population")
