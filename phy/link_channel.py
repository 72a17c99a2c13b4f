"""The composite channel a scheme sees in one round: cell gains × small-scale fading blocks (model §5, §5.1).

    h_{k,m} = √β_eff,k · h̃_{k,m}   [K, B] complex128,

β_eff the large-scale gain of the round's client k after power control (:mod:`phy.cell`; 1 without a cell)
and h̃ the small-scale fading of block m (:mod:`phy.coherence`). With the defaults (no cell, Rayleigh, one
block) it is exactly :func:`phy.fading.draw_rayleigh` (the link of model §5, bit for bit).
"""

from __future__ import annotations

import numpy as np

from .cell import CellChannel, client_ids
from .coherence import block_correlation, draw_blocks
from .fading import draw_rayleigh

__all__ = ["LinkChannel"]


class LinkChannel:
    """The channel of ``config`` for K scheduled clients and master seed ``seed``."""

    def __init__(self, config, *, K: int, seed: int):
        self.config = config
        self.K = int(K)
        self.seed = int(seed)
        self.cell = CellChannel(config, seed=seed) if config.has_cell else None
        self.rho = block_correlation(config)
        self.default = self.cell is None and config.rician_k == 0.0

    def draw(self, round_index: int, *, clients=None, n_blocks: int = 1) -> np.ndarray:
        """h [K, n_blocks] complex128 of round ``round_index`` for the scheduled ``clients`` (None: 0..K−1)."""
        t = int(round_index)
        cfg = self.config
        if self.default and n_blocks == 1:
            client_ids(clients, self.K)
            return draw_rayleigh(self.seed, t, K=self.K)[:, None]
        h = draw_blocks(self.seed, t, K=self.K, n_blocks=n_blocks, correlation=cfg.fading_correlation, rho=self.rho,
                        rician_k=float(cfg.rician_k))
        if self.cell is not None:
            h *= self.cell.large_scale(clients, K=self.K, round_index=t).amplitude[:, None]
        else:
            client_ids(clients, self.K)
        return h

    def describe(self) -> dict:
        cfg = self.config
        out = {"snr_definition": cfg.snr_definition}
        if self.cell is not None:
            out["cell"] = self.cell.describe()
        if cfg.coherence_symbols is not None or cfg.rician_k:
            out["fading"] = {"coherence_symbols": cfg.coherence_symbols, "fading_correlation": cfg.fading_correlation,
                             "doppler": float(cfg.doppler), "block_correlation": self.rho, "rician_k": float(cfg.rician_k)}
        return out
