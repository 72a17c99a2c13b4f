"""Matched comparison at ε = 8: final test accuracy against SNR (``scenarios/matched_snr.toml`` results only).

Private schemes are calibrated to ε = 8; ideal and channel inversion run at ε = ∞ (no privacy
noise) as references. Lines are means over seeds, bands min–max; infeasible points are × on
the floor. Schemes that learn the same at every SNR (``reused`` points in ``matched.json``) ran at
one SNR only; their accuracy is drawn as a dotted horizontal line across the SNR axis.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import MARKERS, SNR_DEFINITION, load_finished, save_figure
from .matched import COLORS, curve_label, facts, finish_single_panel, privacy_caption, read_matched, reuse_note, threat_of

SWEEP = "matched_snr"
STEM = "matched_accuracy_vs_snr"


def make(results_dir: Path, out_dir: Path, *, stem: str = STEM, title: str = "Accuracy against SNR at ε = 8") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_finished(results_dir)
    record = read_matched(results_dir)
    fig, ax = plt.subplots(figsize=(7.2, 4.8))
    labels = list(dict.fromkeys([rs.label for rs in res.runsets] + [p["label"] for p in record.get("points", [])]))
    for k, label in enumerate(labels):
        sets = sorted((rs for rs in res.runsets if rs.label == label), key=lambda rs: float(rs.value("phy.snr_db")))
        color = COLORS.get(label)
        ref = label in ("ideal", "channel-inversion")
        text = curve_label(label, threat_of(record, label), short=True) + (" (ε = ∞)" if ref else "")
        reused = sorted(float(p["grid"]["phy.snr_db"]) for p in record.get("points", [])
                        if p["label"] == label and p["status"] == "reused")
        if sets and reused:  # one SNR ran; the same accuracy holds at every SNR of the grid
            acc = 100 * sets[0].final("test_accuracy")
            ax.axhline(acc.mean(), color=color, ls=":", lw=1.5, label=text + " (any SNR)")
            ax.axhspan(acc.min(), acc.max(), color=color, alpha=0.08, lw=0)
        elif sets:
            x = np.array([float(rs.value("phy.snr_db")) for rs in sets])
            acc = [100 * rs.final("test_accuracy") for rs in sets]
            ax.plot(x, [a.mean() for a in acc], marker=MARKERS[k % len(MARKERS)], markersize=max(3.0, 7.0 - 1.5 * k), color=color, ls="--" if ref else "-", label=text)
            if max(len(a) for a in acc) > 1:
                ax.fill_between(x, [a.min() for a in acc], [a.max() for a in acc], color=color, alpha=0.15, lw=0)
        bad = [float(p["grid"]["phy.snr_db"]) for p in record.get("points", []) if p["label"] == label and p["status"] == "infeasible"]
        if bad:
            ax.plot(bad, [0.0] * len(bad), ls="", marker="x", ms=8, color=color, clip_on=False,
                    label=None if sets else f"{text}: infeasible")
    finish_single_panel(fig, ax, xlabel="SNR = P/σ² [dB]", title=title)
    caption = f"Final test accuracy against SNR, private schemes at target ε = 8. {privacy_caption(res, record)}{reuse_note(record, res)} {SNR_DEFINITION}. {facts(res)}"
    from .matched_verdict import write_verdict

    return save_figure(fig, out_dir, stem, caption) + [write_verdict(res, record, out_dir, stem)]
