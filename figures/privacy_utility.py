"""Privacy–utility: final test accuracy against ε, for the privacy sweep (N × SNR grid).

One line per SNR through the N values (each point labelled with N); γ = N − K = 0 (no
privacy, ε = ∞) is drawn as a horizontal reference line per SNR. The N labels are moved apart
when the figure is saved so that they never overlap (:func:`figures.layout.request_repel`). Reads the results of the
sweep ``scenarios/privacy_sweep.toml`` only.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .common import (MARKERS, SNR_DEFINITION, case_panels, epsilon_caption, load_finished, run_facts, save_figure,
                     title_case_panel)
from .layout import request_legend, request_repel

SWEEP = "privacy_sweep"
STEM = "privacy_utility"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    res = load_finished(results_dir)
    fig, axes = case_panels(res, width=5.6, height=4.6)
    import matplotlib.pyplot as plt

    many_seeds = max(len(rs.seeds) for rs in res.runsets) > 1
    snrs = sorted({float(rs.value("phy.snr_db")) for rs in res.runsets}, reverse=True)
    colors = {s: plt.get_cmap("plasma")(0.85 * i / max(1, len(snrs) - 1)) for i, s in enumerate(snrs)}
    for i, (case, ax) in enumerate(zip(res.labels, axes)):
        for snr in snrs:
            sets = [rs for rs in res.runsets if rs.label == case and float(rs.value("phy.snr_db")) == snr]
            eps = np.array([float(rs.final("epsilon")[0]) for rs in sets])
            acc = [100.0 * rs.final("test_accuracy") for rs in sets]
            finite = [j for j in np.argsort(eps) if math.isfinite(eps[j])]
            if finite:
                x = eps[finite]
                mean = np.array([acc[j].mean() for j in finite])
                lo = np.array([acc[j].min() for j in finite])
                hi = np.array([acc[j].max() for j in finite])
                k = snrs.index(snr)  # marker, size and line style per SNR: coinciding lines stay visible
                ax.plot(x, mean, marker=MARKERS[k % len(MARKERS)], markersize=max(3.0, 7.0 - 1.5 * k),
                        linestyle=("-", "--", "-.", ":")[k % 4], color=colors[snr], label=f"SNR {snr:g} dB")
                if many_seeds:
                    ax.vlines(x, lo, hi, color=colors[snr], alpha=0.5, linewidth=3)
                request_repel(ax, [ax.annotate(f"N={sets[j].value('phy.floras.N')}", (eps[j], acc[j].mean()),
                                               textcoords="offset points", xytext=(4, 4), fontsize=7, color=colors[snr])
                                   for j in finite])
            for j in range(len(sets)):
                if math.isinf(eps[j]):
                    n = int(sets[j].value("phy.floras.N"))
                    gamma = n - int(sets[j].value("training.clients_per_round"))
                    ax.axhline(acc[j].mean(), color=colors[snr], linestyle=":", linewidth=1,
                               label=f"SNR {snr:g} dB, γ = {gamma} (N = {n}), ε = ∞")
        ax.set_xscale("log")
        ax.set_xlabel("ε after the last round (T1, (ε, δ)-DP; dimensionless, log scale)")
        ax.set_ylabel("final test accuracy [%]")
        title_case_panel(ax, res, case, i)
        ax.grid(True, which="both", alpha=0.3)
        request_legend(ax, fontsize=7.5)
    rs0 = res.runsets[0]
    fig.suptitle(f"Privacy–utility trade-off of FLORAS (K = {rs0.value('training.clients_per_round')})", fontsize=11)
    head = (
        "Final test accuracy against the accountant's ε after the last round, one point per N (γ = N − K); "
        f"{'error bars: min–max over seeds; ' if many_seeds else ''}sequence length L = {rs0.value('phy.L')}. {SNR_DEFINITION}. {run_facts(res)} "
    )
    short, full = epsilon_caption(
        res, lambda rs: f"N = {rs.value('phy.floras.N')}, SNR {float(rs.value('phy.snr_db')):g} dB")
    return save_figure(fig, out_dir, STEM, head + short, full_caption=head + full)
