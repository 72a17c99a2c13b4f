"""Fractional-chip timing offsets of the FLORAS uplink (model §5.1), chip level.

Client k's chips arrive τ_k chips late, τ_k ~ U(0, τ_max) i.i.d. over clients, drawn per round t from the keyed
stream ``(seed, "timing-offset", t)`` (τ_max = ``phy.timing_offset`` < 1). With rectangular chip pulses and the
base station's chip-synchronous integrate-and-dump filter, chip n of a slot carries (1 − τ_k)·x_k[n] + τ_k·x_k[n − 1],
x_k client k's chip stream (the slots back to back: the reference slot, then data slots 1..d; silence before
the reference slot). For the sequence a_k of client k and its symbols u_k^i (u^0 = b the reference amplitude,
u^i = s_k^i) the received slot i is therefore

    y^i = Σ_k g_k·[(1 − τ_k)·a_k + τ_k·S·a_k]·u_k^i + e_0·Σ_k g_k·τ_k·a_k[L−1]·u_k^{i−1} + n^i,

S the one-chip down-shift ((S a)[n] = a[n − 1], (S a)[0] = 0) and e_0 the first chip (inter-slot interference).
The despread outputs Aᵀy then mix the sequences: AᵀÃ ≠ I, so the inactive sequences' reference outputs carry
the active clients' leakage and FLORAS's inactive-sequence noise is no longer the Cauchy of model §6.1.
τ_max = 0 is the chip-synchronous link of model §5 exactly (the offsets are not drawn).

Channel inversion (model §5.1, §6.2) repeats each symbol over L_eff chips (L_eff = L, resource "equal"; 1,
"source-literal"): the same filter gives the matched-filter output of symbol i

    (1/L_eff)·Σ_n [(1 − τ_k)·x_k[n] + τ_k·x_k[n − 1]] = (1 − a_k)·s_k^i + a_k·s_k^{i−1},   a_k = τ_k/L_eff,

(only chip 0 of a symbol sees the previous one; s_k^{−1} = 0, silence before the update): each client's symbols
pass through a two-tap filter, and the received sum is Σ_k (1 − a_k)·s_k^i + (Σ_k a_k·s_k)^{i−1}, two running
sums (:func:`add_delayed_rows`, :func:`delayed_sum`).

Analog Gaussian (model §5.1, §9.1): the K′ admitted clients' artificial noise ν_j ~ N(0, v·I), v = σ_a²/K′, passes
through the same filters, so the receiver sees Σ_j F_j ν_j with F_j = (1 − a_j)·I + a_j·S (d × d, S the one-symbol
shift). Per symbol that is u^i + w^{i−1} with (u^i, w^i) = Σ_j ((1 − a_j), a_j)·ν_j^i, a bivariate normal independent
over i (:func:`filtered_noise_covariance`, :func:`add_filtered_noise`: exact in distribution).
"""

from __future__ import annotations

import numpy as np

from .aggregation import add_rows
from .blocks import chunk_ranges, fill_block_noise
from .randomness import stream

__all__ = ["draw_offsets", "received_chips", "symbol_leakage", "add_delayed_rows", "delayed_sum", "chips_per_symbol",
           "max_leakage", "noise_inflation", "filtered_noise_covariance", "add_filtered_noise"]


def draw_offsets(seed: int, round_index: int, *, K: int, max_offset: float) -> np.ndarray:
    """τ [K] ~ U(0, max_offset) of round ``round_index`` [chips]."""
    return float(max_offset) * stream(seed, "timing-offset", int(round_index)).random(int(K))


def received_chips(A_act: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Ã [L, K], tail [K]): Ã = (1 − τ)·A + τ·S·A the in-slot chips, tail_k = τ_k·a_k[L−1] into the next slot's chip 0."""
    A_act = np.asarray(A_act, dtype=np.float64)
    shifted = np.zeros_like(A_act)
    shifted[1:] = A_act[:-1]
    return (1.0 - tau) * A_act + tau * shifted, tau * A_act[-1]


def symbol_leakage(seed: int, round_index: int, *, K: int, max_offset: float, chips: int) -> np.ndarray:
    """a [K] = τ_k/L_eff: the share of symbol i − 1 in client k's output for symbol i (repetition over ``chips``)."""
    return draw_offsets(seed, round_index, K=K, max_offset=max_offset) / float(chips)


def add_delayed_rows(direct: np.ndarray, late: np.ndarray, x: np.ndarray, a: np.ndarray) -> None:
    """direct += Σ_k (1 − a_k)·x_k and late += Σ_k a_k·x_k, row by row (chunk-invariant, as add_rows)."""
    add_rows(direct, x, 1.0 - np.asarray(a))
    add_rows(late, x, np.asarray(a))


def delayed_sum(direct: np.ndarray, late: np.ndarray) -> np.ndarray:
    """Σ_k [(1 − a_k)·x_k^i + a_k·x_k^{i−1}] = direct^i + late^{i−1} (late^{−1} = 0)."""
    out = direct.copy()
    out[1:] += late[:-1]
    return out


def chips_per_symbol(config) -> int:
    """L_eff: L chips per aggregated symbol with resource "equal", 1 with "source-literal" (model §5)."""
    return int(config.L) if config.resource == "equal" else 1


def max_leakage(config) -> float:
    """a_max = τ_max/L_eff, the largest share of symbol i − 1 in a client's symbol i (0 without offsets)."""
    return float(config.timing_offset) / chips_per_symbol(config)


def noise_inflation(a_max: float) -> float:
    """1/(1 − 2·a_max)²: the factor on the artificial noise variance that keeps analog Gaussian's guarantee.

    With d received symbols, Σ_j F_j ν_j = F̄·ξ + W, ξ = Σ_j ν_j ~ N(0, σ_a²·I), F̄ = F(ā) the filter of the mean
    leakage and W independent of ξ (the ν_j's deviations from their mean are independent of it); σ_min(F̄) ≥ 1 − 2ā
    and ‖F_k‖ ≤ 1, so the noise covariance is ⪰ ((1 − 2a_max)²·σ_a² + σ_n²/ρ)·I ⪰ that multiple of F_k·F_kᵀ: the
    Gaussian mechanism of model §9.1 with its sensitivity and σ_a²·(1 − 2a_max)² in place of σ_a² (model §5.1).
    """
    if not 0.0 <= a_max < 0.5:
        raise ValueError(f"a_max must be in [0, 1/2) (got {a_max!r})")
    return 1.0 / (1.0 - 2.0 * a_max) ** 2


def filtered_noise_covariance(a: np.ndarray, v: float) -> tuple[float, float, float]:
    """(Var u, Cov(u, w), Var w) per symbol for ν_j ~ N(0, v) through taps (1 − a_j, a_j): v·Σ(1 − a)², v·Σ(1 − a)a, v·Σa²."""
    a = np.asarray(a, dtype=np.float64)
    return float(v * np.sum((1.0 - a) ** 2)), float(v * np.sum((1.0 - a) * a)), float(v * np.sum(a**2))


def add_filtered_noise(out: np.ndarray, a: np.ndarray, v: float, *, seed: int, purpose: str, round_index: int,
                       chunk_size: int) -> None:
    """out += Σ_j F_j ν_j, ν_j ~ N(0, v·I) i.i.d. over the clients j of ``a`` (exact in distribution).

    u^i = √Var u·z₁^i, w^i = (Cov/√Var u)·z₁^i + √(Var w − Cov²/Var u)·z₂^i with z₁, z₂ the keyed block noise of
    (seed, purpose, t) and (seed, purpose + "-late", t), and out^i += u^i + w^{i−1} (w^{−1} = 0; the last symbol's
    late part falls after the update, as the data's, :func:`delayed_sum`). Chunk-size independent (keyed blocks).
    """
    var_u, cov, var_w = filtered_noise_covariance(a, v)
    if var_u <= 0.0:
        return
    d = out.shape[0]
    l21, l22 = cov / np.sqrt(var_u), float(np.sqrt(max(0.0, var_w - cov * cov / var_u)))
    late = np.zeros(d)
    for lo, hi in chunk_ranges(d, chunk_size):
        z1 = fill_block_noise(np.empty(hi - lo), seed=seed, purpose=purpose, round_index=round_index, start=lo, std=1.0)
        z2 = fill_block_noise(np.empty(hi - lo), seed=seed, purpose=purpose + "-late", round_index=round_index,
                              start=lo, std=1.0)
        out[lo:hi] += np.sqrt(var_u) * z1
        late[lo:hi] = l21 * z1 + l22 * z2
    out[1:] += late[:-1]
