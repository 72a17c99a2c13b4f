"""The distributed discrete Gaussian mechanism (model §9.2; Kairouz, Liu & Steinke 2021)."""

from __future__ import annotations

import math

from privacy.events import DDGaussRound
from privacy.mechanisms import Mechanism, MechanismRound, register_mechanism

__all__ = ["DDGAUSS", "THREAT_MODEL"]

THREAT_MODEL = ("T1 and an honest-but-curious server behind secure aggregation (model §9.2): it sees only the modular "
                "sum of the clients' noisy, discretized updates")


def round_event(p: dict, *, K: int, relation: str) -> MechanismRound:
    factor = 2.0 if relation == "replace" else 1.0
    ev = DDGaussRound(n=K, d=int(p["d"]), clip=float(p["clip_norm"]), grid=float(p["grid"]),
                      local_std=float(p["local_std"]), beta=float(p.get("beta", math.exp(-0.5))), relation=relation,
                      noise_fraction=float(p.get("noise_fraction", 1.0)))
    surv = ("" if ev.noise_fraction == 1.0 else
            f"; dropout after noising: only the survivors' shares reach the sum, total noise variance ≥ "
            f"{ev.noise_fraction:.6g}·K·σ² (l₁, l₂ at √({ev.noise_fraction:.6g}·K)·σ, τ at K terms)")
    return MechanismRound(ev, ev.grid * ev.delta2 * factor, (
        f"sensitivity: Δ₂ = {ev.delta2:.6g} grid units after conditional rounding (β = {ev.beta:.6g}, d_pad = {ev.d_pad}), "
        f"γΔ₂ = {ev.grid * ev.delta2:.6g} in model units{'; replace-one doubles l₁ and l₂' if factor == 2 else ''}",
        f"noise: n = K = {K} clients each add N_ℤ(0, (σ/γ)²) with σ = {ev.local_std:.6g}, γ = {ev.grid:.6g}; RDP bound of "
        f"Kairouz, Liu & Steinke 2021 (arXiv:2102.06387, Thm 1 / Prop. 14; model §9.2){surv}; sampling by the generic "
        "bounds (Poisson with add/remove: Zhu & Wang 2019's general bound on this curve, the text's own amplified "
        "accounting, its §6 'generic upper bound from [ZW19]')",
    ))


DDGAUSS = register_mechanism(Mechanism(
    name="ddgauss", threat_model=THREAT_MODEL, round_event=round_event,
    required=("d", "clip_norm", "grid", "local_std"), optional=("beta", "noise_fraction"),
    trade_off=("none in closed form: the f implied by the run's RDP curve (Kairouz, Liu & Steinke 2021 bound, "
               "composed over T rounds, then converted through the Rényi divergence of every test; model §9.4)"),
))
