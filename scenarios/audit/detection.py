"""Active-sequence detection from the reference slot (model §7.1 T2, §7.5).

The base station despreads the reference slot with every a_j: r_j^s = a_jᵀ y_s. With an
orthonormal set (model §6.1)

    inactive j:  r_j^s = n_j ~ N(0, σ²/L)
    active j:    r_j^s = g_k·b + n_j,   g_k = Re(h_k) ~ N(0, ½)  (no CSIT)
                                        g_k = |h_k| ~ Rayleigh, E g² = 1  (phase pre-rotation)

Per sequence this is a simple-vs-composite test whose Neyman–Pearson (likelihood-ratio) test
is known in closed form for each CSIT mode (derived here):

- no CSIT: active r ~ N(0, b²/2 + σ²/L), inactive r ~ N(0, σ²/L); the likelihood ratio is
  increasing in |r|², so the **energy detector** |r_j^s|² > τ is NP-optimal;
- phase pre-rotation: the likelihood ratio ∫ p(g) exp((2rgb − g²b²)/(2σ²/L)) dg is increasing
  in r (every g > 0), so the **signed detector** r_j^s > τ is NP-optimal.

Default threshold (decision): the Neyman–Pearson threshold for a stated per-sequence
false-alarm probability P_FA (default 10⁻²), computed from the noise level σ²/L, which a
receiver knows: τ = (σ²/L)·χ²₁⁻¹(1 − P_FA) (energy) or τ = (σ/√L)·Φ⁻¹(1 − P_FA) (signed).
The base station also knows K (it schedules the clients), so the **top-K** rule — declare the K
sequences with the largest statistic active — is reported too; it needs no threshold.

Theory for tests: P_D(τ) = χ²₁ survival at τ/(b²/2 + σ²/L) (no CSIT) and
P_D(τ) = ∫₀^∞ 2x e^{−x²} Q((τ − x b)/(σ/√L)) dx (phase).

Rician gains (``phy.rician_k`` = κ, one antenna; model §5.1): h = A·e^{jφ} + h̃/√(κ+1), A = √(κ/(κ+1)). The tests
stay NP-optimal (derived): without CSIT, given φ, active r ~ N(A·b·cos φ, b²/(2(κ+1)) + σ²/L) and the likelihood ratio
E_φ[N(r; ±m_φ, v₁)]/N(r; 0, v₀), v₁ > v₀, is exp(r²(1/v₀ − 1/v₁)/2)·E_φ cosh(r·m_φ/v₁) up to a constant, increasing in
|r|; with phase pre-rotation every g = |h| > 0. So P_D(τ) = E_φ[noncentral χ²₁ survival at τ/v₁, non-centrality
m_φ²/v₁] (no CSIT; the φ-average by the midpoint rule) and ∫ f_Rice(x)·Q((τ − x b)/(σ/√L)) dx (phase,
f_Rice from :func:`privacy.gain_laws.gain_density`).

N_r receive antennas (model §5.2, csit "none"): r_{j,r}^s = g_{k,r}·b + m_{j,r}, i.i.d. over r, so the
likelihood ratio depends on the pilot vector only through ‖r_j^s‖² and the NP test is the **energy
detector** Σ_r (r_{j,r}^s)² > τ (derived). Inactive: ‖r_j^s‖² = (σ²/L)·χ²_{N_r}, so
τ = (σ²/L)·χ²_{N_r}⁻¹(1 − P_FA); active with large-scale gain β_eff: (b²β_eff/2 + σ²/L)·χ²_{N_r}, so
P_D(τ) = χ²_{N_r} survival at τ/(b²β_eff/2 + σ²/L) (a cell: average over the clients' β_eff). N_r = 1 is the
one-antenna detector above, bit for bit.

Rician gains at N_r antennas (model §5.2, "Rician fading with several antennas"; csit "none"): antenna r's line of
sight is A·e^{j(φ + π·r·sin θ)}, θ the client's azimuth, so given (φ, θ) the pilot vector is
N(μ, v₁·I), μ_r = A·b·cos(φ + π·r·sin θ), v₁ = b²/(2(κ+1)) + σ²/L, and ‖r_j^s‖²/v₁ is noncentral χ²_{N_r} with
non-centrality ‖μ‖²/v₁. P_D(τ) = E_φ[ncx2 survival at τ/v₁] (φ ~ U(0, 2π); ‖μ‖² is π-periodic in φ: midpoint
nodes on [0, π)) at the client's θ, and also averaged over θ ~ U(0, 2π) where the angle is drawn afresh every round
(no cell). The energy detector is no longer the NP test there: the likelihood ratio keeps a term in rᵀμ, which a
detector matched to steering vectors would use; the audit reports the energy detector's rates and this, its exact
P_D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate
from scipy import stats as _st

from .stats import clopper_pearson

__all__ = [
    "DEFAULT_FALSE_ALARM",
    "DetectionResult",
    "detector_kind",
    "detector_statistic",
    "np_threshold",
    "theoretical_detection_probability",
    "drop_detection_probability",
    "evaluate_detector",
    "top_k_accuracy",
    "roc_curve",
]

DEFAULT_FALSE_ALARM = 1e-2


def detector_kind(csit: str) -> str:
    """The NP-optimal per-sequence statistic: "energy" (csit "none") or "signed" (csit "phase")."""
    if csit == "none":
        return "energy"
    if csit == "phase":
        return "signed"
    raise ValueError(f"csit must be one of {{none, phase}} (got {csit!r})")


def detector_statistic(r_ref: np.ndarray, *, kind: str, antennas: bool = False) -> np.ndarray:
    """|r_j^s|² ("energy") or r_j^s ("signed"), same shape as ``r_ref`` (float64).

    antennas=True: ``r_ref`` [..., N_r] holds every antenna's pilot output and the energy statistic is
    Σ_r (r_{j,r}^s)² [...] (model §5.2); the signed detector has no several-antenna form (phase pre-rotation
    cannot align every antenna).
    """
    r = np.asarray(r_ref, dtype=np.float64)
    if kind not in ("energy", "signed"):
        raise ValueError(f"kind must be one of {{energy, signed}} (got {kind!r})")
    if antennas:
        if kind != "energy":
            raise ValueError("kind must be 'energy' with several receive antennas (csit = 'none', model §5.2)")
        return np.einsum("...r,...r->...", r, r)
    if kind == "energy":
        return r * r
    return r


def _check_rx(n_rx) -> int:
    if isinstance(n_rx, bool) or not isinstance(n_rx, (int, np.integer)) or n_rx < 1:
        raise ValueError(f"n_rx must be an integer ≥ 1 (receive antennas; got {n_rx!r})")
    return int(n_rx)


def np_threshold(*, noise_var: float, false_alarm, kind: str, n_rx: int = 1):
    """Neyman–Pearson threshold τ with P(statistic > τ | inactive) = ``false_alarm``.

    noise_var : σ²/L [W]; false_alarm : float or array in (0, 1); n_rx : receive antennas N_r (energy:
    τ = (σ²/L)·χ²_{N_r}⁻¹(1 − P_FA); the signed detector needs N_r = 1).
    """
    n_rx = _check_rx(n_rx)
    pfa = np.asarray(false_alarm, dtype=np.float64)
    if np.any(~(pfa > 0)) or np.any(~(pfa < 1)):
        raise ValueError(f"false_alarm must lie in (0, 1) (got {false_alarm!r})")
    if not (np.isfinite(noise_var) and noise_var > 0):
        raise ValueError(f"noise_var must be a finite number > 0 (got {noise_var!r})")
    if kind == "energy":
        tau = noise_var * _st.chi2.isf(pfa, df=n_rx)
    elif kind == "signed" and n_rx != 1:
        raise ValueError(f"kind must be 'energy' with n_rx = {n_rx} receive antennas (the signed detector is one-antenna)")
    elif kind == "signed":
        tau = np.sqrt(noise_var) * _st.norm.isf(pfa)
    else:
        raise ValueError(f"kind must be one of {{energy, signed}} (got {kind!r})")
    return float(tau) if tau.ndim == 0 else tau


ANGLE_NODES = 256  # midpoint nodes of the average over θ ~ U(0, 2π) (a smooth periodic integrand)
PHASE_NODES_ANTENNAS = 64  # midpoint nodes in φ on [0, π) (at least 8κ·N_r: the integrand's bandwidth grows so)


def _los_antenna_detection(threshold: float, *, b: float, noise_var: float, n_rx: int, kappa: float,
                           angle: float | None) -> float:
    """P_D(τ) of the energy detector over N_r antennas with a steered line of sight (module docstring)."""
    if angle is None:
        theta = (np.arange(ANGLE_NODES) + 0.5) * (2.0 * math.pi / ANGLE_NODES)
    else:
        theta = np.array([float(angle)])
        if not math.isfinite(theta[0]):
            raise ValueError(f"angle must be a finite azimuth in rad (got {angle!r})")
    n_phi = max(PHASE_NODES_ANTENNAS, int(math.ceil(8.0 * kappa * n_rx)))
    phi = (np.arange(n_phi) + 0.5) * (math.pi / n_phi)
    v1 = b * b / (2.0 * (kappa + 1.0)) + noise_var
    a2 = kappa / (kappa + 1.0) * b * b
    arg = phi[:, None, None] + math.pi * np.arange(n_rx)[None, None, :] * np.sin(theta)[None, :, None]
    nc = a2 * np.sum(np.cos(arg) ** 2, axis=2) / v1  # [φ, θ]
    return float(np.mean(_st.ncx2.sf(threshold / v1, df=n_rx, nc=nc)))



def theoretical_detection_probability(*, threshold: float, b: float, noise_var: float, csit: str,
                                      n_rx: int = 1, kappa: float = 0.0, angle: float | None = None) -> float:
    """P_D(τ) of the energy (csit "none") or signed (csit "phase") detector for an active sequence (orthonormal
    set), see the module docstring.

    b : the received reference amplitude (b·√β_eff in a cell); n_rx : receive antennas (csit "none" only);
    kappa : Rician K-factor of the gains (0: Rayleigh); angle : with κ > 0 and n_rx > 1, the client's azimuth θ
    [rad] (None: averaged over θ ~ U(0, 2π), the law without a cell).
    """
    n_rx = _check_rx(n_rx)
    kappa = float(kappa)
    if not (math.isfinite(kappa) and kappa >= 0.0):
        raise ValueError(f"kappa must be a finite number ≥ 0 (the Rician K-factor; got {kappa!r})")
    if kappa and n_rx != 1:
        if csit != "none":
            raise ValueError(f"csit must be 'none' with n_rx = {n_rx} receive antennas (got {csit!r})")
        return _los_antenna_detection(threshold, b=b, noise_var=noise_var, n_rx=n_rx, kappa=kappa, angle=angle)
    if csit == "none":
        if kappa:
            from privacy.gain_laws import los_phase_cosines

            m = math.sqrt(kappa / (kappa + 1.0)) * b * los_phase_cosines(kappa)
            v1 = b * b / (2.0 * (kappa + 1.0)) + noise_var
            return float(np.mean(_st.ncx2.sf(threshold / v1, df=1, nc=m * m / v1)))
        return float(_st.chi2.sf(threshold / (b * b / 2.0 + noise_var), df=n_rx))
    if n_rx != 1:
        raise ValueError(f"csit must be 'none' with n_rx = {n_rx} receive antennas (got {csit!r})")
    if csit == "phase":
        s = np.sqrt(noise_var)
        if kappa:
            from privacy.gain_laws import gain_density

            f = gain_density("phase", kappa)
            A = math.sqrt(kappa / (kappa + 1.0))
            val, _ = integrate.quad(lambda x: f(x) * _st.norm.sf((threshold - x * b) / s), 0, 8.0, points=[A], limit=200)
            return float(val)
        val, _ = integrate.quad(lambda x: 2 * x * np.exp(-x * x) * _st.norm.sf((threshold - x * b) / s), 0, np.inf, limit=200)
        return float(val)
    raise ValueError(f"csit must be one of {{none, phase}} (got {csit!r})")


def drop_detection_probability(threshold: float, *, b: float, noise_var: float, csit: str, n_rx: int = 1,
                               kappa: float = 0.0, betas=None, angles=None) -> float:
    """P_D at τ over a drop: :func:`theoretical_detection_probability` at b without a cell (``betas`` None); in a cell
    its mean over the (round, client) β_eff [lists of [K] arrays] at amplitude b·√β_eff, and with a line of sight at
    several antennas over the pairs (β_eff, θ) with the clients' azimuths ``angles`` (model §5.2)."""
    steered = bool(kappa) and n_rx > 1 and betas is not None
    if betas is None:
        rows, counts = np.ones((1, 1)), np.ones(1)
    else:
        cols = [np.concatenate(betas)] + ([np.concatenate(angles)] if steered else [])
        rows, counts = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)
    pd = [theoretical_detection_probability(threshold=threshold, b=b * math.sqrt(row[0]), noise_var=noise_var, csit=csit,
                                            n_rx=n_rx, kappa=kappa, angle=float(row[1]) if steered else None)
          for row in rows]
    return float(np.dot(pd, counts) / counts.sum())


@dataclass(frozen=True)
class DetectionResult:
    """Empirical detector performance over many (round, sequence) pairs.

    detection_probability, false_alarm_probability : float (point estimates; P_FA is NaN when N = K)
    detection_ci, false_alarm_ci : (float, float) two-sided Clopper–Pearson at ``confidence``
    n_active, n_inactive : int (sequence-rounds of each kind)
    threshold : float; nominal_false_alarm : float; kind : str
    """

    detection_probability: float
    false_alarm_probability: float
    detection_ci: tuple[float, float]
    false_alarm_ci: tuple[float, float]
    n_active: int
    n_inactive: int
    threshold: float
    nominal_false_alarm: float
    kind: str
    confidence: float


def _split(statistics: np.ndarray, active_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    stat = np.asarray(statistics, dtype=np.float64)
    mask = np.asarray(active_mask, dtype=bool)
    if stat.shape != mask.shape:
        raise ValueError(f"statistics and active_mask must have the same shape (got {stat.shape} and {mask.shape})")
    return stat[mask], stat[~mask]


def evaluate_detector(statistics, active_mask, *, threshold: float, nominal_false_alarm: float, kind: str,
                      confidence: float = 0.95) -> DetectionResult:
    """Rates of "statistic > threshold" on active and inactive sequences.

    statistics, active_mask : [rounds, N] float64 / bool (truth used for scoring only).
    """
    act, ina = _split(statistics, active_mask)
    if act.size == 0:
        raise ValueError("need at least one active sequence-round (K ≥ 1)")
    kd = int(np.sum(act > threshold))
    dlo, dhi = clopper_pearson(kd, act.size, confidence=confidence)
    if ina.size:
        kf = int(np.sum(ina > threshold))
        flo, fhi = clopper_pearson(kf, ina.size, confidence=confidence)
        pfa = kf / ina.size
    else:  # N = K: every sequence is active, there is nothing to mistake
        pfa, flo, fhi = math.nan, math.nan, math.nan
    return DetectionResult(kd / act.size, pfa, (float(dlo), float(dhi)), (float(flo), float(fhi)),
                           int(act.size), int(ina.size), float(threshold), float(nominal_false_alarm), kind, confidence)


def top_k_accuracy(statistics, active_mask, *, K: int) -> float:
    """Mean over rounds of |top-K(statistic) ∩ active| / K (the base station knows K)."""
    stat = np.atleast_2d(np.asarray(statistics, dtype=np.float64))
    mask = np.atleast_2d(np.asarray(active_mask, dtype=bool))
    top = np.argsort(-stat, axis=1)[:, :K]
    return float(np.take_along_axis(mask, top, axis=1).mean())


def roc_curve(statistics, active_mask, *, noise_var: float, kind: str, false_alarm_grid=None, n_rx: int = 1) -> dict:
    """Empirical ROC by sweeping the NP threshold over a grid of nominal P_FA.

    Returns {"nominal_false_alarm", "threshold", "false_alarm_probability",
    "detection_probability"} (lists of float, same length).
    """
    grid = np.logspace(-5, -0.01, 60) if false_alarm_grid is None else np.asarray(false_alarm_grid, dtype=np.float64)
    act, ina = _split(statistics, active_mask)
    tau = np.atleast_1d(np_threshold(noise_var=noise_var, false_alarm=grid, kind=kind, n_rx=n_rx))
    act_s, ina_s = np.sort(act), np.sort(ina)
    pd = (act_s.size - np.searchsorted(act_s, tau, side="right")) / act_s.size
    if ina_s.size:
        pf = (ina_s.size - np.searchsorted(ina_s, tau, side="right")) / ina_s.size
    else:  # N = K
        pf = np.full(tau.shape, np.nan)
    return {
        "nominal_false_alarm": grid.tolist(),
        "threshold": tau.tolist(),
        "false_alarm_probability": pf.tolist(),
        "detection_probability": pd.tolist(),
    }
