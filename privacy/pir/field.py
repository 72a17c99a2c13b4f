"""Prime-field arithmetic F_q for the submodel-PIR scheme (model §9.6), pure numpy int64.

Elements are int64 arrays with entries in [0, q). Products of two elements are < q² < 2^62 for
q < 2^31, so every elementwise operation is exact in int64; matrix products reduce after each
block of inner terms small enough not to overflow. Fields with q ≥ 2^31 serve cost accounting
only (symbol size log2 q); arithmetic on them raises.

:class:`PrimeField` counts the field multiplications it performs (``mults``) so the scheme's
computation can be reported as counted, not estimated.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["is_prime", "largest_prime_below", "prime_for_bits", "PrimeField", "ARITHMETIC_MAX_BITS"]

ARITHMETIC_MAX_BITS = 31
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3·10^24


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for n < 3.3·10^24 (bases 2..37)."""
    n = int(n)
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def largest_prime_below(bound: int) -> int:
    """The largest prime p < bound (bound ≥ 3)."""
    if bound < 3:
        raise ValueError(f"bound must be ≥ 3 (got {bound})")
    p = bound - 1
    while not is_prime(p):
        p -= 1
    return p


def prime_for_bits(bits: int) -> int:
    """q = the largest prime below 2^bits, bits ∈ [2, 62] (so a symbol fits in ``bits`` bits)."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 2 <= int(bits) <= 62:
        raise ValueError(f"field-bits must be an integer in [2, 62] (got {bits!r})")
    return largest_prime_below(2 ** int(bits))


class PrimeField:
    """F_q with q prime; arithmetic needs q < 2^31. ``mults`` counts field multiplications."""

    def __init__(self, q: int):
        q = int(q)
        if not is_prime(q):
            raise ValueError(f"field size q must be prime (got {q})")
        self.q = q
        self.mults = 0
        self._chunk = max(1, (2**63 - 1) // max(1, (q - 1) ** 2))  # inner terms per exact int64 sum

    @property
    def symbol_bits(self) -> float:
        """log2 q [bits per symbol]."""
        return math.log2(self.q)

    def _check_arith(self) -> None:
        if self.q >= 2**ARITHMETIC_MAX_BITS:
            raise ValueError(f"field arithmetic needs q < 2^{ARITHMETIC_MAX_BITS} (q = {self.q}); "
                             f"use field-bits ≤ {ARITHMETIC_MAX_BITS} for simulation")

    def array(self, x) -> np.ndarray:
        self._check_arith()
        return np.mod(np.asarray(x, dtype=np.int64), self.q)

    def random(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Uniform elements of F_q (int64) of the given shape."""
        self._check_arith()
        return rng.integers(0, self.q, size=shape, dtype=np.int64)

    def add(self, a, b) -> np.ndarray:
        return np.mod(np.asarray(a, np.int64) + np.asarray(b, np.int64), self.q)

    def sub(self, a, b) -> np.ndarray:
        return np.mod(np.asarray(a, np.int64) - np.asarray(b, np.int64), self.q)

    def mul(self, a, b) -> np.ndarray:
        """Elementwise product (counted: one multiplication per output element)."""
        out = np.mod(np.asarray(a, np.int64) * np.asarray(b, np.int64), self.q)
        self.mults += int(out.size)
        return out

    def outer(self, a, b) -> np.ndarray:
        """a bᵀ for vectors a [m], b [n] → [m, n] (m·n multiplications)."""
        return self.mul(np.asarray(a, np.int64)[:, None], np.asarray(b, np.int64)[None, :])

    def matmul(self, A, B) -> np.ndarray:
        """A [m, k] @ B [k, n] (or B [k]) mod q, exact; counts m·k·n multiplications."""
        A = np.asarray(A, np.int64)
        B = np.asarray(B, np.int64)
        vec = B.ndim == 1
        B2 = B[:, None] if vec else B
        m, k = A.shape
        out = np.zeros((m, B2.shape[1]), dtype=np.int64)
        for lo in range(0, k, self._chunk):
            hi = min(k, lo + self._chunk)
            out = np.mod(out + A[:, lo:hi] @ B2[lo:hi], self.q)
        self.mults += m * k * B2.shape[1]
        return out[:, 0] if vec else out

    def inv_scalar(self, a: int) -> int:
        a = int(a) % self.q
        if a == 0:
            raise ZeroDivisionError("0 has no inverse in F_q")
        return pow(a, self.q - 2, self.q)

    def inverse(self, M) -> np.ndarray:
        """Inverse of a square matrix over F_q by Gauss–Jordan elimination (not counted: the code's
        inverse is computed once and reused by every client)."""
        M = self.array(M)
        n = M.shape[0]
        if M.shape != (n, n):
            raise ValueError(f"matrix must be square (got {M.shape})")
        A = np.concatenate([M, np.eye(n, dtype=np.int64)], axis=1)
        for col in range(n):
            nz = np.nonzero(A[col:, col])[0]
            if nz.size == 0:
                raise ValueError("matrix is singular over F_q")
            piv = col + int(nz[0])
            if piv != col:
                A[[col, piv]] = A[[piv, col]]
            A[col] = np.mod(A[col] * self.inv_scalar(A[col, col]), self.q)
            f = A[:, col].copy()
            f[col] = 0
            A = np.mod(A - np.mod(f[:, None] * A[col][None, :], self.q), self.q)
        return A[:, n:]
