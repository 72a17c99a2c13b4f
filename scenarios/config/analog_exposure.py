"""Analog Gaussian against a base station that schedules the clients and keeps every antenna (model §5.2,
"Privacy with N_r > 1"; docs/cell.md, "A base station that schedules the clients and keeps every antenna").

Such a base station knows who was sampled (no amplification) and the channels. Given both, which do not depend on
the data, client k's view of round t, when admitted, is its update under Gaussian noise of variance v_t/ℓ_{k,t} per
symbol (v_t = (z·S)²/K′_t each admitted client's share, ℓ_{k,t} its leverage, :func:`phy.antennas.client_leverage`;
the receiver noise not counted), so the rounds compose exactly to μ_k-Gaussian DP with

    μ_k² = Σ_t K′_t·ℓ_{k,t} / z²   over the rounds client k is admitted in,

and ε(δ) of max_k μ_k bounds every client of the run. With imperfect CSI (``phy.csi_error``, model §5.1) client k
inverts aᴴĥ_k (a the combiner of the estimates), so its row of the leverage is h_k/aᴴĥ_k (the channels and their
estimates given to the base station); the formula is unchanged. The sampling and the channels are keyed per round, so the run's
own draws are replayed before it trains (the link of :class:`phy.inversion_link.ChannelInversionLink`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["SAMPLED_BETA", "SAMPLED_DRAWS", "replay_exposure", "sampled_separating", "scheduled_separating"]

#: Monte Carlo rounds of the exposure law for the sampled T2 figure, and its confidence 1 − β (Clopper–Pearson band)
SAMPLED_DRAWS, SAMPLED_BETA = 200_000, 1e-6


def replay_exposure(config, *, rounds: int, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(exposure [M], admitted [rounds]): Σ_t K′_t·ℓ_{k,t} = z²·μ_k² of every client over rounds 0 … rounds − 1, and
    each round's K′_t, from the run's own sampling and link draws (N_r > 1).

    With per-block CSIT over B > 1 coherence blocks (``d`` the update's size; model §5.2, "Antennas over coherence
    blocks") block m has its own admitted set, combiner and leverage, and its entries carry independent noise, so
    a round's view of client k is a Gaussian mechanism per block with the update split over them (Σ_m ‖Δ_m‖² ≤ S²):
    its strength² Σ_m w_m·K′_m·ℓ_{k,m}/z² (Σ w_m ≤ 1) is at most max_m K′_m·ℓ_{k,m}/z², which the round adds;
    ``admitted`` is then the mean K′_m over the blocks."""
    from fl.sampling import round_clients
    from phy.antennas import block_leverage, client_leverage
    from phy.inversion_link import ChannelInversionLink
    from phy.csit_blocks import block_admission, per_block_csit

    phy, t_cfg = config.phy, config.training
    K, M, seed = int(t_cfg.clients_per_round), int(config.partition.clients), int(config.run.seed)
    exposure, admitted = np.zeros(M), np.zeros(int(rounds), dtype=np.int64)
    links: dict[int, ChannelInversionLink] = {}
    per_block = d is not None and per_block_csit(phy, int(d))
    for t in range(int(rounds)):
        clients = round_clients(t_cfg.sampling, seed=seed, round_index=t, M=M, K=K)
        n = int(clients.size)
        if n == 0:
            continue
        if n not in links:  # a Poisson cohort's own link, as the run builds it
            links[n] = ChannelInversionLink(phy, K=n, seed=seed)
        link = links[n]
        if per_block:  # every block's admission, combiner and leverage; the round adds the largest K′_m·ℓ_{k,m}
            ba = block_admission(link, t, d=int(d), clients=clients)
            lev = block_leverage(ba.antennas, ba.admitted, ba.h_hat)
            admitted[t] = int(round(float(ba.counts.mean())))
            exposure[clients] += (lev * ba.counts[None, :]).max(axis=1)
            continue
        # the aggregator's admission of round t, and the effective channels aᴴĥ_k the clients inverted (aᴴh_k with
        # perfect CSI), a the combiner of every scheduled client's channels or estimates
        _, adm, _, inverted = link.admission_estimated(t, clients=clients)
        admitted[t] = int(adm.sum())
        if adm.any():
            h = link.channel.draw_antennas(t, clients=clients)
            exposure[clients[adm]] += adm.sum() * client_leverage(h[adm], inverted=inverted[adm])
    return exposure, admitted


def scheduled_separating(config, *, d: int, rounds: int) -> dict | None:
    """μ and ε of the most exposed client against a scheduling base station that separates its N_r > 1 antennas
    (JSON-ready), or None at one antenna (K′ℓ = 1: the separating receiver sees the aggregate, whose unamplified ε
    :mod:`scenarios.runs.amplification` states)."""
    from privacy.gdp import gdp_epsilon

    phy = config.phy
    n_rx = int(phy.rx_antennas)
    if n_rx == 1:
        return None
    seed = int(config.run.seed)
    observer = f"a base station that schedules the clients and separates its {n_rx} antennas"
    if config.privacy.relation != "replace":  # add/remove: scheduling a client shows that it exists
        return {"observer": observer, "antennas": n_rx, "mu_most_exposed": "inf", "epsilon_most_exposed": "inf",
                "text": (f"{observer} (T2, model §5.2): no guarantee under add/remove neighbours, since the clients it "
                         "schedules reveal which exist (model §7.3); defined for replace-one neighbours")}
    z = float(phy.of("analog-gaussian").noise_multiplier)
    exposure, _ = replay_exposure(config, rounds=rounds, d=d)
    top = float(exposure.max()) if exposure.size else 0.0
    mu = math.inf if z == 0.0 and top > 0.0 else (math.sqrt(top) / z if top > 0.0 else 0.0)
    delta = float(config.privacy.delta)
    eps = gdp_epsilon(delta, mu)
    from phy.csit_blocks import per_block_csit

    form = ("Σ_t max_m K′_{t,m}·ℓ_{k,t,m}/z² over its coherence blocks m (per-block CSIT: an admitted set, combiner "
            "and leverage per block, the update split over them)" if per_block_csit(phy, int(d)) else "Σ_t K′_t·ℓ_{k,t}/z²")
    text = (f"a base station that schedules the clients and keeps its {n_rx} antennas' signals (T2, no amplification; "
            f"model §5.2): given the sampled sets and the channels client k is μ_k-GDP with μ_k² ≤ {form} "
            f"over the rounds it is admitted in (ℓ its leverage, z = {z:.6g}, the receiver noise not counted); this "
            f"run's draws (seed {seed}, replayed before training) give the most exposed client μ = {mu:.6g}: "
            f"ε = {'∞' if math.isinf(eps) else f'{eps:.4g}'} at δ = {delta:g} (exact Gaussian-DP conversion)")
    return {"observer": observer, "antennas": n_rx, "mu_most_exposed": "inf" if math.isinf(mu) else mu,
            "epsilon_most_exposed": "inf" if math.isinf(eps) else eps, "text": text,
            **sampled_separating(config, rounds=rounds, d=d)}


def sampled_separating(config, *, rounds: int, d: int | None = None) -> dict:
    """ε against a base station that keeps its N_r > 1 antennas and every admitted client's channel but does not learn
    who was sampled (model §5.2, "A sampled T2 bound"), JSON-ready: ``epsilon_sampled`` (None where not derived) and
    ``sampled_text``. Given the channels and a row R, uniform among the K scheduled and equal to client k's row when
    it is sampled, (channels, R) has the same law whether or not k is sampled (channels i.i.d. over clients, no cell),
    so the round is the without-replacement sampled Gaussian of strength μ = √(K′·ℓ_R)/z, revealed, mixed over its
    law: :func:`phy.leverage_law.exposure_draws` estimates it, :func:`privacy.gaussian_mixture.band_law` makes
    it a bound with confidence 1 − β, and the PLD mixture composes it over the rounds."""
    phy, pr = config.phy, config.privacy
    K, M, n_rx = int(config.training.clients_per_round), int(config.partition.clients), int(phy.rx_antennas)
    head = f"a base station that keeps its {n_rx} antennas but does not learn who was sampled (T2 with amplification)"
    why = _sampled_not_derived(config, d)
    if why is not None:
        return {"epsilon_sampled": None, "sampled_text": f"{head}: not derived ({why})"}
    z, delta = float(phy.of("analog-gaussian").noise_multiplier), float(pr.delta)
    if z == 0.0:
        return {"epsilon_sampled": "inf", "sampled_text": f"{head}: no privacy noise (z = 0), ε = ∞"}
    try:
        eps, aggregate = _sampled_epsilons(K, M, n_rx, float(phy.g_th), z, int(rounds), delta, SAMPLED_DRAWS,
                                           float(phy.csi_error), float(phy.los_k))
    except ValueError as exc:  # a PLD too large (a weak noise): say so, never fail the run for this figure
        return {"epsilon_sampled": None, "sampled_text": f"{head}: not computed ({exc})"}
    fading = ("Rayleigh" if phy.los_k == 0.0 else
              f"Rician (κ = {float(phy.los_k):g}, the line of sight steered over the array at a uniform azimuth)")
    csi = "" if phy.csi_error == 0.0 else (f" estimated with relative error σ_e² = {float(phy.csi_error):g} per "
                                           "antenna (the clients invert aᴴĥ_k)")
    text = (f"{head}, model §5.2: client k is in a round with probability K/M = {K / M:.4g} (without replacement, "
            f"replace-one) and then seen with strength μ = √(K′·ℓ)/z (z = {z:.6g}, ℓ its leverage, the receiver noise "
            f"not counted), μ's law over i.i.d. {fading} channels{csi} from {SAMPLED_DRAWS} Monte Carlo rounds (fixed "
            f"stream), rounded up onto 1 % panels and made stochastically larger by one-sided Clopper–Pearson bounds "
            f"on every panel's exceedance, the tail's margin at μ_max = √K/z (confidence 1 − {SAMPLED_BETA:g} over the "
            f"simulation); PLD mixture composed over "
            f"{int(rounds)} rounds: ε = {eps:.4g} at δ = {delta:g} (the aggregate{' with perfect CSI' if csi else ''} under "
            "the same accounting: "
            f"{aggregate:.4g})")
    return {"epsilon_sampled": eps, "epsilon_sampled_aggregate": aggregate, "sampled_text": text}


@functools.lru_cache(maxsize=16)
def _sampled_epsilons(K: int, M: int, n_rx: int, g_th: float, z: float, rounds: int, delta: float,
                      draws: int, csi_error: float = 0.0, rician_k: float = 0.0) -> tuple[float, float]:
    """(the sampled T2 ε, the aggregate's under the same accounting); pure and seed-free, so cached per process (a
    sweep's seeds of one case share it)."""
    from phy.leverage_law import exposure_draws
    from privacy.gaussian_mixture import band_law, sampled_gaussian_mixture_epsilon

    x = exposure_draws(K=K, n_rx=n_rx, g_th=g_th, draws=draws, seed=0, csi_error=csi_error, rician_k=rician_k)
    values, weights = band_law(np.minimum(np.sqrt(x) / z, math.sqrt(K) / z), upper=math.sqrt(K) / z, beta=SAMPLED_BETA)
    common = dict(rate=K / M, rounds=rounds, delta=delta)
    return (sampled_gaussian_mixture_epsilon(values, weights, **common),
            sampled_gaussian_mixture_epsilon([1.0 / z], [1.0], **common))


def _sampled_not_derived(config, d: int | None = None) -> str | None:
    """Why the sampled T2 figure does not apply to ``config``, or None."""
    from phy.csit_blocks import per_block_csit

    if d is not None and per_block_csit(config.phy, int(d)):
        return ("coherence blocks with per-block CSIT: a round's strength is the largest over its blocks, whose law "
                "(over correlated blocks) is not derived; the scheduling figure above bounds it")
    if config.privacy.relation != "replace" or config.training.sampling != "without-replacement":
        return "derived for sampling without replacement and replace-one neighbours only"
    if int(config.training.clients_per_round) >= int(config.partition.clients):
        return "every client in every round (K = M): nothing is amplified, the scheduling figure applies"
    if config.phy.has_cell:
        return ("a cell: large-scale fading ties a channel to its client across rounds, so the channels can reveal who "
                "was sampled (docs/cell.md, T2 linking)")
    return None
