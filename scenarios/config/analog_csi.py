"""Analog Gaussian's accountant under imperfect CSI (model §5.1, "Imperfect CSI"; docs/cell.md, "Analog Gaussian with
estimated channels").

With estimates ĥ_k the clients' shares and their artificial noise reach the sum scaled by c_k = Re(h_k/ĥ_k), so a
round is a Gaussian mechanism whose strength μ_k = |c_k|·S/√V depends on the channels (:mod:`phy.csi_law`). The
channels do not depend on the data; revealed to the observer, each round is the mixture over μ's law (exact in Rényi
and PLD, :class:`privacy.gaussian_mixture.GaussianMixtureRound`), and with K of M sampled without replacement the
observer's μ (a uniformly chosen row, client k's when it is sampled) has the same law either way, so the sampled
pair given μ applies (model §5.2, "A sampled T2 bound"; the same argument). In a cell with a fixed drop the channels
would identify the sampled clients by their path loss, so they are not revealed: each client's law (its own gain, the
others drawn from the population) is simulated, and the observer is given a strength drawn from their envelope,
which dominates every client's (:mod:`phy.csi_cell_law`; model §5.1, "In a cell"). A re-dropped cell draws every
slot's gain afresh from the drop's law, so its channels are i.i.d. over clients and the cell-free argument holds with
one law (log-distance only: the law needs 2·10⁷ path losses). Rician fading is drawn into the laws. With an estimate
per coherence block (``inversion_csit = "per-block"``, B blocks) every block has the one-block law and the event bounds
any split of the update over the blocks (:func:`estimated_blocks`; model §5.1, "Per-block estimates"). μ's law has no
closed form:
:data:`CSI_DRAWS` Monte Carlo rounds (a fixed stream), rounded up onto panels and made stochastically larger by
Clopper–Pearson bounds on each panel's exceedance (:func:`privacy.gaussian_mixture.band_law`, or its envelope over
the clients, confidence 1 − :data:`CSI_BETA` over the simulation), the tail's margin at the bound √K·S/σ_a,min.
"""

from __future__ import annotations

import dataclasses
import functools
import math

__all__ = ["CSI_BETA", "CSI_DRAWS", "csi_accountant", "csi_law", "estimated_blocks"]

#: Monte Carlo rounds of the strength law, and the confidence 1 − β of its Clopper–Pearson band
CSI_DRAWS, CSI_BETA = 1_000_000, 1e-6
#: the largest population whose per-client laws a cell's accountant draws (one pass over the draws per distinct gain)
CELL_CLIENTS = 1000
#: the [phy] keys that fix one client's law of β_eff under ``redrop`` (phy.cell)
CELL_LAW_KEYS = ("pathloss", "cell_radius", "cell_min_distance", "carrier_ghz", "bs_height", "ut_height",
                 "pathloss_exponent", "shadowing_db", "snr_reference", "power_control", "pc_target_db")


def _refusal(config) -> str | None:
    """Why the imperfect-CSI accountant does not apply to ``config``, or None."""
    phy = config.phy
    if config.privacy.relation != "replace" or getattr(config.training, "sampling", "without-replacement") != "without-replacement":
        return ("privacy.relation: analog Gaussian's ε with phy.csi_error > 0 is derived for replace-one neighbours and "
                "sampling without replacement (K′ and the gains are fixed by the channels); use relation = \"replace\" "
                "and training.sampling = \"without-replacement\", or csi_error = 0")
    if phy.has_cell and phy.redrop and phy.pathloss != "log-distance":
        return (f"phy.redrop: analog Gaussian's ε with imperfect CSI in a re-dropped cell draws 2·10⁷ path losses from "
                f"the drop's law, which the TR 38.901 scenarios (Sionna) evaluate only a few thousand at a time; with "
                f"pathloss = {phy.pathloss!r} use a fixed drop (redrop = false), pathloss = \"log-distance\", or "
                "csi_error = 0")
    if phy.has_cell and not phy.redrop and int(config.partition.clients) > CELL_CLIENTS:
        return (f"partition.clients: analog Gaussian's ε with imperfect CSI in a cell takes one strength law per "
                f"client (≤ {CELL_CLIENTS} clients, got {int(config.partition.clients)}); use a population of at most "
                f"{CELL_CLIENTS}, no cell (remove phy.pathloss), or csi_error = 0")
    if phy.los_k != 0.0 and int(phy.rx_antennas) > 1 and phy.has_cell and not phy.redrop:
        return (f"phy.rician_k: analog Gaussian's ε with imperfect CSI in a fixed drop takes each client's law of "
                f"|Re(aᴴh_k/aᴴĥ_k)|; with {int(phy.rx_antennas)} antennas and a line of sight (κ = {float(phy.los_k):g}) "
                "steered at each client's own azimuth that law is not derived: use rician_k = 0 (a NLoS TDL profile), "
                "rx_antennas = 1, a re-dropped cell (redrop = true) or no cell, or csi_error = 0")
    # TDL subcarriers: analog Gaussian measures every block itself (its own check refuses CSIT kept over blocks), and
    # every subcarrier is CN(0, β) or, for TDL-D/E, Rician with κ = phy.los_k around a specular phase the law does not
    # read, so each block has the one-block law and the split bound applies (model §5.1, "Per-block estimates")
    return None


_REDROP: dict = {}  # the re-dropped cells' rounds, keyed as _rounds plus the cell's keys (at most 4 kept)


@functools.lru_cache(maxsize=4)  # 32 MB per entry at 10⁶ rounds
def _rounds(K: int, g_th: float, csi_error: float, rho_rule: str, draws: int, rician_k: float, n_rx: int = 1):
    from phy.csi_law import csi_rounds

    return csi_rounds(K=K, g_th=g_th, csi_error=csi_error, rho_rule=rho_rule, draws=draws, seed=0, rician_k=rician_k,
                      n_rx=n_rx)


def _redrop_rounds(phy, K: int, draws: int):
    """The rounds of a re-dropped cell: every slot's β_eff drawn afresh from the drop's law (seed-free: the law is
    the same for every client and seed)."""
    import json

    from phy.cell import CellChannel
    from phy.csi_law import csi_rounds

    cell = {k: v for k, v in phy.to_dict().items() if k in CELL_LAW_KEYS}
    key = (K, float(phy.g_th), float(phy.csi_error), str(phy.rho_rule), draws, float(phy.los_k),
           json.dumps(cell, sort_keys=True), int(phy.rx_antennas))
    if key not in _REDROP:
        while len(_REDROP) >= 4:
            _REDROP.pop(next(iter(_REDROP)))
        _REDROP[key] = csi_rounds(K=K, g_th=key[1], csi_error=key[2], rho_rule=key[3], draws=draws, seed=0,
                                  rician_k=key[5], gains=CellChannel(phy, seed=0).drop_law_gains, n_rx=key[7])
    return _REDROP[key]


@functools.lru_cache(maxsize=2)  # about 60 MB per entry at 10⁶ draws and M = 100
def _pool(gains: tuple, K: int, g_th: float, csi_error: float, draws: int, rician_k: float, n_rx: int = 1):
    from phy.csi_cell_law import cell_pool

    return cell_pool(gains, K=K, g_th=g_th, csi_error=csi_error, draws=draws, seed=0, rician_k=rician_k, n_rx=n_rx)


def population_gains(config):
    """β_eff [M] of every client of the run's fixed drop (its seed ``run.seed``; model §5.1)."""
    import numpy as np

    from phy.cell import CellChannel

    M = int(config.partition.clients)
    return CellChannel(config.phy, seed=int(config.run.seed)).large_scale(np.arange(M), K=M, round_index=0).gain_eff


def csi_law(config, *, d: int, draws: int | None = None, beta: float | None = None):
    """(plug-in mean μ of the law, draws per law, laws, their bound, the event of the dominating law) for ``config``
    (the caller checks refusals): μ in units of 1 (sensitivity over noise std), the bound √K·S/σ_a,min (∞: none, the
    receiver noise alone may exceed the target); the event None when the bound is ∞. Without a cell one law (every
    client's); in a cell one per distinct gain of the drop, the event the envelope's (:mod:`phy.csi_cell_law`) and the
    mean the largest client's."""
    import numpy as np

    from phy.analog_gaussian import target_noise_std
    from phy.central_gaussian import sum_sensitivity
    from phy.inversion_link import receiver_noise_variance
    from phy.csi_law import strength_bound, strengths
    from privacy.gaussian_mixture import GaussianMixtureRound, envelope_band_law, exceedances

    draws, beta = CSI_DRAWS if draws is None else int(draws), CSI_BETA if beta is None else float(beta)
    phy, K = config.phy, int(config.training.clients_per_round)
    S = sum_sensitivity(phy.norm_bound(d), config.privacy.relation)
    n_rx = int(phy.rx_antennas)  # the receiver noise counts at one antenna only (model §9.1, §5.2)
    common = dict(target_std=target_noise_std(phy, d=d, relation=config.privacy.relation), sensitivity=S,
                  receiver_variance=receiver_noise_variance(phy) if n_rx == 1 else 0.0)
    upper = strength_bound(K=K, g_th=float(phy.g_th), **common)
    if phy.has_cell and phy.redrop:
        laws = iter([strengths(_redrop_rounds(phy, K, int(draws)), **common)])
    elif phy.has_cell:
        from phy.csi_cell_law import client_strengths, distinct_clients

        gains = population_gains(config)
        pool = _pool(tuple(gains.tolist()), K, float(phy.g_th), float(phy.csi_error), int(draws), float(phy.los_k),
                     n_rx)
        laws = (client_strengths(pool, k, rho_rule=str(phy.rho_rule), **common) for k in distinct_clients(gains))
    else:
        rounds = _rounds(K, float(phy.g_th), float(phy.csi_error), str(phy.rho_rule), int(draws), float(phy.los_k),
                         n_rx)
        laws = iter([strengths(rounds, **common)])
    means, sizes, counts = [], [], []
    for mu in laws:  # one law held at a time (a cell's n laws would take n·8 MB at 10⁶ draws)
        means.append(float(mu.mean()))
        sizes.append(mu.size)
        if math.isfinite(upper):
            counts.append(exceedances(np.minimum(mu, upper), upper=upper))
    if not math.isfinite(upper):
        return max(means), min(sizes), len(sizes), upper, None
    values, weights = envelope_band_law(counts, sizes, upper=upper, beta=beta)
    event = dataclasses.replace(GaussianMixtureRound.panelled(values, weights), blocks=estimated_blocks(phy, d))
    return max(means), min(sizes), len(sizes), upper, event


def estimated_blocks(phy, d: int) -> int:
    """B: the coherence blocks a round estimates afresh with per-block CSIT (:func:`phy.csit_blocks.per_block_csit`),
    1 with one block per update. Each block is the one-block link with the same law of (c_{k,m}, V_m) (every block's
    channel is CN(0, β), its error i.i.d.); a replaced client moves Σ_m ‖Δ_m‖² ≤ S², so its round has strength
    √(Σ_m w_m·μ_{k,m}²), w_m = ‖Δ_m‖²/S² (Σ w_m ≤ 1): the event's ``blocks``
    (:class:`privacy.gaussian_mixture.GaussianMixtureRound`: the Rényi bounds hold by convexity in μ², the PLD takes the
    largest block, model §5.1, "Per-block estimates")."""
    from phy.csit_aging import analog_block_lengths
    from phy.csit_blocks import per_block_csit

    return int(analog_block_lengths(int(d), phy.coherence_symbols).size) if per_block_csit(phy, int(d)) else 1


def csi_accountant(config, *, d: int, common: dict, threat: str):
    """The run accountant of analog Gaussian with ``phy.csi_error`` > 0 (module docstring); ValueError naming the key
    where the bound is not derived, ε = ∞ (a noiseless accountant, said in the threat line) where no noise is certain;
    None after the checks inside :func:`scenarios.config.schemes.accountant_checks_only` (validation)."""
    from privacy import RunAccountant

    from .schemes import checks_only

    why = _refusal(config)
    if why is not None:
        raise ValueError(why)
    if checks_only():  # ScenarioConfig.validate: the checks above, not the law (minutes in a cell)
        return None
    phy, R = config.phy, float(config.phy.clip_norm)
    z = float(phy.of("analog-gaussian").noise_multiplier)
    if z > 0.0:
        mean, m, n_laws, upper, event = csi_law(config, d=d)
    if z == 0.0 or event is None:
        # ε = ∞ under every accountant; the Rényi engine states it (a PLD of a noiseless Gaussian is refused)
        rdp = {**common, "accountant": "rdp" if common["accountant"] in ("pld", "fdp", "gdp") else common["accountant"]}
        return RunAccountant("gaussian", **rdp, clip_norm=R, noise_std=0.0,
                             threat_model=threat + "; imperfect CSI (model §5.1): no bound (ε = ∞), since the clients "
                                                   "are not certain to add noise (z·S ≤ σ_n/√g_th) and Re(h/ĥ) is "
                                                   "unbounded")
    kappa = "" if phy.los_k == 0.0 else f"; Rician κ = {float(phy.los_k):g}"
    steered = "" if int(phy.rx_antennas) == 1 else ", the line of sight steered over the array at a uniform azimuth"
    if phy.has_cell and phy.redrop:
        fading = "Rayleigh" if phy.los_k == 0.0 else f"Rician (κ = {float(phy.los_k):g}{steered})"
        source = (f"its law from {m} Monte Carlo rounds of a re-dropped {phy.pathloss} cell (every slot's large-scale "
                  f"gain drawn afresh from the drop's law, the same for every client; i.i.d. {fading} fading; fixed "
                  f"stream; plug-in mean {mean:.6g})")
        level = f"{CSI_BETA:g} over the simulation"
        seen = ("the channels (h, ĥ) are assumed known to the observer (re-dropped every round, they do not identify "
                "the client)")
    elif phy.has_cell:
        source = (f"{n_laws} laws, one per distinct gain of the run's fixed drop (seed {int(config.run.seed)}; "
                  f"{int(config.partition.clients)} clients{kappa}), each from ≥ {m} Monte Carlo rounds of its "
                  f"client with K − 1 others drawn from the population (fixed stream; largest plug-in mean "
                  f"{mean:.6g}), their envelope")
        level = f"{CSI_BETA:g} over the simulation, union over laws and edges"
        seen = ("the observer is given a strength dominating the sampled client's, not the channels (which would "
                "identify the sampled clients by their path loss: membership stays hidden, as for perfect CSI)")
    else:
        fading = "Rayleigh" if phy.los_k == 0.0 else f"Rician (κ = {float(phy.los_k):g}{steered})"
        source = (f"its law from {m} Monte Carlo rounds of i.i.d. {fading} channels (fixed stream; plug-in mean "
                  f"{mean:.6g})")
        level = f"{CSI_BETA:g} over the simulation"
        seen = "the channels (h, ĥ) are assumed known to the observer"
    gain = ("|Re(h_k/ĥ_k)|" if phy.rx_antennas == 1 else
            f"|Re(aᴴh_k/aᴴĥ_k)| (a the combiner of the {int(phy.rx_antennas)} antennas' estimates; the receiver noise "
            "not counted, model §5.2)")
    blocks = event.blocks
    if blocks > 1:
        gain = (f"√(Σ_m w_m·μ_m²) over the round's {blocks} coherence blocks (each estimated afresh, per-block CSIT; "
                f"w_m the share of ‖Δ‖² in block m, any split), μ_m = {gain}·S/√V_m with this law in every block: "
                "Rényi accountants bound it by convexity in μ² (sampled: the expectations of Theorem 27's branches, "
                f"privacy.split_mixture), the PLD by the largest block's strength, its exceedance {blocks} times the "
                "law's (a union bound)")
    else:
        gain += "·S/√V"
    law = (f"imperfect CSI, σ_e² = {float(phy.csi_error):g} (model §5.1): μ = {gain} per round, {source}, "
           f"rounded up onto {len(event.strengths)} panels and made stochastically larger by one-sided Clopper–Pearson "
           f"bounds on every panel's exceedance (confidence 1 − {level}; mass {event.weights[-1]:.3g} at the bound "
           f"μ_max = √K·S/σ_a,min = {upper:.6g}); {seen}")
    return RunAccountant("gaussian-mixture", **common, clip_norm=R, strengths=event.strengths, weights=event.weights,
                         blocks=event.blocks, law=law, threat_model=threat + f"; with imperfect CSI {seen} (model §5.1)")
