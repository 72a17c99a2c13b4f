"""Privacy curves: ε against γ/S for several T, and ε against T, client and item level (model §7).

Reads only the JSON that :func:`privacy.curves.compute_curves` wrote (``floras privacy curves
--out DIR`` does both). Writes ``privacy_eps_vs_gamma`` and ``privacy_eps_vs_rounds`` as PNG and
PDF with a caption (in the figure and in ``.caption.txt``) that states every assumption of
model §7.4. ε = ∞ is not drawn: a curve starts at the first γ/S (or T) where ε is finite.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from scenarios.store import read_json

from .common import save_figure
from .layout import request_legend

__all__ = ["plot_curves"]


def _dec(values) -> np.ndarray:
    return np.array([math.inf if v == "inf" else float(v) for v in values], dtype=float)


def _common_caption(data: dict) -> str:
    s = data["settings"]
    it = s["item"]
    return (
        f"Threat model T1 (output observer; nothing is claimed for a base station that keeps raw signals, T2). "
        f"K = {s['K']} of M = {s['M']} clients sampled uniformly without replacement per round "
        f"(Wang, Balle & Kasiviswanathan 2019, Thm 9, replace-one). δ = {s['delta']:g}. "
        f"Per-round noise: isotropic multivariate Cauchy of scale γ = N − K; per-round RDP bound "
        f"−ln(1 − α(α−1)S²/γ²)/(2(α−1)) (model §7.2), so ε depends on γ and S only through γ/S. "
        f"S = 2C/b (replace one client's data or one record); paper normalization at full power has S = 2√d "
        f"(γ = 10, d = 10⁵: γ/S ≈ 0.016) and C_max must be treated as public; μ_k is released unprotected. "
        f"Client level: relation replace. Item level: one record added/removed, E = {it['local_steps']} local steps, "
        f"Poisson-style batches B/D = {it['batch_size']}/{it['local_dataset_size']} "
        f"(Zhu & Wang 2019, Thm 6). Accountant: privacy.RdpAccountant, tight conversion "
        f"(Canonne–Kamath–Steinke 2020, Prop. 12), 100 Rényi orders in [1.001, 1024]. "
        f"Plateaus near ε ≈ ln(1/δ) − 2 ln 2 ≈ {math.log(1 / s['delta']) - 2 * math.log(2):.1f} come from order α = 2, "
        f"where the general sampling bounds amplify most and the conversion costs ln(1/δ)/(α−1). "
        f"ε = ∞ (not drawn) where no order gives a finite bound; where a curve flattens at large γ/S the optimum sits at "
        f"the grid's largest order (1024) and a longer grid would give a smaller ε."
    )


def plot_curves(json_path, out_dir) -> list[Path]:
    """Draw both figures from ``json_path`` into ``out_dir``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = read_json(json_path, what="privacy curves")
    out_dir = Path(out_dir)
    caption = _common_caption(data)
    paths: list[Path] = []

    # ---- ε vs γ/S, one panel per level, one line per T; third panel: per-round α = 2 scaling
    fig, axes = plt.subplots(1, 3, figsize=(13, 6.2))
    for ax, level in zip(axes[:2], ("client", "item")):
        block = data["eps_vs_gamma"][level]
        x = np.array(block["gamma_over_S"], dtype=float)
        for T, row in zip(block["T"], block["epsilon"]):
            y = _dec(row)
            ax.plot(x, np.where(np.isfinite(y), y, np.nan), marker=".", label=f"T = {T}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("γ / S")
        ax.set_ylabel(f"ε at δ = {data['settings']['delta']:g}")
        ax.set_title(f"{level}-level DP")
        ax.grid(True, which="both", alpha=0.3)
        request_legend(ax, fontsize=8, title="rounds")
    pr = data["per_round"]
    x = np.array(pr["gamma_over_S"], dtype=float)
    axes[2].plot(x, _dec(pr["bound"]), label="multivariate bound (any d)")
    axes[2].plot(x, _dec(pr["scalar_exact"]), "--", label="exact, scalar release (d = 1)")
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("γ / S")
    axes[2].set_ylabel(f"per-round RDP at α = {pr['order']:g}, no sampling")
    axes[2].set_title("one round, no sampling")
    axes[2].grid(True, which="both", alpha=0.3)
    request_legend(axes[2], fontsize=8)
    paths += save_figure(
        fig, out_dir, "privacy_eps_vs_gamma",
        "ε against γ/S for several numbers of rounds T (left: client level, middle: item level); right: per-round "
        "RDP at α = 2 without sampling, the bound against the exact one-dimensional Cauchy divergence (both ∝ (S/γ)² "
        "for large γ/S). " + caption,
    )

    # ---- ε vs T, one panel per level, one line per γ/S
    fig, axes = plt.subplots(1, 2, figsize=(11, 6.2))
    for ax, level in zip(axes, ("client", "item")):
        block = data["eps_vs_rounds"][level]
        T = np.array(block["T"], dtype=float)
        for ratio, row in zip(block["gamma_over_S"], block["epsilon"]):
            y = _dec(row)
            ax.plot(T, np.where(np.isfinite(y), y, np.nan), marker=".", label=f"γ/S = {ratio:g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rounds T")
        ax.set_ylabel(f"ε at δ = {data['settings']['delta']:g}")
        ax.set_title(f"{level}-level DP")
        ax.grid(True, which="both", alpha=0.3)
        request_legend(ax, fontsize=8)
    paths += save_figure(fig, out_dir, "privacy_eps_vs_rounds", "ε against the number of rounds T for several γ/S. " + caption)
    return paths
