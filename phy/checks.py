"""Argument checks shared by the configuration classes: each raises ValueError naming the key and the range."""

from __future__ import annotations

import math

__all__ = ["check_choice", "check_int_at_least", "check_finite_positive", "check_finite_nonnegative", "check_open_unit"]


def _real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {{{', '.join(allowed)}}} (got {value!r})")


def check_int_at_least(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low} (got {value!r})")


def check_finite_positive(name: str, value) -> None:
    if not _real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")


def check_finite_nonnegative(name: str, value) -> None:
    if not _real(value) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number ≥ 0 (got {value!r})")


def check_open_unit(name: str, value) -> None:
    if not _real(value) or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a number with 0 < {name.rsplit('.', 1)[-1]} < 1 (got {value!r})")
