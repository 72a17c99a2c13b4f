"""Fast Walsh–Hadamard transform (SPEC §9.2, §9.3): y = H_n·x in O(n log n), H_n of Sylvester order.

H_1 = [1], H_{2n} = [[H_n, H_n], [H_n, −H_n]]; H_n is symmetric with H_n·H_n = n·I, so
H_n/√n is orthogonal and its own inverse. Unnormalized: the callers scale.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fwht", "next_power_of_two"]


def next_power_of_two(n: int) -> int:
    """The smallest power of two ≥ n (n ≥ 1)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer ≥ 1 (got {n!r})")
    return 1 << (int(n) - 1).bit_length()


def fwht(x: np.ndarray) -> np.ndarray:
    """H_n·x along the last axis (length n a power of two); returns a new float64 array."""
    y = np.array(x, dtype=np.float64, copy=True)
    n = y.shape[-1]
    if n < 1 or n & (n - 1):
        raise ValueError(f"the last axis must have a power-of-two length (got {n})")
    lead = y.shape[:-1]
    h = 1
    while h < n:
        v = y.reshape(*lead, n // (2 * h), 2, h)
        a = v[..., 0, :].copy()
        b = v[..., 1, :]
        v[..., 0, :] += b
        v[..., 1, :] = a - b
        h *= 2
    return y
