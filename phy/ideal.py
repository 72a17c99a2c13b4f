"""Ideal aggregation (model §6.3): noise-free FedAvg with the same normalization, the utility ceiling."""

from __future__ import annotations

import numpy as np

from .aggregation import (AggregationResult, aggregate_concatenated, check_updates, clipped_metrics, noise_metrics,
                          relative_error, stream_chunks)
from .channel_uses import analog_channel_uses
from .config import PhyConfig
from .link_records import LinkRecord
from .normalization import clipped_rows, denormalize, normalize
from .row_pass import add_clipped_rows, clipped_and_raw
from .schemes import SchemeSpec, register_scheme

__all__ = ["IdealAggregator"]


class IdealRecord(LinkRecord):
    @staticmethod
    def detail(s: dict) -> str:
        return "noise-free reference"


class IdealAggregator:
    """ŝ = Σ_k s_k exactly; the nominal cost is an analog sum of the d entries (model §5)."""

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int = 0):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = K, d
        self.channel_uses = analog_channel_uses(d=d, L=config.L, resource=config.resource)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        x = check_updates(updates, K=self.K)
        cfg = self.config
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(x.shape[1]), clip_norm=cfg.clip_norm)
        estimate = denormalize(nz.s.sum(axis=0), nz)
        err = relative_error(estimate, x.sum(axis=0))
        return AggregationResult(estimate, self.K, err, {"channel_uses": float(self.channel_uses), "nmse": err,
                                                         **clipped_metrics(estimate, nz)})

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` from running sums Σ s_k and Σ x_k over the chunks (:mod:`phy.aggregation`, streaming);
        the ``paper`` rule needs C_max over all K first: concatenated."""
        cfg = self.config
        if cfg.normalization != "clip":
            return aggregate_concatenated(self, chunks, round_index=round_index, clients=clients)
        s_sum, raw, mu = np.zeros(self.d), np.zeros(self.d), np.empty(self.K)
        scale = 0.0
        for rows, x in stream_chunks(chunks, K=self.K, d=self.d, finite=False):  # clipped_rows checks
            cr = clipped_rows(x, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
            add_clipped_rows(cr, clipped_and_raw(x, cr, s_sum, raw))  # Σ s_k and Σ x_k in client order
            mu[rows] = cr.mu
            scale = cr.scale  # R/C, the same for every chunk
        estimate = scale * s_sum + float(mu.sum())
        err = relative_error(estimate, raw)
        return AggregationResult(estimate, self.K, err, {"channel_uses": float(self.channel_uses), "nmse": err,
                                                         **noise_metrics(estimate, scale * s_sum + float(mu.sum()))})

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        return self.aggregate(updates, round_index=round_index), None

    def describe(self) -> dict:
        return {"scheme": "ideal", **self.config.to_dict()}


register_scheme(SchemeSpec(
    name="ideal", aggregator=lambda config, *, K, d, seed, key, relation: IdealAggregator(config, K=K, d=d, seed=seed),
    link_record=IdealRecord, example={}, description="noise-free FedAvg with the same normalization (model §6.3)", channel="none",
))
