"""Active-sequence detection by a curious base station (T2): ROC against SNR (model §7.1, §7.5).

Reads only stored ``floras audit --threat T2 --sweep-snr-db …`` JSON files (key
``detection_sweep``) from a results directory; draws

(a), (b) the ROC — detection probability against false-alarm probability, sweeping the
Neyman–Pearson threshold — one line per SNR, without CSIT (energy detector) and with phase
pre-rotation (signed detector), for the audit's own K and N;
(c) the detection probability at the default threshold and the top-K accuracy against SNR, for
every (CSIT, K, N) in the sweep;
(d) the median per-client decoding NMSE against SNR (10–90% quantile band).

Writes ``audit_roc`` (PNG, PDF, caption text) with :func:`figures.common.save_figure`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scenarios.store import StorageError, read_json

from .common import SNR_DEFINITION, save_figure
from .layout import request_legend

__all__ = ["load_audits", "make"]


def load_audits(results_dir: Path, *, threat: str | None = None) -> list[dict]:
    """Every audit JSON (a dict with ``threat`` and ``empirical_epsilon_lower``) in ``results_dir``, sorted by name."""
    out = []
    for path in sorted(Path(results_dir).glob("*.json")):
        try:
            data = read_json(path, what="audit result")
        except StorageError:
            continue  # not an audit result (or damaged): skipped
        if isinstance(data, dict) and "threat" in data and "empirical_epsilon_lower" in data:
            if threat is None or data["threat"] == threat:
                data["_file"] = path.name
                out.append(data)
    return out


def make(results_dir: Path, out_dir: Path) -> list[Path]:
    """Draw the figure from the first T2 audit with a detection sweep in ``results_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    audits = [a for a in load_audits(results_dir, threat="T2") if a.get("detection_sweep")]
    if not audits:
        raise ValueError(f"results directory {results_dir} holds no T2 audit JSON with a detection sweep "
                         "(run `floras audit --threat T2 --sweep-snr-db … --json FILE`)")
    data = audits[0]
    sweep = data["detection_sweep"]
    K0, N0 = data["config"]["K"], data["config"]["N"]
    fig, axes = plt.subplots(1, 4, figsize=(18, 5.4))
    for ax, csit, title in ((axes[0], "none", "(a) no CSIT: energy detector |r_j^s|²"),
                            (axes[1], "phase", "(b) phase pre-rotation: signed detector r_j^s")):
        recs = sorted((r for r in sweep if r["csit"] == csit and r["K"] == K0 and r["N"] == N0), key=lambda r: r["snr_db"])
        for r in recs:
            roc = r["roc"]
            pf = np.asarray(roc["false_alarm_probability"], dtype=float)
            pdet = np.asarray(roc["detection_probability"], dtype=float)
            keep = pf > 0
            (line,) = ax.plot(pf[keep], pdet[keep], label=f"{r['snr_db']:g} dB")
            ax.plot([r["false_alarm_probability"]], [r["detection_probability"]], "o", color=line.get_color(), ms=4)
        ax.set_xscale("log")
        ax.set_xlabel("false-alarm probability (per inactive sequence)")
        ax.set_ylabel("detection probability (per active sequence)")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.grid(True, which="both", alpha=0.3)
        request_legend(ax, fontsize=8, title="SNR")
    ax = axes[2]
    groups = sorted({(r["csit"], r["K"], r["N"]) for r in sweep})
    for csit, K, N in groups:
        recs = sorted((r for r in sweep if (r["csit"], r["K"], r["N"]) == (csit, K, N)), key=lambda r: r["snr_db"])
        x = [r["snr_db"] for r in recs]
        (line,) = ax.plot(x, [r["detection_probability"] for r in recs], marker="o",
                          label=f"P_D, csit={csit}, K={K}, N={N}")
        ax.plot(x, [r["top_k_accuracy"] for r in recs], "--", marker="x", color=line.get_color(),
                label=f"top-K accuracy, csit={csit}, K={K}, N={N}")
    ax.set_xlabel("SNR = P/σ² [dB]")
    ax.set_ylabel("probability")
    ax.set_title("(c) at the default threshold, and the top-K rule", fontsize=10)
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    request_legend(ax, fontsize=7)
    ax = axes[3]
    for csit, K, N in groups:
        recs = sorted((r for r in sweep if (r["csit"], r["K"], r["N"]) == (csit, K, N)), key=lambda r: r["snr_db"])
        if not all("decoding" in r for r in recs):
            continue
        x = [r["snr_db"] for r in recs]
        (line,) = ax.plot(x, [r["decoding"]["median"] for r in recs], marker="o", label=f"csit={csit}, K={K}, N={N}")
        ax.fill_between(x, [r["decoding"]["quantiles"]["0.1"] for r in recs], [r["decoding"]["quantiles"]["0.9"] for r in recs],
                        color=line.get_color(), alpha=0.12, linewidth=0)
    ax.set_yscale("log")
    ax.set_xlabel("SNR = P/σ² [dB]")
    ax.set_ylabel("per-client decoding NMSE ‖v_j − s_k‖²/‖s_k‖²")
    ax.set_title("(d) decoding each client's update: median, 10–90%", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    request_legend(ax, fontsize=7)
    nominal = sweep[0]["nominal_false_alarm"]
    rounds = data.get("rounds")
    caption = (
        f"Threat model T2: a curious base station that knows the sequence set A (L = {data['config']['L']}, "
        f"{data['config']['sequences']}) and keeps the raw reference slot detects which sequences are in use. "
        f"Per-sequence Neyman–Pearson detectors (energy without CSIT, signed with phase pre-rotation); ROC by sweeping "
        f"the threshold; dots and panel (c): default threshold for a nominal false-alarm probability {nominal:g}. "
        f"Top-K rule: the K largest statistics declared active (the base station schedules K). (d) NMSE of the decode "
        f"b·r_j^i/r_j^s of each active client's normalized update (d = {data['config']['d']}, ‖s_k‖ = C, full power); "
        f"its mean does not exist (Gaussian denominator), hence median and quantiles. {SNR_DEFINITION}. "
        f"Rayleigh block fading, {rounds} rounds per point, seed {data['seed']}; source file {data['_file']}."
    )
    return save_figure(fig, Path(out_dir), "audit_roc", caption)
