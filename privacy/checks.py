"""Input checks shared by the run accountants and the mechanisms (model §7.4): one place for K, M, δ,
the level, the neighbouring relation, the sampling and the accountant."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["finite_number", "check_run_arguments"]


def finite_number(name: str, value, *, positive: bool) -> float:
    """``value`` as a float; ValueError unless finite and > 0 (``positive``) or ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not math.isfinite(value) or (
        value <= 0 if positive else value < 0
    ):
        raise ValueError(f"{name} must be a finite number {'> 0' if positive else '≥ 0'} (got {value!r})")
    return float(value)


def check_run_arguments(*, K, M, level: str, relation: str, sampling: str, delta, conversion: str,
                        accountant: str) -> tuple[int, int, float]:
    """Validate the arguments every run accountant takes; return (K, M, δ) normalized."""
    from privacy.engines import ACCOUNTANTS
    from privacy.rdp import CONVERSIONS
    from privacy.report import SAMPLINGS, choice, int_at_least
    from privacy.sensitivity import LEVELS, RELATIONS

    K, M = int_at_least("K", K, 1), int_at_least("M", M, 1)
    if K > M:
        raise ValueError(f"K must be ≤ M (got K = {K} > M = {M})")
    choice("level", level, LEVELS)
    choice("relation", relation, RELATIONS)
    choice("sampling", sampling, SAMPLINGS)
    choice("conversion", conversion, CONVERSIONS)
    choice("accountant", accountant, ACCOUNTANTS)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
    return K, M, float(delta)
