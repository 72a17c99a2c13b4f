"""Fig. 4 robustness row: FLORAS against truncated channel inversion with tuned learning rates.

Reads the results of ``scenarios/fig4_tuned.toml`` only. That sweep's cases are
(partition, scheme) pairs, each at the η chosen on a validation split (``floras matched
--tune``); here the runs are regrouped by partition so that the panels match
:mod:`figures.fig4` (one row IID, one row non-IID), and every curve names its η.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from . import fig4
from .common import load_finished

SWEEP = "fig4_tuned"
STEM = "fig4_tuned_lr"
PARTITION_LABELS = {"iid": "iid", "shards": "non-iid"}


def regroup_by_partition(res):
    """The same runs with each point's label replaced by its partition ("iid" / "non-iid")."""
    runsets = []
    for rs in res.runsets:
        kind = str(rs.value("partition.kind"))
        point = {**rs.point, "label": PARTITION_LABELS.get(kind, kind)}
        runsets.append(dataclasses.replace(rs, point=point))
    runsets.sort(key=lambda rs: list(PARTITION_LABELS.values()).index(rs.label) if rs.label in PARTITION_LABELS.values() else 99)
    return dataclasses.replace(res, runsets=runsets)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    res = regroup_by_partition(load_finished(results_dir))
    return fig4.make(results_dir, out_dir, res=res, stem=STEM, show_lr=True,
                     title="FLORAS vs truncated channel inversion, learning rate tuned per case on a validation split")
