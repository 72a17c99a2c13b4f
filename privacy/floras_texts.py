"""The assumption texts of a FLORAS run's privacy report (model §7.2–§7.4, §9.5): which noise the accountant
counts, which amplification bound it applies, and why an ε is infinite. Pure functions of the run's parameters;
:class:`privacy.run.FlorasRunAccountant` puts them into every :class:`privacy.report.PrivacyReport`."""

from __future__ import annotations

import math

__all__ = ["amplification_text", "divergence_text", "noise_text", "threat_text"]


def threat_text(antennas: int) -> str:
    """The threat model a FLORAS report's ε covers: T1 (model §7.1); with N_r > 1 antennas only the output observer of
    the maximum-ratio aggregate (model §9.5, "Several antennas")."""
    if antennas == 1:
        return "T1"
    return (f"T1 only (output observer of the maximum-ratio aggregate): a base station with {antennas} receive antennas "
            "that keeps every antenna's despread outputs is outside it (model §9.5, \"Several antennas\")")


def noise_text(N: int, K: int, antennas: int, pilot_blocks: int = 1) -> str:
    """The noise the ε counts: one antenna's isotropic Cauchy of scale γ = N − K (model §7.2), or with N_r > 1 the
    maximum-ratio combiner's Gaussian of variance V = Σ_j 1/χ²_{N_r,j} (model §5.2; §9.5, "Several antennas"), per
    pilot block with B > 1 pilots (model §5.2, "Antennas over coherence blocks")."""
    gamma = N - K
    if antennas > 1 and pilot_blocks > 1:
        return (noise_text(N, K, antennas).replace(
            "(ŝ/b units), revealed to the adversary; ",
            f"(ŝ/b units) in each of the {pilot_blocks} pilot blocks, independent over them and revealed to the "
            "adversary; an update split over the blocks loses at most the one-block curve (its log moment is convex "
            "and 0 at 0; model §5.2, \"Antennas over coherence blocks\"); "))
    if antennas == 1:
        return (f"noise: isotropic multivariate Cauchy of scale γ = N − K = {N} − {K} = {gamma} per round; "
                "per-round RDP bound ε(α) = −ln(1 − α(α−1)S²/γ²)/(2(α−1)) if α(α−1)S² < γ², else ∞ "
                "(model §7.2, derived; valid for every d, tight as d grows)")
    return (f"noise: {antennas} receive antennas combined by maximum ratio on each sequence's pilots (model §5.2); "
            f"given the pilots Gaussian of variance V = Σ_j 1/χ²_{{{antennas},j}} over the γ = N − K = {N} − {K} = "
            f"{gamma} inactive sequences (ŝ/b units), revealed to the adversary; per-round RDP bound "
            "ε(α) = ln E[exp(α(α−1)S²/(2V))]/(α−1), finite iff α(α−1)S² < γ², by a quadrature of the Laplace transform "
            "of 1/V with its error added (privacy.antenna_rdp); the PLD from the law of V computed on a grid with every "
            "V rounded down (privacy.antenna_noise; model §9.5, \"Several antennas\"); the ε covers the "
            "maximum-ratio aggregate only: a base station that keeps every antenna's despread outputs is outside T1")


def amplification_text(scheme: str, accountant: str, *, antennas: int = 1, pilot_blocks: int = 1) -> str:
    """The client-sampling amplification ``accountant`` applies to a FLORAS round sampled by ``scheme``
    ("without-replacement" or "poisson"), with its source and neighbouring relation (model §7.3, §9.5)."""
    generic = (
        "amplification by Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087, Thm 9; replace-one neighbours, "
        "integer orders, fractional orders through ⌈α⌉)" if scheme == "without-replacement" else
        "amplification by Zhu & Wang 2019 (ICML, Thm 6; add/remove neighbours, integer orders)"
    )
    again = lambda name: amplification_text(scheme, name, antennas=antennas, pilot_blocks=pilot_blocks)  # noqa: E731
    if accountant == "rdp-generic":
        return generic
    if accountant == "tightest":
        return f"{again('rdp')}; and under pld, {again('pld')}"
    if accountant == "pld":
        text = ("amplification inside the PLD: V-mixture of Poisson-sampled Gaussian PLDs (add/remove; model §9.5)"
                if scheme == "poisson" else
                "amplification inside the PLD: V-mixture of the symmetric pair dominating a Gaussian round sampled "
                "without replacement, δ(ε) = max(H_e^ε(A‖Q), H_e^ε(Q‖A)) with A = qN(S, V) + (1 − q)N(0, V), "
                "Q = N(0, V) (Dong, Roth & Su's C_q(f), replace-one; model §9.5)")
        if antennas > 1:
            text += (f"; with {antennas} receive antennas the mixture is over V = Σ_j 1/χ²_{antennas} "
                     "(model §9.5, \"Several antennas\")")
        if pilot_blocks > 1 and antennas > 1:
            text += (f"; with {pilot_blocks} pilot blocks the mixture is over V_min = min_m V_m (the round with V_min "
                     "on every entry dominates it by post-processing), P(Ṽ_min ≤ v) = 1 − (1 − P(Ṽ ≤ v))^B on the grid, "
                     "its tail edge lowered to keep the tail mass (model §5.2, \"Antennas over coherence blocks\")")
        elif pilot_blocks > 1:
            text += (f"; with {pilot_blocks} pilot blocks V is V_min = min_m V_m = γ²/max_m Z_m² (the round with "
                     "V_min on every entry dominates it by post-processing; P(max|Z_m| ≤ z) = (2Φ(z) − 1)^B; model "
                     "§9.5, \"Several pilots\")")
        return text
    tight = ("sampled-Gaussian RDP of Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087, Thm 27; replace-one)"
             if scheme == "without-replacement" else
             "sampled-Gaussian RDP of Mironov, Talwar & Zhang 2019 (arXiv:1908.10530; add/remove)")
    if antennas > 1 and pilot_blocks > 1:
        return (f"{generic}, on the unsampled curve of {antennas} receive antennas, which an update split over the "
                f"{pilot_blocks} pilot blocks' independent V_m does not exceed (its log moment is convex and 0 at 0; "
                "model §5.2, \"Antennas over coherence blocks\"); no conditional-Gaussian curve is derived for that split")
    if antennas > 1 and scheme == "without-replacement":
        return (f"{generic}, on the V-averaged curve of {antennas} receive antennas: a positive combination of the "
                "base moments, so it is the V-average of that bound; no conditional-Gaussian curve without "
                "replacement is derived with several antennas (model §9.5, \"Several antennas\")")
    if antennas > 1:
        return (f"amplification by the conditional-Gaussian bound with {antennas} receive antennas (model §9.5, "
                f"\"Several antennas\"): given V the round is the {tight} with noise multiplier √V/S; its integer-order "
                "moment Σ_l C(α,l)(1−q)^(α−l) q^l e^(l(l−1)S²/(2V)) averaged over V through E[e^(c/V)] "
                "(privacy.antenna_rdp, quadrature error added), fractional orders interpolated, taking the smaller of "
                f"it and the generic bound, {generic}, order by order")
    if pilot_blocks > 1:
        return (
            f"amplification by the conditional-Gaussian bound for {pilot_blocks} pilot blocks (model §9.5, "
            f"\"Several pilots\"): given the blocks' independent V_m the round is the {tight} at squared shift "
            "Σ_m a_m/V_m; a convex majorant ψ_α of its moment (privacy.sampled_gaussian_convex) bounds every split "
            "a_m of the sensitivity by the one-pilot V-average of ψ_α (Jensen), averaged over V ~ Lévy(0, γ²) in "
            "log space (quadrature error added), integer orders with fractional ones interpolated, taking the "
            f"smaller of it and the generic bound, {generic}, order by order"
        )
    return (
        f"amplification by the conditional-Gaussian bound (model §9.5): given V the round is the {tight} with "
        "noise multiplier √V/S, averaged over V ~ Lévy(0, γ²) in log space (quadrature error added), "
        f"taking the smaller of it and the generic bound, {generic}, order by order"
    )


def divergence_text(sensitivity: float, gamma: float, delta: float) -> str:
    """Why one antenna's Rényi bound gives ε = ∞ on every order: the warning a report carries (model §7.2)."""
    S, g = float(sensitivity), float(gamma)
    if g == 0.0:
        return "γ = N − K = 0: no Cauchy noise, ε = ∞ (model §7.2)"
    r = (g / S) ** 2
    alpha_max = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * r))
    lower = math.log(1.0 / delta) / r
    return (
        f"ε = ∞ on this grid: the per-round Cauchy bound is finite only for α(α−1) < γ²/S² = {r:.4g}, i.e. "
        f"α < {alpha_max:.8g}; at any such order the conversion alone costs ln(1/δ)/(α−1) > ln(1/δ)·S²/γ² = "
        f"{lower:.4g}, so no order could certify a meaningful ε (raise γ = N − K or lower S = 2C/b)"
    )
