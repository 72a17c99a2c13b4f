"""Log-distance path loss with log-normal shadowing, for analysis (model §5.1).

    PL(d) = PL(d₀) + 10·n·log10(d/d₀) + X_σ  [dB],   X_σ ~ N(0, σ²) [dB],

with d₀ = 1 m, PL(d₀) = 20·log10(4π·d₀·f_c/c) the free-space loss at d₀ (f_c = ``phy.carrier_ghz``), n =
``phy.pathloss_exponent`` and σ = ``phy.shadowing_db`` (0 unless set). One propagation state (the LoS
probability is 1). Only ratios of gains enter the link (the SNR is referred to a distance, model §5.1), so
PL(d₀) cancels: β_k/β_ref = (d_ref/d_k)^n·10^{−X_k/10}.
"""

from __future__ import annotations

import math

import numpy as np

from . import register_pathloss

__all__ = ["LogDistance", "SPEED_OF_LIGHT", "free_space_db"]

SPEED_OF_LIGHT = 299_792_458.0  # m/s
D0 = 1.0  # m


def free_space_db(distance: float, *, carrier_hz: float) -> float:
    """20·log10(4π·d·f_c/c) [dB]."""
    return 20.0 * math.log10(4.0 * math.pi * distance * carrier_hz / SPEED_OF_LIGHT)


class LogDistance:
    name = "log-distance"
    reference_state = True
    uses_heights = False
    elementwise = True  # numpy formulas: any number of distances in one call (phy.cell.CellChannel.drop_law_gains)

    def pathloss_db(self, distance, *, los, config) -> np.ndarray:
        d = np.asarray(distance, dtype=np.float64)
        pl0 = free_space_db(D0, carrier_hz=float(config.carrier_ghz) * 1e9)
        return pl0 + 10.0 * float(config.pathloss_exponent) * np.log10(d / D0)

    def los_probability(self, distance, *, config) -> np.ndarray:
        return np.ones(np.shape(distance))

    def shadowing_std_db(self, distance, *, los, config) -> np.ndarray:
        return np.zeros(np.shape(distance))


register_pathloss(LogDistance())
