"""The law of an analog Gaussian client's strength under imperfect CSI (model §5.1, "Imperfect CSI"): independent
Monte Carlo rounds of the link, for the accountant of :class:`privacy.gaussian_mixture.GaussianMixtureRound`.

With estimates ĥ_k = h_k + e_k (:mod:`phy.csi_error`) client k sends (√ρ/ĥ_k)·(s_k + ν_k), ν_k ~ N(0, σ_a²/K′·I), so
the released ŝ = Σ_adm c_k·(s_k + ν_k) + n/√ρ with c_k = Re(h_k/ĥ_k). Given the round's channels (revealed to the
observer: a bound for any observer that knows less) client k's share c_k·s_k has sensitivity |c_k|·S under noise of
variance V = σ_a²(ρ)·Σ_adm c_j²/K′ + σ_n²/ρ, σ_a²(ρ) = max(0, σ_T² − σ_n²/ρ), σ_T = z·S: a Gaussian of strength

    μ_k = |c_k|·S/√V   (1/z with perfect CSI: c ≡ 1, V = max(σ_T², σ_n²/ρ) ≥ σ_T²).

Since Σ_adm c_j² ≥ c_k², μ_k² ≤ K′·S²/σ_a²(ρ) ≤ K·S²/σ_a,min², σ_a,min² = σ_T² − σ_n²/g_th (ρ ≥ g_th under both ρ rules):
the bound :func:`strength_bound`, finite when the clients are certain to add noise.

With N_r > 1 receive antennas (model §5.2) c_k = Re(aᴴh_k/aᴴĥ_k) with the base station's combiner a of the estimates,
and the receiver noise is not counted (σ_n² = 0 below: V = σ_T²·Σ_adm c_j²/K′, μ_k ≤ √K·S/σ_T).

One draw is one round without a cell: K scheduled clients with i.i.d. CN(0, 1) channels (Rician of factor κ with
``phy.rician_k``: :func:`rician`; CN(0, I) to N_r antennas, with a line of sight steered at a uniform azimuth) and
CN(0, σ_e²) errors,
admission |ĥ_k|² ≥ g_th, ρ by the rule on ĥ, and for the client in row 0 (rows are exchangeable, so a uniformly chosen
one) its c_0 (0 unless admitted), Σ_adm c_j², K′ and ρ. The draws are i.i.d. across rounds (keyed stream
``(seed, "csi-strength-law", batch)``), as the binomial counts of :func:`privacy.gaussian_mixture.band_law` require.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .antennas import centroid_combiners
from .randomness import stream

__all__ = ["BATCH", "CsiRounds", "batch_rounds", "check_antennas", "csi_rounds", "estimated_gains", "rician", "steering",
           "strengths", "strength_bound"]

#: rounds per vectorised batch (one stream each), fewer when K is large: ≤ 2²⁰ client slots per batch (about 100 MB)
BATCH, SLOTS = 4096, 2**20


def batch_rounds(K: int) -> int:
    """Rounds per batch for K clients: min(:data:`BATCH`, 2²⁰ // K), at least 1 (a function of K alone, so the draws
    stay reproducible)."""
    return max(1, min(BATCH, SLOTS // int(K)))


class CsiRounds(NamedTuple):
    """Independent rounds [draws] of the link with imperfect CSI (module docstring)."""

    c0: np.ndarray  # Re(h_0/ĥ_0) of row 0 if admitted, else 0
    sum_sq: np.ndarray  # Σ_adm c_j²
    admitted: np.ndarray  # K′ (int64)
    rho: np.ndarray  # ρ by the rule on ĥ (0 when K′ = 0)


def csi_rounds(*, K: int, g_th: float, csi_error: float, rho_rule: str, draws: int, seed: int,
               rician_k: float = 0.0, gains=None, n_rx: int = 1) -> CsiRounds:
    """``draws`` i.i.d. rounds of K clients (module docstring); ``rho_rule`` "threshold" or "min-admitted";
    ``rician_k`` κ > 0: Rician channels h = √(κ/(κ+1)) + √(1/(κ+1))·h_diffuse (:func:`rician`). ``gains``: None
    (every β = 1, no cell) or ``gains(rng, shape)`` → β_eff [shape] i.i.d. from one client's law (a re-dropped cell,
    :meth:`phy.cell.CellChannel.drop_law_gains`), drawn per slot from the batch's stream after the normals: slot j
    is admitted when β_j·|ĥ_j|² ≥ g_th and ρ = min β_j·|ĥ_j|² ("min-admitted"); c_j does not depend on β_j.
    ``n_rx`` N_r > 1 receive antennas: every slot's channel and error are N_r-vectors, ĥ_j and h_j the effective
    channels aᴴĥ_j, aᴴh_j of the centroid combiner a of the round's K estimates (:func:`estimated_gains`); with κ > 0
    the line of sight of slot j is steered at an azimuth θ_j ~ U(0, 2π) drawn from the batch's stream after the normals
    (and before ``gains``): the link without a cell or with a cell re-dropped every round (model §5.2, "Rician fading
    with several antennas")."""
    K, draws, n_rx = int(K), int(draws), int(n_rx)
    check_antennas(n_rx, rician_k)
    if K < 1 or draws < 1 or not g_th > 0.0 or not csi_error >= 0.0 or not math.isfinite(csi_error):
        raise ValueError(f"K and draws must be ≥ 1, g_th > 0 and csi_error finite ≥ 0 (got {K!r}, {draws!r}, "
                         f"{g_th!r}, {csi_error!r})")
    if rho_rule not in ("threshold", "min-admitted"):
        raise ValueError(f"rho_rule must be one of {{threshold, min-admitted}} (got {rho_rule!r})")
    if not (rician_k >= 0.0 and math.isfinite(rician_k)):
        raise ValueError(f"rician_k must be finite ≥ 0 (got {rician_k!r})")
    out = CsiRounds(np.empty(draws), np.empty(draws), np.empty(draws, dtype=np.int64), np.empty(draws))
    rows = batch_rounds(K * n_rx)
    for b, start in enumerate(range(0, draws, rows)):
        n = min(rows, draws - start)
        rng = stream(int(seed), "csi-strength-law", b)
        shape = (4, n, K) if n_rx == 1 else (4, n, K, n_rx)
        z = rng.standard_normal(shape)
        los = steering(rng.random((n, K)), n_rx) if n_rx > 1 and rician_k > 0.0 else None
        c, g = estimated_gains(z, float(csi_error), float(rician_k), los=los)
        if gains is not None:
            g = gains(rng, (n, K)) * g
        adm = g >= g_th
        c = np.where(adm, c, 0.0)
        k_adm = adm.sum(axis=1)
        if rho_rule == "threshold":
            rho = np.where(k_adm > 0, float(g_th), 0.0)
        else:
            rho = np.where(k_adm > 0, np.where(adm, g, np.inf).min(axis=1), 0.0)
        sl = slice(start, start + n)
        out.c0[sl], out.sum_sq[sl], out.admitted[sl], out.rho[sl] = c[:, 0], (c * c).sum(axis=1), k_adm, rho
    return out


def check_antennas(n_rx: int, rician_k: float) -> None:
    """N_r ≥ 1 receive antennas."""
    if n_rx < 1:
        raise ValueError(f"n_rx must be ≥ 1 (got {n_rx!r})")


def steering(u: np.ndarray, n_rx: int) -> np.ndarray:
    """e^{jπ·r·sin θ} [..., N_r] of azimuths θ = 2π·u (u ~ U(0, 1)): the half-wavelength linear array's steering
    vector of a line of sight (model §5.2)."""
    return np.exp(1j * np.pi * np.arange(int(n_rx)) * np.sin(2.0 * np.pi * np.asarray(u))[..., None])


def estimated_gains(z: np.ndarray, csi_error: float, rician_k: float, *, los: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(c, |ĥ|²) of standard normals z [4, …]: h = (z₀ + i·z₁)/√2 (Rician of factor κ: :func:`rician`),
    ĥ = h + √(σ_e²/2)·(z₂ + i·z₃), c = Re(h/ĥ) (before admission).

    z [4, n, K, N_r] (N_r receive antennas, model §5.2): h, ĥ [n, K, N_r] per antenna; each round's combiner a is
    the centroid of its K estimates (:func:`phy.antennas.centroid_combiner`, batched), and c = Re(aᴴh/aᴴĥ),
    |aᴴĥ|² [n, K] (the phase of a cancels in both). ``los`` [n, K, N_r]: the line of sight's steering vectors
    (:func:`steering`; a common phase per client cancels as at one antenna, :func:`rician`)."""
    h = rician((z[0] + 1j * z[1]) / math.sqrt(2.0), rician_k, los=los)
    h_hat = h + math.sqrt(csi_error / 2.0) * (z[2] + 1j * z[3])
    if z.ndim == 4:
        a = centroid_combiners(h_hat)
        h, h_hat = np.einsum("nkr,nr->nk", h, a.conj()), np.einsum("nkr,nr->nk", h_hat, a.conj())
    return np.real(h / h_hat), np.abs(h_hat) ** 2


def rician(h: np.ndarray, rician_k: float, *, los: np.ndarray | None = None) -> np.ndarray:
    """√(κ/(κ+1))·los + √(1/(κ+1))·h for κ = ``rician_k`` > 0 (unit power; h itself for κ = 0), ``los`` 1 or the
    steering vectors. The line of sight's phase is taken 0: c = Re(h/ĥ) and |ĥ|² do not change when h and the circular
    error turn together (with antennas too: the centroid combiner does not see a client's common phase), so the
    link's random phase φ_k (:mod:`phy.coherence`) leaves the law as it is."""
    if rician_k == 0.0:
        return h
    return math.sqrt(rician_k / (rician_k + 1.0)) * (1.0 if los is None else los) + math.sqrt(1.0 / (rician_k + 1.0)) * h


def strengths(rounds: CsiRounds, *, target_std: float, sensitivity: float, receiver_variance: float) -> np.ndarray:
    """μ [draws] = |c_0|·S/√V of each round (module docstring; 0 where row 0 is not admitted). ``receiver_variance``
    σ_n² [ŝ units before 1/ρ] is the one counted as privacy noise (0 when it is not counted). Elementwise, so any
    :class:`CsiRounds` of equal-length arrays will do (a cell's client laws, :mod:`phy.csi_cell_law`)."""
    S, sT = float(sensitivity), float(target_std)
    if not S > 0.0 or not sT > 0.0 or not receiver_variance >= 0.0:
        raise ValueError(f"sensitivity and target_std must be > 0 and receiver_variance ≥ 0 (got {sensitivity!r}, "
                         f"{target_std!r}, {receiver_variance!r})")
    on = rounds.admitted > 0
    r = np.where(on, float(receiver_variance) / np.where(on, rounds.rho, 1.0), 0.0)
    var = np.maximum(0.0, sT * sT - r) * rounds.sum_sq / np.maximum(rounds.admitted, 1) + r
    return np.where(rounds.c0 != 0.0, np.abs(rounds.c0) * S / np.sqrt(np.where(var > 0.0, var, 1.0)), 0.0)


def strength_bound(*, K: int, target_std: float, sensitivity: float, receiver_variance: float, g_th: float) -> float:
    """√K·S/σ_a,min (module docstring), ∞ when σ_a,min = 0 (the receiver noise alone may exceed the target)."""
    floor = float(target_std) ** 2 - float(receiver_variance) / float(g_th)
    return math.sqrt(int(K)) * float(sensitivity) / math.sqrt(floor) if floor > 0.0 else math.inf
