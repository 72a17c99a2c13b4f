"""Truncated channel inversion, the source's baseline (model §6.2), behind the aggregation interface.

The link — truncation at g_th, the ρ rules, imperfect CSI, channel aging, chip-timing offsets, receive antennas and
the receiver noise per aggregated symbol — is :mod:`phy.inversion_link` (its names are re-exported here). The
aggregator normalizes the K updates (model §6.3), runs the link on their admitted sum (streamed chunk by chunk for the
clip rule: :func:`phy.inversion_link.admitted_sums`), and de-normalizes with the admitted clients' means: x̂ =
scale·ŝ + Σ_adm μ_k estimates Σ_adm x_k. K' = 0: nothing is received, the round leaves the model unchanged and is
logged (diagnostic ``skipped`` = 1).
"""

from __future__ import annotations

import numpy as np

from .aggregation import (AggregationResult, aggregate_concatenated, check_updates, clipped_metrics, noise_metrics,
                          relative_error)
from .channel_uses import analog_channel_uses
from .config import SNR_DEFINITION, PhyConfig
from .csit_blocks import aggregate_per_block, per_block_csit
from .inversion_link import (AdmittedSums, ChannelInversionLink, ChannelInversionRound, admitted_mask, admitted_sums,
                             inversion_factor, receiver_noise_variance)
from .link_records import AdmissionRecord
from .normalization import denormalize, normalize
from .schemes import SchemeSpec, register_scheme

__all__ = ["admitted_mask", "inversion_factor", "receiver_noise_variance", "ChannelInversionRound",
           "ChannelInversionLink", "ChannelInversionAggregator", "AdmittedSums", "admitted_sums"]


class ChannelInversionAggregator:
    """Channel inversion behind the aggregation interface.

    x̂ = scale·ŝ + Σ_{admitted} μ_k estimates Σ_{admitted} x_k; contributors = K'. Diagnostics:
    ``admitted`` (K'), ``rho``, ``skipped`` (1 when K' = 0), ``max_power_ratio`` (max over
    admitted of transmit power / P) and ``nmse`` (= error, relative to the admitted sum).
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.link = ChannelInversionLink(config, K=K, seed=seed)
        self.per_block = per_block_csit(self.config, self.d)  # CSIT and admission per coherence block (model §5.1)

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        """(AggregationResult, ChannelInversionRound) of one round (``clients``: identities, None: 0..K−1);
        with per-block CSIT (:mod:`phy.csit_blocks`) the trace is its :class:`phy.csit_blocks.BlockRound`."""
        x = check_updates(updates, K=self.K, d=self.d)
        cfg = self.config
        if self.per_block:
            res, trace = aggregate_per_block(self.link, [(np.arange(self.K), x)], K=self.K, d=self.d,
                                             round_index=round_index, clients=clients)
            res.diagnostics["channel_uses"] = float(analog_channel_uses(d=self.d, L=cfg.L, resource=cfg.resource))
            return res, trace
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
        rnd = self.link.run_round(nz.s, round_index=round_index, clients=clients, energy=nz.energy)
        adm = rnd.admitted
        k_adm = int(adm.sum())
        if k_adm == 0:
            estimate = np.zeros(self.d)
        else:
            estimate = denormalize(rnd.s_hat, nz, mu_sum=float(nz.mu[adm].sum()))
        err = relative_error(estimate, x[adm].sum(axis=0))
        return AggregationResult(estimate, k_adm, err, self._diagnostics(rnd, err, clipped_metrics(estimate, nz, adm))), rnd

    def _diagnostics(self, rnd: ChannelInversionRound, err: float, metrics: dict) -> dict:
        cfg, k_adm = self.config, int(rnd.admitted.sum())
        return {
            "admitted": float(k_adm),
            "rho": rnd.rho,
            "skipped": float(k_adm == 0),
            "max_power_ratio": float(rnd.transmit_power.max() / cfg.power),
            "nmse": err,
            "channel_uses": float(analog_channel_uses(d=self.d, L=cfg.L, resource=cfg.resource)),
            **metrics,
        }

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        return self.aggregate_traced(updates, round_index=round_index, clients=clients)[0]

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` from the admitted running sums (:func:`admitted_sums`); ``paper`` needs C_max over
        all K first: concatenated."""
        cfg = self.config
        if cfg.normalization != "clip":
            return aggregate_concatenated(self, chunks, round_index=round_index, clients=clients)
        if self.per_block:
            res, _ = aggregate_per_block(self.link, chunks, K=self.K, d=self.d, round_index=round_index, clients=clients)
            res.diagnostics["channel_uses"] = float(analog_channel_uses(d=self.d, L=cfg.L, resource=cfg.resource))
            return res
        sums = admitted_sums(self.link, chunks, d=self.d, round_index=round_index, clients=clients)
        rnd, adm = sums.rnd, sums.rnd.admitted
        k_adm = int(adm.sum())
        mu_adm = float(sums.mu[adm].sum())
        estimate = np.zeros(self.d) if k_adm == 0 else sums.scale * rnd.s_hat + mu_adm
        err = relative_error(estimate, sums.raw)
        return AggregationResult(estimate, k_adm, err,
                                 self._diagnostics(rnd, err, noise_metrics(estimate, sums.scale * sums.s_sum + mu_adm)))

    def describe(self) -> dict:
        return {
            "scheme": "channel-inversion",
            **self.config.to_dict(),
            "snr_definition": SNR_DEFINITION,
            "resource_convention": self.config.resource,
            "receiver_noise_variance": receiver_noise_variance(self.config),
            **self.link.channel.describe(),
        }


register_scheme(SchemeSpec(
    name="channel-inversion",
    aggregator=lambda config, *, K, d, seed, key, relation: ChannelInversionAggregator(config, K=K, d=d, seed=seed),
    link_record=AdmissionRecord, example={"snr_db": 0.0}, description="truncated channel inversion, the analog AirComp baseline (model §6.2)",
    channel="cell-coherence", rx_antennas=True, chip_timing=True, antennas_with=("coherence_symbols", "timing_offset"),
))
