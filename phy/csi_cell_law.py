"""The laws of analog Gaussian clients' strengths under imperfect CSI in a cell with a fixed drop (model §5.1,
"Imperfect CSI", "In a cell"): one law per client, for the envelope of
:func:`privacy.gaussian_mixture.envelope_band_law`.

Client k of the population (large-scale gain β_k after power control, :mod:`phy.cell`, fixed across rounds) is
sampled with K − 1 others drawn uniformly without replacement from the M − 1 others. Slot j's channel is
h_j = √β_j·h̃_j, h̃_j ~ CN(0, 1) (or Rician of factor κ, :func:`phy.csi_law.rician`), its estimate
ĥ_j = √β_j·(h̃_j + ẽ_j), ẽ_j ~ CN(0, σ_e²) (the relative error of :mod:`phy.csi_error`); it is admitted when
β_j·|h̃_j + ẽ_j|² ≥ g_th and reaches the sum with the gain c_j = Re(h̃_j/(h̃_j + ẽ_j)), which does not depend on β_j.
Given the round, client k's strength is (as without a cell, :mod:`phy.csi_law`)

    μ_k = |c_k|·S/√V,   V = σ_a²(ρ)·Σ_adm c_j²/K′ + σ_n²/ρ,   σ_a²(ρ) = max(0, σ_T² − σ_n²/ρ),

0 when k is not admitted, with ρ = g_th ("threshold") or the smallest admitted |ĥ_j|² ("min-admitted"); the bound
μ_k ≤ √K·S/σ_a,min of :func:`phy.csi_law.strength_bound` holds for every client.

Simulation (:func:`cell_pool`): draw i = 1 … m holds one set O_i of K − 1 population members (uniform among the
(K − 1)-subsets of all M) with their channels, reduced to Σ_adm c², K′ and min |ĥ|² over O_i, and one "own" draw
(c̃_i, |h̃_i + ẽ_i|², :func:`phy.csi_law.estimated_gains`) shared by every client. Client k's law uses the draws with k ∉ O_i: given that event O_i is
uniform among the (K − 1)-subsets of the others, and the draws stay i.i.d. (the event depends on the sets alone), so
they are i.i.d. draws of μ_k (:func:`client_strengths`). Clients with the same β have the same law (the others'
gains form the same multiset), so one of each is enough (:func:`distinct_clients`). The keyed streams are
``(seed, "csi-cell-law", batch)`` for the sets and the others' channels and ``(seed, "csi-cell-own", batch)`` for the
own draws, in batches of :func:`phy.csi_law.batch_rounds` rounded down to a multiple of 8 (at least 8).

With N_r > 1 receive antennas (model §5.2) the combiner a of the round's K estimates couples the slots: c_j =
Re(aᴴh̃_j/aᴴ(h̃_j + ẽ_j)) and the admission on β_j·|aᴴ(h̃_j + ẽ_j)|², so each draw is one joint draw of all K slots'
channels (stream ``(seed, "csi-cell-antennas", batch)``, the set first), the own slot the last; a depends on the
directions of the estimates alone, which β does not change, so the draws stay independent of who the others are and
the argument above holds as it stands.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .csi_law import CsiRounds, batch_rounds, check_antennas, estimated_gains, strengths
from .randomness import stream

__all__ = ["CellPool", "cell_pool", "client_strengths", "distinct_clients"]


class CellPool(NamedTuple):
    """m draws of the others and of the own slot (module docstring); ``members`` [M, ⌈m/8⌉] packed bits, bit i of
    row k set when k ∈ O_i."""

    gains: np.ndarray  # β of the population [M]
    own_c: np.ndarray  # c̃ of the own slot [m]
    own_u: np.ndarray  # |h̃ + ẽ|² of the own slot [m] (admitted iff β_k·u ≥ g_th)
    others_sq: np.ndarray  # Σ_{adm, O_i} c² [m]
    others_k: np.ndarray  # admitted in O_i [m] (int64)
    others_min: np.ndarray  # min over admitted j ∈ O_i of β_j·|ĥ̃_j|² [m] (∞ when none)
    members: np.ndarray  # [M, ⌈m/8⌉] uint8
    K: int
    g_th: float


def cell_pool(gains, *, K: int, g_th: float, csi_error: float, draws: int, seed: int,
              rician_k: float = 0.0, n_rx: int = 1) -> CellPool:
    """``draws`` draws of the others' sets and channels and of the own slot for the population ``gains`` [M] (β_eff
    of every client, > 0) and K clients a round, 1 ≤ K ≤ M (module docstring); ``rician_k`` κ ≥ 0 the small-scale
    fading's Rician factor (0: Rayleigh); ``n_rx`` N_r receive antennas (Rayleigh only; module docstring)."""
    gains = np.asarray(gains, dtype=np.float64).ravel()
    M, K, draws, n_rx = gains.size, int(K), int(draws), int(n_rx)
    check_antennas(n_rx, rician_k)
    if n_rx > 1 and rician_k != 0.0:  # a fixed drop fixes each client's line-of-sight azimuth: not derived here
        raise ValueError(f"rician_k = {rician_k!r} with n_rx = {n_rx}: a fixed drop's law with a line of sight steered "
                         "at each client's own azimuth is not derived; use rician_k = 0 or n_rx = 1")
    if not 1 <= K <= M or draws < 1 or not np.all(np.isfinite(gains)) or not np.all(gains > 0.0):
        raise ValueError(f"gains must be finite and > 0, 1 ≤ K ≤ M and draws ≥ 1 (got M = {M}, K = {K!r}, "
                         f"draws = {draws!r})")
    finite = all(x >= 0.0 and math.isfinite(x) for x in (csi_error, rician_k))
    if not g_th > 0.0 or not finite:
        raise ValueError(f"g_th must be > 0, csi_error and rician_k finite ≥ 0 (got {g_th!r}, {csi_error!r}, "
                         f"{rician_k!r})")
    own_c, own_u = np.empty(draws), np.empty(draws)
    sq, kk, mn = np.zeros(draws), np.zeros(draws, dtype=np.int64), np.full(draws, np.inf)
    members = np.zeros((M, (draws + 7) // 8), dtype=np.uint8)
    rows, n_o = max(8, batch_rounds(K * n_rx) // 8 * 8), K - 1  # whole bytes of the membership bits per batch
    for b, start in enumerate(range(0, draws, rows)):
        n = min(rows, draws - start)
        sl = slice(start, start + n)
        if n_rx > 1:  # one joint draw of the K slots (the combiner couples them), the own slot last
            rng = stream(int(seed), "csi-cell-antennas", b)
            sets = np.argpartition(rng.random((n, M)), n_o - 1, axis=1)[:, :n_o] if n_o else np.zeros((n, 0), int)
            c, u = estimated_gains(rng.standard_normal((4, n, K, n_rx)), float(csi_error), 0.0)
            own_c[sl], own_u[sl], c, u = c[:, -1], u[:, -1], c[:, :-1], u[:, :-1]
        else:
            own_c[sl], own_u[sl] = estimated_gains(stream(int(seed), "csi-cell-own", b).standard_normal((4, n)),
                                                   float(csi_error), float(rician_k))
        if n_o == 0:
            continue
        if n_rx == 1:
            rng = stream(int(seed), "csi-cell-law", b)
            sets = np.argpartition(rng.random((n, M)), n_o - 1, axis=1)[:, :n_o]  # a uniform (K − 1)-subset per draw
            c, u = estimated_gains(rng.standard_normal((4, n, n_o)), float(csi_error), float(rician_k))
        g = gains[sets] * u
        adm = g >= g_th
        sq[sl] = np.where(adm, c * c, 0.0).sum(axis=1)
        kk[sl] = adm.sum(axis=1)
        mn[sl] = np.where(adm, g, np.inf).min(axis=1)
        block = np.zeros((M, n), dtype=bool)
        block[sets.ravel(), np.repeat(np.arange(n), n_o)] = True
        members[:, start // 8:(start + n + 7) // 8] = np.packbits(block, axis=1)
    return CellPool(gains, own_c, own_u, sq, kk, mn, members, K, float(g_th))


def client_strengths(pool: CellPool, k: int, *, rho_rule: str, target_std: float, sensitivity: float,
                     receiver_variance: float) -> np.ndarray:
    """μ_k of client ``k`` on every draw whose set O_i leaves k out (i.i.d. draws of its law, module docstring);
    ``receiver_variance`` σ_n² as in :func:`phy.csi_law.strengths` (the variance counted as privacy noise)."""
    if rho_rule not in ("threshold", "min-admitted"):
        raise ValueError(f"rho_rule must be one of {{threshold, min-admitted}} (got {rho_rule!r})")
    m = pool.own_c.size
    keep = ~np.unpackbits(pool.members[int(k)], count=m).astype(bool)
    g_own = pool.gains[int(k)] * pool.own_u[keep]
    adm = g_own >= pool.g_th
    c = np.where(adm, pool.own_c[keep], 0.0)
    k_adm = pool.others_k[keep] + adm
    on = k_adm > 0
    if rho_rule == "threshold":
        rho = np.where(on, pool.g_th, 0.0)
    else:
        rho = np.where(on, np.minimum(pool.others_min[keep], np.where(adm, g_own, np.inf)), 0.0)
    return strengths(CsiRounds(c, pool.others_sq[keep] + c * c, k_adm, rho), target_std=target_std,
                     sensitivity=sensitivity, receiver_variance=receiver_variance)


def distinct_clients(gains) -> np.ndarray:
    """One client of each distinct gain (the first), ascending by gain: the clients whose laws differ."""
    _, first = np.unique(np.asarray(gains, dtype=np.float64), return_index=True)
    return first
