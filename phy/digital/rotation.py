"""Randomized Walsh–Hadamard rotation over the last axis (model §9.2, §9.3).

The rotation of a vector x ∈ R^n (n a power of two) is

    R(x) = H·D·x,     H = H_n / √n (normalized Walsh–Hadamard, symmetric and orthogonal),
                      D = diag(signs), signs ∈ {−1, +1}^n (Rademacher, from a public seed),

and its inverse is R⁻¹(y) = D·H·y (H⁻¹ = Hᵀ = H, D⁻¹ = D). R is orthogonal: ‖R(x)‖₂ = ‖x‖₂.
It spreads the energy of any fixed vector evenly over the coordinates, so a vector of norm c has
coordinates of size about c/√n — what DDGauss's modular clipping and sqSGD's quantizers need.

Pure functions; the fast transform :func:`fwht` costs O(n log n) per vector (the Kronecker factors of
H_n, one small matrix product each, or log2 n butterfly stages for short vectors). Every function acts
on the last axis, so a [K, n] array rotates K client vectors at once.
"""

from __future__ import annotations

import numpy as np

from ..randomness import stream

__all__ = ["padded_dimension", "fwht", "hadamard_factors", "sylvester", "rademacher_signs", "randomized_hadamard", "inverse_randomized_hadamard"]


def padded_dimension(d: int) -> int:
    """d_pad = 2^⌈log2 d⌉, the smallest power of two ≥ d (d ≥ 1)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an integer ≥ 1 (got {d!r})")
    return 1 << (int(d) - 1).bit_length()


#: Transforms at least this long use the factored matrix-product form; shorter ones the butterflies.
FACTORED_MIN_LENGTH = 1 << 12
_FACTOR_BITS = 6  # factors of at most 2^6 = 64: 3·128 flops per coordinate at n = 2^18


def hadamard_factors(n: int) -> tuple[int, ...]:
    """Sizes s_1 ≥ … ≥ s_k (powers of two, at most 2^6 each, as equal as possible) with Π s_i = n.

    H_n = H_{s_1} ⊗ … ⊗ H_{s_k} for the Sylvester matrices (H_n[i, j] = (−1)^popcount(i AND j), and the
    bits of i split into the digits of i in the mixed radix (s_1, …, s_k)).
    """
    m = int(n).bit_length() - 1
    if n < 1 or (1 << m) != n:
        raise ValueError(f"n must be a power of two (got {n})")
    if m == 0:
        return (1,)
    k = -(-m // _FACTOR_BITS)
    base, extra = divmod(m, k)
    return tuple(1 << b for b in [base + 1] * extra + [base] * (k - extra))


_SYLVESTER: dict[int, np.ndarray] = {}


def sylvester(s: int) -> np.ndarray:
    """The s×s Sylvester–Hadamard matrix (entries ±1, float64, read-only, cached); s a power of two."""
    h = _SYLVESTER.get(s)
    if h is None:
        if s < 1 or s & (s - 1):
            raise ValueError(f"s must be a power of two (got {s})")
        h = np.ones((1, 1))
        while h.shape[0] < s:
            h = np.block([[h, h], [h, -h]])
        h.setflags(write=False)
        _SYLVESTER[s] = h
    return h


def _butterflies(y: np.ndarray, out: np.ndarray) -> np.ndarray:
    """log2 n stages of (a, b) → (a + b, a − b) between two buffers; the result lies in one of them."""
    n = y.shape[-1]
    lead = y.shape[:-1]
    h = 1
    while h < n:
        v = y.reshape(lead + (n // (2 * h), 2, h))
        o = out.reshape(v.shape)
        np.add(v[..., 0, :], v[..., 1, :], out=o[..., 0, :])
        np.subtract(v[..., 0, :], v[..., 1, :], out=o[..., 1, :])
        y, out = out, y
        h *= 2
    return y


def _factored_rows(y: np.ndarray, out: np.ndarray) -> np.ndarray:
    """H_n·y_r for every row r by the Kronecker factors of :func:`hadamard_factors`, row by row.

    Row r, viewed as a tensor of shape (s_1, …, s_k), is multiplied by H_{s_i} along each axis i (one
    matrix product per axis, in two scratch vectors of n; the last product writes out[r]). Every row goes
    through the same products of the same shapes whatever the number of rows, so a row's result does not
    depend on which rows share the call (bit for bit), as with the butterflies. ``out`` may be ``y``: row r
    is read only by its first product.
    """
    rows, n = y.shape
    sizes = hadamard_factors(n)
    scratch = (np.empty(n), np.empty(n))
    for r in range(rows):
        src = y[r]
        for i, s in enumerate(sizes):
            dst = out[r] if i == len(sizes) - 1 else scratch[i % 2]
            left = n // s
            right = 1
            for t in sizes[i + 1:]:
                right *= t
            left //= right
            h = sylvester(s)
            if right == 1:  # the last axis: (left, s) @ H_s (symmetric)
                np.matmul(src.reshape(left, s), h, out=dst.reshape(left, s))
            else:  # axis i: H_s @ (left, s, right), batched over left
                np.matmul(h, src.reshape(left, s, right), out=dst.reshape(left, s, right))
            src = dst
    return out


def fwht(x: np.ndarray, *, overwrite: bool = False, work: np.ndarray | None = None, method: str = "auto") -> np.ndarray:
    """Unnormalized fast Walsh–Hadamard transform H_n·x over the last axis (a new float64 array).

    H_n is the Sylvester–Hadamard matrix (entries ±1, H_n² = n·I); n = x.shape[-1] must be a power of
    two. The project's one implementation (DDGauss and sqSGD both rotate with it). For n ≥ 2^12
    (:data:`FACTORED_MIN_LENGTH`) each row is multiplied by the Kronecker factors H_n = ⊗_i H_{s_i},
    s_i ≤ 64 (:func:`hadamard_factors`), one small matrix product per factor: 384 flops per coordinate at
    n = 2^18 in BLAS kernels, against 18 memory-bound butterfly passes (3.8–4.8× faster at d_pad = 2^18,
    `benchmarks/ddgauss_scale.py`, docs/baselines.md). Shorter rows use log2 n butterfly stages
    (a, b) → (a + b, a − b) between two buffers. Both forms compute each row independently of the others
    (a row's result does not depend on the rows beside it, bit for bit); they differ from each other by
    floating-point rounding only (≤ a few ulp of max |H_n·x|).

    ``overwrite``: a C-contiguous float64 ``x`` may be overwritten (its content is destroyed; no copy);
    ``work``: a C-contiguous float64 array of x's shape used as a second buffer (reused buffers avoid the
    page faults of fresh large allocations). The result lies in ``x`` or ``work`` when they were usable.
    ``method``: "auto" (the rule above), "factored" or "butterflies" (either form at any n, for tests and
    `benchmarks/ddgauss_scale.py`).
    """
    if method not in ("auto", "factored", "butterflies"):
        raise ValueError(f"method must be 'auto', 'factored' or 'butterflies' (got {method!r})")
    if overwrite and isinstance(x, np.ndarray) and x.dtype == np.float64 and x.flags.c_contiguous and x.flags.writeable:
        y = x
    else:
        y = np.array(x, dtype=np.float64, copy=True)
    n = y.shape[-1]
    if n < 1 or n & (n - 1):
        raise ValueError(f"the last axis must have a power-of-two length (got {n})")
    if work is not None and work.shape == y.shape and work.dtype == np.float64 and work.flags.c_contiguous and work is not y:
        out = work
    else:
        out = None
    if method == "butterflies" or (method == "auto" and n < FACTORED_MIN_LENGTH):
        return _butterflies(y, np.empty_like(y) if out is None else out)
    rows = y.reshape(-1, n)
    _factored_rows(rows, rows if out is None else out.reshape(-1, n))
    return y if out is None else out


def rademacher_signs(seed: int, purpose: str, *indices: int, n: int) -> np.ndarray:
    """[n] float64 of i.i.d. ±1 from the keyed stream (seed, purpose, *indices) — a public seed."""
    bits = stream(seed, purpose, *indices).integers(0, 2, size=int(n), dtype=np.int8)
    return 1.0 - 2.0 * bits.astype(np.float64)


def _check(x: np.ndarray, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    signs = np.asarray(signs, dtype=np.float64)
    if signs.ndim != 1 or signs.shape[0] != x.shape[-1]:
        raise ValueError(f"signs must be a vector of length {x.shape[-1]} (got shape {signs.shape})")
    if not np.all(np.abs(signs) == 1.0):
        raise ValueError("signs must be ±1")
    return x, signs


def randomized_hadamard(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """R(x) = H·D·x over the last axis, H = H_n/√n, D = diag(signs); orthogonal."""
    x, signs = _check(x, signs)
    y = fwht(x * signs, overwrite=True)  # the product is a fresh buffer: no second copy
    y *= 1.0 / np.sqrt(x.shape[-1])
    return y


def inverse_randomized_hadamard(y: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """R⁻¹(y) = D·H·y over the last axis (the transpose of :func:`randomized_hadamard`)."""
    y, signs = _check(y, signs)
    x = fwht(y)
    x *= signs / np.sqrt(y.shape[-1])
    return x
