"""Central Gaussian aggregation: DP-FedAvg with a trusted server (model §9.1).

Ideal aggregation of the clip-normalized vectors plus server-side Gaussian noise, in the units of
the estimate of Σ s_k (‖s_k‖₂ ≤ C, model §2):

    ŝ = Σ_{k=1}^{K} s_k + n,   n ~ N(0, σ_c²·I_d),   σ_c = z·S,

with z the noise multiplier and S the ℓ2 sensitivity of Σ_k s_k: S = 2C when one client's
vector is replaced (relation "replace"), C when it is added or removed ("add-remove").
De-normalization (clip rule) gives x̂ = (R/C)·ŝ + Σ_k μ_k, so the noise std in model units is
z·S·R/C = 2zR or zR. Threat model: the server is trusted and only its outputs are released; the
utility ceiling at a given ε.

Channel uses (choice, a nominal cost): the link is idealized (error-free, every client
contributes), so the round is charged what an analog over-the-air sum of the d entries costs,
d·L (equal resource) or d (source-literal), as for channel inversion (model §5).

Noise is drawn in logical blocks keyed by (seed, "central-gaussian-noise", round, block)
(:mod:`phy.blocks`), so results do not depend on ``chunk_size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .aggregation import (AggregationResult, aggregate_concatenated, check_updates, clipped_metrics, noise_metrics, relative_error,
                          stream_chunks)
from .blocks import chunk_ranges, fill_block_noise
from .channel_uses import analog_channel_uses
from .checks import check_finite_nonnegative
from .config import PhyConfig
from .normalization import clipped_rows, denormalize, normalize
from .row_pass import add_clipped_rows, clipped_and_raw
from .link_records import BaselineRecord, fmt
from .randomness import check_seed
from .schemes import SchemeSpec, register_scheme

__all__ = ["RELATIONS", "sum_sensitivity", "CentralGaussianParams", "CentralGaussianAggregator"]

RELATIONS = ("replace", "add-remove")


def sum_sensitivity(C: float, relation: str) -> float:
    """ℓ2 sensitivity of Σ_k s_k with ‖s_k‖₂ ≤ C: 2C ("replace") or C ("add-remove") (model §9.1)."""
    if relation == "replace":
        return 2.0 * float(C)
    if relation == "add-remove":
        return float(C)
    raise ValueError(f"relation must be one of {{{', '.join(RELATIONS)}}} (got {relation!r})")


@dataclass(frozen=True)
class CentralGaussianParams:
    """``[phy.central-gaussian]``: z ≥ 0, the noise multiplier: the total noise std of the estimate of
    Σ s_k is z·S, S = 2C (replace-one) or C (add/remove), the run's ``[privacy] relation`` (model §9.1)."""

    noise_multiplier: float | None = None

    scheme_name: ClassVar[str] = "central-gaussian"
    moved_from: ClassVar[dict] = {"noise_multiplier": "noise_multiplier"}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        name = f"{self.scheme_name}.noise_multiplier"
        if self.noise_multiplier is not None:
            check_finite_nonnegative(name, self.noise_multiplier)
        elif active:
            raise ValueError(f"{name} must be set (a finite number ≥ 0) for scheme {self.scheme_name!r}")


class CentralGaussianAggregator:
    """Ideal sum + N(0, (z·S)²·I) in ŝ units; contributors K. Diagnostics: ``noise_std`` (ŝ units),
    ``channel_uses`` and ``nmse``."""

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int, relation: str = "replace"):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.seed = check_seed(seed)
        self.relation = relation
        self.C = config.norm_bound(self.d)
        self.sensitivity = sum_sensitivity(self.C, relation)
        self.noise_std = float(config.of("central-gaussian").noise_multiplier) * self.sensitivity
        self.channel_uses = analog_channel_uses(d=self.d, L=config.L, resource=config.resource)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        x = check_updates(updates, K=self.K, d=self.d)
        cfg, t = self.config, int(round_index)
        nz = normalize(x, rule=cfg.normalization, C=self.C, clip_norm=cfg.clip_norm)
        s_hat = np.empty(self.d)
        for a, z in chunk_ranges(self.d, cfg.chunk_size):
            fill_block_noise(s_hat[a:z], seed=self.seed, purpose="central-gaussian-noise", round_index=t,
                             start=a, std=self.noise_std)
            s_hat[a:z] += nz.s[:, a:z].sum(axis=0)
        estimate = denormalize(s_hat, nz)
        err = relative_error(estimate, x.sum(axis=0))
        return AggregationResult(estimate, self.K, err, {"noise_std": self.noise_std,
                                                         "channel_uses": float(self.channel_uses), "nmse": err,
                                                         **clipped_metrics(estimate, nz)})

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` from running sums Σ s_k (clipped) and Σ x_k over the chunks (clip rule only)."""
        cfg, t = self.config, int(round_index)
        if cfg.normalization != "clip":  # the scheme requires clip (SchemeSpec.requires_clip); C_max needs all K
            return aggregate_concatenated(self, chunks, round_index=round_index, clients=clients)
        s_sum, raw, mu = np.zeros(self.d), np.zeros(self.d), np.empty(self.K)
        for rows, x in stream_chunks(chunks, K=self.K, d=self.d, finite=False):  # clipped_rows checks
            cr = clipped_rows(x, C=self.C, clip_norm=cfg.clip_norm)
            add_clipped_rows(cr, clipped_and_raw(x, cr, s_sum, raw))  # Σ s_k and Σ x_k in client order
            mu[rows] = cr.mu
            scale = cr.scale  # R/C, the same for every chunk
        s_hat = np.empty(self.d)
        for a, z in chunk_ranges(self.d, cfg.chunk_size):
            fill_block_noise(s_hat[a:z], seed=self.seed, purpose="central-gaussian-noise", round_index=t,
                             start=a, std=self.noise_std)
            s_hat[a:z] += s_sum[a:z]
        estimate = scale * s_hat + float(mu.sum())
        err = relative_error(estimate, raw)
        return AggregationResult(estimate, self.K, err, {"noise_std": self.noise_std,
                                                         "channel_uses": float(self.channel_uses), "nmse": err,
                                                         **noise_metrics(estimate, scale * s_sum + float(mu.sum()))})

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        return self.aggregate(updates, round_index=round_index), None

    def describe(self) -> dict:
        return {
            "scheme": "central-gaussian", **self.config.to_dict(), "relation": self.relation,
            "sensitivity": self.sensitivity, "noise_std": self.noise_std,
            "noise_std_model_units": self.noise_std * float(self.config.clip_norm) / self.C,
            "threat_model": "trusted server; outputs only",
            "channel_uses_convention": "nominal analog cost d*L (equal resource) or d (source-literal); the link is ideal",
        }


class CentralGaussianRecord(BaselineRecord):
    diagnostics = ("noise_std",)

    @staticmethod
    def detail(s: dict) -> str:
        return f"noise std={fmt(s.get('diagnostics_mean', {}).get('noise_std'))} (s units) threat: {s.get('threat_model')}"


register_scheme(SchemeSpec(
    name="central-gaussian",
    aggregator=lambda config, *, K, d, seed, key, relation: CentralGaussianAggregator(config, K=K, d=d, seed=seed, relation=relation),
    link_record=CentralGaussianRecord, params=CentralGaussianParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "central-gaussian": {"noise_multiplier": 0.5}},
    description="DP-FedAvg: ideal sum plus server-side Gaussian noise, trusted server (model §9.1)", channel="none",
))
