"""Distinguishing game between neighbouring inputs of one FLORAS round (model §7.5).

Setup (decided here; the auditor may choose the worst case, since a DP guarantee holds for
every pair of neighbouring inputs):

- K scheduled clients, model dimension d, ``clip`` normalization with public clip norm R
  (model §2; its sensitivity needs no assumption on C_max). s_k = (C/R)·clip_R(x_k − μ_k).
- The canary is client 0 with x_c = R·u, u a fixed zero-mean unit vector (so ‖s_c‖ = C).
- The K − 1 background clients hold fixed zero-mean updates orthogonal to u, of norm R/2,
  known to the adversary.
- World 0: the canary is present. World 1 (``neighbour``):
  ``replace`` — its update is replaced by −x_c (‖Δs‖ = 2C: S = 2C/b, model §7.2, replacement);
  ``zero``    — its update is replaced by 0 (the client still sends its reference slot;
  ‖Δs‖ = C: S = C/b).
- Trial i of world w is round 2i + w: fresh fading, noise, permutation and (T1) Cauchy noise.

Test statistics (large ⇒ "world 1"):

T1 (the adversary sees x̂, hence ŝ = (x̂ − Σμ_k)·C/R, and knows the background):
    y = ŝ/b − Σ_{k≠c} s_k/b; under the idealized release of model §7.2, y = s_c^{(w)}/b + e with
    e isotropic multivariate Cauchy of scale γ = N − K, density ∝ (γ² + ‖·‖²)^{−(d+1)/2}.
    The Neyman–Pearson statistic of world 1 against world 0 is the log-likelihood ratio
        Λ = ((d+1)/2)·[ln(γ² + ‖y − μ₀‖²) − ln(γ² + ‖y − μ₁‖²)],  μ_w = s_c^{(w)}/b,
    which is robust to the heavy tails (it compares distances, not coordinates). The scale used
    is γ plus the Cauchy scale of the active clients' own decoding errors at the configured SNR
    (:func:`t1_scale`), so the statistic stays robust at γ = 0.
T2 (the base station sees the chips of every slot and knows A, b, K and the canary):
    it decodes v_j = b·r_j^i/r_j^s, takes the K sequences with the largest NP detector
    statistic (:mod:`scenarios.audit.detection`) and scores
        T = −max_{j ∈ top-K} cos(v_j, u)
    (world 0: the canary's sequence decodes to ≈ u, cos ≈ 1; world 1: ≈ −u or 0).
Any statistic gives a valid lower bound; these are strong ones, not proven optimal at finite SNR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from phy.aggregation import check_updates
from phy.config import PhyConfig
from phy.normalization import normalize
from phy.randomness import stream

from .bound import EpsilonLowerBound, empirical_epsilon_lower
from .detection import detector_kind, detector_statistic
from .stats import check_confidence

__all__ = ["THREATS", "NEIGHBOURS", "CanaryWorlds", "make_canary_worlds", "t1_scale", "t1_statistic", "t2_statistic", "GameResult", "play_game"]

THREATS = ("T1", "T2")
NEIGHBOURS = ("replace", "zero")


@dataclass(frozen=True)
class CanaryWorlds:
    """The two neighbouring inputs of the game (model units) and the canary direction.

    x0, x1 : [K, d] float64 (row 0 is the canary client); u : [d] unit, zero-mean; clip_norm : R.
    """

    x0: np.ndarray
    x1: np.ndarray
    u: np.ndarray
    clip_norm: float
    neighbour: str


def make_canary_worlds(seed: int, *, K: int, d: int, neighbour: str = "replace", clip_norm: float = 1.0) -> CanaryWorlds:
    """Build the worlds of the module docstring from keyed streams ``(seed, "audit-canary")``."""
    if neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {{{', '.join(NEIGHBOURS)}}} (got {neighbour!r})")
    if d < 3:
        raise ValueError(f"d must be ≥ 3 for a zero-mean canary with orthogonal background (got {d})")
    if K < 1:
        raise ValueError(f"K must be ≥ 1 (got {K})")
    rng = stream(seed, "audit-canary")
    ones = np.ones(d) / np.sqrt(d)
    u = rng.standard_normal(d)
    u -= (u @ ones) * ones
    u /= np.linalg.norm(u)
    bg = rng.standard_normal((K - 1, d))
    bg -= np.outer(bg @ ones, ones) + np.outer(bg @ u, u)
    if K > 1:
        bg *= (clip_norm / 2.0) / np.linalg.norm(bg, axis=1, keepdims=True)
    x0 = np.vstack([clip_norm * u[None, :], bg])
    x1 = x0.copy()
    x1[0] = -clip_norm * u if neighbour == "replace" else 0.0
    return CanaryWorlds(x0=x0, x1=x1, u=u, clip_norm=float(clip_norm), neighbour=neighbour)


def t1_scale(*, gamma: float, K: int, noise_var: float, b: float) -> float:
    """Scale used by the T1 statistic: γ + K·√2·(σ/√L)/b (choice, fixed before any trial).

    The second term is the scale of the active clients' own decoding error at finite SNR: each
    client's error n_i/g_k (ŝ/b units) is a ratio of zero-mean Gaussians, Cauchy with scale
    √2·(σ/√L)/b for g_k ~ N(0, ½), and K of them add up. It keeps the statistic robust when
    γ = 0, where the release is otherwise modelled as noise-free.
    """
    return float(gamma) + K * math.sqrt(2.0 * noise_var) / b


def t1_statistic(y: np.ndarray, mu0: np.ndarray, mu1: np.ndarray, *, gamma: float) -> float:
    """Cauchy log-likelihood ratio Λ of world 1 vs world 0 for the release y [d] (ŝ/b units)."""
    d = y.shape[0]
    q0 = float(np.sum((y - mu0) ** 2))
    q1 = float(np.sum((y - mu1) ** 2))
    if gamma == 0:
        return q0 - q1
    g2 = float(gamma) ** 2
    return 0.5 * (d + 1) * (np.log(g2 + q0) - np.log(g2 + q1))


def t2_statistic(decodes: np.ndarray, r_ref: np.ndarray, u: np.ndarray, *, K: int, kind: str,
                 antennas: bool = False) -> float:
    """T = −max_{j ∈ top-K} cos(v_j, u) from the per-sequence decodes [N, d] and reference r^s [N]
    (``antennas``: r^s [N, N_r] of every antenna, detector Σ_r (r_{j,r}^s)², model §5.2)."""
    stat = detector_statistic(r_ref, kind=kind, antennas=antennas)
    top = np.argsort(-stat)[:K]
    v = decodes[top]
    norms = np.linalg.norm(v, axis=1)
    cos = (v @ u) / np.where(norms > 0, norms, 1.0)
    return -float(np.max(cos))


@dataclass(frozen=True)
class GameResult:
    """Scores of both worlds and the ε lower bound they give."""

    threat: str
    neighbour: str
    scores_world0: np.ndarray
    scores_world1: np.ndarray
    bound: EpsilonLowerBound
    statistic: str


def _game_config(config: PhyConfig, clip_norm: float) -> PhyConfig:
    data = config.to_dict()
    data.update(scheme="floras", normalization="clip", clip_norm=float(clip_norm))
    return PhyConfig.from_dict(data)


def play_game(config: PhyConfig, *, threat: str, K: int, d: int, trials: int, seed: int, key: bytes,
              delta: float, confidence: float = 0.95, neighbour: str = "replace") -> GameResult:
    """Play ``trials`` rounds in each world and bound ε (see the module docstring).

    config : PhyConfig of the FLORAS link (N, L, snr_db, sequences, csit, path, power, C);
    the game overrides normalization with ``clip`` (R = 1). trials : per world (≥ 4).
    """
    if threat not in THREATS:
        raise ValueError(f"threat must be one of {{T1, T2}} (got {threat!r})")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 4:
        raise ValueError(f"trials must be an integer ≥ 4 (got {trials!r})")
    check_confidence(confidence)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1) (got {delta!r})")
    worlds = make_canary_worlds(seed, K=K, d=d, neighbour=neighbour)
    cfg = _game_config(config, worlds.clip_norm).validate(K=K, d=d)
    C = cfg.norm_bound(d)
    b = float(np.sqrt(cfg.power))
    nz = [normalize(check_updates(x, K=K), rule="clip", C=C, clip_norm=worlds.clip_norm) for x in (worlds.x0, worlds.x1)]
    scores = np.empty((2, trials))
    if threat == "T1":
        from phy.floras import FlorasAggregator

        agg = FlorasAggregator(cfg, K=K, d=d, seed=seed, key=key)
        gamma = t1_scale(gamma=cfg.of("floras").N - K, K=K, noise_var=cfg.noise_variance / cfg.L, b=b)
        background = nz[0].s[1:].sum(axis=0) / b  # identical in both worlds
        mu0, mu1 = nz[0].s[0] / b, nz[1].s[0] / b
        for w in (0, 1):
            x, n_w = (worlds.x0, worlds.x1)[w], nz[w]
            for i in range(trials):
                res = agg.aggregate(x, round_index=2 * i + w)
                s_hat = (res.sum_estimate - n_w.mu.sum()) / n_w.scale  # public: μ_k (control channel), R, C
                scores[w, i] = t1_statistic(s_hat / b - background, mu0, mu1, gamma=gamma)
        statistic = "Cauchy log-likelihood ratio of the released estimate (background known)"
    else:
        from .signals import T2Uplink

        up = T2Uplink(cfg, K=K, seed=seed, key=key)
        kind = detector_kind(cfg.of("floras").csit)
        for w in (0, 1):
            for i in range(trials):
                view, _ = up.round(nz[w].s, round_index=2 * i + w)
                many = view.n_rx > 1
                scores[w, i] = t2_statistic(view.decodes(), view.r_pilots if many else view.r_ref, worlds.u, K=K,
                                            kind=kind, antennas=many)
        statistic = "-max cosine of the canary direction over the decodes of the K detected sequences"
    bound = empirical_epsilon_lower(scores[0], scores[1], delta=delta, confidence=confidence)
    return GameResult(threat, neighbour, scores[0], scores[1], bound, statistic)
