"""Transmit-side normalization and server-side de-normalization (SPEC §2).

Two rules:

``paper``
    μ_k = mean of the d entries of x_k; C_max = max_k ‖x_k − μ_k·1‖₂ over the K scheduled
    clients; s_k = C·(x_k − μ_k·1)/C_max, so ‖s_k‖₂ ≤ C. De-normalization:
    x̂ = (C_max/C)·ŝ + (Σ_k μ_k)·1. C_max depends on every scheduled client's data: the
    sensitivity of SPEC §7 holds only if C_max is treated as public (listed by the
    privacy report).
``clip``
    A fixed public clip norm R: s_k = (C/R)·clip_R(x_k − μ_k·1), clip_R(v) = v·min(1, R/‖v‖₂).
    De-normalization: x̂ = (R/C)·ŝ + (Σ_k μ_k)·1. μ_k is sent on the control channel and is
    released unprotected.

Units: x_k is in model units; s_k is in transmit-amplitude units (√W) with ‖s_k‖₂ ≤ C and
per-symbol average power ‖s_k‖²/d ≤ P when C = √(d·P) (the default, SPEC §2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NORMALIZATIONS", "Normalized", "normalize", "denormalize"]

NORMALIZATIONS = ("paper", "clip")


@dataclass(frozen=True)
class Normalized:
    """Normalized transmit vectors and the side information sent on the control channel.

    Attributes
    ----------
    s : [K, d] float64
        Normalized vectors s_k, ‖s_k‖₂ ≤ C.
    mu : [K] float64
        Per-client means μ_k (model units).
    scale : float
        Factor that maps ŝ back to model units: C_max/C (``paper``) or R/C (``clip``).
        0 when every centred update is zero (nothing to transmit).
    """

    s: np.ndarray
    mu: np.ndarray
    scale: float


def normalize(x: np.ndarray, *, rule: str, C: float, clip_norm: float | None = None) -> Normalized:
    """Normalize the K×d updates ``x`` by ``rule`` ∈ {"paper", "clip"} to norm bound ``C``."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"updates must be a K×d array with K ≥ 1, d ≥ 1 (got shape {x.shape})")
    if not np.all(np.isfinite(x)):
        raise ValueError("updates must be finite")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0 (got {C})")
    mu = x.mean(axis=1)
    centred = x - mu[:, None]
    # row by row: the same pairwise sums as np.linalg.norm(centred, axis=1) without a K×d temporary
    norms = np.sqrt(np.array([np.add.reduce(row * row) for row in centred]))
    if rule == "paper":
        c_max = float(norms.max())
        if c_max == 0.0:
            return Normalized(np.zeros_like(x), mu, 0.0)
        centred *= C / c_max  # in place: the centred copy becomes s (one K×d buffer, not two)
        return Normalized(centred, mu, c_max / C)
    if rule == "clip":
        if clip_norm is None or not (np.isfinite(clip_norm) and clip_norm > 0):
            raise ValueError(f"clip_norm must be a finite number > 0 for rule 'clip' (got {clip_norm})")
        factor = np.minimum(1.0, clip_norm / np.maximum(norms, np.finfo(float).tiny))
        centred *= (factor * (C / clip_norm))[:, None]  # in place, as above
        return Normalized(centred, mu, clip_norm / C)
    raise ValueError(f"normalization must be one of {NORMALIZATIONS} (got {rule!r})")


def denormalize(s_hat: np.ndarray, normalized: Normalized, *, mu_sum: float | None = None) -> np.ndarray:
    """x̂ = scale·ŝ + (Σ μ_k)·1 (SPEC §2). ``mu_sum`` overrides Σ_k μ_k (e.g. admitted clients only)."""
    total_mu = float(normalized.mu.sum()) if mu_sum is None else float(mu_sum)
    return normalized.scale * np.asarray(s_hat, dtype=np.float64) + total_mu
