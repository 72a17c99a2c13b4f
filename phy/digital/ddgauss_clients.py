"""DDGauss's client side, one chunk of clients at a time: clip, rotate, round conditionally (model §9.2).

For the chunk's clients k (rows of the K×d updates x, in client order):

    s_k = clip_c(x_k − μ_k·1)        (``clip`` normalization, scale 1)
    u_k = H·D·[s_k, 0] / γ           (randomized Hadamard rotation of the zero-padded vector, grid units)
    ũ_k = ⌊u_k⌋ + Bernoulli(u_k − ⌊u_k⌋), redrawn until ‖ũ_k‖₂ ≤ Δ₂   (conditional rounding)

Rotation and rounding act on the whole chunk ([c, d_pad] arrays, memory O(c·d_pad)); every row's
arithmetic is the same whatever the chunk (row-wise transforms, the row's own keyed uniforms
(seed, "ddgauss-rounding", t, k, attempt) and its own norm), so the integers ũ_k, and every sum
taken over them in client order, do not depend on the chunk size.
"""

from __future__ import annotations

import numpy as np

from ..normalization import normalize
from ..randomness import stream
from .rotation import fwht

__all__ = ["MAX_ROUNDING_ATTEMPTS", "conditional_rounding", "ChunkEncoder"]

MAX_ROUNDING_ATTEMPTS = 1000


def _failed(client: int, round_index: int) -> RuntimeError:
    return RuntimeError(f"conditional rounding failed {MAX_ROUNDING_ATTEMPTS} times (client {client}, round {round_index}): "
                        "phy.ddgauss.beta too small or phy.ddgauss.grid inconsistent with the clip norm")


def _norm2(v: np.ndarray) -> float:
    """‖v‖₂² of one row (einsum: no BLAS threads, the same sum for the row whatever the chunk;
    np.dot measured 15 ms per 2^18-row under load against 0.1 ms)."""
    return float(np.einsum("i,i->", v, v))


def _round_row(base: np.ndarray, frac: np.ndarray, *, bound: float, seed: int, round_index: int, client: int,
               first: int) -> tuple[np.ndarray, int]:
    """Attempts ``first``, ``first`` + 1, … of one row until ‖ũ‖₂ ≤ bound: (ũ float64, attempt)."""
    for attempt in range(first, MAX_ROUNDING_ATTEMPTS):
        v = base + (stream(seed, "ddgauss-rounding", round_index, client, attempt).random(base.shape[-1]) < frac)
        if _norm2(v) <= bound * bound:
            return v, attempt
    raise _failed(client, round_index)


def conditional_rounding(u: np.ndarray, *, bound: float, seed: int, round_index: int, client: int) -> tuple[np.ndarray, int]:
    """Randomized rounding of the scaled vector ``u`` [n] to ℤ^n, redrawn until ‖ũ‖₂ ≤ ``bound``.

    Each coordinate is ⌊u⌋ + Bernoulli(u − ⌊u⌋) (unbiased before conditioning). Returns
    (ũ int64 [n], redraws). Raises RuntimeError after :data:`MAX_ROUNDING_ATTEMPTS` attempts.
    ``bound`` = ∞ (β = 0, unconditional rounding) accepts the first attempt.
    """
    base = np.floor(u)  # integers held exactly in float64 (|u| < 2^53)
    v, attempt = _round_row(base, u - base, bound=bound, seed=seed, round_index=round_index, client=client, first=0)
    return v.astype(np.int64), attempt


class ChunkEncoder:
    """Encodes chunks of up to ``chunk`` clients (module docstring) in four reused [chunk, d_pad] float64
    buffers (128 MB at chunk = 16, d_pad = 2^18), whatever the number of chunks.

    :meth:`encode` returns (ũ [c, d_pad] float64 holding exact integers — a view into a buffer, valid until
    the next call —, μ [c], s [c, d] the clipped, centred rows, redraws). Row i's arithmetic is that of
    :func:`phy.digital.rotation.randomized_hadamard` followed by division by γ and
    :func:`conditional_rounding` of the row (bit for bit: the same operations in the same order).
    """

    def __init__(self, *, chunk: int, d: int, d_pad: int, clip: float, grid: float, bound: float, seed: int):
        self.d, self.clip, self.grid, self.bound, self.seed = int(d), float(clip), float(grid), float(bound), int(seed)
        shape = (int(chunk), int(d_pad))
        self._pad, self._work, self._base, self._draws = (np.empty(shape) for _ in range(4))

    def encode(self, x_rows: np.ndarray, clients, *, signs: np.ndarray, round_index: int):
        nz = normalize(x_rows, rule="clip", C=self.clip, clip_norm=self.clip)  # s_k = clip_c(x_k − μ_k), scale 1
        c, d, n = nz.s.shape[0], self.d, signs.shape[0]
        pad = self._pad[:c]
        pad[:, :d] = nz.s
        pad[:, d:] = 0.0
        np.multiply(pad, signs, out=pad)
        u = fwht(pad, overwrite=True, work=self._work[:c])  # H_n·D·s (in one of the two buffers)
        u *= 1.0 / np.sqrt(n)
        u /= self.grid
        base = np.floor(u, out=self._base[:c])
        frac = np.subtract(u, base, out=u)
        draws = self._draws[:c]
        for i, k in enumerate(clients):
            stream(self.seed, "ddgauss-rounding", int(round_index), int(k), 0).random(out=draws[i])
        np.less(draws, frac, out=draws)
        draws += base  # attempt 0 of every row
        redraws = 0
        for i, k in enumerate(clients):
            if not _norm2(draws[i]) <= self.bound * self.bound:
                draws[i], attempt = _round_row(base[i], frac[i], bound=self.bound, seed=self.seed,
                                               round_index=int(round_index), client=int(k), first=1)
                redraws += attempt
        return draws, nz.mu, nz.s, redraws
