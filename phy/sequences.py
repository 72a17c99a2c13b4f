"""Spreading-sequence sets (model §3).

A set is the matrix A = [a_1 … a_N] ∈ R^{L×N} (float64, dimensionless) of N unique unit-norm
columns. FLORAS needs orthonormal columns, AᵀA = I_N, which requires N ≤ L.

Families
--------
``walsh-hadamard``
    The first N columns of the Sylvester Hadamard matrix of order L, scaled by 1/√L
    (L a power of two).
``random-orthonormal``
    Q of the QR factorization of an L×N standard Gaussian matrix drawn from the keyed stream
    ``(seed, "sequences-random-orthonormal")``, with the signs fixed by diag(R) so that the
    set is Haar distributed.
``pn``
    Non-orthogonal ±1/√L pseudo-noise columns drawn from the keyed stream
    ``(seed, "sequences-pn")`` (duplicates redrawn, so the N columns are unique). N may
    exceed L. With this family the FLORAS ratio estimator is biased (cross-correlation of the
    sequences); the simulator reports it (see :func:`orthogonality_defect`) rather than refuse.

The set A is public: the base station knows it (model §4).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import hadamard

from .randomness import stream

__all__ = [
    "FAMILIES",
    "ORTHONORMAL_FAMILIES",
    "walsh_hadamard",
    "random_orthonormal",
    "pseudo_noise",
    "make_sequences",
    "orthogonality_defect",
    "is_orthonormal",
]

FAMILIES = ("walsh-hadamard", "random-orthonormal", "pn")
ORTHONORMAL_FAMILIES = ("walsh-hadamard", "random-orthonormal")


def _check_dims(L: int, N: int, *, orthonormal: bool) -> None:
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L must be an integer ≥ 1 (got {L!r})")
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"N must be an integer ≥ 1 (got {N!r})")
    if orthonormal and N > L:
        raise ValueError(f"N must be ≤ L = {L} for orthonormal sequences (got N = {N})")


def walsh_hadamard(*, L: int, N: int) -> np.ndarray:
    """First N columns of the Sylvester Hadamard matrix H_L, divided by √L.

    Returns
    -------
    A : [L, N] float64 with entries ±1/√L and AᵀA = I_N.
    """
    _check_dims(L, N, orthonormal=True)
    if L & (L - 1):
        raise ValueError(f"L must be a power of two for Walsh–Hadamard sequences (got {L})")
    return hadamard(int(L), dtype=np.float64)[:, : int(N)] / np.sqrt(L)


def random_orthonormal(*, L: int, N: int, seed: int) -> np.ndarray:
    """Haar-random L×N matrix with orthonormal columns (QR of a keyed Gaussian matrix).

    Returns
    -------
    A : [L, N] float64, AᵀA = I_N up to rounding.
    """
    _check_dims(L, N, orthonormal=True)
    g = stream(seed, "sequences-random-orthonormal", L, N).standard_normal((int(L), int(N)))
    q, r = np.linalg.qr(g)
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs


def pseudo_noise(*, L: int, N: int, seed: int) -> np.ndarray:
    """N unique ±1/√L pseudo-noise columns of length L (non-orthogonal in general).

    Returns
    -------
    A : [L, N] float64, every column of unit norm, columns pairwise distinct.
    """
    _check_dims(L, N, orthonormal=False)
    if N > 2**L:
        raise ValueError(f"N must be ≤ 2**L = {2**L} for unique ±1 sequences of length L = {L} (got {N})")
    rng = stream(seed, "sequences-pn", L, N)
    cols: list[np.ndarray] = []
    seen: set[bytes] = set()
    while len(cols) < N:
        c = rng.integers(0, 2, size=int(L), dtype=np.int8)
        tag = c.tobytes()
        if tag in seen:
            continue
        seen.add(tag)
        cols.append(c)
    bits = np.stack(cols, axis=1).astype(np.float64)
    return (2.0 * bits - 1.0) / np.sqrt(L)


def make_sequences(family: str, *, L: int, N: int, seed: int = 0) -> np.ndarray:
    """The [L, N] float64 sequence matrix of ``family`` ∈ :data:`FAMILIES` (model §3)."""
    if family == "walsh-hadamard":
        return walsh_hadamard(L=L, N=N)
    if family == "random-orthonormal":
        return random_orthonormal(L=L, N=N, seed=seed)
    if family == "pn":
        return pseudo_noise(L=L, N=N, seed=seed)
    raise ValueError(f"sequences must be one of {{{', '.join(FAMILIES)}}} (got {family!r})")


def orthogonality_defect(A: np.ndarray) -> float:
    """max_{j,l} |(AᵀA − I)_{jl}|: 0 for an orthonormal set, the worst cross-correlation otherwise."""
    A = np.asarray(A, dtype=np.float64)
    return float(np.max(np.abs(A.T @ A - np.eye(A.shape[1]))))


def is_orthonormal(A: np.ndarray, *, tol: float = 1e-10) -> bool:
    """True when AᵀA = I within ``tol`` (entrywise)."""
    return orthogonality_defect(A) <= tol
