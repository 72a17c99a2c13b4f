"""The law of FLORAS's privacy loss given the pilots with chip-timing offsets (model §5.1 "Chip timing offsets",
"FLORAS's ε with offsets").

Given the round's pilots the release is Gaussian and a change of client k's update moves its mean by at most
(|C_k| + |D_k|)·‖Δ‖ (:mod:`phy.floras_leakage`), so client k's round is a Gaussian mechanism of strength
μ_k = √Λ_k·S with

    Λ_k = (|C_k| + |D_k|)²·b²/(σ_n²·‖c‖²),   C_k = g_k·[(1 − τ_k)·c_l + τ_k·(Xᵀc)_l],   D_k = g_k·τ_k·A[L−1, l]·(A c)[0],

l = π(k), X = AᵀS_1A the sequences' one-chip cross-correlations, c_j = b/r_j^s and the despread pilots

    r^s = b·Σ_k g_k·[(1 − τ_k)·e_{π(k)} + τ_k·X e_{π(k)}] + n,   n ~ N(0, σ_n²·I_N)   (AᵀA = I).

Λ depends on the round's gains, offsets, assignment and pilot noise, not on the data. Its law has no closed form;
:func:`loss_counts` draws it by Monte Carlo for one uniformly chosen active slot per round (rounds i.i.d.; without a
cell every slot has the same law) and returns the exceedance counts of √Λ at fixed thresholds, streamed in batches,
from which :func:`privacy.gaussian_mixture.unbounded_band_law` makes a stochastically larger law. Cauchy–Schwarz
(‖Xe_l‖ ≤ 1 and |A[L−1, l]| ≤ max |A|) bounds every draw by the receiver noise alone,

    Λ_k ≤ g_k²·(1 + τ_k·max|A|)²·b²/σ_n²      (:func:`loss_bound`, tested on every draw),

which is why the law's tail, unlike the synchronous Lévy law of γ²/V, is not small at high SNR.

Scope: no cell, one coherence block, one receive antenna, perfect CSI (no CSIT: g = Re h; phase CSIT: g = |h|),
h ~ CN(0, 1) — the link of :meth:`phy.floras_link.FlorasLink.chip_pilots` (tests/test_floras_timing_law.py checks the
formula against :func:`phy.floras_leakage.release_given_pilots` round by round and the law against the link's rounds).
"""

from __future__ import annotations

import math

import numpy as np

from .randomness import stream

__all__ = ["BATCH", "LawLink", "law_link", "loss_bound", "losses", "loss_counts", "sample_losses"]

#: rounds per batch of the Monte Carlo (memory ≈ BATCH·N·8 bytes a few times over)
BATCH = 1 << 15


class LawLink:
    """What the law needs of the link: the sequences A [L, N], X = AᵀS_1A, b, σ_n, K, τ_max and the CSIT."""

    def __init__(self, A: np.ndarray, *, K: int, b: float, noise_std: float, timing_offset: float, csit: str):
        self.A = np.asarray(A, dtype=np.float64)
        L, N = self.A.shape
        shifted = np.zeros_like(self.A)
        shifted[1:] = self.A[:-1]
        self.X = self.A.T @ shifted  # X[j, l] = a_jᵀ S_1 a_l
        self.K, self.N, self.L = int(K), int(N), int(L)
        self.b, self.noise_std, self.tau_max, self.csit = float(b), float(noise_std), float(timing_offset), str(csit)
        if not 1 <= self.K <= self.N or self.csit not in ("none", "phase") or not 0.0 <= self.tau_max < 1.0:
            raise ValueError(f"K in [1, N = {self.N}], csit in {{none, phase}} and timing_offset in [0, 1) "
                             f"(got K = {K}, csit = {csit!r}, timing_offset = {timing_offset!r})")


def law_link(config, *, K: int, seed: int = 0) -> LawLink:
    """The :class:`LawLink` of a FLORAS :class:`phy.config.PhyConfig` (chip path, no cell, one block and antenna,
    perfect CSI, orthonormal sequences; ValueError naming the key otherwise); ``seed`` the run's (pseudo-noise
    sequences are drawn from it)."""
    from .floras_link import FlorasLink

    why = None
    if config.has_cell:
        why = "phy.pathloss: the law is drawn without a cell (i.i.d. Rayleigh gains); remove the cell"
    elif int(config.rx_antennas) != 1:
        why = f"phy.rx_antennas = {int(config.rx_antennas)}: the law is derived for one antenna; use rx_antennas = 1"
    elif config.coherence_symbols is not None:
        why = "phy.coherence_symbols: the law is derived for one coherence block; leave it unset"
    elif float(config.csi_error) != 0.0 or float(config.los_k) != 0.0:
        why = "phy.csi_error / phy.rician_k: the law is drawn for perfect CSI and Rayleigh gains; set both to 0"
    if why is not None:
        raise ValueError("FLORAS's ε from the law given the pilots (model §5.1): " + why)
    link = FlorasLink(config, K=int(K), seed=int(seed), key=bytes(16))
    if not link.orthonormal:
        raise ValueError("FLORAS's ε from the law given the pilots (model §5.1): the law assumes orthonormal sequences "
                         f"(AᵀA = I); floras.sequences = {link.params.sequences!r} with N = {link.params.N}, "
                         f"L = {int(config.L)} is not: use Walsh–Hadamard sequences or N ≤ L orthonormal ones")
    return LawLink(link.A, K=K, b=link.b, noise_std=link.noise_std, timing_offset=float(config.timing_offset),
                   csit=link.params.csit)


def losses(law: LawLink, act: np.ndarray, g: np.ndarray, tau: np.ndarray, n: np.ndarray, *,
           slots: int | None = None) -> np.ndarray:
    """Λ [R, s] of the first ``slots`` (default every) active slots of R rounds from their assignment ``act`` [R, K]
    (π(k)), gains ``g`` [R, K], offsets ``tau`` [R, K] and despread pilot noise ``n`` [R, N] (module doc); every
    slot's pilot enters r^s."""
    c = _weights(law, act, g, tau, n)
    s = act.shape[1] if slots is None else int(slots)
    a, gs, ts = act[:, :s], g[:, :s], tau[:, :s]
    xc = np.einsum("rj,rkj->rk", c, law.X.T[a])  # (Xᵀc)_l at each slot's sequence l
    C = gs * ((1.0 - ts) * np.take_along_axis(c, a, 1) + ts * xc)
    D = gs * ts * law.A[-1][a] * (c @ law.A[0])[:, None]
    noise = law.noise_std**2 * np.einsum("rn,rn->r", c, c)
    return np.square(np.abs(C) + np.abs(D)) * law.b**2 / noise[:, None]


def _weights(law: LawLink, act, g, tau, n) -> np.ndarray:
    """c = b/r^s [R, N] from the despread pilots r^s = b·Σ_k g_k·[(1 − τ_k)·e_π(k) + τ_k·X e_π(k)] + n (module doc)."""
    rows = np.arange(act.shape[0])[:, None]
    direct = np.zeros((act.shape[0], law.N))
    late = np.zeros((act.shape[0], law.N))
    direct[rows, act] = g * (1.0 - tau)
    late[rows, act] = g * tau
    return law.b / (law.b * (direct + late @ law.X.T) + n)


def loss_bound(law: LawLink, g: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """g²·(1 + τ·max|A|)²·b²/σ_n² ≥ Λ (Cauchy–Schwarz, module doc)."""
    return np.square(g * (1.0 + tau * np.abs(law.A).max())) * law.b**2 / law.noise_std**2


def _batch(law: LawLink, rng: np.random.Generator, R: int):
    """(act, g, τ, n) of R rounds: a uniform injection of the K slots into the N sequences, h ~ CN(0, 1)."""
    act = np.argsort(rng.random((R, law.N)), axis=1)[:, : law.K]
    h = (rng.standard_normal((R, law.K)) + 1j * rng.standard_normal((R, law.K))) * math.sqrt(0.5)
    g = h.real if law.csit == "none" else np.abs(h)
    tau = law.tau_max * rng.random((R, law.K))
    n = law.noise_std * rng.standard_normal((R, law.N))
    return act, g, tau, n


def sample_losses(law: LawLink, *, rounds: int, seed: int = 0, key: str = "floras-timing-law") -> np.ndarray:
    """Λ of slot 0 (a uniformly chosen active slot: the assignment is uniform) in ``rounds`` i.i.d. rounds, from the
    keyed streams ``(seed, key, batch)``."""
    out = []
    for i, start in enumerate(range(0, int(rounds), BATCH)):
        R = min(BATCH, int(rounds) - start)
        act, g, tau, n = _batch(law, stream(seed, key, i), R)
        out.append(losses(law, act, g, tau, n, slots=1)[:, 0])
    return np.concatenate(out)


def loss_counts(law: LawLink, *, rounds: int, thresholds: np.ndarray, seed: int = 0,
                key: str = "floras-timing-law", progress=None) -> np.ndarray:
    """#rounds with √Λ > t_i [len(thresholds)] over ``rounds`` i.i.d. rounds (slot 0, as :func:`sample_losses`),
    streamed in batches of :data:`BATCH` (memory independent of ``rounds``); ``progress(done, total)`` after each."""
    t = np.sort(np.asarray(thresholds, dtype=np.float64))
    counts = np.zeros(t.size, dtype=np.int64)
    total = int(rounds)
    for i, start in enumerate(range(0, total, BATCH)):
        R = min(BATCH, total - start)
        act, g, tau, n = _batch(law, stream(seed, key, i), R)
        x = np.sort(np.sqrt(losses(law, act, g, tau, n, slots=1)[:, 0]))
        counts += R - np.searchsorted(x, t, side="right")
        if progress is not None:
            progress(start + R, total)
    return counts
