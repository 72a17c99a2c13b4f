"""sqSGD's per-client local accumulation: momentum correction and factor masking (model §9.3; the sqSGD
text's "local accumulation techniques like momentum correction and factor masking similar to [26]", [26] being
Lin et al., Deep Gradient Compression).

Client k holds a momentum u_k and an accumulated vector v_k ([d] float64 each, model units, zero at first
sight). In a round in which k is sampled with local update x_k:

    u_k ← β·u_k + x_k        (momentum correction)
    v_k ← v_k + u_k

and the pipeline privatizes v_k instead of x_k. When k's message is delivered (k admitted), the coordinates I_k
it sent are cleared (factor masking):

    u_k[I_k] ← 0,   v_k[I_k] ← 0,   v_k[j] ← v_k[j] − μ_k for j ∉ I_k,

the last because the clip normalization sends v_k's mean μ_k for every coordinate (model §2): without it the
mean of the unsent coordinates would be delivered again later. A client that is not admitted sends nothing and
keeps its state. With β = 0 this is plain error feedback (the unsent coordinates carried to later rounds).

Where the state lives: a dict keyed by client id, in the memory of the run, holding only the clients seen so far
(2·d floats each: at most min(M, T·K) entries over T rounds of K sampled clients of M).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ClientAccumulators"]


class ClientAccumulators:
    """Momentum u_k and accumulated v_k per client id (module docstring)."""

    def __init__(self, d: int, momentum: float):
        if not 0.0 <= float(momentum) < 1.0:
            raise ValueError(f"sqsgd.momentum must be a number in [0, 1) (got {momentum!r})")
        self.d, self.momentum = int(d), float(momentum)
        self._u: dict[int, np.ndarray] = {}
        self._v: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._v)

    def __contains__(self, client: int) -> bool:
        return int(client) in self._v

    def accumulate(self, clients, x: np.ndarray) -> np.ndarray:
        """[K, d]: v_k after adding this round's updates x ([K, d]) of the clients ``clients`` (K distinct ids)."""
        ids = [int(c) for c in np.asarray(clients).reshape(-1)]
        if len(set(ids)) != len(ids):
            raise ValueError(f"clients must be distinct ids (got {ids})")
        out = np.empty((len(ids), self.d))
        for row, c in enumerate(ids):
            u = self._u.setdefault(c, np.zeros(self.d))
            v = self._v.setdefault(c, np.zeros(self.d))
            u *= self.momentum
            u += x[row]
            v += u
            out[row] = v
        return out

    def mask(self, client: int, coords: np.ndarray, mu: float) -> None:
        """Factor masking after client ``client``'s coordinates ``coords`` and mean μ_k were delivered."""
        u, v = self._u[int(client)], self._v[int(client)]
        v -= mu
        u[coords] = 0.0
        v[coords] = 0.0

    def state(self, client: int) -> tuple[np.ndarray, np.ndarray]:
        """Copies of (u_k, v_k)."""
        return self._u[int(client)].copy(), self._v[int(client)].copy()
