"""Imperfect CSI of truncated channel inversion: the clients' channel estimates ĥ_k (model §5.1).

    ĥ_k = h_k + e_k,   e_k ~ CN(0, σ_e²·β_eff,k),   σ_e² = ``phy.csi_error`` (relative, dimensionless),

h_k the composite channel √β_eff,k·h̃_k of :class:`phy.link_channel.LinkChannel` and β_eff,k = E|h_k|² its
large-scale gain (1 without a cell; the small-scale h̃ has unit power, Rayleigh or Rician), so the error's
variance relative to the client's own average channel power, E|e_k|²/E|h_k|² = σ_e², is the same for
every client. e_k is drawn per round and client slot from the keyed stream (seed, "csi-error", t),
independent of the fading, the cell and the noise; σ_e² = 0 returns h itself (perfect CSI, the link of
model §6.2 bit for bit). With N_r receive antennas (model §5.2) every antenna's channel h_{k,r} has its own error
e_{k,r}, i.i.d.; the base station forms its combiner a from the estimates and client k inverts aᴴĥ_k, so the
share of s_k in the combined real part is Re(aᴴh_k/aᴴĥ_k) (:meth:`phy.inversion_link.ChannelInversionLink.admission_estimated`).

Pilot interpretation (not a separate key): a least-squares estimate from n_p pilot symbols of energy P
over L chips each has error variance σ²/(n_p·L·P) = 1/(n_p·L·SNR) [model §5: SNR = P/σ²], i.e.
σ_e² = 1/(n_p·L·SNR·β_eff) relative to β_eff; ``csi_error`` fixes the relative error instead.
"""

from __future__ import annotations

import numpy as np

from .randomness import stream

__all__ = ["estimate_channel", "inversion_weights"]


def estimate_channel(h: np.ndarray, gain: np.ndarray, *, csi_error: float, seed: int, round_index: int) -> np.ndarray:
    """ĥ [K] (or [K, N], [K, B, N_r]) complex128 = h + e, e ~ CN(0, csi_error·gain_k) from (seed, "csi-error", t),
    i.i.d. over clients and columns (antennas, each estimated from the same pilots, coherence blocks each measured
    afresh, or both); h itself when 0."""
    h = np.asarray(h)
    if csi_error == 0.0:
        return h
    rng = stream(seed, "csi-error", int(round_index))
    z = rng.standard_normal((2, *h.shape))
    std = np.sqrt(float(csi_error) * np.asarray(gain, dtype=np.float64) / 2.0)
    std = std.reshape(std.shape + (1,) * (h.ndim - 1))
    return h + std * (z[0] + 1j * z[1])


def inversion_weights(h: np.ndarray, h_hat: np.ndarray) -> np.ndarray:
    """w_k = Re(h_k/ĥ_k) [K] float64: the gain of s_k in the real part of the received sum √ρ·Σ w_k s_k + n."""
    return np.real(np.asarray(h) / np.asarray(h_hat))
