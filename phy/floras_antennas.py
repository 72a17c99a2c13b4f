"""FLORAS with N_r > 1 receive antennas and maximum-ratio combining on the pilots (model §5.2, §6.1).

Each antenna r despreads its own chips (AᵀA = I): r_{j,r}^i = g_{k,r}·s_k^i·[j = π(k)] + n_{j,r}^i and the pilot
r_{j,r}^s = g_{k,r}·b·[j = π(k)] + m_{j,r}, noise N(0, σ²/L) i.i.d. over (j, r, slot), g_{k,r} = Re(h_{k,r})
(``csit = "none"``; the configuration refuses phase pre-rotation with several antennas). The receiver
forms ŝ^i = Σ_{j,r} c_{j,r}·r_{j,r}^i with the maximum-ratio weights c_{j,r} = b·r_{j,r}^s/Σ_{r'}(r_{j,r'}^s)²
(:func:`phy.antennas.mrc_weights`). Given the pilots (derived in :mod:`phy.antennas`):

    ŝ^i = Σ_k u_k·s_k^i + ν^i,   u_k = Σ_r c_{π(k),r}·g_{k,r},   ν^i ~ N(0, (σ²/L)·Σ_{j,r} c_{j,r}²) i.i.d.

Paths (one coherence block; the chip path is refused with N_r > 1):

- "fast": the N_r·N despread noise rows per slot from keyed blocks ``(seed, "floras-antenna-despread-noise", t,
  block)`` (shape [N_r, N, c]); traces the inactive-sequence noise e^i = Σ_{j∈I, r} (c_{j,r}/b)·n_{j,r}^i.
- "sufficient": the law above, ν drawn as :meth:`phy.floras.FlorasLink.add_sufficient_noise` does (keyed
  blocks ``(seed, "floras-sufficient-noise", t, block)``) with the weights of every antenna.

Pilots: antenna 0 from ``(seed, "floras-reference-noise", t)`` (the one-antenna draw), antennas 1..N_r−1 from
one [N_r − 1, N] draw of ``(seed, "floras-reference-noise-antennas", t)``.
"""

from __future__ import annotations

import numpy as np

from .antennas import antenna_conditional_variance, mrc_weights
from .blocks import block_noise, block_ranges, chunk_ranges
from .fading import effective_gain
from .randomness import stream

__all__ = ["antenna_pilots", "run_antennas"]


def antenna_pilots(link, round_index: int, *, clients=None):
    """(active [K], inactive [N−K], G [K, N_r], r^s [N_r, N], c [N_r, N]) of one round of ``link`` (a FlorasLink)."""
    t, K, N, b, std = int(round_index), link.K, link.params.N, link.b, link.noise_std
    active = link._clients.active_set(t, K=K)
    inactive = np.setdiff1d(np.arange(N), active)
    G = effective_gain(link.channel.draw_antennas(t, clients=clients), csit="none")  # [K, N_r]
    n_rx = G.shape[1]
    R = np.empty((n_rx, N))
    R[0] = std * stream(link.seed, "floras-reference-noise", t).standard_normal(N)
    R[1:] = std * stream(link.seed, "floras-reference-noise-antennas", t).standard_normal((n_rx - 1, N))
    R[:, active] += (G * b).T
    return active, inactive, G, R, mrc_weights(R, b=b)


def run_antennas(link, s: np.ndarray, *, round_index: int, clients, trace: bool, path: str):
    """One FLORAS round of ``link`` with N_r = ``phy.rx_antennas`` > 1 antennas (a :class:`phy.floras.FlorasRound`)."""
    from .floras_link import FlorasRound

    if path not in ("fast", "sufficient"):
        raise ValueError(f"FLORAS with several receive antennas runs on the fast or sufficient path (got {path!r})")
    t, b, std = int(round_index), link.b, link.noise_std
    d = s.shape[1]
    active, inactive, G, R, W = antenna_pilots(link, t, clients=clients)
    s_hat = np.empty(d)
    e = np.empty(d) if trace else None
    if path == "sufficient":
        u = np.einsum("kr,rk->k", G, W[:, active])
        np.einsum("k,kd->d", u, s, out=s_hat)
        link.add_sufficient_noise(s_hat, W.ravel(), round_index=t)
    else:
        W_in = W[:, inactive] / b
        for c0, c1 in chunk_ranges(d, link.config.chunk_size):
            for a, z, m in block_ranges(c0, c1):
                r = block_noise(W.shape, z - a, seed=link.seed, purpose="floras-antenna-despread-noise",
                                round_index=t, block=m, std=std)  # [N_r, N, c]
                if trace:
                    e[a:z] = np.einsum("rn,rnc->c", W_in, r[:, inactive])
                r[:, active] += G.T[:, :, None] * s[None, :, a:z]
                s_hat[a:z] = np.einsum("rn,rnc->c", W, r)
    V = antenna_conditional_variance(R, inactive, noise_variance=std**2)
    return FlorasRound(s_hat, active, G[:, 0].copy(), R[0].copy(), V, path, e, r_ref_antennas=R, gain_antennas=G)
