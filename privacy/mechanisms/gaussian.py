"""The Gaussian mechanism (model §9.1): the central and analog Gaussian schemes' rounds.

A round releases the sum of the clipped contributions plus N(0, σ²I) in the units of the sum;
S = 2·clip_norm (replace one client) or clip_norm (add or remove one).
"""

from __future__ import annotations

import math

from privacy.checks import finite_number
from privacy.events import GaussianRound
from privacy.mechanisms import Mechanism, MechanismRound, register_mechanism

__all__ = ["GAUSSIAN", "GAUSSIAN_MIXTURE", "THREAT_MODEL"]

THREAT_MODEL = ("T1 (output observer; the server adding the noise is trusted, model §9.1): the adversary sees the "
                "noisy aggregates / global models only")


def round_event(p: dict, *, K: int, relation: str) -> MechanismRound:
    factor = 2.0 if relation == "replace" else 1.0
    c = finite_number("clip_norm", p["clip_norm"], positive=True)
    sd = finite_number("noise_std", p["noise_std"], positive=False)
    S = factor * c
    return MechanismRound(GaussianRound(noise_std=sd, sensitivity=S), S, (
        f"sensitivity S = {'2·' if factor == 2 else ''}clip_norm = {S:.6g} (ℓ2 norm of one client's clipped "
        f"contribution, units of the released sum; {relation})",
        f"noise: Gaussian N(0, σ²I), σ = {sd:.6g} (noise multiplier z = σ/S = {sd / S if S else math.inf:.6g})",
    ))


GAUSSIAN = register_mechanism(Mechanism(
    name="gaussian", threat_model=THREAT_MODEL, round_event=round_event, required=("clip_norm", "noise_std"),
    trade_off="G_μ with μ = S/σ, exact (Dong, Roth & Su 2019, Thm 2.7); sampled: C_p(G_μ) without replacement, "
              "f_p and f_p⁻¹ under Poisson",
))


def mixture_round_event(p: dict, *, K: int, relation: str) -> MechanismRound:
    """A Gaussian release whose strength μ = S/σ follows a revealed law (:class:`privacy.gaussian_mixture.GaussianMixtureRound`):
    ``strengths`` and ``weights`` the law (already made an upper bound by the caller), ``law`` its description,
    ``blocks`` the coherence blocks the update is spread over (model §5.1, "Per-block estimates"; 1 by default),
    ``sensitivity_text`` the sensitivity line where S = 2·clip_norm is stated in other units (FLORAS's ŝ/b)."""
    from privacy.gaussian_mixture import GaussianMixtureRound

    if relation != "replace":
        raise ValueError(f"relation must be 'replace' for mechanism gaussian-mixture (the strength law is derived for "
                         f"replace-one neighbours, K′ fixed by the channels; got {relation!r})")
    c = finite_number("clip_norm", p["clip_norm"], positive=True)
    event = GaussianMixtureRound(tuple(float(x) for x in p["strengths"]), tuple(float(x) for x in p["weights"]),
                                 blocks=int(p.get("blocks", 1) or 1))
    mean = float(sum(w * m for w, m in zip(event.weights, event.strengths) if m < math.inf))
    tail = (f", mass {event.infinite_mass:.3g} at μ = ∞ (rounds counted as releasing the update without noise)"
            if event.infinite_mass > 0.0 else "")
    return MechanismRound(event, 2.0 * c, (
        str(p["sensitivity_text"]) if p.get("sensitivity_text") else
        f"sensitivity S = 2·clip_norm = {2.0 * c:.6g} (ℓ2 norm of one client's clipped contribution before the channel; "
        "replace)",
        f"noise: Gaussian whose strength μ = (the client's share of S)/(noise std) varies with the round's channels, "
        f"independent of the data and revealed to the observer; law over {len(event.strengths)} panels, mean of the "
        f"finite part {mean:.6g}, largest finite {event.finite_upper:.6g}{tail}"
        + ("" if event.blocks == 1 else
           f"; the update split over {event.blocks} blocks, each block's strength with this law (any dependence): "
           "Rényi bounds by convexity in μ² (sampled: privacy.split_mixture), the PLD on the largest block (its "
           f"exceedance {event.blocks} times the law's)")
        + (f"; {p['law']}" if p.get("law") else ""),
    ))


GAUSSIAN_MIXTURE = register_mechanism(Mechanism(
    name="gaussian-mixture", threat_model=THREAT_MODEL, round_event=mixture_round_event,
    required=("clip_norm", "strengths", "weights"), optional=("law", "blocks", "sensitivity_text"),
    poisson_refusal="the revealed-strength mixture is derived for sampling without replacement (replace-one)",
))
