"""The worked example of docs/extending.md, physical layer: "local-gaussian" aggregation.

Every client adds its own Gaussian noise N(0, σ_l²·I) [√W] to its normalized vector s_k and the sum
arrives error-free (an ideal digital link), so ŝ = Σ_k (s_k + n_k) and the noise of the sum has
variance K·σ_l² per entry. Channel uses: the nominal analog cost d·L, as for ideal aggregation.
Registered only by the tests (``import example_scheme``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phy.aggregation import AggregationResult, check_updates, clipped_metrics, relative_error
from phy.blocks import fill_block_noise
from phy.checks import check_finite_nonnegative
from phy.link_records import LinkRecord
from phy.normalization import denormalize, normalize
from phy.schemes import SchemeSpec, register_scheme


@dataclass(frozen=True)
class LocalGaussianParams:
    """``[phy.local-gaussian]``: ``local_std`` σ_l ≥ 0, each client's noise std [√W, units of s_k]."""

    local_std: float = 0.0

    def check(self, phy, *, K, d, active):
        check_finite_nonnegative("local-gaussian.local_std", self.local_std)


class LocalGaussianAggregator:
    def __init__(self, config, *, K, d, seed):
        self.config = config.validate(K=K, d=d)
        self.K, self.d, self.seed = K, d, seed
        self.local_std = float(config.of("local-gaussian").local_std)

    def aggregate_traced(self, updates, *, round_index, clients=None):
        x = check_updates(updates, K=self.K, d=self.d)
        cfg = self.config
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
        noise = fill_block_noise(np.empty((self.K, self.d)), seed=self.seed, purpose="local-gaussian-noise",
                                 round_index=round_index, start=0, std=self.local_std)  # row k: client k's noise
        s_hat = (nz.s + noise).sum(axis=0)
        estimate = denormalize(s_hat, nz)
        err = relative_error(estimate, x.sum(axis=0))
        diag = {"channel_uses": float(self.d * cfg.L), "nmse": err, "noise_std_sum": self.local_std * np.sqrt(self.K),
                **clipped_metrics(estimate, nz)}
        return AggregationResult(estimate, self.K, err, diag), None

    def aggregate(self, updates, *, round_index, clients=None):
        return self.aggregate_traced(updates, round_index=round_index)[0]

    def describe(self):
        return {"scheme": "local-gaussian", **self.config.to_dict()}


SCHEME = register_scheme(SchemeSpec(
    name="local-gaussian",
    aggregator=lambda config, *, K, d, seed, key, relation: LocalGaussianAggregator(config, K=K, d=d, seed=seed),
    link_record=LinkRecord, params=LocalGaussianParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "local-gaussian": {"local_std": 0.1}},
    description="each client adds N(0, local_std^2) before an error-free sum (worked example)",
), replace=True)
