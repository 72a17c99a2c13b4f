"""The truncated channel-inversion link (model §6.2): admission, ρ, the received sum and its running sums.

The link of :mod:`phy.channel_inversion` (the scheme) and :mod:`phy.analog_gaussian` (which adds the clients' noise).


Needs full CSIT: client k knows h_k (block fading, :mod:`phy.fading`, the same draw FLORAS
sees for the same (seed, round)).

- Truncation: client k transmits only if |h_k|² ≥ g_th (default 0.01); K' = admitted count.
- Admitted client k transmits (√ρ / h_k)·s_k^i; the real part of the received signal is
  y^i = √ρ·Σ_{k admitted} s_k^i + n^i.
- ρ (dimensionless) keeps every admitted client within its average power constraint: client
  k's per-symbol transmit power is ρ·(‖s_k‖²/d)/|h_k|² ≤ ρ·P/|h_k|², so ρ ≤ |h_k|² for every admitted k.
  Rules: ``threshold`` ρ = g_th (weakest admissible client at full power; default) or
  ``min-admitted`` ρ = min_{admitted} |h_k|² (instantaneous).
- Noise variance of n per aggregated symbol: σ²/L under the equal-resource convention (the
  symbol is repeated over L chips and matched-filtered) or σ² (``source-literal``, one channel
  use per symbol), σ² = P/10^(SNR/10), SNR := P/σ² (model §5).
- Estimate: ŝ = y/√ρ; the server knows who transmitted and de-normalizes with the admitted
  clients' means. K' = 0: nothing is received, the round leaves the model unchanged and is
  logged (diagnostic ``skipped`` = 1).

Imperfect CSI (``phy.csi_error`` = σ_e² > 0, model §5.1, :mod:`phy.csi_error`): client k knows only
ĥ_k = h_k + e_k. It is admitted if |ĥ_k|² ≥ g_th, ρ rules on |ĥ|², it transmits (√ρ/ĥ_k)·s_k^i (power
ρ·(‖s_k‖²/d)/|ĥ_k|² ≤ ρ·P/|ĥ_k|², the constraint above on ĥ), and the real part of the received signal is
y^i = √ρ·Σ_{k admitted} Re(h_k/ĥ_k)·s_k^i + n^i (the imaginary part of h_k/ĥ_k falls in the discarded
quadrature): a weighted sum, accumulated chunk by chunk on the streaming path. σ_e² = 0: the link above.

Channel aging (``phy.coherence_symbols`` = n_c < d, model §5.1, :mod:`phy.csit_aging`): the CSIT is block 0's
channel (ĥ_{k,0}, with ``csi_error``), kept over the update's B = ⌈d/n_c⌉ blocks; admission and ρ are decided on it
once, and the real part received in entry i is √ρ·Σ_{k admitted} Re(h_{k,m(i)}/ĥ_{k,0})·s_k^i + n^i, m(i) = ⌊i/n_c⌋.

Chip-timing offsets (``phy.timing_offset`` = τ_max, model §5.1, :mod:`phy.chip_timing`; one block, perfect CSI; with
N_r > 1 on the combiner's effective channels, model §5.2):
with the symbol repeated over L_eff chips the received sum is Σ_adm [(1 − a_k)·s_k^i + a_k·s_k^{i−1}], a_k = τ_k/L_eff.

Receive antennas (``phy.rx_antennas`` = N_r > 1, model §5.2, :mod:`phy.antennas`): h_k is the effective
scalar channel aᴴh_k of the base station's unit-norm combiner a, and n = Re{aᴴn} keeps the variance above. With
imperfect CSI the base station knows the estimates Ĥ only: a is the combiner of Ĥ, client k inverts ĥ_k = aᴴĥ_k (admission
and ρ on it) and its share is Re(aᴴh_k/aᴴĥ_k) (:meth:`ChannelInversionLink.antenna_estimates`). Over coherence blocks
each block is combined with its CSIT block's combiner (:func:`phy.antennas.effective_blocks`; block 0's with CSIT
kept over the update, model §5.2 "Antennas over coherence blocks").

Noise is drawn in logical blocks keyed by (seed, "channel-inversion-noise", round, block), so
results do not depend on ``chunk_size``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .aggregation import add_rows, check_updates, stream_chunks
from .blocks import chunk_ranges, fill_block_noise
from .antennas import centroid_combiner, effective_channel
from .config import PhyConfig
from .csi_error import estimate_channel, inversion_weights
from .csit_aging import add_weighted_rows, analog_block_lengths, stale_antenna_channels, stale_weights
from .chip_timing import add_delayed_rows, delayed_sum, symbol_leakage
from .link_channel import LinkChannel
from .normalization import clipped_rows, normalize
from .row_pass import add_clipped_rows, clipped_and_raw
from .randomness import check_seed

__all__ = ["admitted_mask", "inversion_factor", "receiver_noise_variance", "ChannelInversionRound",
           "ChannelInversionLink", "AdmittedSums", "admitted_sums"]


def admitted_mask(h: np.ndarray, *, g_th: float) -> np.ndarray:
    """Truncation: [K] bool, True where |h_k|² ≥ g_th."""
    return np.abs(np.asarray(h)) ** 2 >= g_th


def inversion_factor(h: np.ndarray, admitted: np.ndarray, *, g_th: float, rule: str) -> float:
    """ρ: g_th (rule "threshold") or min_{admitted}|h_k|² (rule "min-admitted"); 0 when K' = 0."""
    if not np.any(admitted):
        return 0.0
    if rule == "threshold":
        return float(g_th)
    if rule == "min-admitted":
        return float(np.min(np.abs(np.asarray(h)[admitted]) ** 2))
    raise ValueError(f"rho_rule must be one of {{threshold, min-admitted}} (got {rule!r})")


def receiver_noise_variance(config: PhyConfig) -> float:
    """Variance of n per aggregated symbol [W]: σ²/L (resource "equal") or σ² ("source-literal")."""
    if config.resource == "equal":
        return config.noise_variance / config.L
    if config.resource == "source-literal":
        return config.noise_variance
    raise ValueError(f"resource must be one of {{equal, source-literal}} (got {config.resource!r})")


@dataclass(frozen=True)
class ChannelInversionRound:
    """One channel-inversion round (simulator view).

    s_hat [d] float64 (√W; zeros when K' = 0); admitted [K] bool; rho float; h [K] complex128;
    transmit_power [K] float64: per-symbol average transmit power ρ·(‖s_k‖²/d)/|ĥ_k|² [W] (‖s_k‖² = f_k²·‖x_k − μ_k·1‖²
    from the normalization where it is known, model §2; 0 if
    not admitted); h_hat [K] complex128: the clients' estimates ĥ (h itself with perfect CSI).
    """

    s_hat: np.ndarray
    admitted: np.ndarray
    rho: float
    h: np.ndarray
    transmit_power: np.ndarray
    h_hat: np.ndarray | None = None


def _energy(s: np.ndarray, admitted: np.ndarray, energy) -> np.ndarray:
    """‖s_k‖² of the admitted rows: the normalization's (f_k²·‖x_k − μ_k·1‖², model §2) when given, else summed
    from s (the same value to rounding)."""
    return np.asarray(energy)[admitted] if energy is not None else np.add.reduce(s[admitted] ** 2, axis=1)


class ChannelInversionLink:
    """Truncated channel inversion over Rayleigh block fading for K clients."""

    def __init__(self, config: PhyConfig, *, K: int, seed: int):
        self.config = config.validate(K=K)
        self.K = int(K)
        self.seed = check_seed(seed)
        self.noise_std = float(np.sqrt(receiver_noise_variance(config)))
        self.channel = LinkChannel(config, K=K, seed=self.seed)  # cell gains × fading (model §5.1)

    def run_round(self, s: np.ndarray, *, round_index: int, clients=None, energy=None) -> ChannelInversionRound:
        """Send s [K, d] (float64, √W) through one round (``clients``: identities for the cell, model §5.1).

        ``energy`` [K]: ‖s_k‖² when the normalization knows it (``Normalized.energy``), else computed from s; it
        sets only the reported transmit power ρ·(‖s_k‖²/d)/|ĥ_k|².
        """
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != self.K:
            raise ValueError(f"s must be a K×d array with K = {self.K} (got shape {s.shape})")
        cfg, t, d = self.config, int(round_index), s.shape[1]
        lengths = analog_block_lengths(d, cfg.coherence_symbols)
        if cfg.timing_offset != 0.0:  # two-tap filter per client (phy.chip_timing; one block, perfect CSI)
            h, adm, rho = self.admission(t, clients=clients)
            power = np.zeros(self.K)
            if adm.any():
                power[adm] = rho * (_energy(s, adm, energy) / d) / np.abs(h[adm]) ** 2
            direct, late = np.zeros(d), np.zeros(d)
            add_delayed_rows(direct, late, s[adm], self.leakage(t)[adm])
            return self.run_round_from_sum(delayed_sum(direct, late), h=h, admitted=adm, rho=rho,
                                           transmit_power=power, round_index=t)
        if cfg.csi_error != 0.0 or lengths.size > 1:  # Σ_adm w_{k,m}·s_k, the weighted sum of the streaming path
            h, adm, rho, h_hat, w = self.weights(t, n_blocks=lengths.size, clients=clients)
            power = np.zeros(self.K)
            if adm.any():
                power[adm] = rho * (_energy(s, adm, energy) / d) / np.abs(h_hat[adm]) ** 2
            s_sum = add_weighted_rows(np.zeros(d), s[adm], w[adm], lengths)
            return self.run_round_from_sum(s_sum, h=h, admitted=adm, rho=rho, transmit_power=power, round_index=t,
                                           h_hat=h_hat)
        h, adm, rho = self.admission(t, clients=clients)
        power = np.zeros(self.K)
        if not adm.any():
            return ChannelInversionRound(np.zeros(d), adm, rho, h, power)
        power[adm] = rho * (_energy(s, adm, energy) / d) / np.abs(h[adm]) ** 2
        sqrt_rho = np.sqrt(rho)
        s_hat = np.empty(d)
        for a, z in chunk_ranges(d, cfg.chunk_size):
            y = fill_block_noise(np.empty(z - a), seed=self.seed, purpose="channel-inversion-noise",
                                 round_index=t, start=a, std=self.noise_std)
            y += sqrt_rho * s[adm, a:z].sum(axis=0)  # Re{h_k · (√ρ/h_k) s_k} = √ρ s_k
            s_hat[a:z] = y / sqrt_rho
        return ChannelInversionRound(s_hat, adm, rho, h, power)

    def leakage(self, round_index: int) -> np.ndarray:
        """a [K] = τ_k/L_eff of round ``round_index`` (``phy.timing_offset``, :mod:`phy.chip_timing`); L_eff = L with
        resource "equal", 1 with "source-literal" (one chip per symbol)."""
        cfg = self.config
        return symbol_leakage(self.seed, round_index, K=self.K, max_offset=cfg.timing_offset,
                              chips=cfg.L if cfg.resource == "equal" else 1)

    def admission(self, round_index: int, *, clients=None) -> tuple[np.ndarray, np.ndarray, float]:
        """(h [K], admitted [K] bool, ρ) of round ``round_index``: the channel alone decides them, so the
        streaming path draws them before any update arrives (the same draws as :meth:`run_round`)."""
        t = int(round_index)
        if self.config.rx_antennas == 1:
            h = self.channel.draw(t, clients=clients)[:, 0]  # composite √β_eff·h̃ with a cell
        else:  # aᴴh_k, the combiner's effective channel (model §5.2)
            h = effective_channel(self.channel.draw_antennas(t, clients=clients))
        return (h, *self._admit(h))

    def _admit(self, h_hat: np.ndarray) -> tuple[np.ndarray, float]:
        """(admitted [K], ρ) on the channels the clients invert: |ĥ_k|² ≥ g_th and the ρ rule over them."""
        cfg = self.config
        adm = admitted_mask(h_hat, g_th=cfg.g_th)
        return adm, inversion_factor(h_hat, adm, g_th=cfg.g_th, rule=cfg.rho_rule)

    def admission_estimated(self, round_index: int, *, clients=None):
        """(h, admitted, ρ, ĥ) with the clients' estimates ĥ = h + e (:mod:`phy.csi_error`, model §5.1):
        admission |ĥ_k|² ≥ g_th and ρ rule on ĥ; ĥ = h (and :meth:`admission`'s result) when csi_error = 0."""
        cfg, t = self.config, int(round_index)
        if cfg.csi_error == 0.0:
            h, adm, rho = self.admission(t, clients=clients)
            return h, adm, rho, h
        if cfg.rx_antennas != 1:  # the combiner of the estimates; h, ĥ the effective channels aᴴh_k, aᴴĥ_k
            H, H_hat, a = self.antenna_estimates(t, clients=clients)
            h, h_hat = H @ a.conj(), H_hat @ a.conj()
            return (h, *self._admit(h_hat), h_hat)
        h = self.channel.draw(t, clients=clients)[:, 0]
        return (h, *self._admit_estimate(h, t, clients))

    def antenna_estimates(self, round_index: int, *, clients=None):
        """(H [K, N_r], Ĥ [K, N_r], a [N_r]) of a round with N_r receive antennas and ``csi_error``: the channels,
        their estimates Ĥ = H + E (every antenna's error i.i.d., :func:`phy.csi_error.estimate_channel`) and the
        base station's combiner a = :func:`phy.antennas.centroid_combiner` of Ĥ (model §5.2: it knows only Ĥ)."""
        t = int(round_index)
        H = self.channel.draw_antennas(t, clients=clients)
        H_hat = estimate_channel(H, self.channel.gain(t, clients=clients), csi_error=self.config.csi_error,
                                 seed=self.seed, round_index=t)
        return H, H_hat, centroid_combiner(H_hat)

    def _admit_estimate(self, h0: np.ndarray, t: int, clients):
        """(admitted, ρ, ĥ_0) from block 0's channel h0 [K]: ĥ_0 = h0 + e, admission and ρ on ĥ_0."""
        h_hat = estimate_channel(h0, self.channel.gain(t, clients=clients), csi_error=self.config.csi_error,
                                 seed=self.seed, round_index=t)
        return (*self._admit(h_hat), h_hat)

    def weights(self, round_index: int, *, n_blocks: int, clients=None):
        """(h_0, admitted, ρ, ĥ_0, w [K, B]) of a round whose update spans ``n_blocks`` coherence blocks: the CSIT
        ĥ_0 of block 0 decides admission and ρ for the whole update, and client k's share of entry i is
        w_{k,m(i)} = Re(h_{k,m}/ĥ_{k,0}) (:mod:`phy.csit_aging`, model §5.1); one block: Re(h_k/ĥ_k) of
        :mod:`phy.csi_error`, the same draws as :meth:`admission_estimated`."""
        t = int(round_index)
        if n_blocks == 1:
            h, adm, rho, h_hat = self.admission_estimated(t, clients=clients)
            return h, adm, rho, h_hat, inversion_weights(h, h_hat)[:, None]
        if self.config.rx_antennas != 1:  # block 0's combiner a₀ (of the estimates) kept over the update (model §5.2)
            h_blocks, h_hat = stale_antenna_channels(self, t, n_blocks=n_blocks, clients=clients)
            return (h_blocks[:, 0], *self._admit(h_hat), h_hat, stale_weights(h_blocks, h_hat))
        h_blocks = self.channel.draw(t, clients=clients, n_blocks=n_blocks)  # column 0: the one-block draw
        h = h_blocks[:, 0]
        adm, rho, h_hat = self._admit_estimate(h, t, clients)
        return h, adm, rho, h_hat, stale_weights(h_blocks, h_hat)

    def run_round_from_sum(self, s_sum: np.ndarray, *, h: np.ndarray, admitted: np.ndarray, rho: float,
                           transmit_power: np.ndarray, round_index: int, h_hat=None) -> ChannelInversionRound:
        """:meth:`run_round` from Σ_{admitted} w_k·s_k [d] (streaming; w_k = Re(h_k/ĥ_k), 1 with perfect CSI):
        y = √ρ·Σ_adm w_k s_k + n depends on the s_k only through that sum, so ŝ = y/√ρ is the same bit for bit
        (same keyed noise blocks, same operations)."""
        d, t = s_sum.shape[0], int(round_index)
        if not admitted.any():
            return ChannelInversionRound(np.zeros(d), admitted, rho, h, transmit_power, h_hat)
        sqrt_rho = np.sqrt(rho)
        s_hat = np.empty(d)
        for a, z in chunk_ranges(d, self.config.chunk_size):
            y = fill_block_noise(np.empty(z - a), seed=self.seed, purpose="channel-inversion-noise",
                                 round_index=t, start=a, std=self.noise_std)
            y += sqrt_rho * s_sum[a:z]
            s_hat[a:z] = y / sqrt_rho
        return ChannelInversionRound(s_hat, admitted, rho, h, transmit_power, h_hat)


@dataclass(frozen=True)
class AdmittedSums:
    """Running sums of a channel-inversion round over its chunks (admitted clients, client order).

    rnd : ChannelInversionRound (ŝ from Σ_adm w_k s_k, w_k = Re(h_k/ĥ_k), 1 with perfect CSI); s_sum [d] Σ_adm s_k; raw [d] Σ_adm x_k; mu [K] μ_k;
    scale : R/C (de-normalization).
    """

    rnd: ChannelInversionRound
    s_sum: np.ndarray
    raw: np.ndarray
    mu: np.ndarray
    scale: float


def admitted_sums(link: ChannelInversionLink, chunks, *, d: int, round_index: int, clients=None) -> AdmittedSums:
    """Normalize each chunk (clip rule: per client), keep Σ_adm s_k, Σ_adm x_k and the per-client μ_k and
    transmit powers; memory O(c·d) (model §6.2: the receiver sees the admitted s_k only through their sum)."""
    cfg, K = link.config, link.K
    lengths = analog_block_lengths(d, cfg.coherence_symbols)
    if cfg.csi_error == 0.0 and lengths.size == 1:
        (h, adm, rho, h_hat), w = link.admission_estimated(round_index, clients=clients), None
    else:  # w_{k,m} = Re(h_{k,m}/ĥ_{k,0}): imperfect CSI and channel aging, model §5.1
        h, adm, rho, h_hat, w = link.weights(round_index, n_blocks=lengths.size, clients=clients)
    s_sum, raw, mu, power, scale = np.zeros(d), np.zeros(d), np.empty(K), np.zeros(K), 0.0
    a = link.leakage(round_index) if cfg.timing_offset != 0.0 else None  # chip-timing leakage (phy.chip_timing)
    late = None if a is None else np.zeros(d)  # Σ_adm a_k s_k, received one symbol late
    y_sum = s_sum if w is None and a is None else np.zeros(d)  # what the receiver sees (Σ_adm w_k s_k, Σ (1 − a_k) s_k)
    for rows, x in stream_chunks(chunks, K=K, d=d, finite=False):  # clipped_rows checks, or check_updates below
        local = adm[rows]
        if w is None and a is None and cfg.normalization == "clip":  # the admitted rows one at a time (same numbers)
            cr = clipped_rows(x, C=cfg.norm_bound(d), clip_norm=cfg.clip_norm, rows=np.flatnonzero(local))
            add_clipped_rows(cr, clipped_and_raw(x, cr, s_sum, raw))  # Σ_adm s_k, Σ_adm x_k in client order
            mu[rows], scale = cr.mu, cr.scale
            adm_rows = rows[cr.rows]
            power[adm_rows] = rho * (cr.energy / d) / np.abs(h_hat[adm_rows]) ** 2  # ‖s_k‖² from its factor and norm
            continue
        check_updates(x)
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(d), clip_norm=cfg.clip_norm)
        mu[rows], scale = nz.mu, nz.scale
        if local.any():
            s_adm = nz.s[local]
            power[rows[local]] = rho * (nz.energy[local] / d) / np.abs(h_hat[rows[local]]) ** 2
            add_rows(s_sum, s_adm)
            if w is not None:
                add_weighted_rows(y_sum, s_adm, w[rows[local]], lengths)
            if a is not None:
                add_delayed_rows(y_sum, late, s_adm, a[rows[local]])
            add_rows(raw, x[local])
    if a is not None:
        y_sum = delayed_sum(y_sum, late)
    rnd = link.run_round_from_sum(y_sum, h=h, admitted=adm, rho=rho, transmit_power=power, round_index=round_index,
                                  h_hat=None if w is None else h_hat)
    return AdmittedSums(rnd, s_sum, raw, mu, scale)

