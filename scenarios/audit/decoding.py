"""Per-client decoding by a curious base station (model §7.1 T2, §7.5).

For each sequence j the base station forms v_j = b·r_j^i / r_j^s (all d data slots). For the
sequence of an active client k (orthonormal set, model §6.1)

    v_j − s_k = (b·n_i − s_k·n_s) / (g_k·b + n_s),   n_i ~ N(0, (σ²/L)·I_d), n_s ~ N(0, σ²/L),

so the normalized error NMSE_k = ‖v_j − s_k‖² / ‖s_k‖² (derived) is a ratio with a Gaussian
denominator: it has no finite mean (E[1/(g b + n_s)²] = ∞), and deep fades give occasional
huge errors. The audit therefore reports the **median** NMSE over (client, round) pairs as
``decoding_nmse``, with quantiles and the fraction of clients decoded to within NMSE 0.1 and 1.
"""

from __future__ import annotations

import numpy as np

from .signals import BaseStationView, RoundTruth

__all__ = ["client_nmse", "summarize_nmse"]


def client_nmse(view: BaseStationView, truth: RoundTruth) -> np.ndarray:
    """NMSE_k = ‖v_{π(k)} − s_k‖² / ‖s_k‖² for every client k, [K] float64 (inf for a zero s_k)."""
    v = view.decodes()[truth.active]
    num = np.sum((v - truth.s) ** 2, axis=1)
    den = np.sum(truth.s**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.inf)


def summarize_nmse(values) -> dict:
    """Median (the reported ``decoding_nmse``), quantiles and success fractions of NMSE samples."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        raise ValueError("need at least one NMSE sample")
    q = np.quantile(v, [0.1, 0.25, 0.5, 0.75, 0.9])
    return {
        "median": float(q[2]),
        "quantiles": {"0.1": float(q[0]), "0.25": float(q[1]), "0.5": float(q[2]), "0.75": float(q[3]), "0.9": float(q[4])},
        "fraction_below_0.1": float(np.mean(v < 0.1)),
        "fraction_below_1": float(np.mean(v < 1.0)),
        "samples": int(v.size),
        "statistic": "median over (client, round) pairs; the mean does not exist (ratio with a Gaussian denominator)",
    }
