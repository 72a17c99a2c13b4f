"""The base-station FLORAS receiver (model §6.1 step 4).

The receiver knows the public sequence matrix A ∈ R^{L×N} and the reference amplitude
b = √P, and it is handed received signals (chip level) or despread outputs (fast path). It is
never given the clients' key nor the permutation π_t (model §4): its constructor and methods
have no parameter for them, and it works from A and y alone.

For every j ∈ {0..N−1} it despreads with a_j (r_j = a_jᵀ y) and forms the ratio estimator

    ŝ^i = b · Σ_{j=0}^{N−1} r_j^i / r_j^s,

where r^s is the despread reference slot. Inactive sequences contribute b·z_{j,i}/w_j
(Cauchy noise with shared denominators, model §6.1).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Receiver"]


class Receiver:
    """Despreading and ratio estimation at the base station.

    Parameters
    ----------
    A : [L, N] float64
        Public sequence matrix.
    reference_amplitude : float
        b = √P [√W], the known amplitude of the reference slot.
    """

    def __init__(self, A: np.ndarray, *, reference_amplitude: float):
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2:
            raise ValueError(f"A must be an L×N matrix (got shape {A.shape})")
        if not (np.isfinite(reference_amplitude) and reference_amplitude > 0):
            raise ValueError(f"reference_amplitude must be a finite number > 0 (got {reference_amplitude})")
        self.A = A
        self._AT = np.ascontiguousarray(A.T)  # contiguous Aᵀ: much faster small GEMMs than a transposed view
        self.b = float(reference_amplitude)

    @property
    def N(self) -> int:
        return self.A.shape[1]

    @property
    def L(self) -> int:
        return self.A.shape[0]

    def despread(self, y: np.ndarray) -> np.ndarray:
        """r = Aᵀ y: [L] → [N] or [L, c] → [N, c] (float64)."""
        y = np.asarray(y, dtype=np.float64)
        if y.shape[0] != self.L:
            raise ValueError(f"received signal must have L = {self.L} rows (got shape {y.shape})")
        return self._AT @ y

    def weights(self, r_ref: np.ndarray) -> np.ndarray:
        """c_j = b / r_j^s, [N] float64, from the despread reference slot r^s [N]."""
        r_ref = np.asarray(r_ref, dtype=np.float64)
        if r_ref.shape != (self.N,):
            raise ValueError(f"despread reference must have shape ({self.N},) (got {r_ref.shape})")
        return self.b / r_ref

    @staticmethod
    def combine(weights: np.ndarray, r_data: np.ndarray) -> np.ndarray:
        """ŝ = Σ_j c_j r_j^i: weights [N], despread data [N, c] → [c] float64."""
        return np.asarray(weights) @ np.asarray(r_data)

    def estimate_despread(self, r_ref: np.ndarray, r_data: np.ndarray) -> np.ndarray:
        """ŝ [c] from despread outputs r^s [N] and r^{1..c} [N, c]."""
        return self.combine(self.weights(r_ref), r_data)

    def estimate(self, y_ref: np.ndarray, y_data: np.ndarray) -> np.ndarray:
        """ŝ [c] from received chips: reference y_s [L] and data slots y [L, c]."""
        return self.estimate_despread(self.despread(y_ref), self.despread(y_data))
