"""Detection from the pilots of several coherence blocks (model §5.1, §5.2, §7.5).

With ``phy.coherence_symbols`` and ``phy.floras.pilots = "per-block"`` FLORAS sends a reference slot in every
coherence block, and the curious base station sees all P of them (:class:`scenarios.audit.signals.T2Uplink`). Its
detector is the energy Σ_{p,r} (r_{j,r}^{s,p})² over the P pilots and N_r antennas (one pilot: the detectors of
:mod:`scenarios.audit.detection`). Inactive, r_{j,r}^{s,p} is N(0, σ²/L) i.i.d., so the threshold is
τ = (σ²/L)·χ²_{P·N_r}⁻¹(1 − P_FA) (Neyman–Pearson for the false alarm; the energy detector is the NP test over
i.i.d. blocks and a natural one over correlated blocks).

Active, without CSIT and without a line of sight (derived): antenna r's pilot vector x_r = (r_{j,r}^{s,p})_p is
N(0, C) with C = (b²·β_eff/2)·Re R + (σ²/L)·I, R[p, q] = E[h̃_p·h̃_q*] the blocks' correlation of model §5.1
(:func:`phy.coherence.block0_correlations`: I for "iid", ρ^|p−q| for "jakes", J₀(x·|p−q|) for "jakes-exact", the
TDL subcarriers' and time blocks' product for "tdl"), independent over the antennas; so Σ_{p,r} (r^{s,p}_{j,r})² =
Σ_i λ_i·χ²_{N_r,i}, λ_i the eigenvalues of C, and P_D(τ) = P(Σ_i λ_i·χ²_{N_r,i} > τ) by Imhof's inversion
(Imhof 1961, Biometrika 48: P(Q > x) = ½ + (1/π)∫₀^∞ sin θ(u)/(u·ρ(u)) du, θ(u) = ½Σ_i h_i·arctan(λ_i·u) − ½x·u,
ρ(u) = Π_i (1 + λ_i²u²)^{h_i/4}, h_i = N_r). With i.i.d. blocks every λ_i is b²β_eff/2 + σ²/L and the law is
χ²_{P·N_r} scaled. Phase CSIT (|h| per block) and a line of sight over several pilots are not derived here: their
P_D is left out (None). One pilot with phase CSIT from an estimate: :func:`estimated_phase_detection`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate
from scipy import stats as _st

from phy.coherence import block0_correlations, coherence_plan

from .detection import detector_kind, drop_detection_probability

__all__ = ["audit_detector", "block_covariance", "quadratic_form_survival", "block_detection_probability",
           "pilots_detection_probability", "estimated_phase_detection", "detection_theory"]


def audit_detector(config, d: int) -> tuple[str, int, int]:
    """(kind, degrees of freedom, P) of the audit's detector for updates of d entries: the NP detector of
    :func:`scenarios.audit.detection.detector_kind` with N_r degrees of freedom at one pilot, the energy over the
    P·N_r outputs with P pilots (module doc)."""
    P = coherence_plan(int(d), config.coherence_symbols, config.of("floras").pilots).n_pilots
    n_rx = int(config.rx_antennas)
    if P == 1:
        return detector_kind(config.of("floras").csit), n_rx, 1
    return "energy", P * n_rx, P


def block_covariance(config, n_pilots: int) -> np.ndarray | None:
    """Re R [P, P] float64: the correlation of Re h̃ between the pilots' blocks 0..P − 1, over E[(Re h̃)²] = ½ (module
    doc); None where the P_D is not derived (phase CSIT, a line of sight)."""
    if config.of("floras").csit != "none" or float(config.los_k):
        return None
    P = int(n_pilots)
    bt = int(config.tdl_time_blocks) if config.fading_correlation == "tdl" else 1
    r = block0_correlations(config, P * bt if bt > 1 else P)  # r_m = E[h̃_m·h̃_0*] at m = sub·B_t + time
    m = np.arange(P)
    ds = m[:, None] // bt - m[None, :] // bt
    dt = np.abs(m[:, None] % bt - m[None, :] % bt)
    return np.ascontiguousarray(r[np.abs(ds) * bt + dt].real)  # R[p, q] is r or its conjugate: the same real part


def quadratic_form_survival(x: float, weights, dof: int) -> float:
    """P(Σ_i w_i·χ²_{dof,i} > x) for w_i > 0 by Imhof's inversion (module doc)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0 or np.any(~(w > 0)):
        raise ValueError(f"weights must be a non-empty vector of positive numbers (got {weights!r})")
    h = float(dof)

    def f(u: float) -> float:
        theta = 0.5 * h * np.sum(np.arctan(w * u)) - 0.5 * x * u
        log_rho = 0.25 * h * np.sum(np.log1p((w * u) ** 2))
        return math.sin(theta) * math.exp(-log_rho) / u if u > 0 else 0.5 * (h * w.sum() - x)

    edge = 200.0 / float(w.max())  # past it ρ(u) ≥ 200^{h/2}: a small, slowly oscillating tail
    head, _ = integrate.quad(f, 0.0, edge, limit=2000, epsabs=1e-11)
    with warnings.catch_warnings():  # the tail's subdivisions run out where it is already below the head's error
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        tail, _ = integrate.quad(f, edge, np.inf, limit=2000, epsabs=1e-11)
    return float(min(1.0, max(0.0, 0.5 + (head + tail) / math.pi)))


def block_detection_probability(threshold: float, *, b: float, noise_var: float, n_rx: int, corr: np.ndarray,
                                betas=None) -> float:
    """P_D(τ) of the energy over P pilots and N_r antennas (module doc) at amplitude b (b·√β_eff in a cell: its mean
    over the (round, client) β_eff of ``betas``, a list of [K] arrays)."""
    corr = np.asarray(corr, dtype=np.float64)
    eig = np.clip(np.linalg.eigvalsh(corr), 0.0, None)

    def at(v: float) -> float:
        lam = 0.5 * b * b * v * eig + noise_var
        if np.allclose(lam, lam[0], rtol=1e-12, atol=0.0):  # i.i.d. blocks: χ²_{P·N_r} scaled
            return float(_st.chi2.sf(threshold / lam[0], df=lam.size * int(n_rx)))
        return quadratic_form_survival(threshold, lam, int(n_rx))

    return _drop_mean(at, betas)


def _drop_mean(pd_at, betas) -> float:
    """The mean of ``pd_at(β_eff)`` over the (round, client) β_eff of ``betas`` (a list of [K] arrays; None: the value
    at β_eff = 1, no cell), each distinct value computed once."""
    values, counts = (np.ones(1), np.ones(1)) if betas is None else np.unique(np.concatenate(betas), return_counts=True)
    return float(np.dot([pd_at(float(v)) for v in values], counts) / counts.sum())


def pilots_detection_probability(threshold: float, *, config, n_pilots: int, b: float, noise_var: float,
                                 betas=None) -> float | None:
    """:func:`block_detection_probability` with the blocks' correlation of ``config`` (:func:`block_covariance`); None
    where the P_D is not derived (phase CSIT, a line of sight)."""
    corr = block_covariance(config, n_pilots)
    if corr is None:
        return None
    return block_detection_probability(threshold, b=b, noise_var=noise_var, n_rx=int(config.rx_antennas), corr=corr,
                                       betas=betas)


def estimated_phase_detection(threshold: float, *, b: float, noise_var: float, csi_error: float, betas=None) -> float:
    """P_D(τ) of the signed detector r_j^s > τ with phase CSIT from an estimate (model §5.1 "Imperfect CSI"; one pilot,
    one antenna). Derived (privacy.gain_laws.estimated_phase_density): g = A + B, A with density 2λa·e^{−λa²}
    (λ = 1 + σ_e²), B ~ N(0, σ_e²/(2λ)) independent, so r^s = A·b + N(0, b²σ_e²/(2λ) + σ²/L) and
    P_D = ∫₀^∞ 2λa·e^{−λa²}·Q((τ − a·b)/s) da, s² = b²σ_e²/(2λ) + σ²/L; at b·√β_eff in a cell (mean over ``betas``)."""
    lam = 1.0 + float(csi_error)

    def at(v: float) -> float:
        bb = b * math.sqrt(v)
        sd = math.sqrt(bb * bb * float(csi_error) / (2.0 * lam) + noise_var)
        val, _ = integrate.quad(lambda a: 2 * lam * a * math.exp(-lam * a * a) * _st.norm.sf((threshold - a * bb) / sd),
                                0.0, np.inf, limit=200)
        return val

    return _drop_mean(at, betas)


def detection_theory(threshold: float, *, config, n_pilots: int, b: float, noise_var: float, betas=None,
                     angles=None) -> float | None:
    """The P_D the audit reports beside its measured rate: over P > 1 pilots :func:`pilots_detection_probability`, at
    one pilot :func:`scenarios.audit.detection.drop_detection_probability` (with ``phy.csi_error``
    :func:`estimated_phase_detection`); None with chip-timing offsets (they mix the sequences: not derived) or where
    the law is not derived. ``betas`` None without a cell."""
    if float(config.timing_offset) or (config.csi_error and (n_pilots > 1 or float(config.los_k))):
        return None
    if config.csi_error:
        return estimated_phase_detection(threshold, b=b, noise_var=noise_var, csi_error=float(config.csi_error),
                                         betas=betas)
    if n_pilots > 1:
        return pilots_detection_probability(threshold, config=config, n_pilots=n_pilots, b=b, noise_var=noise_var,
                                            betas=betas)
    return drop_detection_probability(threshold, b=b, noise_var=noise_var, csit=config.of("floras").csit,
                                      n_rx=int(config.rx_antennas), kappa=float(config.los_k), betas=betas, angles=angles)
