"""The cell sweep with non-IID clients (``scenarios/cell_noniid.toml``; model §5.1, §10), from stored results only:
final test accuracy against the cell radius per case and its ``.table.md`` (accuracy and admitted clients), as
:mod:`figures.cell` draws for the IID sweep."""

from __future__ import annotations

from pathlib import Path

from .cell import make_radius

SWEEP = "cell_noniid"
STEM = "cell_noniid_accuracy_vs_radius"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    return make_radius(results_dir, out_dir, stem=STEM, drop=False,
                       title="Accuracy in a cell against its radius, non-IID clients (two label shards)")
