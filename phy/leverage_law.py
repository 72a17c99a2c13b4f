"""Independent draws of a scheduled client's exposure K′·ℓ to a base station that keeps every antenna (model §5.2,
"A sampled T2 bound"): the law a sampled accountant needs when the base station does not learn who was sampled.

One draw is one round of the analog link of model §5.2 without a cell: K scheduled clients with i.i.d. CN(0, 1)
channels to N_r antennas (Rician with a line of sight steered at a uniform azimuth with ``rician_k``), the centroid combiner a of all K, admission |aᴴh_k|² ≥ g_th, and for the client in row 0
(rows are exchangeable, so a uniformly chosen one) x = K′·ℓ_0 if it is admitted (ℓ_0 its leverage with the combiner
it inverts, :func:`phy.antennas.client_leverage`) and 0 if not. With imperfect CSI (σ_e² per antenna, model §5.1) the
combiner is the estimates' and the clients admit on and invert aᴴĥ_k. 0 ≤ x ≤ K′ ≤ K. The draws are i.i.d. across rounds
(the keyed stream ``(seed, "t2-leverage-law", batch)``), as the binomial counts of
:func:`privacy.gaussian_mixture.band_law` require.
"""

from __future__ import annotations

import numpy as np

from phy.antennas import centroid_combiners
from phy.randomness import stream

__all__ = ["BATCH", "exposure_draws"]

#: rounds per vectorised batch (one stream each)
BATCH = 4096


def _batch_exposure(h: np.ndarray, g_th: float, h_hat: np.ndarray | None = None) -> np.ndarray:
    """x [B] for channels h [B, K, N_r]: K′·ℓ of row 0 with the centroid combiner of all K rows, 0 unless admitted;
    ``h_hat`` the estimates (imperfect CSI): the combiner theirs, admission on and inversion of aᴴĥ_k."""
    est = h if h_hat is None else h_hat
    a = centroid_combiners(est)  # its phase rotates every g_k alike: ℓ does not depend on it
    heff = np.einsum("bkr,br->bk", est, a.conj())
    adm = np.abs(heff) ** 2 >= g_th
    g = np.where(adm[:, :, None], h / np.where(adm, heff, 1.0)[:, :, None], 0.0)
    G = np.concatenate([g.real, g.imag], axis=2)  # [B, K, 2N_r], the dropped rows zero
    uu, sv, _ = np.linalg.svd(G, full_matrices=False)
    keep = sv > sv[:, :1] * max(G.shape[1], G.shape[2]) * np.finfo(np.float64).eps  # client_leverage's rank rule
    lev0 = np.einsum("bj,bj->b", uu[:, 0, :] ** 2, keep)
    return np.where(adm[:, 0], adm.sum(axis=1) * lev0, 0.0)


def exposure_draws(*, K: int, n_rx: int, g_th: float, draws: int, seed: int, csi_error: float = 0.0,
                   rician_k: float = 0.0) -> np.ndarray:
    """``draws`` i.i.d. values of x = K′·ℓ_R (module docstring) [draws] float64, in [0, K]; ``csi_error`` σ_e² > 0:
    every antenna's channel estimated with a CN(0, σ_e²) error (drawn after the channels from the batch's stream);
    ``rician_k`` κ > 0: Rician channels √(κ/(κ+1))·steer(θ) + √(1/(κ+1))·h̃ with each slot's line of sight at an azimuth
    θ ~ U(0, 2π) drawn last (model §5.2, "Rician fading with several antennas"; a client's common phase cancels in its
    row h_k/aᴴĥ_k and in the combiner, :func:`phy.csi_law.rician`)."""
    K, n_rx, draws = int(K), int(n_rx), int(draws)
    if K < 1 or n_rx < 1 or draws < 1 or not g_th >= 0.0 or not (0.0 <= csi_error < np.inf) \
            or not (0.0 <= rician_k < np.inf):
        raise ValueError(f"K, n_rx and draws must be ≥ 1, g_th ≥ 0, csi_error and rician_k finite ≥ 0 (got {K!r}, "
                         f"{n_rx!r}, {draws!r}, {g_th!r}, {csi_error!r}, {rician_k!r})")
    out = np.empty(draws)
    for b, start in enumerate(range(0, draws, BATCH)):
        n = min(BATCH, draws - start)
        rng = stream(int(seed), "t2-leverage-law", b)
        h = (rng.standard_normal((n, K, n_rx)) + 1j * rng.standard_normal((n, K, n_rx))) / np.sqrt(2.0)
        e = None
        if csi_error > 0.0:
            e = rng.standard_normal((n, K, n_rx)) + 1j * rng.standard_normal((n, K, n_rx))
        if rician_k > 0.0:
            from phy.csi_law import rician, steering

            h = rician(h, float(rician_k), los=steering(rng.random((n, K)), n_rx))
        h_hat = None if e is None else h + np.sqrt(csi_error / 2.0) * e
        out[start:start + n] = _batch_exposure(h, float(g_th), h_hat)
    return np.clip(out, 0.0, float(K))
