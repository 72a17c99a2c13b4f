"""Rényi orders: the one check every RDP curve applies to its ``orders`` argument (model §7.2)."""

from __future__ import annotations

import numpy as np

__all__ = ["check_orders"]


def check_orders(orders) -> np.ndarray:
    """Return ``orders`` as a 1-D float64 array; raise ValueError unless every order is finite and > 1."""
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D sequence of numbers > 1 (got shape {a.shape})")
    bad = ~np.isfinite(a) | (a <= 1.0)
    if np.any(bad):
        raise ValueError(f"orders must be finite numbers > 1 (got {a[bad][0]!r})")
    return a
