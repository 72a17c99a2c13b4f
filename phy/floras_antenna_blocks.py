"""FLORAS with N_r > 1 receive antennas over several coherence blocks (model §5.2, "Antennas over coherence blocks").

The one-antenna blocks of :mod:`phy.floras_blocks` and the maximum-ratio combiner of :mod:`phy.floras_antennas`
together: antenna r despreads its own chips (AᵀA = I), in fading block m

    r_{j,r}^i = g_{k,m,r}·s_k^i·[j = π(k)] + n_{j,r}^i,   g_{k,m,r} = Re(h_{k,m,r}),   n ~ N(0, σ²/L) i.i.d.,

h from :meth:`phy.link_channel.LinkChannel.draw_antennas` with ``n_blocks`` (every antenna its own block process).
Pilot p (sent in fading block p) gives r_{j,r}^{s,p} = g_{k,p,r}·b·[j = π(k)] + N(0, σ²/L) and the maximum-ratio
weights c_{j,r,p} = b·r_{j,r}^{s,p}/Σ_{r'}(r_{j,r'}^{s,p})²; entry i is combined with its layout's pilot p(i)
(:func:`phy.coherence.coherence_plan`: its own block's with ``pilots = "per-block"``, block 0's with "stale"):

    ŝ^i = Σ_{j,r} c_{j,r,p(i)}·r_{j,r}^i = Σ_k u_{k,i}·s_k^i + ν^i,   u_{k,i} = Σ_r c_{π(k),r,p(i)}·g_{k,m(i),r},
    ν^i ~ N(0, (σ²/L)·Σ_{j,r} c_{j,r,p(i)}²),

and the inactive-sequence noise of pilot p's entries has conditional variance V_p = (σ²/L)·Σ_{j∈I} 1/Σ_r (r_{j,r}^{s,p})²
(ŝ/b units), independent over the pilots; the round reports the entry-weighted mean V = Σ_p share_p·V_p.

Paths: "fast" draws the N_r·N despread noise rows per slot (keyed blocks ``(seed, "floras-antenna-despread-noise", t,
block)``, as the one-block antenna path) and can trace the inactive noise; "sufficient" draws ν as unit normals of
``(seed, "floras-sufficient-noise", t, block)`` scaled per entry. Pilots: pilot 0 is the one-block antenna pilot
(:func:`phy.floras_antennas.antenna_pilots`' streams), pilots p ≥ 1 one [P − 1, N_r, N] draw of
``(seed, "floras-reference-noise-antenna-blocks", t)``.
"""

from __future__ import annotations

import numpy as np

from .antennas import antenna_conditional_variance
from .blocks import block_noise, block_ranges, chunk_ranges
from .fading import effective_gain
from .randomness import stream

__all__ = ["antenna_block_pilots", "run_antenna_blocks"]


def antenna_block_pilots(link, round_index: int, *, n_blocks: int, n_pilots: int, clients=None):
    """(active [K], inactive, G [K, B, N_r], r^s [P, N_r, N], c [P, N_r, N]) of one round of ``link`` (a FlorasLink)."""
    t, K, N, b, std = int(round_index), link.K, link.params.N, link.b, link.noise_std
    active = link._clients.active_set(t, K=K)
    inactive = np.setdiff1d(np.arange(N), active)
    G = effective_gain(link.channel.draw_antennas(t, clients=clients, n_blocks=int(n_blocks)), csit="none")
    n_rx, P = G.shape[2], int(n_pilots)
    R = np.empty((P, n_rx, N))
    R[0, 0] = std * stream(link.seed, "floras-reference-noise", t).standard_normal(N)
    R[0, 1:] = std * stream(link.seed, "floras-reference-noise-antennas", t).standard_normal((n_rx - 1, N))
    if P > 1:
        R[1:] = std * stream(link.seed, "floras-reference-noise-antenna-blocks", t).standard_normal((P - 1, n_rx, N))
    for p in range(P):  # pilot p is sent in fading block p
        R[p][:, active] += (G[:, p, :] * b).T
    W = b * R / np.einsum("prn,prn->pn", R, R)[:, None, :]
    return active, inactive, G, R, W


def run_antenna_blocks(link, s: np.ndarray, plan, *, round_index: int, clients, trace: bool, path: str):
    """One FLORAS round of ``link`` with N_r > 1 antennas over the blocks of ``plan`` (a :class:`phy.floras.FlorasRound`)."""
    from .floras_link import SUFFICIENT_BLOCK, FlorasRound

    if path not in ("fast", "sufficient"):
        raise ValueError(f"FLORAS with several antennas over coherence blocks runs on the fast or sufficient path (got {path!r})")
    t, b, std = int(round_index), link.b, link.noise_std
    d = s.shape[1]
    active, inactive, G, R, W = antenna_block_pilots(link, t, n_blocks=plan.n_blocks, n_pilots=plan.n_pilots,
                                                     clients=clients)
    fade, pilot = plan.indices()
    s_hat = np.empty(d)
    e = np.empty(d) if trace else None
    if path == "sufficient":
        for a, z, m, p in plan.segments:  # u_k = Σ_r c_{π(k),r,p}·g_{k,m,r}, constant over a segment
            u = np.einsum("rk,kr->k", W[p][:, active], G[:, m, :])
            s_hat[a:z] = u @ s[:, a:z]
        nu_std = std * np.sqrt(np.einsum("prn,prn->p", W, W))[pilot]
        for a in range(0, d, SUFFICIENT_BLOCK):
            z = min(a + SUFFICIENT_BLOCK, d)
            s_hat[a:z] += nu_std[a:z] * block_noise((), z - a, seed=link.seed, purpose="floras-sufficient-noise",
                                                    round_index=t, block=a // SUFFICIENT_BLOCK, std=1.0)
    else:
        for c0, c1 in chunk_ranges(d, link.config.chunk_size):
            for a, z, m in block_ranges(c0, c1):
                r = block_noise(W.shape[1:], z - a, seed=link.seed, purpose="floras-antenna-despread-noise",
                                round_index=t, block=m, std=std)  # [N_r, N, c]
                Wc = np.transpose(W[pilot[a:z]], (1, 2, 0))  # [N_r, N, c]
                if trace:
                    e[a:z] = np.einsum("rnc,rnc->c", Wc[:, inactive] / b, r[:, inactive])
                r[:, active] += np.einsum("kcr,kc->rkc", G[:, fade[a:z], :], s[:, a:z])
                s_hat[a:z] = np.einsum("rnc,rnc->c", Wc, r)
    V_p = np.array([antenna_conditional_variance(R[p], inactive, noise_variance=std**2) for p in range(R.shape[0])])
    share = plan.pilot_share()
    return FlorasRound(s_hat, active, G[:, 0, 0].copy(), R[0, 0].copy(), float(share @ V_p), path, e,
                       gain_blocks=G[:, :, 0].copy(), pilot_share=share, r_ref_antennas=R, gain_antennas=G)
