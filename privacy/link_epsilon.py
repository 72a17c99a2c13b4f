"""FLORAS's link-level ε_link (model §7.2, "Link level"): the truncation level c_max of the active-client factors, the
failure event folded into δ, and the report's text; the factor law P(|c| > c_max) is :mod:`privacy.link`'s.

ε_link is minimized over c_max on the levels where T·K·B·P(|c| > c_max) = f·δ, f ∈ :data:`FRACTIONS`, the rest
accounted at sensitivity c_max·S with the generic sampling bounds (module doc of :mod:`privacy.link`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from scipy.optimize import brentq

from privacy.link import LinkModel, exceed_probability

__all__ = ["FRACTIONS", "floras_link_epsilon"]

FRACTIONS = (0.5, 0.3, 0.1, 0.03, 0.01, 1e-3)


def _c_for(target: float, link: LinkModel) -> float | None:
    """The c_max with P(|c| > c_max) = target (P decreases in c_max), or None."""
    lo, hi = 1e-3, 1e12
    if exceed_probability(hi, link) > target:
        return None
    if exceed_probability(lo, link) <= target:
        return lo
    return float(math.exp(brentq(lambda lc: exceed_probability(math.exp(lc), link) - target, math.log(lo), math.log(hi),
                                 xtol=1e-6)))


def floras_link_epsilon(acc, *, rounds: int) -> tuple[float | None, dict]:
    """(ε_link, details) for a :class:`privacy.run.FlorasRunAccountant` with ``acc.link`` set.

    The failure event has probability ≤ T·K·B·mean_c P_c(|c| > c_max) (module doc); ε_link is None, with the
    reason as its assumption line, when the link says it is undefined (e.g. a drop too large to draw). With a cell
    re-dropped every round the mean runs over the drops of rounds 1..``rounds`` (those the link holds)."""
    link: LinkModel = acc.link
    undefined = link.undefined
    if undefined is None and link.drop_rounds is not None and rounds > link.drop_rounds:
        undefined = (f"the cell is re-dropped every round and the bound holds the drops of {link.drop_rounds} rounds, "
                     f"not of the {rounds} asked for (run.rounds sets how many are drawn)")
    if undefined is not None:
        return None, {"c_max": None, "exceed_probability": None, "delta_truncation": None,
                      "assumptions": [f"link level: ε_link not stated: {undefined}"]}
    if rounds == 0:
        return 0.0, {"c_max": None, "exceed_probability": 0.0, "delta_truncation": 0.0, "assumptions": []}
    if link.drop_rounds is not None and rounds < link.drop_rounds:  # the drops of the rounds that happened
        per_round = len(link.gain_scales) // link.drop_rounds
        link = replace(link, gain_scales=link.gain_scales[: rounds * per_round], drop_rounds=rounds)
    slots = rounds * acc.K * link.blocks  # T·K·B truncation events
    best = (math.inf, None, None)
    first = True
    for f in FRACTIONS:
        p = f * acc.delta / slots
        c = _c_for(p, link)
        if c is None:
            continue
        generic = acc.with_sensitivity_generic(c * acc.sensitivity)
        eps = generic._engine.epsilon(rounds, acc.delta * (1.0 - f))[0]
        if eps < best[0] or first:
            best, first = (eps, c, p), False
    eps, c, p = best
    snr = f"SNR = {link.snr_db:g} dB (P/σ², model §5), L = {link.L}, CSIT {link.csit}"
    if link.rician_k:
        snr += f", Rician gains κ = {link.rician_k:.6g} (model §5.1)"
    if link.csi_error:
        snr += (f", the phase from an estimate of relative error σ_e² = {link.csi_error:g}: g = |h|·cos(∠h − ∠ĥ), "
                "the Rayleigh law convolved with a Gaussian (privacy.gain_laws.estimated_phase_density, model §5.1)")
    if link.gain_scales is not None:
        snr += f"; cell: per-client SNR·β_eff,c ({link.cell_note}; {link.scale_weights()[2]})"
    if link.drop_rounds is not None:
        snr += f"; the mean runs over the drops of rounds 1..{link.drop_rounds}, conditioned on"
    if link.stale is not None:
        law = ("g_(k,m) b/(g_(k,0) b + w_k), ρ_m = Re r_m of block m with block 0"
               + (f", the line of sight turning by θ_m up to {max(map(abs, link._los)):.3g} rad, P exact given its phase "
                  "(privacy/link_stale_los.py)" if link._los is not None else "") if link.csit == "none" else
               "|h_(k,m)| b/(|h_(k,0)| b + w_k), ρ_m = |r_m| of block m with block 0, P bounded by that of "
               + ("ρ_m·a|h_0| + a·A·D_m + √(1 − ρ_m²)·σ·a|w| > c|a|h_0| + n| with the line of sight's D_m = "
                  f"|e^(jψ·b_m) − r_m| up to {max(link._los):.3g} (triangle inequality)" if link._los is not None else
                  "ρ_m·a|h_0| + √(1 − ρ_m²)·a|w| > c|a|h_0| + n| (triangle inequality; exact for ρ_m = 0 and 1)"))
        snr += (f"; one stale pilot for B = {link.blocks} coherence blocks per round: factors c_(k,m) = {law}, 1 − ρ_m up "
                f"to {1.0 - min(link.stale):.3g} (privacy/link_stale.py); ε is the "
                "one-pilot release's with every factor 1, which aging keeps the link from at any SNR: ε_link bounds it")
    elif link.blocks > 1:
        snr += f"; B = {link.blocks} pilot blocks per round, one factor c_(k,m) per block"
    if link.antennas > 1:
        snr += (f"; {link.antennas} receive antennas, maximum ratio on the pilots: factors u_k = ⟨x, v⟩/‖x‖² "
                "(x the pilots, v their noiseless part; model §5.2), P(|u_k| > c) from the noncentral χ² law")
    events = "T·K·B" if link.blocks > 1 else "T·K"
    prob = ("mean_(m,t,c) P(|c| > c_max)" if link.stale is not None and link.drop_rounds is not None
            else "mean_(m,c) P_(m,c)(|c| > c_max)" if link.stale is not None
            else "mean_(t,c) P_(t,c)(|c| > c_max)" if link.drop_rounds is not None
            else "mean_c P_c(|c| > c_max)" if link.gain_scales is not None else "P(|c_k| > c_max)")
    if c is None:
        text = f"link level ({snr}): no truncation level c_max gives {events}·{prob} below δ; ε_link = ∞"
        return math.inf, {"c_max": None, "exceed_probability": None, "delta_truncation": None, "assumptions": [text]}
    text = (
        f"link level ({snr}): active-client factors "
        + ("u_k" if link.antennas > 1 else "c_(k,m)" if link.stale is not None else "c_k = g_k b/(g_k b + w_k)")
        + f" truncated at c_max = {c:.6g}; "
        f"{prob} = {p:.3g} " + ("bounded" if link.stale is not None and link.csit == "phase" else "exactly")
        + f" from the fading and pilot-noise distributions, {events}·P = {slots * p:.3g} "
        f"folded into δ; the rest accounted with sensitivity c_max·S = {c * acc.sensitivity:.6g} and the generic sampling "
        "bounds (privacy/link.py); ε_link = "
        + ("∞" if eps == math.inf else f"{eps:.6g}") + " is what the simulated link guarantees, ε the idealised release"
    )
    return eps, {"c_max": c, "exceed_probability": p, "delta_truncation": slots * p, "snr_db": link.snr_db,
                 "L": link.L, "csit": link.csit, "blocks": link.blocks, "cell": link.gain_scales is not None,
                 "stale": link.stale is not None,
                 "assumptions": [text]}
