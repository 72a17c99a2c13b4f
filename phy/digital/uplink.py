"""Shannon-rate TDMA uplink: the channel uses of a round of bits (model §5, "Digital uplink").

Model (choice of model §5, an optimistic bound):

- the same block-fading draw h_k ~ CN(0, 1) as every other scheme for the same (seed, round)
  (:func:`phy.fading.draw_rayleigh`) and the same truncation as channel inversion: client k is
  admitted iff |h_k|² ≥ g_th (without truncation the mean airtime is infinite);
- each admitted client sends its bits error-free at the Shannon rate of a real channel use at
  per-chip SNR P/σ² (the SNR definition of model §5):

      r_k = ½·log2(1 + |h_k|²·P/σ²)   [bits per real channel use];

- clients transmit one after another (TDMA), so the round costs

      U = Σ_{k admitted} ⌈bits_k / r_k⌉   [real channel uses].

The analog schemes' costs, for comparison: FLORAS (d + 1)·L, channel inversion d·L (equal
resource) or d (source-literal) — see :mod:`phy.channel_uses`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import PhyConfig
from ..fading import draw_rayleigh
from ..randomness import check_seed

__all__ = ["shannon_rate", "tdma_channel_uses", "DigitalUplinkRound", "DigitalUplink"]


def shannon_rate(gain_sq, snr_linear: float) -> np.ndarray:
    """r = ½·log2(1 + |h|²·SNR) [bits per real channel use] for |h|² = ``gain_sq`` (≥ 0)."""
    g = np.asarray(gain_sq, dtype=np.float64)
    if np.any(~np.isfinite(g)) or np.any(g < 0):
        raise ValueError("gain_sq must be finite and ≥ 0")
    if not np.isfinite(snr_linear) or snr_linear <= 0:
        raise ValueError(f"snr_linear must be a finite number > 0 (got {snr_linear!r})")
    return 0.5 * np.log1p(g * snr_linear) / np.log(2.0)


def tdma_channel_uses(bits, rates) -> int:
    """U = Σ_k ⌈bits_k / r_k⌉ over the given (admitted) clients [real channel uses].

    ``bits`` is a scalar (the same payload for every client) or one value per client; ``rates``
    are the clients' Shannon rates (> 0). Returns 0 when no client is given.
    """
    r = np.atleast_1d(np.asarray(rates, dtype=np.float64))
    b = np.broadcast_to(np.asarray(bits, dtype=np.float64), r.shape)
    if r.size == 0:
        return 0
    if np.any(b < 0) or np.any(~np.isfinite(b)):
        raise ValueError("bits must be finite and ≥ 0")
    if np.any(r <= 0):
        raise ValueError("rates must be > 0 for every transmitting client")
    return int(np.sum(np.ceil(b / r)))


@dataclass(frozen=True)
class DigitalUplinkRound:
    """One TDMA round: h [K] complex128, admitted [K] bool, rates [K] float64 (0 where not
    admitted) [bits/channel use], airtime [K] int64 (⌈bits_k/r_k⌉, 0 where not admitted) and
    channel_uses = Σ airtime [real channel uses]."""

    h: np.ndarray
    admitted: np.ndarray
    rates: np.ndarray
    airtime: np.ndarray
    channel_uses: int


class DigitalUplink:
    """The Shannon-rate TDMA uplink of K scheduled clients over Rayleigh block fading.

    Uses ``config.snr_db`` (SNR = P/σ², model §5) and ``config.g_th``; the fading draw is the
    one every scheme sees for the same (seed, round).
    """

    def __init__(self, config: PhyConfig, *, K: int, seed: int):
        self.config = config
        self.K = int(K)
        self.seed = check_seed(seed)
        self.snr_linear = 10.0 ** (float(config.snr_db) / 10.0)

    def run_round(self, bits, *, round_index: int, h: np.ndarray | None = None) -> DigitalUplinkRound:
        """Cost of sending ``bits`` (scalar or [K]) from every admitted client in round ``round_index``.

        ``h`` may be passed when the caller already drew this round's fading (it must be the
        draw of :func:`phy.fading.draw_rayleigh` for the same seed and round).
        """
        if h is None:
            h = draw_rayleigh(self.seed, int(round_index), K=self.K)
        h = np.asarray(h)
        if h.shape != (self.K,):
            raise ValueError(f"h must have shape ({self.K},) (got {h.shape})")
        gain_sq = np.abs(h) ** 2
        admitted = gain_sq >= self.config.g_th
        b = np.broadcast_to(np.asarray(bits, dtype=np.float64), (self.K,))
        rates = np.where(admitted, shannon_rate(gain_sq, self.snr_linear), 0.0)
        airtime = np.zeros(self.K, dtype=np.int64)
        if admitted.any():
            if np.any(b[admitted] < 0) or np.any(~np.isfinite(b[admitted])):
                raise ValueError("bits must be finite and ≥ 0")
            airtime[admitted] = np.ceil(b[admitted] / rates[admitted]).astype(np.int64)
        return DigitalUplinkRound(h, admitted, rates, airtime, int(airtime.sum()))
