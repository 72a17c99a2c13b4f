"""Receive antennas N_r ≥ 1 at the base station: combiners and their noise laws (model §5.2).

Channel (:meth:`phy.link_channel.LinkChannel.draw_antennas`): h_k ∈ C^{N_r}, h_{k,r} = √β_eff,k·h̃_{k,r},
h̃_{k,r} ~ CN(0, 1) i.i.d. over clients and antennas; the receiver noise is i.i.d. over antennas, real
variance σ²/L per antenna and aggregated symbol (model §5).

Channel inversion / analog Gaussian (one stream, model §6.2 with a receive combiner): the base station
applies a unit-norm combiner a ∈ C^{N_r}, ‖a‖ = 1, and client k inverts the effective scalar channel
h_eff,k = aᴴh_k (truncation |aᴴh_k|² ≥ g_th). The real part of the combined signal is

    Re{aᴴy} = √ρ·Σ_{k admitted} s_k + Re{aᴴn},   Var Re{aᴴn} = ‖a‖²·σ²/L = σ²/L  [W],

so the noise per aggregated symbol is that of one antenna and the antennas act through the admission and
ρ = min |aᴴh_k|² ("min-admitted"). Combiner: the Grassmannian centroid of the clients' channel directions
(Zhu & Huang, "MIMO over-the-air computation for high-mobility multi-modal sensing", 2019, the closed-form
approximation of the max-min problem max_{‖a‖=1} min_k |aᴴh_k|², which has the form of multicast
beamforming): a = the principal eigenvector of Σ_k u_k u_kᴴ, u_k = h_k/‖h_k‖, over all K scheduled
clients. For N_r = 1, |aᴴh_k| = |h_k|: the link of model §6.2.

FLORAS (model §6.1 with per-antenna despreading, AᵀA = I): antenna r despreads its own chips,
r_{j,r}^i = g_{k,r}·s_k^i·[j = π(k)] + n_{j,r}^i, pilots r_{j,r}^s = g_{k,r}·b·[j = π(k)] + m_{j,r}, noise
N(0, σ²/L) i.i.d. over (j, r, slot); g_{k,r} = Re(h_{k,r}). The receiver combines each sequence's antennas
by maximum ratio on its pilots (the least-squares estimate of s from ĝ_{j,r} = r_{j,r}^s/b):

    ŝ_j^i = b·Σ_r r_{j,r}^s·r_{j,r}^i / Σ_r (r_{j,r}^s)²,   ŝ^i = Σ_j ŝ_j^i = Σ_{j,r} c_{j,r}·r_{j,r}^i,
    c_{j,r} = b·r_{j,r}^s / Σ_{r'} (r_{j,r'}^s)²

(N_r = 1: c_j = b/r_j^s, the ratio of model §6.1). Given the pilots, ŝ^i = Σ_k u_k·s_k^i + ν^i with
u_k = Σ_r c_{π(k),r}·g_{k,r} and ν^i ~ N(0, (σ²/L)·Σ_{j,r} c_{j,r}²) = N(0, (σ²/L)·b²·Σ_j 1/Σ_r (r_{j,r}^s)²)
i.i.d. The inactive-sequence noise in (ŝ/b)² units has conditional variance

    V = (σ²/L)·Σ_{j∈I} 1/Σ_r (r_{j,r}^s)² = Σ_{j∈I} 1/χ²_j,   χ²_j = Σ_r w_{j,r}², w ~ N(0, 1),

so each inactive sequence adds z_j/‖w_j‖ = t_{N_r}/√N_r (a Student-t with N_r degrees of freedom scaled by
1/√N_r; Cauchy for N_r = 1), E[1/χ²_{N_r}] = 1/(N_r − 2) for N_r > 2: the Lévy law of model §6.1 no longer holds.
"""

from __future__ import annotations

import numpy as np

__all__ = ["centroid_combiner", "centroid_combiners", "effective_channel", "effective_blocks", "block_leverage", "mrc_weights", "antenna_conditional_variance", "client_leverage"]


def centroid_combiner(h: np.ndarray) -> np.ndarray:
    """a [N_r] complex128, ‖a‖ = 1: the principal eigenvector of Σ_k u_k u_kᴴ, u_k = h_k/‖h_k‖ (h [K, N_r]).

    The phase of a is fixed so that its first nonzero entry is real and positive (a is defined up to a phase;
    |aᴴh_k| does not depend on it).
    """
    h = np.asarray(h, dtype=np.complex128)
    if h.ndim != 2:
        raise ValueError(f"h must be a K×N_r array (got shape {h.shape})")
    norms = np.linalg.norm(h, axis=1)
    u = h[norms > 0] / norms[norms > 0, None]
    if u.shape[0] == 0:
        a = np.zeros(h.shape[1], dtype=np.complex128)
        a[0] = 1.0
        return a
    _, vecs = np.linalg.eigh(u.T @ u.conj())  # Σ_k u_k u_kᴴ (Hermitian), eigenvalues ascending
    a = vecs[:, -1]
    lead = a[np.flatnonzero(np.abs(a) > 0)[0]]
    return a * (abs(lead) / lead) / np.linalg.norm(a)


def centroid_combiners(h: np.ndarray) -> np.ndarray:
    """a [n, N_r] complex128: :func:`centroid_combiner` of each of n rounds h [n, K, N_r] at once (batched eigh), each
    up to a phase (|aᴴh_k| and ratios aᴴh_k/aᴴĥ_k do not depend on it)."""
    norms = np.linalg.norm(h, axis=2, keepdims=True)
    u = h / np.where(norms > 0, norms, 1.0)
    return np.linalg.eigh(np.einsum("nkr,nks->nrs", u, u.conj()))[1][:, :, -1]  # Σ_k u_k u_kᴴ, ascending eigenvalues


def effective_channel(h: np.ndarray) -> np.ndarray:
    """h_eff [K] complex128 = aᴴh_k with a = :func:`centroid_combiner` (h [K, N_r]); N_r = 1: h[:, 0] itself."""
    h = np.asarray(h, dtype=np.complex128)
    if h.shape[1] == 1:
        return h[:, 0].copy()
    return h @ centroid_combiner(h).conj()


def effective_blocks(h: np.ndarray, columns: np.ndarray, h_hat: np.ndarray | None = None):
    """(h_eff [K, B], ĥ_eff [K, B]) complex128 of an update over B coherence blocks to N_r antennas (model §5.2,
    "Antennas over coherence blocks"): block j is combined with a_c, c = ``columns[j]`` its CSIT block, a_c =
    :func:`centroid_combiner` of the CSIT Ĥ[:, c, :] (``h_hat`` [K, B, N_r], the estimates; None: h itself, perfect
    CSI), so h_eff[:, j] = h[:, j, :]·a_c* and ĥ_eff[:, j] = Ĥ[:, c, :]·a_c*; a block that is its own CSIT
    (c = j) with perfect CSI has ĥ_eff = h_eff. With N_r = 1 the combiner is 1: h[:, :, 0] and Ĥ[:, columns, 0]."""
    h = np.asarray(h, dtype=np.complex128)
    if h.ndim != 3:
        raise ValueError(f"h must be a K×B×N_r array (got shape {h.shape})")
    cols = np.asarray(columns, dtype=np.int64)
    est = h if h_hat is None else np.asarray(h_hat, dtype=np.complex128)
    used = np.unique(cols)
    a = np.ones((h.shape[1], h.shape[2]), dtype=np.complex128)  # a_c for every CSIT block c (rows not used stay 1)
    if h.shape[2] > 1:
        a[used] = centroid_combiners(np.transpose(est[:, used, :], (1, 0, 2)))
    h_eff = np.einsum("kbr,br->kb", h, a[cols].conj())
    if h_hat is None:  # perfect CSI: block j's CSIT is block c's own effective channel
        return h_eff, h_eff[:, cols]
    return h_eff, np.einsum("kbr,br->kb", est[:, cols, :], a[cols].conj())


def client_leverage(h: np.ndarray, *, combiner: np.ndarray | None = None, inverted: np.ndarray | None = None) -> np.ndarray:
    """ℓ [K′] ∈ [0, 1]: how far a base station that keeps every antenna's signal separates each admitted client from
    the others' artificial noise, for inverting clients (h [K′, N_r] their channels, model §5.2).

    Client k sends (√ρ/aᴴh_k)·(s_k + ν_k), ν_k ~ N(0, v·I), so one received symbol is Σ_k g_k·(s_k + ν_k)^i + n^i with
    g_k = √ρ·h_k/(aᴴh_k) ∈ C^{N_r}, a real vector of R^{2N_r} (real and imaginary parts). Without receiver noise the
    base station sees client k's update through a Gaussian mechanism of noise variance v/ℓ_k per symbol (the
    Mahalanobis norm g_kᵀ(v·GᵀG)⁺g_k, derived), ℓ_k = g_kᵀ(GᵀG)⁺g_k the leverage of row k of G [K′, 2N_r]
    (ρ cancels). Σ_k ℓ_k = rank G ≤ min(K′, 2N_r − 1): every aᴴg_k = √ρ is real, so the rows lie in a hyperplane
    (derived). At N_r = 1 every g_k = √ρ, ℓ_k = 1/K′ and the variance is the aggregate's K′·v = σ_a²; with N_r > 1
    the mean is (2N_r − 1)/K′ for generic channels and K′ ≥ 2N_r − 1, so the aggregate's σ_a² overstates the noise a
    separating base station leaves (threat T2), by K′·ℓ_k for client k, at most K′.

    ``combiner``: the a [N_r] the clients inverted (the link's :func:`centroid_combiner` over every scheduled client,
    admitted or not); None: the centroid of ``h`` itself (the same when every scheduled client is admitted).
    ``inverted``: the effective channels [K′] the clients inverted where they are not aᴴh_k (imperfect CSI, model
    §5.1: aᴴĥ_k with a the combiner of the estimates), so g_k = √ρ·h_k/aᴴĥ_k; aᴴg_k is then no longer real and the
    rank is min(K′, 2N_r) for generic channels.
    """
    h = np.asarray(h, dtype=np.complex128)
    if h.ndim != 2 or h.shape[0] == 0:
        raise ValueError(f"h must be a K′×N_r array of the admitted clients' channels, K′ ≥ 1 (got shape {h.shape})")
    if inverted is not None:
        inv = np.asarray(inverted, dtype=np.complex128)
        if inv.shape != (h.shape[0],):
            raise ValueError(f"inverted must have K′ = {h.shape[0]} entries (got shape {inv.shape})")
        g = h / inv[:, None]
    elif combiner is None:
        g = h / effective_channel(h)[:, None]
    else:
        a = np.asarray(combiner, dtype=np.complex128)
        if a.shape != (h.shape[1],):
            raise ValueError(f"combiner must have N_r = {h.shape[1]} entries (got shape {a.shape})")
        g = h / (h @ a.conj())[:, None]
    G = np.concatenate([g.real, g.imag], axis=1)
    u, sv, _ = np.linalg.svd(G, full_matrices=False)
    rank = int(np.sum(sv > sv[0] * max(G.shape) * np.finfo(np.float64).eps))
    return np.einsum("kr,kr->k", u[:, :rank], u[:, :rank])


def block_leverage(h: np.ndarray, admitted: np.ndarray, inverted: np.ndarray) -> np.ndarray:
    """ℓ [K, B] ∈ [0, 1]: :func:`client_leverage` of every coherence block's admitted clients at once (model §5.2,
    "Antennas over coherence blocks"); 0 where a client is not admitted.

    h [K, B, N_r] the channels, admitted [K, B] bool, inverted [K, B] the effective channels the clients inverted
    (aᴴĥ in block m's combiner). Block m's rows g_{k,m} = h_{k,m}/inverted_{k,m} of its admitted clients, the others
    zero (a zero row changes neither GᵀG nor the other rows' leverage); the rank cut of :func:`client_leverage`
    with the block's own K′_m."""
    h = np.asarray(h, dtype=np.complex128)
    adm = np.asarray(admitted, dtype=bool)
    if h.ndim != 3 or adm.shape != h.shape[:2] or np.shape(inverted) != h.shape[:2]:
        raise ValueError(f"h must be K×B×N_r and admitted, inverted K×B (got {h.shape}, {adm.shape}, {np.shape(inverted)})")
    inv = np.where(adm, np.asarray(inverted, dtype=np.complex128), 1.0)
    g = np.where(adm[:, :, None], h / inv[:, :, None], 0.0)
    G = np.transpose(np.concatenate([g.real, g.imag], axis=2), (1, 0, 2))  # [B, K, 2N_r]
    u, sv, _ = np.linalg.svd(G, full_matrices=False)
    size = np.maximum(adm.sum(axis=0), G.shape[2])  # max(K′_m, 2N_r), client_leverage's max(G.shape)
    keep = sv > (sv[:, :1] * size[:, None] * np.finfo(np.float64).eps)
    lev = np.einsum("bkr,br->kb", u * u, keep.astype(np.float64))
    return np.where(adm, lev, 0.0)


def mrc_weights(r_ref: np.ndarray, *, b: float) -> np.ndarray:
    """c [N_r, N] = b·r_{j,r}^s / Σ_{r'} (r_{j,r'}^s)²: maximum-ratio weights from the pilot outputs r^s [N_r, N]."""
    r_ref = np.asarray(r_ref, dtype=np.float64)
    return b * r_ref / np.einsum("rn,rn->n", r_ref, r_ref)


def antenna_conditional_variance(r_ref: np.ndarray, sequences: np.ndarray, *, noise_variance: float) -> float:
    """V = (σ²/L)·Σ_{j ∈ sequences} 1/Σ_r (r_{j,r}^s)² [(ŝ/b)², dimensionless]; ``noise_variance`` = σ²/L."""
    r = np.asarray(r_ref, dtype=np.float64)[:, sequences]
    if r.shape[1] == 0:
        return 0.0
    return float(noise_variance * np.sum(1.0 / np.einsum("rn,rn->n", r, r)))
