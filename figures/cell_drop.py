"""The cell drop of a stored run (model §5.1): the M clients in the annulus r₀ ≤ d ≤ R, coloured by β_eff [dB].

Recomputed from the run's stored configuration alone (``config.json``: its ``[phy]`` table and ``run.seed``,
the population size M = ``partition.clients``): the drop is the pure function of (seed, client identity c)
of model §5.1 (:class:`phy.cell.CellChannel`), d_c = √(r₀² + u_c·(R² − r₀²)), θ_c = 2π·v_c, LoS iff w_c <
p_LoS(d_c), X_c = σ_SF·z_c, so every client identity 0..M−1 is drawn, scheduled or not. β_eff,c is the large-scale
gain relative to the SNR reference after power control, 10·log10(β_eff) = PL_ref − PL(d_c) − X_c [dB] at full
power (capped at the target with path-loss inversion). The reference distance recomputed here is checked
against the one the run recorded (``aggregator.cell.reference_distance_m``), so a drift between the stored
configuration and this recomputation is an error, not a silently different picture. With ``redrop`` the
picture is round 0's drop.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cell_of", "client_drop", "draw_drop"]


def cell_of(config_record: dict) -> tuple:
    """A hashable description of a run's cell (the ``aggregator.cell`` record without the power control)."""
    cell = dict((config_record.get("aggregator") or {}).get("cell") or {})
    cell.pop("power_control", None)
    cell.pop("pc_target_db", None)
    return tuple(sorted(cell.items()))


def client_drop(config_record: dict) -> dict:
    """{x, y [M] m; beta_eff_db [M]; los [M] bool (TR 38.901's LoS state; None for the log-distance model, which has
    none); radius, min_distance, reference_distance [m]; seed; M; exponent, shadowing_db (log-distance, else None)}."""
    from phy.cell import CellChannel
    from phy.config import PhyConfig

    cfg = config_record["config"]
    phy = PhyConfig.from_dict(cfg["phy"])
    if not phy.has_cell:
        raise ValueError("the run has no cell (phy.pathloss = 'none'): no drop to draw")
    seed, M = int(config_record["seed"]), int(cfg["partition"]["clients"])
    cell = CellChannel(phy, seed=seed)
    stored = ((config_record.get("aggregator") or {}).get("cell") or {}).get("reference_distance_m")
    if stored is not None and not math.isclose(float(stored), cell.reference_distance, rel_tol=1e-9):
        raise ValueError(f"the stored run's reference distance {stored} m differs from the recomputed "
                         f"{cell.reference_distance} m: the run was written by another version of phy/cell.py")
    ls = cell.large_scale(np.arange(M, dtype=np.int64), K=M, round_index=0)
    logd = phy.pathloss == "log-distance"
    return {"x": ls.distance * np.cos(ls.angle), "y": ls.distance * np.sin(ls.angle),
            "beta_eff_db": 10.0 * np.log10(ls.gain_eff), "los": None if logd else ls.los,
            "exponent": float(phy.pathloss_exponent) if logd else None,
            "shadowing_db": float(phy.shadowing_db or 0.0) if logd else None, "radius": float(phy.cell_radius),
            "min_distance": float(phy.cell_min_distance), "reference_distance": cell.reference_distance,
            "seed": seed, "M": M, "pathloss": phy.pathloss, "snr_reference": phy.snr_reference,
            "power_control": phy.power_control, "redrop": bool(phy.redrop)}


def draw_drop(fig, axes, drops: list[dict]):
    """One panel per drop (shared colour scale); returns the colour bar's mappable."""
    import matplotlib.pyplot as plt

    lo = min(float(d["beta_eff_db"].min()) for d in drops)
    hi = max(float(d["beta_eff_db"].max()) for d in drops)
    norm = plt.Normalize(vmin=math.floor(lo), vmax=math.ceil(hi))
    sc = None
    for i, (ax, d) in enumerate(zip(axes, drops)):
        groups = (((None, "o", "client"),) if d["los"] is None else ((True, "o", "LoS"), (False, "^", "NLoS")))
        for los, marker, name in groups:
            sel = slice(None) if los is None else d["los"] == los
            sc = ax.scatter(d["x"][sel], d["y"][sel], c=d["beta_eff_db"][sel], cmap="viridis", norm=norm, s=16,
                            marker=marker, edgecolors="none", label=name)
        t = np.linspace(0.0, 2.0 * np.pi, 361)
        for r, ls, name in ((d["radius"], "-", "R (cell edge)"), (d["reference_distance"], "--", "d_ref (SNR reference)"),
                            (d["min_distance"], ":", "r₀")):
            ax.plot(r * np.cos(t), r * np.sin(t), color="0.4", ls=ls, lw=0.8, label=name)
        ax.plot([0.0], [0.0], marker="*", ms=12, color="tab:red", ls="", label="base station")
        ax.set_aspect("equal")
        lim = 1.05 * d["radius"]
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_xlabel("x [m]")
        if i == 0:
            ax.set_ylabel("y [m]")
        law = d["pathloss"] if d["exponent"] is None else f"n = {d['exponent']:g}, σ = {d['shadowing_db']:g} dB"
        ax.set_title(f"{law}, R = {d['radius']:g} m, d_ref = {d['reference_distance']:.0f} m, seed {d['seed']}", fontsize=8)
    return sc
