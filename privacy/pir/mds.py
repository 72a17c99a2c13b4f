"""Non-systematic (n, n) MDS code for the exclusive data (source §II; model §9.6).

The message M (n symbols) is encoded as c = G·M with G the n×n Vandermonde matrix
G[j, i] = x_j^i on the distinct points x_j = j ∈ F_q, j = 0..n−1 (so q ≥ n is required;
G is invertible because the points are distinct). The codeword is cut into N consecutive parts,
c_1, ..., c_N, of ⌈n/N⌉ or ⌊n/N⌋ symbols (``numpy.array_split``): database i stores only c_i,
and all N parts together decode M = G⁻¹·c. An (n, n) code is MDS trivially (any n of its n
symbols determine M); "non-systematic" means no part is a plain copy of message symbols.
"""

from __future__ import annotations

import numpy as np

from .field import PrimeField, prime_for_bits

__all__ = ["vandermonde", "check_field_fits", "SplitMDSCode"]


def check_field_fits(q: int, n: int, *, what: str) -> None:
    """ValueError unless q ≥ n (n distinct evaluation points exist in F_q)."""
    if q < n:
        bits = next(b for b in range(2, 63) if prime_for_bits(b) >= n)
        raise ValueError(f"field too small for the {what}: q = {q} < {n} distinct points needed; "
                         f"use field-bits ≥ {bits}")


def vandermonde(field: PrimeField, n: int) -> np.ndarray:
    """G [n, n] int64, G[j, i] = j^i mod q (requires q ≥ n)."""
    check_field_fits(field.q, n, what=f"({n}, {n}) MDS code")
    G = np.ones((n, n), dtype=np.int64)
    x = np.arange(n, dtype=np.int64) % field.q
    for i in range(1, n):
        G[:, i] = np.mod(G[:, i - 1] * x, field.q)
    return G


class SplitMDSCode:
    """Encode n symbols with the Vandermonde code and split them over N databases."""

    def __init__(self, field: PrimeField, n: int, N: int):
        self.field = field
        self.n = int(n)
        self.N = int(N)
        self.G = vandermonde(field, self.n)
        self._G_inv = None

    @property
    def part_sizes(self) -> list[int]:
        return [len(p) for p in np.array_split(np.arange(self.n), self.N)]

    def encode(self, message: np.ndarray) -> list[np.ndarray]:
        """[n] message → N parts (n² multiplications, counted by the field)."""
        message = np.asarray(message, np.int64)
        if message.shape != (self.n,):
            raise ValueError(f"message must have shape ({self.n},) (got {message.shape})")
        return [p.copy() for p in np.array_split(self.field.matmul(self.G, message), self.N)]

    def decode(self, parts: list[np.ndarray]) -> np.ndarray:
        """N parts → [n] message (n² multiplications; G⁻¹ computed once, not counted)."""
        if len(parts) != self.N:
            raise ValueError(f"need all {self.N} parts (got {len(parts)})")
        if self._G_inv is None:
            self._G_inv = self.field.inverse(self.G)
        return self.field.matmul(self._G_inv, np.concatenate(parts))
