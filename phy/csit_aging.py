"""Channel aging for truncated channel inversion: CSIT of block 0 kept over the update's coherence blocks (model §5.1).

With ``phy.coherence_symbols`` = n_c the d symbols of an analog update are cut into blocks of n_c symbols:
entry i (i = 0..d−1, one aggregated symbol each) lies in block m(i) = ⌊i/n_c⌋, B = ⌈d/n_c⌉ blocks. The
clients acquire their CSIT once, for block 0 (the channel at the update's start), and pre-invert the whole
update with it; there is no per-block re-acquisition, so admission and ρ are decided once per round and
the contributor set is the same for every entry. Client k sends (√ρ/ĥ_{k,0})·s_k^i (ĥ_{k,0} = h_{k,0} + e_k,
:mod:`phy.csi_error`; h_{k,0} itself with perfect CSI), and the real part received in entry i is

    y^i = √ρ·Σ_{k admitted} w_{k,m(i)}·s_k^i + n^i,   w_{k,m} = Re(h_{k,m}/ĥ_{k,0})   (dimensionless).

With the AR(1) blocks of :mod:`phy.coherence` (correlation ρ_b between consecutive blocks, 0 for "iid"),
perfect CSI and no cell, h_{k,m} = ρ_b^m·h_{k,0} + √(1 − ρ_b^{2m})·v, v ~ CN(0, 1) independent of h_{k,0}, so

    E[w_{k,m} | h_{k,0}] = ρ_b^m,   Var[w_{k,m} | h_{k,0}] = (1 − ρ_b^{2m})/(2|h_{k,0}|²),

and over the admitted clients (|h_{k,0}|² ≥ g_th, |h|² ~ Exp(1)) E[1/|h_{k,0}|²] = e^{g_th}·E₁(g_th): block m's
share of the sum is shrunk by ρ_b^m and blurred by an error whose variance grows with m (derived;
tests/test_csit_aging.py). A cell scales h_{k,m} and h_{k,0} alike, so w is unchanged given the small-scale
fading. The transmit power depends on ĥ_{k,0} only: the power constraint of model §6.2 holds in every block.
"""

from __future__ import annotations

import numpy as np

__all__ = ["analog_block_lengths", "stale_weights", "add_weighted_rows"]


def analog_block_lengths(d: int, n_c: int | None) -> np.ndarray:
    """[B] int64, the number of entries of each coherence block of an analog update (model §5.1); [d] if one block."""
    d = int(d)
    if n_c is None or int(n_c) >= d:
        return np.array([d], dtype=np.int64)
    n_c = int(n_c)
    lengths = np.full(-(-d // n_c), n_c, dtype=np.int64)
    lengths[-1] = d - n_c * (lengths.size - 1)
    return lengths


def stale_weights(h: np.ndarray, h_hat0: np.ndarray) -> np.ndarray:
    """w [K, B] float64 = Re(h_{k,m}/ĥ_{k,0}) for the channel h [K, B] and the clients' CSIT ĥ_0 [K]."""
    h = np.asarray(h)
    return np.real(h / np.asarray(h_hat0)[:, None])


def add_weighted_rows(acc: np.ndarray, x: np.ndarray, w: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """acc [d] += Σ_k w_{k,m(i)}·x_k^i, one row after another in row order, so a sum over chunks equals the sum
    over their concatenation bit for bit (as :func:`phy.aggregation.add_rows`; with one block each row adds
    w_k·x_k elementwise, the same floating-point operations as ``add_rows(acc, x, w[:, 0])``).

    x [c, d], w [c, B] (the rows' block weights), lengths [B] (:func:`analog_block_lengths`).
    """
    for wk, row in zip(w, x):
        acc += (np.repeat(wk, lengths) if wk.size > 1 else wk[0]) * row
    return acc
