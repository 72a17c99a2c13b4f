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
from .rotation import randomized_hadamard

__all__ = ["MAX_ROUNDING_ATTEMPTS", "conditional_rounding", "conditional_rounding_rows", "ClientChunk", "encode_chunk"]

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


def conditional_rounding_rows(u: np.ndarray, *, bound: float, seed: int, round_index: int, clients) -> tuple[np.ndarray, int]:
    """:func:`conditional_rounding` of every row of ``u`` [c, n] (row i is client ``clients[i]``), bit for bit
    the same integers: the first attempt of every row at once, the rare redraws row by row.
    Returns (ũ int64 [c, n], total redraws)."""
    base = np.floor(u)
    frac = u - base
    draws = np.empty_like(u)
    for i, k in enumerate(clients):
        stream(seed, "ddgauss-rounding", round_index, int(k), 0).random(out=draws[i])
    np.less(draws, frac, out=draws)
    draws += base  # attempt 0 of every row
    redraws = 0
    for i, k in enumerate(clients):
        row = draws[i]
        if not _norm2(row) <= bound * bound:
            draws[i], attempt = _round_row(base[i], frac[i], bound=bound, seed=seed, round_index=round_index,
                                           client=int(k), first=1)
            redraws += attempt
    return draws.astype(np.int64), redraws


class ClientChunk:
    """One encoded chunk: ``ints`` ũ [c, d_pad] int64, ``mu`` [c], ``s`` [c, d] the clipped, centred
    vectors (model units, scale 1), ``redraws`` (conditional-rounding redraws of the chunk)."""

    __slots__ = ("ints", "mu", "s", "redraws")

    def __init__(self, ints, mu, s, redraws):
        self.ints, self.mu, self.s, self.redraws = ints, mu, s, redraws


def encode_chunk(x_rows: np.ndarray, clients, *, clip: float, signs: np.ndarray, grid: float, bound: float,
                 seed: int, round_index: int) -> ClientChunk:
    """Clip, rotate and conditionally round the rows ``x_rows`` [c, d] of clients ``clients`` (module docstring)."""
    nz = normalize(x_rows, rule="clip", C=clip, clip_norm=clip)  # s_k = clip_c(x_k − μ_k), scale 1
    c, d = nz.s.shape
    padded = np.zeros((c, signs.shape[0]))
    padded[:, :d] = nz.s
    u = randomized_hadamard(padded, signs)
    del padded
    u /= grid
    ints, redraws = conditional_rounding_rows(u, bound=bound, seed=seed, round_index=round_index, clients=clients)
    return ClientChunk(ints, nz.mu, nz.s, redraws)
