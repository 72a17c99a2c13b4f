"""Channel uses per round against K for every scheme: the analytic costs of model §5, with measured points.

Analytic curves (:mod:`phy.channel_uses`, model §5), for K ∈ :data:`KS`:

- FLORAS (d + 1)·L with L = 2^⌈log2(K + γ)⌉, the fewest Walsh–Hadamard chips for N = K + γ sequences (γ = :data:`GAMMA`);
- the analog schemes without spreading (central and analog Gaussian, channel inversion, ideal) d·L whatever K,
  drawn at L = 1 (the source-literal d); at the equal-resource convention they cost d·L, FLORAS's cost at the same L;
- the digital schemes K·bits·J, J = E[1{|h|² ≥ g_th}/r] at SNR :data:`SNR_DB` (model §5, digital uplink):
  DDGauss bits = d_pad·B (B = :data:`DD_BITS`, model §9.2), sqSGD bits = ⌈n·log2 K_q⌉ + seed + norm bits with
  n = 2^⌈log2⌊ratio·d⌋⌉ (model §9.3).

One panel per model dimension d: :data:`D_FULL` (the Fashion-MNIST MLP) and every d found among the measured runs.
Measured points: the mean ``channel_uses`` column of every finished run of the sweep directory given (read through
the results store), at the run's own K and d (``config.json`` ``derived``); with no stored results the figure holds
the analytic curves alone and its caption says so. The figure of :data:`SWEEP` is ``channel_uses_vs_k``; that of
another sweep (the registry also draws it for ``matched_population_eps8``, the slice of it that ran first) is
``channel_uses_vs_k_<sweep>``, so neither overwrites the other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from phy.channel_uses import (analog_channel_uses, ddgauss_bits_per_client, floras_channel_uses, floras_min_chips,
                              mean_tdma_channel_uses)
from phy.digital.sqsgd import sqsgd_bits, subsampled_dimension

from .common import MARKERS, SNR_DEFINITION, load_results, save_figure

SWEEP = "matched_population"
STEM = "channel_uses_vs_k"
KS = (10, 20, 50, 100, 200, 500, 1000)
D_FULL = 159_010
GAMMA = 28
DD_BITS = 16
SQ_RATIO, SQ_LEVELS = 0.1, 2
SNR_DB, G_TH = 20.0, 0.01
CURVES = ("floras", "analog", "ddgauss", "sqsgd")
TEXT = {"floras": "FLORAS (d+1)·L, L = 2^⌈log2(K+γ)⌉", "analog": "analog, no spreading: d",
        "ddgauss": "DDGauss K·d_pad·B·J", "sqsgd": "sqSGD K·bits·J"}
COLORS = {"floras": "tab:blue", "analog": "tab:green", "ddgauss": "tab:purple", "sqsgd": "tab:red"}
#: measured scheme → the analytic curve it is compared with
FAMILY = {"floras": "floras", "central-gaussian": "analog", "analog-gaussian": "analog", "channel-inversion": "analog",
          "ideal": "analog", "ddgauss": "ddgauss", "sqsgd": "sqsgd"}


def analytic_uses(scheme: str, *, K: int, d: int) -> float:
    """The model §5 cost of one round of ``scheme`` ∈ :data:`CURVES` at K clients and dimension d [real channel uses]."""
    if scheme == "floras":
        return float(floras_channel_uses(d=d, L=floras_min_chips(K=K, gamma=GAMMA)))
    if scheme == "analog":
        return float(analog_channel_uses(d=d, L=1, resource="source-literal"))
    if scheme == "ddgauss":
        return mean_tdma_channel_uses(K=K, bits=ddgauss_bits_per_client(d=d, bits=DD_BITS), snr_db=SNR_DB, g_th=G_TH)
    if scheme == "sqsgd":
        bits = sqsgd_bits(subsampled_dimension(d, SQ_RATIO)[1], SQ_LEVELS)
        return mean_tdma_channel_uses(K=K, bits=bits, snr_db=SNR_DB, g_th=G_TH)
    raise ValueError(f"scheme must be one of {CURVES} (got {scheme!r})")


def measured_points(results_dir: Path | None) -> list[dict]:
    """One point per finished grid point with a ``channel_uses`` column: scheme, label, K, d, mean uses over rounds and seeds."""
    if results_dir is None or not (Path(results_dir) / "sweep.json").is_file():
        return []
    points = []
    for rs in load_results(results_dir).runsets:
        uses = rs.metrics.get("channel_uses")
        if uses is None or not np.isfinite(uses).any() or not rs.configs:
            continue
        derived = rs.configs[0].get("derived", {})
        scheme = rs.configs[0].get("config", {}).get("phy", {}).get("scheme")
        if scheme not in FAMILY or "K" not in derived or "d" not in derived:
            continue
        points.append({"scheme": scheme, "label": rs.label or scheme, "K": int(derived["K"]), "d": int(derived["d"]),
                       "uses": float(np.nanmean(uses))})
    return points


def stem_for(results_dir: Path | None) -> str:
    """The figure's file stem for measured points from ``results_dir`` (:data:`STEM` for :data:`SWEEP` or none)."""
    if results_dir is None or Path(results_dir).name == SWEEP:
        return STEM
    return f"{STEM}_{Path(results_dir).name}"


def make(results_dir: Path | None, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = measured_points(results_dir)
    dims = sorted({D_FULL, *(p["d"] for p in points)}, reverse=True)
    fig, axes = plt.subplots(1, len(dims), figsize=(5.2 * len(dims), 4.2), squeeze=False)
    for ax, d in zip(axes[0], dims):
        for scheme in CURVES:  # FLORAS's L jumps at powers of two: drawn at every integer K
            ks = range(KS[0], KS[-1] + 1) if scheme == "floras" else KS
            ax.plot(list(ks), [analytic_uses(scheme, K=K, d=d) for K in ks], color=COLORS[scheme], label=TEXT[scheme])
        labels = sorted({p["label"] for p in points if p["d"] == d})
        for i, label in enumerate(labels):
            mine = [p for p in points if p["d"] == d and p["label"] == label]
            ax.plot([p["K"] for p in mine], [p["uses"] for p in mine], linestyle="none", marker=MARKERS[i % len(MARKERS)],
                    color=COLORS[FAMILY[mine[0]["scheme"]]], markerfacecolor="none", label=f"measured: {label}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("clients per round K")
        ax.set_ylabel("real channel uses per round")
        ax.set_title(f"d = {d:,}".replace(",", " "))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    source = (f"measured points: mean channel_uses of {len(points)} finished grid point(s) of {Path(results_dir).name}"
              if points else "analytic model only (no stored runs with a channel_uses column)")
    caption = (f"Channel uses per round against K (model §5). FLORAS with γ = {GAMMA} inactive sequences on the fewest "
               f"Walsh–Hadamard chips; digital costs are means over Rayleigh fading with truncation g_th = {G_TH} at "
               f"{SNR_DB:g} dB (J = E[1/r]); DDGauss B = {DD_BITS}, sqSGD ratio {SQ_RATIO}, {SQ_LEVELS} levels. "
               f"Analog curve at L = 1 (source-literal); at the equal-resource convention (measured analog runs) they cost d·L, "
               f"FLORAS's cost at the same L. {source}. {SNR_DEFINITION}")
    return save_figure(fig, Path(out_dir), stem_for(results_dir), caption)
