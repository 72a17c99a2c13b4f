"""Analog Gaussian against a base station that schedules the clients and keeps every antenna (model §5.2,
"Privacy with N_r > 1"; docs/cell.md, "A base station that schedules the clients and keeps every antenna").

Such a base station knows who was sampled (no amplification) and the channels. Given both, which do not depend on
the data, client k's view of round t, when admitted, is its update under Gaussian noise of variance v_t/ℓ_{k,t} per
symbol (v_t = (z·S)²/K′_t each admitted client's share, ℓ_{k,t} its leverage, :func:`phy.antennas.client_leverage`;
the receiver noise not counted), so the rounds compose exactly to μ_k-Gaussian DP with

    μ_k² = Σ_t K′_t·ℓ_{k,t} / z²   over the rounds client k is admitted in,

and ε(δ) of max_k μ_k bounds every client of the run. The sampling and the channels are keyed per round, so the run's
own draws are replayed before it trains (the link of :class:`phy.channel_inversion.ChannelInversionLink`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["replay_exposure", "scheduled_separating"]


def replay_exposure(config, *, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """(exposure [M], admitted [rounds]): Σ_t K′_t·ℓ_{k,t} = z²·μ_k² of every client over rounds 0 … rounds − 1, and
    each round's K′_t, from the run's own sampling and link draws (N_r > 1)."""
    from fl.sampling import round_clients
    from phy.antennas import centroid_combiner, client_leverage
    from phy.channel_inversion import ChannelInversionLink

    phy, t_cfg = config.phy, config.training
    K, M, seed = int(t_cfg.clients_per_round), int(config.partition.clients), int(config.run.seed)
    exposure, admitted = np.zeros(M), np.zeros(int(rounds), dtype=np.int64)
    links: dict[int, ChannelInversionLink] = {}
    for t in range(int(rounds)):
        clients = round_clients(t_cfg.sampling, seed=seed, round_index=t, M=M, K=K)
        n = int(clients.size)
        if n == 0:
            continue
        if n not in links:  # a Poisson cohort's own link, as the run builds it
            links[n] = ChannelInversionLink(phy, K=n, seed=seed)
        link = links[n]
        _, adm, _ = link.admission(t, clients=clients)  # the aggregator's admission of round t
        admitted[t] = int(adm.sum())
        if adm.any():
            h = link.channel.draw_antennas(t, clients=clients)  # the combiner is every scheduled client's
            exposure[clients[adm]] += adm.sum() * client_leverage(h[adm], combiner=centroid_combiner(h))
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
    exposure, _ = replay_exposure(config, rounds=rounds)
    top = float(exposure.max()) if exposure.size else 0.0
    mu = math.inf if z == 0.0 and top > 0.0 else (math.sqrt(top) / z if top > 0.0 else 0.0)
    delta = float(config.privacy.delta)
    eps = gdp_epsilon(delta, mu)
    text = (f"a base station that schedules the clients and keeps its {n_rx} antennas' signals (T2, no amplification; "
            f"model §5.2): given the sampled sets and the channels client k is μ_k-GDP with μ_k² = Σ_t K′_t·ℓ_{{k,t}}/z² "
            f"over the rounds it is admitted in (ℓ its leverage, z = {z:.6g}, the receiver noise not counted); this "
            f"run's draws (seed {seed}, replayed before training) give the most exposed client μ = {mu:.6g}: "
            f"ε = {'∞' if math.isinf(eps) else f'{eps:.4g}'} at δ = {delta:g} (exact Gaussian-DP conversion)")
    return {"observer": observer, "antennas": n_rx, "mu_most_exposed": "inf" if math.isinf(mu) else mu,
            "epsilon_most_exposed": "inf" if math.isinf(eps) else eps, "text": text}
