"""The composite channel a scheme sees in one round: cell gains × small-scale fading blocks (model §5, §5.1).

    h_{k,m} = √β_eff,k · h̃_{k,m}   [K, B] complex128,

β_eff the large-scale gain of the round's client k after power control (:mod:`phy.cell`; 1 without a cell)
and h̃ the small-scale fading of block m (:mod:`phy.coherence`). With the defaults (no cell, Rayleigh, one
block) it is exactly :func:`phy.fading.draw_rayleigh` (the link of model §5, bit for bit). With
``phy.rx_antennas`` = N_r > 1, :meth:`LinkChannel.draw_antennas` gives h [K, N_r] (model §5.2).
"""

from __future__ import annotations

import math

import numpy as np

from .cell import CellChannel, client_ids
from .coherence import block_correlation, draw_blocks, lag_step, los_phasors
from .fading import draw_rayleigh, draw_rayleigh_antennas
from .randomness import stream

__all__ = ["LinkChannel"]


class LinkChannel:
    """The channel of ``config`` for K scheduled clients and master seed ``seed``."""

    def __init__(self, config, *, K: int, seed: int):
        self.config = config
        self.K = int(K)
        self.seed = int(seed)
        self.cell = CellChannel(config, seed=seed) if config.has_cell else None
        self.rho = block_correlation(config)
        self.lag_x = lag_step(config) if config.fading_correlation == "jakes-exact" else 0.0
        self.los_k = float(config.los_k)  # Rician κ: rician_k, or a LoS TDL profile's own
        self.default = self.cell is None and self.los_k == 0.0
        self.tdl = ((config.tdl_model, float(config.delay_spread), float(config.subcarrier_spacing),
                     int(config.tdl_time_blocks), lag_step(config))
                    if config.fading_correlation == "tdl" else None)  # OFDM subcarriers (phy.channels.tdl)
        # ψ: the line of sight's phase advance per block in time, f_S/f_D·2π·doppler·n_c (phy.coherence)
        self.los_step = config.los_doppler_ratio * lag_step(config) if self.los_k and config.blocks_in_time else 0.0

    def draw(self, round_index: int, *, clients=None, n_blocks: int = 1) -> np.ndarray:
        """h [K, n_blocks] complex128 of round ``round_index`` for the scheduled ``clients`` (None: 0..K−1)."""
        t = int(round_index)
        cfg = self.config
        if self.default and n_blocks == 1:
            client_ids(clients, self.K)
            return draw_rayleigh(self.seed, t, K=self.K)[:, None]
        h = draw_blocks(self.seed, t, K=self.K, n_blocks=n_blocks, correlation=cfg.fading_correlation, rho=self.rho,
                        rician_k=self.los_k, lag_x=self.lag_x, tdl=self.tdl, los_step=self.los_step)
        if self.cell is not None:
            h *= self.cell.large_scale(clients, K=self.K, round_index=t).amplitude[:, None]
        else:
            client_ids(clients, self.K)
        return h

    def gain(self, round_index: int, *, clients=None) -> np.ndarray:
        """β_eff [K] float64 = E|h_k|² of the round's clients: the cell's large-scale gain after power control,
        1 without a cell (the small-scale fading has unit power)."""
        if self.cell is None:
            client_ids(clients, self.K)
            return np.ones(self.K)
        return self.cell.large_scale(clients, K=self.K, round_index=int(round_index)).gain_eff

    def draw_antennas(self, round_index: int, *, clients=None, n_blocks: int | None = None) -> np.ndarray:
        """h [K, N_r] complex128 of one round to the N_r = ``phy.rx_antennas`` antennas (model §5.2); with
        ``n_blocks`` = B: h [K, B, N_r] over the update's coherence blocks.

        h_{k,r} = √β_eff,k·h̃_{k,r}, h̃ from :func:`phy.fading.draw_rayleigh_antennas` (antenna 0 the draw of
        model §5); N_r = 1: :meth:`draw` with one block. Over blocks (model §5.2, "Antennas over coherence blocks")
        antenna 0 is :meth:`draw`'s [K, B] and antenna r ≥ 1 the same fading law from its own block 0 and its own
        keyed innovations (:func:`phy.coherence.draw_blocks` with ``antenna`` = r): independent antennas, each
        correlated over blocks as antenna 0. Rician fading (κ > 0, model §5.2 "Rician fading with several
        antennas"): antenna r's line of sight is antenna 0's times the steering phase e^{jπ·r·sin θ_k} of a
        half-wavelength uniform linear array (θ_k :meth:`los_angles`), its scattered part antenna r's Rayleigh draw.
        """
        n_rx = int(self.config.rx_antennas)
        t = int(round_index)
        if n_rx == 1 and n_blocks is None:
            return self.draw(round_index, clients=clients)
        B = 1 if n_blocks is None else int(n_blocks)
        if n_blocks is None and self.los_k == 0.0:  # one block, Rayleigh: the Sionna draw of every antenna
            h = draw_rayleigh_antennas(self.seed, t, K=self.K, n_rx=n_rx)
            if self.cell is not None:
                h *= self.cell.large_scale(clients, K=self.K, round_index=t).amplitude[:, None]
            else:
                client_ids(clients, self.K)
            return h
        out = np.empty((self.K, B, n_rx), dtype=np.complex128)
        out[:, :, 0] = self.draw(t, clients=clients, n_blocks=B)  # antenna 0 (with its line of sight and cell gain)
        if n_rx > 1:
            cfg = self.config
            h0 = draw_rayleigh_antennas(self.seed, t, K=self.K, n_rx=n_rx)
            for r in range(1, n_rx):
                out[:, :, r] = h0[:, r:r + 1] if B == 1 else draw_blocks(
                    self.seed, t, K=self.K, n_blocks=B, correlation=cfg.fading_correlation, rho=self.rho,
                    lag_x=self.lag_x, tdl=self.tdl, antenna=r, h0=h0[:, r])
            if self.los_k:
                k = self.los_k
                los = los_phasors(self.seed, t, K=self.K, n_blocks=B, correlation=cfg.fading_correlation, tdl=self.tdl,
                                  los_step=self.los_step)
                steer = np.exp(1j * np.pi * np.arange(1, n_rx)[None, :] * np.sin(self.los_angles(t, clients=clients))[:, None])
                out[:, :, 1:] = (math.sqrt(k / (k + 1.0)) * los[:, :, None] * steer[:, None, :]
                                 + math.sqrt(1.0 / (k + 1.0)) * out[:, :, 1:])
            if self.cell is not None:
                out[:, :, 1:] *= self.cell.large_scale(clients, K=self.K, round_index=t).amplitude[:, None, None]
        return out[:, 0, :] if n_blocks is None else out

    def los_angles(self, round_index: int, *, clients=None) -> np.ndarray:
        """θ_k [K] rad: the azimuth of each client's line of sight at the array (model §5.2): the drop's angle in a cell
        (:class:`phy.cell.LargeScale`; fixed across rounds unless re-dropped), else U(0, 2π) per round from the keyed
        stream ``(seed, "fading-los-angle", t)``."""
        t = int(round_index)
        if self.cell is not None:
            return self.cell.large_scale(clients, K=self.K, round_index=t).angle
        client_ids(clients, self.K)
        return 2.0 * np.pi * stream(self.seed, "fading-los-angle", t).random(self.K)

    def describe(self) -> dict:
        cfg = self.config
        out = {"snr_definition": cfg.snr_definition}
        if cfg.rx_antennas != 1:
            out["rx_antennas"] = int(cfg.rx_antennas)
        if self.cell is not None:
            out["cell"] = self.cell.describe()
        if cfg.coherence_symbols is not None or self.los_k:
            out["fading"] = {"coherence_symbols": cfg.coherence_symbols, "fading_correlation": cfg.fading_correlation,
                             "doppler": float(cfg.doppler), "block_correlation": self.rho, "rician_k": self.los_k}
            if self.los_step:  # the line of sight's Doppler (f_S/f_D) and its phase advance per block in time [rad]
                out["fading"].update({"los_doppler": cfg.los_doppler_ratio, "los_phase_step": self.los_step})
            if cfg.fading_correlation == "tdl":
                out["fading"].update({"tdl_model": cfg.tdl_model, "delay_spread_s": float(cfg.delay_spread),
                                      "subcarrier_spacing_hz": float(cfg.subcarrier_spacing),
                                      "tdl_time_blocks": int(cfg.tdl_time_blocks)})
                if cfg.tdl_time_blocks > 1:  # J₀(2π·doppler·n_c) between time blocks on one subcarrier
                    from scipy.special import j0

                    out["fading"]["time_block_correlation"] = float(j0(lag_step(cfg)))
        return out
