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

Rician gains (κ > 0, :mod:`phy.coherence`; perfect CSI): h_{k,m} = A·e^{j(φ_k + ψ·b_m)} + s_{k,m} with A² = κ/(κ+1),
the scattered part s ~ CN(0, σ²), σ² = 1/(κ+1), and c_m = E[s_m·s*_0]/σ² (J₀(x·b_m)·R_f(m) over TDL subcarriers).
Given φ_k, s_m = c_m·s_0 + e_m with e_m ~ CN(0, σ²(1 − |c_m|²)), and with v = e^{−jφ_k}·h_{k,0} ~ CN(A, σ²)
(derived)

    h_{k,m}/h_{k,0} = c_m + β_m/v + e'_m/v,   β_m = A·(e^{jψ·b_m} − c_m),

so over the admitted clients (|v|² ≥ g_th), with M_n = E[v^{−n}] and M_* = E[|v|^{−2}] (both real: the law of v
is symmetric about the real axis),

    E[w_m] = Re c_m + Re(β_m·M_1),
    E[(w_m − 1)²] = (Re c_m − 1)² + 2(Re c_m − 1)·Re(β_m·M_1) + (|β_m|²·M_* + Re(β_m²·M_2))/2
                    + σ²(1 − |c_m|²)·M_*/2,

    E[v^{−n}·1{|v|² ≥ g}] = (2/σ²)·∫_{√g}^∞ r^{1−n}·e^{−(r² + A²)/σ²}·I_n(2Ar/σ²) dr   (n = 0: P(admitted)),
    E[|v|^{−2}·1{|v|² ≥ g}] = (2/σ²)·∫_{√g}^∞ r^{−1}·e^{−(r² + A²)/σ²}·I_0(2Ar/σ²) dr

(the angular integral of e^{−jnθ + (2Ar/σ²)cos θ} is 2π·I_n). κ = 0 gives the Rayleigh law above (M_1 = M_2 = 0,
M_* = e^g·E₁(g)). :func:`stale_weight_moments`; tests/test_los_doppler.py checks it against the model sampled
directly and against the link.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["analog_block_lengths", "stale_weights", "add_weighted_rows", "stale_weight_moments"]


def analog_block_lengths(d: int, n_c: int | None) -> np.ndarray:
    """[B] int64, the number of entries of each coherence block of an analog update (model §5.1); [d] if one block."""
    d = int(d)
    if n_c is None or int(n_c) >= d:
        return np.array([d], dtype=np.int64)
    n_c = int(n_c)
    lengths = np.full(-(-d // n_c), n_c, dtype=np.int64)
    lengths[-1] = d - n_c * (lengths.size - 1)
    return lengths


def stale_antenna_channels(link, round_index: int, *, n_blocks: int, clients=None) -> tuple[np.ndarray, np.ndarray]:
    """(h [K, B], ĥ_0 [K]) complex128 of a round with N_r > 1 antennas and the CSIT of block 0 kept over the update
    (model §5.2, "Antennas over coherence blocks"): the combiner a₀ is the centroid of block 0's channels (of their
    estimates with ``csi_error``, drawn as the one-block link draws them), h_{k,m} = a₀ᴴh_{k,m} and ĥ_0 = a₀ᴴĥ_{k,0}.
    ``link`` a :class:`phy.inversion_link.ChannelInversionLink`."""
    from .antennas import effective_blocks
    from .csi_error import estimate_channel

    t, cfg = int(round_index), link.config
    H = link.channel.draw_antennas(t, clients=clients, n_blocks=int(n_blocks))  # [K, B, N_r]
    est = None
    if cfg.csi_error != 0.0:
        H0 = estimate_channel(H[:, 0, :], link.channel.gain(t, clients=clients), csi_error=cfg.csi_error,
                              seed=link.seed, round_index=t)
        est = np.broadcast_to(H0[:, None, :], H.shape)
    h, h_hat = effective_blocks(H, np.zeros(int(n_blocks), dtype=np.int64), est)
    return h, h_hat[:, 0]


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


def _truncated_inverse_moments(kappa: float, g_th: float) -> tuple[float, float, float]:
    """(M_1, M_2, M_*) of v ~ CN(A, σ²) given |v|² ≥ g_th, A² = κ/(κ+1), σ² = 1/(κ+1) (module doc), by quadrature."""
    from scipy.integrate import quad
    from scipy.special import ive

    s2 = 1.0 / (kappa + 1.0)
    A = math.sqrt(kappa * s2)
    lo = math.sqrt(g_th)
    hi = max(A, lo) + 12.0 * math.sqrt(s2)  # e^{−(r − A)²/σ²} < 10⁻⁶² beyond

    def integral(power: int, order: int) -> float:
        # r^power·e^{−(r² + A²)/σ²}·I_n(2Ar/σ²) = r^power·ive(n, z)·e^{−(r − A)²/σ²}, z = 2Ar/σ² (overflow-free)
        f = lambda r: r**power * ive(order, 2.0 * A * r / s2) * math.exp(-((r - A) ** 2) / s2)
        points = [A] if lo < A < hi else None
        return 2.0 / s2 * quad(f, lo, hi, points=points, limit=200, epsabs=0.0, epsrel=1e-11)[0]

    p = integral(1, 0)
    return integral(0, 1) / p, integral(-1, 2) / p, integral(-1, 0) / p


def stale_weight_moments(c: complex, *, kappa: float, g_th: float, rotation: complex = 1.0) -> tuple[float, float]:
    """(E[w_m], E[(w_m − 1)²]) over the admitted clients of stale CSIT with Rician gains (module doc, model §5.1).

    ``c``: the scattered parts' correlation coefficient c_m between block m and block 0 (complex); ``kappa``: κ ≥ 0;
    ``g_th`` > 0: the admission threshold on |h_0|² (unit mean power); ``rotation``: e^{jψ·b_m}, the line of sight's
    turn since block 0 (1 without its Doppler). Dimensionless."""
    if not (kappa >= 0.0 and g_th > 0.0):
        raise ValueError(f"stale_weight_moments: kappa must be ≥ 0 and g_th > 0 (got {kappa!r}, {g_th!r})")
    c = complex(c)
    s2 = 1.0 / (kappa + 1.0)
    if kappa == 0.0:
        from scipy.special import exp1

        m1 = m2 = 0.0
        m_star = math.exp(g_th) * float(exp1(g_th))
    else:
        m1, m2, m_star = _truncated_inverse_moments(float(kappa), float(g_th))
    beta = math.sqrt(kappa * s2) * (complex(rotation) - c)
    a = c.real - 1.0
    mean = c.real + (beta * m1).real
    mse = (a * a + 2.0 * a * (beta * m1).real + (abs(beta) ** 2 * m_star + (beta * beta * m2).real) / 2.0
           + s2 * (1.0 - abs(c) ** 2) * m_star / 2.0)
    return float(mean), float(mse)
