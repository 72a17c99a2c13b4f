"""Analog Gaussian's accountant under imperfect CSI (model §5.1, "Imperfect CSI"; docs/cell.md, "Analog Gaussian with
estimated channels").

With estimates ĥ_k the clients' shares and their artificial noise reach the sum scaled by c_k = Re(h_k/ĥ_k), so a
round is a Gaussian mechanism whose strength μ_k = |c_k|·S/√V depends on the channels (:mod:`phy.csi_law`). The
channels do not depend on the data; revealed to the observer, each round is the mixture over μ's law (exact in Rényi
and PLD, :class:`privacy.gaussian_mixture.GaussianMixtureRound`), and with K of M sampled without replacement the
observer's μ (a uniformly chosen row, client k's when it is sampled) has the same law either way, so the sampled
pair given μ applies (model §5.2, "A sampled T2 bound"; the same argument). μ's law has no closed form:
:data:`CSI_DRAWS` Monte Carlo rounds (a fixed stream), rounded up onto panels and made stochastically larger by
Clopper–Pearson bounds on each panel's exceedance (:func:`privacy.gaussian_mixture.band_law`, confidence
1 − :data:`CSI_BETA` over the simulation), the tail's margin at the bound √K·S/σ_a,min.
"""

from __future__ import annotations

import functools
import math

__all__ = ["CSI_BETA", "CSI_DRAWS", "csi_accountant", "csi_law"]

#: Monte Carlo rounds of the strength law, and the confidence 1 − β of its Clopper–Pearson band
CSI_DRAWS, CSI_BETA = 1_000_000, 1e-6


def _refusal(config) -> str | None:
    """Why the imperfect-CSI accountant does not apply to ``config``, or None."""
    phy = config.phy
    if config.privacy.relation != "replace" or getattr(config.training, "sampling", "without-replacement") != "without-replacement":
        return ("privacy.relation: analog Gaussian's ε with phy.csi_error > 0 is derived for replace-one neighbours and "
                "sampling without replacement (K′ and the gains are fixed by the channels); use relation = \"replace\" "
                "and training.sampling = \"without-replacement\", or csi_error = 0")
    if phy.has_cell:
        return ("phy.csi_error: analog Gaussian's ε with imperfect CSI is derived without a cell (i.i.d. Rayleigh "
                "channels: in a cell admission depends on each client's path loss, so the gains' law differs by client); "
                "remove phy.pathloss or set csi_error = 0")
    if phy.los_k != 0.0 or phy.fading_correlation == "tdl":
        return ("phy.csi_error: analog Gaussian's ε with imperfect CSI is derived for Rayleigh block fading (one block per "
                "update); use rician_k = 0 and no tdl fading with it, or csi_error = 0")
    return None


@functools.lru_cache(maxsize=4)  # 32 MB per entry at 10⁶ rounds
def _rounds(K: int, g_th: float, csi_error: float, rho_rule: str, draws: int):
    from phy.csi_law import csi_rounds

    return csi_rounds(K=K, g_th=g_th, csi_error=csi_error, rho_rule=rho_rule, draws=draws, seed=0)


def csi_law(config, *, d: int, draws: int | None = None, beta: float | None = None):
    """(μ draws, their bound, the event of the dominating law) for ``config`` (JSON-free; the caller checks refusals):
    μ in units of 1 (sensitivity over noise std), the bound √K·S/σ_a,min (∞: none, the receiver noise alone may exceed
    the target); the event None when the bound is ∞."""
    import numpy as np

    from phy.analog_gaussian import target_noise_std
    from phy.central_gaussian import sum_sensitivity
    from phy.channel_inversion import receiver_noise_variance
    from phy.csi_law import strength_bound, strengths
    from privacy.gaussian_mixture import GaussianMixtureRound, band_law

    draws, beta = CSI_DRAWS if draws is None else int(draws), CSI_BETA if beta is None else float(beta)
    phy, K = config.phy, int(config.training.clients_per_round)
    S = sum_sensitivity(phy.norm_bound(d), config.privacy.relation)
    common = dict(target_std=target_noise_std(phy, d=d, relation=config.privacy.relation), sensitivity=S,
                  receiver_variance=receiver_noise_variance(phy))  # N_r = 1: the receiver noise counts (model §9.1)
    rounds = _rounds(K, float(phy.g_th), float(phy.csi_error), str(phy.rho_rule), int(draws))
    mu = strengths(rounds, **common)
    upper = strength_bound(K=K, g_th=float(phy.g_th), **common)
    if not math.isfinite(upper):
        return mu, upper, None
    values, weights = band_law(np.minimum(mu, upper), upper=upper, beta=beta)
    return mu, upper, GaussianMixtureRound.panelled(values, weights)


def csi_accountant(config, *, d: int, common: dict, threat: str):
    """The run accountant of analog Gaussian with ``phy.csi_error`` > 0 (module docstring); ValueError naming the key
    where the bound is not derived, ε = ∞ (a noiseless accountant, said in the threat line) where no noise is certain."""
    from privacy import RunAccountant

    why = _refusal(config)
    if why is not None:
        raise ValueError(why)
    phy, R = config.phy, float(config.phy.clip_norm)
    z = float(phy.of("analog-gaussian").noise_multiplier)
    if z > 0.0:
        mu, upper, event = csi_law(config, d=d)
    if z == 0.0 or event is None:
        # ε = ∞ under every accountant; the Rényi engine states it (a PLD of a noiseless Gaussian is refused)
        rdp = {**common, "accountant": "rdp" if common["accountant"] in ("pld", "fdp", "gdp") else common["accountant"]}
        return RunAccountant("gaussian", **rdp, clip_norm=R, noise_std=0.0,
                             threat_model=threat + "; imperfect CSI (model §5.1): no bound (ε = ∞), since the clients "
                                                   "are not certain to add noise (z·S ≤ σ_n/√g_th) and Re(h/ĥ) is "
                                                   "unbounded")
    law = (f"imperfect CSI, σ_e² = {float(phy.csi_error):g} (model §5.1): μ = |Re(h_k/ĥ_k)|·S/√V per round, its law from "
           f"{mu.size} Monte Carlo rounds of i.i.d. Rayleigh channels (fixed stream; plug-in mean {float(mu.mean()):.6g}), "
           f"rounded up onto {len(event.strengths)} panels and made stochastically larger by one-sided Clopper–Pearson "
           f"bounds on every panel's exceedance (confidence 1 − {CSI_BETA:g} over the simulation; mass "
           f"{event.weights[-1]:.3g} at the bound μ_max = √K·S/σ_a,min = {upper:.6g}); the channels revealed to the "
           "observer")
    return RunAccountant("gaussian-mixture", **common, clip_norm=R, strengths=event.strengths, weights=event.weights,
                         law=law, threat_model=threat + "; with imperfect CSI the channels (h, ĥ) are assumed known to "
                                                        "the observer (model §5.1)")
