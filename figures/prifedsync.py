"""PriFedSync: personalised against global accuracy on the clients' own test examples, at equal ε.

One curve pair per personalisation weight λ (``training.prifedsync.mix``): the seen clients' mean accuracy
of their own models (solid) and of the global model on the same examples (dashed), against the round;
mean over seeds with the min–max band. Every point of the sweep has the same noise, batch rate and
local steps, so the same record-level ε (stated in the caption). Reads the results of the sweep
``scenarios/prifedsync.toml`` only (``prifedsync.csv`` of each run, through :mod:`scenarios.store`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from scenarios.store import read_personal

from .common import MARKERS, load_finished, run_facts, save_figure
from .layout import request_legend

SWEEP = "prifedsync"
STEM = "prifedsync_personal"


def _curves(rs, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(rounds, [n_seeds, T] values) of ``column`` of prifedsync.csv, cut to the seeds' common length."""
    tables = [read_personal(d) for d in rs.run_dirs]
    n = min(len(t["round"]) for t in tables)
    return np.asarray(tables[0]["round"][:n]), np.array([t[column][:n] for t in tables], dtype=np.float64)


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    sets = sorted(res.runsets, key=lambda rs: float(rs.value("training.prifedsync.mix")))
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    eps = sorted({round(float(e), 6) for rs in sets for e in rs.final("epsilon")})
    for k, rs in enumerate(sets):
        lam = float(rs.value("training.prifedsync.mix"))
        color = f"C{k}"
        for column, style, what in (("personal_accuracy", "-", "personalised"), ("global_accuracy", "--", "global")):
            x, y = _curves(rs, column)
            ax.plot(x, 100 * y.mean(axis=0), style, color=color, marker=MARKERS[k % len(MARKERS)], markersize=3,
                    label=f"λ = {lam:g}, {what}")
            if y.shape[0] > 1:
                ax.fill_between(x, 100 * y.min(axis=0), 100 * y.max(axis=0), color=color, alpha=0.15, linewidth=0)
    ax.set_xlabel("round")
    ax.set_ylabel("accuracy on the clients' own test examples [%]")
    ax.grid(True, alpha=0.3)
    request_legend(ax, fontsize=8)
    eps_text = ", ".join("∞" if math.isinf(e) else f"{e:.4g}" for e in eps)
    rs0 = sets[0]
    fig.suptitle("PriFedSync: personalised vs global models at equal ε", fontsize=11)
    caption = (
        f"Mean over the clients seen so far of each client's accuracy on up to "
        f"{rs0.value('training.prifedsync.client_test')} test examples of the labels it holds; solid: its own "
        f"(personalised) model, dashed: the global model. λ = training.prifedsync.mix (0: local models, 1: the "
        f"global model of the client's last round). Record-level ε after the last round (worst case, every round; "
        f"δ = {rs0.value('privacy.delta')}, accountant {rs0.value('privacy.accountant')}): {eps_text}; "
        f"σ = {rs0.value('training.prifedsync.noise_multiplier')}, C = {rs0.value('training.prifedsync.clip_norm')}, "
        f"B = {rs0.value('training.batch_size')}, K = {rs0.value('training.clients_per_round')} of "
        f"M = {rs0.value('partition.clients')}, partition {rs0.value('partition.kind')}. {run_facts(res)}"
    )
    return save_figure(fig, out_dir, STEM, caption)
