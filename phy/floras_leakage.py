"""FLORAS's release given the pilots, with chip-timing offsets (model §5.1 "Chip timing offsets", §7.2).

On the chip path with one coherence block and one antenna, slot i's chips are y^i = Ã·G·s^i + e₀·tailᵀs^{i−1} + n^i
(Ã the received chips of the active sequences, tail_k = g_k·τ_k·a_k[L−1], s^0 = b the pilot; :mod:`phy.chip_timing`),
and the base station forms ŝ^i = Σ_j c_j·a_jᵀy^i with c_j = b/r_j^s. Given the pilots r^s (and so c), which carry no
data, ŝ is Gaussian:

    ŝ^i = Σ_k [C_k·s_k^i + D_k·s_k^{i−1}] + ν^i,   ν^i ~ N(0, σ_n²·‖A c‖²) i.i.d.,
    C_k = g_k·(A c)ᵀã_k,   D_k = tail_k·(A c)[0],   σ_n² = σ²/L per chip,

(derived; without offsets Ã = A[:, π], D = 0 and with AᵀA = I C_k = g_k·b/r^s_{π(k)} = c_{π(k)}·g_k, the factor of
§7.2 "Link level"). A client whose update s_k changes by Δ (‖Δ‖ ≤ S·b) moves the mean by C_k·Δ + D_k·(Δ shifted one
entry), of norm at most (|C_k| + |D_k|)·‖Δ‖, so given the pilots the release is a Gaussian mechanism whose Rényi
divergence of order α is at most α·Λ_k·S²/2 with

    Λ_k = (|C_k| + |D_k|)²·b²/(σ_n²·‖A c‖²)

(the privacy loss per unit S² given the pilots). Without offsets Λ_k ≤ c_k²/V (V the inactive sequences' variance of
§6.1), whose Lévy law gives the accountant's curve; with offsets the inactive pilots carry the active clients'
leakage, so neither V's law nor the bound on C_k holds: the ε is that of Λ's own law, drawn by Monte Carlo
(:mod:`phy.floras_timing_law`, model §5.1 "FLORAS's ε with offsets"). :func:`release_given_pilots` computes C, D and
the noise variance of one round for measuring Λ (docs/cell.md "Chip-timing offsets").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PilotRelease", "pilot_weights", "release_given_pilots"]


@dataclass(frozen=True)
class PilotRelease:
    """One round's release given its pilots (module doc).

    C, D : [K] float64        the weights of s_k^i and s_k^{i−1} in ŝ^i (client order of the round).
    noise_var : float         Var ν^i = σ_n²·‖A c‖² [W].
    b : float                 the pilot amplitude [√W].
    V : float                 the inactive sequences' conditional variance of §6.1 [(ŝ/b)², dimensionless].
    active : [K] int64        π_t(k).
    """

    C: np.ndarray
    D: np.ndarray
    noise_var: float
    b: float
    V: float
    active: np.ndarray

    @property
    def loss(self) -> np.ndarray:
        """Λ_k = (|C_k| + |D_k|)²·b²/Var ν [K]: the order-α Rényi divergence given the pilots is ≤ α·Λ_k·S²/2."""
        return np.square(np.abs(self.C) + np.abs(self.D)) * self.b**2 / self.noise_var


def release_given_pilots(link, round_index: int, *, clients=None) -> PilotRelease:
    """C, D and Var ν of round ``round_index`` of a :class:`phy.floras_link.FlorasLink` (the pilots
    :meth:`~phy.floras_link.FlorasLink.chip_pilots` draws, so the same round as ``run_round`` on the chip path).

    One coherence block and one receive antenna only (ValueError otherwise).
    """
    cfg = link.config
    if cfg.rx_antennas != 1 or cfg.coherence_symbols is not None:
        raise ValueError("release_given_pilots: one coherence block and one receive antenna only (got "
                         f"rx_antennas = {cfg.rx_antennas}, coherence_symbols = {cfg.coherence_symbols}); "
                         "set phy.rx_antennas = 1 and leave phy.coherence_symbols unset")
    active, inactive, g, A_rx, tail, r_ref, c = link.chip_pilots(round_index, clients=clients)
    C, D, noise_var = pilot_weights(link.A, A_rx, g, tail, c, link.noise_std)
    return PilotRelease(C, D, noise_var, link.b, link.conditional_variance(r_ref, inactive), active)


def pilot_weights(A: np.ndarray, A_rx: np.ndarray, g: np.ndarray, tail, c: np.ndarray,
                  noise_std: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(C [K], D [K], Var ν) of the module doc from the sequences A [L, N], the received chips Ã [L, K], the gains g,
    the inter-slot tail (g_k·τ_k·a_k[L−1], or None without offsets), the receiver's weights c [N] and the chip noise's
    standard deviation σ_n."""
    combiner = A @ c  # ŝ^i = (A c)ᵀ y^i
    C = g * (combiner @ A_rx)
    D = np.zeros_like(C) if tail is None else tail * combiner[0]
    return C, D, noise_std**2 * float(combiner @ combiner)
