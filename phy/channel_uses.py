"""Channel uses of one aggregation round, per scheme (model §5).

One "channel use" is one real chip (a real-valued symbol interval at per-chip SNR P/σ²):

- FLORAS: (d + 1)·L — d data slots and one reference slot, each spread over L chips; with a reference slot per
  coherence block (model §5.1) (d + B)·L for B blocks;
- channel inversion and other analog schemes without spreading: d·L under the equal-resource
  convention (each symbol repeated over L chips) or d under the source-literal one;
- digital schemes: Σ_{admitted} ⌈bits_k / r_k⌉ at the Shannon rate (:mod:`phy.digital.uplink`).
"""

from __future__ import annotations

import math

__all__ = ["floras_channel_uses", "analog_channel_uses", "floras_min_chips", "mean_inverse_rate",
           "mean_tdma_channel_uses", "ddgauss_bits_per_client"]


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer ≥ 1 (got {value!r})")
    return int(value)


def floras_channel_uses(*, d: int, L: int, pilots: int = 1) -> int:
    """(d + P)·L real channel uses: d data slots plus P reference slots (one per coherence block with per-block
    pilots, model §5.1; P = 1 otherwise), L chips each."""
    return (_positive_int("d", d) + _positive_int("pilots", pilots)) * _positive_int("L", L)


def analog_channel_uses(*, d: int, L: int, resource: str) -> int:
    """d·L (``resource = "equal"``) or d (``"source-literal"``) real channel uses."""
    d, L = _positive_int("d", d), _positive_int("L", L)
    if resource == "equal":
        return d * L
    if resource == "source-literal":
        return d
    raise ValueError(f"resource must be one of {{equal, source-literal}} (got {resource!r})")


# ------------------------------------------------------------------ analytic cost against K (model §5)
def floras_min_chips(*, K: int, gamma: int, walsh: bool = True) -> int:
    """The fewest chips FLORAS needs for K active clients: N = K + γ sequences (γ ≥ 1 inactive, model §6.1)
    and L ≥ N (orthonormal sets, model §3); L = 2^⌈log2 N⌉ for Walsh–Hadamard, L = N otherwise."""
    N = _positive_int("K", K) + _positive_int("gamma", gamma)
    return 1 << (N - 1).bit_length() if walsh else N


def mean_inverse_rate(*, snr_db: float, g_th: float) -> float:
    """J = E[1{g ≥ g_th} / r(g)] = ∫_{g_th}^∞ e^{−g} / (½·log2(1 + g·P/σ²)) dg  [real channel uses per bit],

    for g = |h|² ~ Exp(1) (h ~ CN(0, 1), model §5) and the Shannon rate r of the digital uplink (model §5,
    :mod:`phy.digital.uplink`); clients below the truncation g_th > 0 send nothing. Numerically integrated
    (the integrand is smooth and bounded on [g_th, ∞) for g_th > 0)."""
    if not (isinstance(snr_db, (int, float)) and math.isfinite(snr_db)):
        raise ValueError(f"snr_db must be a finite number (got {snr_db!r})")
    if not (isinstance(g_th, (int, float)) and math.isfinite(g_th) and g_th > 0):
        raise ValueError(f"g_th must be a finite number > 0 (got {g_th!r}); without truncation E[1/r] is infinite")
    from scipy.integrate import quad

    snr = 10.0 ** (snr_db / 10.0)
    value, _ = quad(lambda g: math.exp(-g) * 2.0 * math.log(2.0) / math.log1p(g * snr), g_th, math.inf, limit=200)
    return float(value)


def mean_tdma_channel_uses(*, K: int, bits: int, snr_db: float, g_th: float) -> float:
    """E[U] ≈ K·bits·J for the Shannon-rate TDMA uplink U = Σ_{admitted} ⌈bits/r_k⌉ (model §5, digital uplink)
    with J = :func:`mean_inverse_rate`; the ceiling adds less than one channel use per admitted client
    (at most K·e^{−g_th} in mean), which this leaves out. Grows linearly with K."""
    return _positive_int("K", K) * _positive_int("bits", bits) * mean_inverse_rate(snr_db=snr_db, g_th=g_th)


def ddgauss_bits_per_client(*, d: int, bits: int) -> int:
    """d_pad·B bits per admitted DDGauss client, d_pad = 2^⌈log2 d⌉ (model §9.2)."""
    return (1 << (_positive_int("d", d) - 1).bit_length()) * _positive_int("bits", bits)
