"""Matched comparison under the generic RDP sampling bound (``scenarios/matched_generic.toml``):
accuracy against the target ε, to set beside :mod:`figures.matched` (each scheme's tightest bound)."""

from __future__ import annotations

from pathlib import Path

from .matched import make as _make

SWEEP = "matched_generic"
STEM = "matched_generic_accuracy_vs_epsilon"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM, title="Accuracy at equal (ε, δ), calibrated under the generic RDP bound")
