"""FLORAS's receiver rules at equal (ε, δ) (``scenarios/matched_receiver.toml``): accuracy against the target ε.

One panel per SNR; curves: the plain receiver and the DP-free rules of model §6.4 (inverse-variance,
capped), no CSIT, and the capped rule with phase CSIT. Every curve at one target ε has the same ε
(the rules are post-processing of what the accountant already reveals).
"""

from __future__ import annotations

from pathlib import Path

from .matched import make as _make

SWEEP = "matched_receiver"
STEM = "matched_receiver_accuracy_vs_epsilon"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return _make(results_dir, out_dir, stem=STEM, title="FLORAS receiver rules at equal (ε, δ)")
