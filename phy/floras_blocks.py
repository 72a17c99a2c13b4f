"""FLORAS over several coherence blocks per update (model §5.1, §6.1), for orthonormal sequence sets.

Within fading block m the despread output of sequence j in data slot i is (AᵀA = I)

    r_j^i = g_{k,m}·s_k^i·[j = π(k)] + n_j^i,   n_j^i ~ N(0, σ²/L),

and the receiver equalises entry i with the pilot p(i) of its layout (:func:`phy.coherence.coherence_plan`):
the reference slot sent in fading block p, r_j^{s,p} = g_{k,p}·b·[j = π(k)] + N(0, σ²/L), c_{j,p} = b/r_j^{s,p},

    ŝ^i = Σ_j c_{j,p(i)}·r_j^i = Σ_k (b·g_{k,m(i)}/r^{s,p(i)}_{π(k)})·s_k^i + Σ_j c_{j,p(i)}·n_j^i.

With a pilot per block (p = m) every block is a one-block FLORAS round: the active term is exactly Σ_k s_k^i
up to the pilot noise, and the inactive-sequence noise of block m has conditional variance (in (ŝ/b)²)
V_m = (σ²/L)·Σ_{j∈I} (r_j^{s,m})^{−2}, i.e. Lévy(0, γ²) per block, independent across blocks. With the stale
pilot (p = 0) the active term of client k carries the ratio g_{k,m}/g_{k,0} (channel aging). Phase CSIT from an
estimate (``phy.csi_error``, per-block pilots only): block m's pre-rotation uses its own estimate
ĥ_{k,m} = h_{k,m} + e_{k,m} (the [2, K, B] stream (seed, "csi-error", t), as channel inversion's per-block CSIT), so
g_{k,m} = |h_{k,m}|·cos(∠h_{k,m} − ∠ĥ_{k,m}). Paths: "fast"
draws the N despread noise rows per slot (keyed blocks ``(seed, "floras-despread-noise", t, block)``, as the
one-block path) and can trace the inactive noise; "sufficient" draws ν^i ~ N(0, (σ²/L)·Σ_j c_{j,p(i)}²) as unit
normals of ``(seed, "floras-sufficient-noise", t, block)`` scaled per entry. Pilots: p = 0 from
``(seed, "floras-reference-noise", t)`` (as the one-block path), p ≥ 1 from one [P − 1, N] draw of
``(seed, "floras-reference-noise-blocks", t)``.
"""

from __future__ import annotations

import numpy as np

from .blocks import block_noise, block_ranges, chunk_ranges
from .randomness import stream

__all__ = ["run_blocks"]


def run_blocks(link, s: np.ndarray, plan, *, round_index: int, clients, trace: bool, path: str):
    """One FLORAS round of ``link`` (a :class:`phy.floras.FlorasLink`) over the blocks of ``plan``."""
    from .floras_link import SUFFICIENT_BLOCK, FlorasRound

    t, K, N, b, std = int(round_index), link.K, link.params.N, link.b, link.noise_std
    d = s.shape[1]
    active = link._clients.active_set(t, K=K)
    inactive = np.setdiff1d(np.arange(N), active)
    G = link.block_gains(t, clients=clients, n_blocks=plan.n_blocks)  # [K, B]
    P = plan.n_pilots
    R = np.empty((P, N))
    R[0] = std * stream(link.seed, "floras-reference-noise", t).standard_normal(N)
    if P > 1:
        R[1:] = std * stream(link.seed, "floras-reference-noise-blocks", t).standard_normal((P - 1, N))
    R[:, active] += (G[:, :P] * b).T  # pilot p is sent in fading block p
    W = b / R  # c_{j,p}
    fade, pilot = plan.indices()
    s_hat = np.empty(d)
    e = np.empty(d) if trace else None
    cfg = link.config
    if path == "sufficient":
        for a, z in chunk_ranges(d, cfg.chunk_size):
            U = W[pilot[a:z]][:, active].T * G[:, fade[a:z]]  # [K, c]
            s_hat[a:z] = np.einsum("kc,kc->c", U, s[:, a:z])
        nu_std = std * np.sqrt(np.einsum("pn,pn->p", W, W))[pilot]
        for a in range(0, d, SUFFICIENT_BLOCK):
            z = min(a + SUFFICIENT_BLOCK, d)
            s_hat[a:z] += nu_std[a:z] * block_noise((), z - a, seed=link.seed, purpose="floras-sufficient-noise",
                                                    round_index=t, block=a // SUFFICIENT_BLOCK, std=1.0)
    elif path == "fast":
        for c0, c1 in chunk_ranges(d, cfg.chunk_size):
            for a, z, m in block_ranges(c0, c1):
                r = block_noise((N,), z - a, seed=link.seed, purpose="floras-despread-noise", round_index=t, block=m, std=std)
                Wc = W[pilot[a:z]].T  # [N, c]
                if trace:
                    e[a:z] = np.einsum("nc,nc->c", Wc[inactive] / b, r[inactive])
                r[active] += G[:, fade[a:z]] * s[:, a:z]
                s_hat[a:z] = np.einsum("nc,nc->c", Wc, r)
    else:
        raise ValueError(f"FLORAS over several coherence blocks runs on the fast or sufficient path (got {path!r})")
    V_p = std**2 * np.einsum("pn,pn->p", W[:, inactive], W[:, inactive]) / b**2
    share = plan.pilot_share()
    V = float(share @ V_p)
    return FlorasRound(s_hat, active, G[:, 0].copy(), R[0].copy(), V, path, e, gain_blocks=G, r_ref_blocks=R,
                       pilot_share=share)
