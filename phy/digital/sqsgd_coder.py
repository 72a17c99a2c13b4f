"""sqSGD's per-client encoder and server decoder for one round, in reused buffers (model §9.3).

:class:`SqsgdCoder` computes, for one admitted client k of round t, what the reference functions of
:mod:`phy.digital.sqsgd` compute (:func:`~phy.digital.sqsgd.client_coordinates`,
:func:`~phy.digital.sqsgd.client_signs`, :func:`~phy.digital.sqsgd.sqsgd_rotated`,
:func:`~phy.digital.sqsgd.sqsgd_privatize`, :func:`~phy.digital.sqsgd.sqsgd_decode` added to the server's sum),
with the same operations in the same order on the same keyed streams, so the same numbers bit for bit
(tests/test_sqsgd_coder.py): the client's message u_k and the server's running sum ŝ. What differs is where the
intermediate vectors live:

- the padded, rotated, clipped and quantized n-vectors stay in a few [n] buffers of the coder instead of ten fresh
  arrays per client (the Hadamard transform works in place, :func:`phy.digital.rotation.fwht` ``overwrite``);
- the decoded d̃ values are added at their coordinates, ŝ[I_k] += x̃_k, instead of scattered into a zero [d]
  vector that is then added whole (the other d − d̃ entries would each gain +0.0, which leaves them unchanged);
- with r = 1 (d̃ = d) the coordinate set is every index, {0, …, d − 1}, whatever the draw: the coder does not draw
  it (the draw from the stream (seed, "sqsgd-coordinates", t, k) is the only use of that stream, so nothing else
  moves) and works on whole vectors instead of gathers and scatters;
- the level checks of :func:`~phy.digital.privquant.privquant` are skipped: the levels come from the quantizer,
  which yields indices in [0, K_q − 1] by construction; and (v + o) mod K_q, with v ∈ [0, K_q − 1] and the offset
  o ∈ [1, K_q − 1], is v + o less K_q where v + o ≥ K_q (a bit mask when K_q is a power of two): the same integers
  without a division per entry.

Units: s_k in transmit-amplitude units (√W) with ‖s_k‖₂ ≤ U (model §2); u_k level indices; ŝ in √W.
"""

from __future__ import annotations

import math

import numpy as np

from ..randomness import stream
from .privquant import _agreement_cdf
from .rotation import fwht

__all__ = ["SqsgdCoder"]


class SqsgdCoder:
    """One round's sqSGD encoder and decoder (module text). ``seed``: the run's public seed; ``d``, ``d_tilde``,
    ``n``: the update's, the subsampled and the padded rotation length; ``levels``: K_q; ``epsilon0``, ``kappa``:
    PrivQuant's ε₀ and cap; ``m``: its unbiasing constant; ``grid``: the round's K_q levels."""

    def __init__(self, *, seed: int, round_index: int, d: int, d_tilde: int, n: int, levels: int, epsilon0: float,
                 kappa: int, m: float, grid: np.ndarray):
        self.seed, self.t = int(seed), int(round_index)
        self.d, self.d_tilde, self.n, self.levels = int(d), int(d_tilde), int(n), int(levels)
        self.epsilon0, self.kappa, self.m, self.grid = float(epsilon0), int(kappa), float(m), grid
        self.full = self.d_tilde == self.d
        self.cdf = _agreement_cdf(self.n, self.levels, self.epsilon0, self.kappa)
        self.root_n = math.sqrt(self.n)
        self.a, self.b = np.empty(self.n), np.empty(self.n)  # the n-vectors and the transform's second buffer
        self.low = np.empty(self.n)
        self.levels_v = np.empty(self.n, dtype=np.int64)

    def coordinates(self, k: int):
        """I_k: every index (a slice) when d̃ = d, else :func:`~phy.digital.sqsgd.client_coordinates`'s draw."""
        if self.full:
            return slice(None)
        from .sqsgd import client_coordinates  # the module imports this one

        return client_coordinates(self.seed, self.t, k, d=self.d, d_tilde=self.d_tilde)

    def signs(self, k: int) -> np.ndarray:
        """A's diagonal, :func:`~phy.digital.sqsgd.client_signs`."""
        from .sqsgd import client_signs

        return client_signs(self.seed, self.t, k, n=self.n)

    def rotated(self, s: np.ndarray, coords, signs: np.ndarray, radius: float) -> np.ndarray:
        """y = R·pad(P_radius(s[I])) [n] (:func:`~phy.digital.sqsgd.sqsgd_rotated`), in a buffer of the coder
        (valid until the next call)."""
        x, dt = self.a, self.d_tilde
        head = x[:dt]
        head[...] = s[coords]
        x[dt:] = 0.0
        sq = np.multiply(head, head, out=self.b[:dt])
        norm = float(np.sqrt(np.add.reduce(sq)))
        if norm > radius:
            head *= radius / norm
        x *= signs
        y = fwht(x, overwrite=True, work=self.b)
        y /= self.root_n
        return y

    def privatize(self, y: np.ndarray, bound: float, *, k: int) -> np.ndarray:
        """u_k [n] int64 from y (:func:`~phy.digital.sqsgd.sqsgd_privatize`: clip, unbiased rounding, PrivQuant on
        the streams (seed, "sqsgd-quantize", t, k) and (seed, "sqsgd-privquant", t, k)); y is overwritten."""
        L = self.levels
        pos = np.clip(y, -bound, bound, out=y)
        pos += bound
        pos *= (L - 1) / (2.0 * bound)
        low = np.floor(pos, out=self.low)
        np.minimum(low, L - 2, out=low)
        pos -= low  # the fraction above the lower level
        low += stream(self.seed, "sqsgd-quantize", self.t, k).random(self.n) < pos
        v = self.levels_v
        np.copyto(v, low, casting="unsafe")
        rng = stream(self.seed, "sqsgd-privquant", self.t, k)
        a = min(int(np.searchsorted(self.cdf, rng.random(1)[0] * self.cdf[-1], side="right")), self.n)
        u = rng.integers(1, L, size=self.n)
        u += v  # in [1, 2K_q − 2]: (v + o) mod K_q is one subtraction of K_q, or a mask when K_q is a power of two
        if L & (L - 1) == 0:
            np.bitwise_and(u, L - 1, out=u)
        else:
            np.subtract(u, L, out=u, where=u >= L)
        keep = rng.permutation(self.n)[:a]
        u[keep] = v[keep]
        return u

    def add_decoded(self, s_hat: np.ndarray, u: np.ndarray, coords, signs: np.ndarray, grid: np.ndarray) -> None:
        """ŝ[I_k] += (A·H_n·B_{u}/(m·√n))[:d̃] (:func:`~phy.digital.sqsgd.sqsgd_decode`, added in place)."""
        z = np.take(grid, u, out=self.a)
        z /= self.m
        x = fwht(z, overwrite=True, work=self.b)
        np.multiply(signs, x, out=x)
        x /= self.root_n
        if self.full:
            s_hat += x[: self.d]
        else:
            s_hat[coords] += x[: self.d_tilde]
