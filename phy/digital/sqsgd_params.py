"""``[phy.sqsgd]``: the sqSGD scheme's parameters and their validation (model §9.3, docs/sqsgd.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..checks import check_choice, check_finite_positive, check_int_at_least

__all__ = ["SQ_ESTIMATORS", "SQ_NORM_BOUNDS", "SQ_MECHANISMS", "SqsgdParams"]

SQ_ESTIMATORS = ("unbiased", "sparse")  # server estimators (model §9.3)
SQ_NORM_BOUNDS = ("fixed", "adaptive")  # quantization bound: U = C, or the ScalarDP-refined U_t
SQ_MECHANISMS = ("privquant", "pm")  # the client's privatizer: sqSGD's PrivQuant, or the piecewise mechanism


@dataclass(frozen=True)
class SqsgdParams:
    """``[phy.sqsgd]`` (model §9.3).

    - ``levels`` K_q ≥ 2 quantization levels; ``ratio`` r ∈ (0, 1] (d̃ = ⌊r·d⌋ ≥ 1); ``epsilon0`` ε₀ > 0, the
      per-round LDP budget of the update; ``kappa`` κ (an integer in [−n, n − 1], n the padded rotation length;
      None → the κ that maximizes m); ``estimator`` ("unbiased": scaled by d/d̃; "sparse": the source's).
    - ``norm_bound``: "fixed" (U = C) or "adaptive" (each client reports the ℓ∞ norm of its rotated vector by
      ScalarDP with budget ``epsilon_s`` > 0 on ``norm_levels`` k ≥ 1 steps of [0, C]; the server's next bound
      is U_{t+1} = min(U_t, max(max_k Z_k, C/k))). ε_s is spent, and accounted, only when "adaptive".
    - ``accumulation``: local accumulation with momentum correction (coefficient ``momentum`` β ∈ [0, 1)) and
      factor masking, per client id; needs estimator = "sparse" (every coordinate is delivered eventually).
    - ``mechanism``: "privquant" (sqSGD) or "pm" (the piecewise mechanism of the source's baselines, on s/C,
      ⌊ε₀/2.5⌋ coordinates; ``levels``, ``ratio`` and ``estimator`` do not apply to it).
    """

    levels: int = 2
    ratio: float = 1.0
    epsilon0: float = 1.0
    kappa: int | None = None
    estimator: str = "unbiased"
    norm_bound: str = "fixed"
    epsilon_s: float = 1.0
    norm_levels: int = 32
    accumulation: bool = False
    momentum: float = 0.0
    mechanism: str = "privquant"

    moved_from: ClassVar[dict] = {"sq_levels": "levels", "sq_ratio": "ratio", "epsilon0": "epsilon0", "kappa": "kappa",
                                  "sq_estimator": "estimator"}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        check_int_at_least("sqsgd.levels", self.levels, 2)
        if isinstance(self.ratio, bool) or not isinstance(self.ratio, (int, float)) \
                or not math.isfinite(self.ratio) or not 0 < self.ratio <= 1:
            raise ValueError(f"sqsgd.ratio must be a number in (0, 1] (got {self.ratio!r})")
        check_finite_positive("sqsgd.epsilon0", self.epsilon0)
        if self.kappa is not None and (isinstance(self.kappa, bool) or not isinstance(self.kappa, int)):
            raise ValueError(f"sqsgd.kappa must be an integer or unset (got {self.kappa!r})")
        check_choice("sqsgd.estimator", self.estimator, SQ_ESTIMATORS)
        check_choice("sqsgd.norm_bound", self.norm_bound, SQ_NORM_BOUNDS)
        check_finite_positive("sqsgd.epsilon_s", self.epsilon_s)
        check_int_at_least("sqsgd.norm_levels", self.norm_levels, 1)
        if not isinstance(self.accumulation, bool):
            raise ValueError(f"sqsgd.accumulation must be true or false (got {self.accumulation!r})")
        if isinstance(self.momentum, bool) or not isinstance(self.momentum, (int, float)) \
                or not math.isfinite(self.momentum) or not 0 <= self.momentum < 1:
            raise ValueError(f"sqsgd.momentum must be a number in [0, 1) (got {self.momentum!r})")
        check_choice("sqsgd.mechanism", self.mechanism, SQ_MECHANISMS)
        if not active:
            return
        self._check_combination()
        if d is None:
            return
        d_tilde = math.floor(self.ratio * d)
        if d_tilde < 1:
            raise ValueError(f"sqsgd.ratio must be ≥ 1/d = {1 / d:.3g} so that d̃ = ⌊r·d⌋ ≥ 1 (got {self.ratio!r})")
        n = 1 << (d_tilde - 1).bit_length()
        if self.kappa is not None and not -n <= self.kappa <= n - 1:
            raise ValueError(f"sqsgd.kappa must be an integer in [{-n}, {n - 1}] for the padded length n = {n} (got {self.kappa})")

    def _check_combination(self) -> None:
        """Options that exclude one another (checked for the configured scheme only)."""
        if self.accumulation and self.estimator != "sparse":
            raise ValueError("sqsgd.accumulation = true carries the unsent coordinates to later rounds, so every "
                             "coordinate is delivered eventually and the d/d̃ scaling of estimator = \"unbiased\" would "
                             "count it d/d̃ times: set sqsgd.estimator = \"sparse\"")
        if self.mechanism == "pm":
            for key, value, default in (("norm_bound", self.norm_bound, "fixed"), ("accumulation", self.accumulation, False),
                                        ("kappa", self.kappa, None)):
                if value != default:
                    raise ValueError(f"sqsgd.{key} = {value!r} applies to mechanism = \"privquant\" only; with "
                                     f"sqsgd.mechanism = \"pm\" leave sqsgd.{key} at {default!r}")

    @property
    def adaptive(self) -> bool:
        return self.norm_bound == "adaptive"

    @property
    def round_epsilon(self) -> float:
        """Pure LDP budget of one client's report of one round: ε₀, plus ε_s with the adaptive bound."""
        return float(self.epsilon0) + (float(self.epsilon_s) if self.adaptive else 0.0)
