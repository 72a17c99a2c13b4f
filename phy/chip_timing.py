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
"""

from __future__ import annotations

import numpy as np

from .aggregation import add_rows
from .randomness import stream

__all__ = ["draw_offsets", "received_chips", "symbol_leakage", "add_delayed_rows", "delayed_sum"]


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
