"""Final test accuracy against SNR, one line per scheme (and one panel per case).

Reads the results of the sweep ``scenarios/snr_sweep.toml`` only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import MARKERS, SNR_DEFINITION, case_panels, load_finished, run_facts, save_figure, title_case_panel
from .layout import request_legend
from .fig4 import SCHEME_COLORS, SCHEME_NAMES

SWEEP = "snr_sweep"
STEM = "snr_sweep_accuracy"


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    res = load_finished(results_dir)
    fig, axes = case_panels(res, width=5.2, height=4.4)
    for i, (case, ax) in enumerate(zip(res.labels, axes)):
        schemes = []
        for rs in res.runsets:
            if rs.label == case and rs.value("phy.scheme") not in schemes:
                schemes.append(rs.value("phy.scheme"))
        for k, scheme in enumerate(schemes):
            sets = sorted((rs for rs in res.runsets if rs.label == case and rs.value("phy.scheme") == scheme),
                          key=lambda rs: float(rs.value("phy.snr_db")))
            x = np.array([float(rs.value("phy.snr_db")) for rs in sets])
            acc = [100.0 * rs.final("test_accuracy") for rs in sets]
            mean = np.array([a.mean() for a in acc])
            lo = np.array([a.min() for a in acc])
            hi = np.array([a.max() for a in acc])
            color = SCHEME_COLORS.get(scheme)
            ax.plot(x, mean, marker=MARKERS[k % len(MARKERS)], markersize=max(3.0, 7.0 - 1.5 * k), color=color, label=SCHEME_NAMES.get(scheme, scheme))
            if max(len(a) for a in acc) > 1:
                ax.fill_between(x, lo, hi, color=color, alpha=0.18, linewidth=0)
        ax.set_xlabel("SNR = P/σ² [dB]")
        ax.set_ylabel("final test accuracy [%]")
        title_case_panel(ax, res, case, i)
        ax.grid(True, alpha=0.3)
        request_legend(ax, fontsize=8)
    fig.suptitle("Final test accuracy against SNR", fontsize=11)
    rs0 = res.runsets[0]
    caption = (
        f"Final test accuracy after the last round against SNR; FLORAS with N = {rs0.value('phy.floras.N')}, "
        f"K = {rs0.value('training.clients_per_round')}; resource convention: {rs0.value('phy.resource', 'equal')}. {SNR_DEFINITION}. {run_facts(res)}"
    )
    return save_figure(fig, out_dir, STEM, caption)
