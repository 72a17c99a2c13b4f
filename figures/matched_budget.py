"""Matched comparison at ε = 8: final test accuracy against the real channel uses per round (model §5, §10).

Reads ``scenarios/matched_budget.toml``'s results only. Each case is one channel budget of one
scheme (L for FLORAS and analog Gaussian, B for DDGauss, (r, K_q) for sqSGD); the x value is
the mean over rounds and seeds of the ``channel_uses`` column, the y value the final accuracy
(mean line over the scheme's budgets; min–max bars over seeds).
"""

from __future__ import annotations

import math
from pathlib import Path

from .common import SNR_DEFINITION, load_finished, save_figure
from .matched import COLORS, curve_label, facts, finish_single_panel, mean_channel_uses, privacy_caption, read_matched, threat_of

SWEEP = "matched_budget"
STEM = "matched_accuracy_vs_channel_uses"


def family(label: str) -> str:
    """The scheme variant of a budget case label: ``floras-none-L64`` → ``floras-none``, ``floras-none-capped-L32`` →
    ``floras-none-capped``."""
    for fam in ("floras-none-capped", "floras-none", "floras-phase", "analog-gaussian", "central-gaussian", "ddgauss",
                "sqsgd"):  # longest prefix first: a capped case is not plain FLORAS
        if label.startswith(fam):
            return fam
    return label


def make(results_dir: Path, out_dir: Path, *, stem: str = STEM,
         title: str = "Accuracy against channel budget at ε = 8") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    fams = list(dict.fromkeys(family(rs.label) for rs in res.runsets))
    for fam in fams:
        pts = sorted(((mean_channel_uses(rs), 100 * rs.final("test_accuracy"), rs.label) for rs in res.runsets
                      if family(rs.label) == fam), key=lambda t: t[0])
        pts = [p for p in pts if not math.isnan(p[0])]
        if not pts:
            continue
        x = [p[0] for p in pts]
        color = COLORS.get(fam)
        threat = next((t for t in (threat_of(record, p[2]) for p in pts) if t), "")  # the record names the cases
        ax.plot(x, [p[1].mean() for p in pts], marker="o", color=color, label=curve_label(fam, threat, short=True))
        for xi, acc, _ in pts:
            ax.plot([xi, xi], [acc.min(), acc.max()], color=color, lw=3, alpha=0.3)
    bad = [p for p in record.get("points", []) if p["status"] == "infeasible"]
    ax.set_xscale("log")
    finish_single_panel(fig, ax, xlabel="channel uses per round (mean over rounds and seeds)", title=title)
    note = (" Infeasible budgets (not run): " + ", ".join(p["label"] for p in bad) + ".") if bad else ""
    caption = (f"Final test accuracy against channel uses per round at target ε = 8. {privacy_caption(res, record)}{note} "
               f"{SNR_DEFINITION}. {facts(res)}")
    return save_figure(fig, out_dir, stem, caption)
