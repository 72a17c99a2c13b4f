"""sqSGD: local differential privacy with subsampling, rotation and quantization (model §9.3).

Per round t and admitted client k (normalization "clip": ‖s_k‖₂ ≤ U with U = C, model §2, §9):

1. coordinates I_k: d̃ = ⌊r·d⌋ of the d indices, uniformly without replacement, from the public
   stream (seed, "sqsgd-coordinates", t, k);
2. projection of s_k[I_k] onto the ℓ2 ball of radius U (a no-op under clip normalization, since
   ‖s_k[I_k]‖ ≤ ‖s_k‖ ≤ U), zero-padded to n = 2^⌈log2 d̃⌉;
3. rotation y = R·x with R = H_n·A/√n (A Rademacher diagonal from the public stream
   (seed, "sqsgd-rotation", t, k)); R is orthogonal, so ‖y‖∞ ≤ ‖y‖₂ ≤ U;
4. unbiased stochastic quantization of the n entries to K_q levels in [−U, U]
   (:func:`phy.digital.privquant.stochastic_quantize`);
5. PrivQuant, exactly ε₀-LDP (:func:`phy.digital.privquant.privquant`), whose output u_k is sent.

Server: z_k = B_{u_k}/m (unbiased for the rotated vector), x̃_k = A·H_n·z_k/√n (un-rotate), the
first d̃ entries scattered back onto I_k; summed over the admitted clients. Estimators:
``unbiased`` multiplies the sum by d/d̃ (E[ŝ] = Σ_{admitted} s_k, since each coordinate is kept with
probability d̃/d); ``sparse`` (the source's) does not (E[ŝ] = (d̃/d)·Σ s_k).

Uplink: each admitted client sends ⌈n·log2 K_q⌉ level bits plus a 32-bit seed and a 32-bit norm
field over the Shannon-rate TDMA uplink of model §5 (:class:`phy.digital.uplink.DigitalUplink`:
the same fading draw and truncation as channel inversion); clients below the truncation
threshold send nothing and are not contributors. n = d̃ when d̃ is a power of two; otherwise the
padded rotation makes every one of the n entries non-zero and all n are sent.

Privacy: each client's message is ε₀-LDP: coordinates and signs are public and data-independent,
and P(u | v)/P(u | v') ≤ e^{ε₀} for every pair of level vectors, hence also for the mixtures over
the quantization randomness that P(u | s) and P(u | s') are; the guarantee holds
against any observer, T1 and T2 (model §7.1). The adaptive norm bound of the source (with its own
budget ε_s) is not implemented: U is the fixed public bound C.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..aggregation import AggregationResult, check_updates, clipped_metrics, relative_error
from ..checks import check_choice, check_finite_positive, check_int_at_least
from ..config import PhyConfig
from ..fading import draw_rayleigh
from ..normalization import denormalize, normalize
from ..randomness import check_seed, stream
from .rotation import fwht, padded_dimension
from .privquant import best_kappa, check_mechanism, level_bits, privquant, quantization_levels, stochastic_quantize, unbiasing_constant
from .sqsgd_link import SqsgdLinkRecord
from .uplink import DigitalUplink
from ..schemes import SchemeSpec, register_scheme

__all__ = ["SEED_BITS", "NORM_BITS", "SQ_ESTIMATORS", "subsampled_dimension", "sqsgd_bits", "client_coordinates",
           "client_signs", "rotate", "unrotate", "project_to_ball", "sqsgd_encode", "sqsgd_decode",
           "SqsgdRound", "SqsgdAggregator"]

SEED_BITS = 32  # the client's public per-round seed (coordinates and rotation signs)
NORM_BITS = 32  # one float32 norm field per client and round (the source's norm report)
SQ_ESTIMATORS = ("unbiased", "sparse")


def subsampled_dimension(d: int, ratio: float) -> tuple[int, int]:
    """(d̃, n): d̃ = ⌊r·d⌋ ≥ 1 coordinates and the padded rotation length n = 2^⌈log2 d̃⌉."""
    d_tilde = int(math.floor(ratio * d))
    if d_tilde < 1:
        raise ValueError(f"sq_ratio·d must be ≥ 1 so that at least one coordinate is sent (got {ratio!r}·{d})")
    return d_tilde, padded_dimension(d_tilde)


def sqsgd_bits(n: int, levels: int) -> int:
    """Bits per admitted client and round: ⌈n·log2 K_q⌉ + SEED_BITS + NORM_BITS."""
    return level_bits(n, levels) + SEED_BITS + NORM_BITS


def client_coordinates(seed: int, round_index: int, client: int, *, d: int, d_tilde: int) -> np.ndarray:
    """[d̃] int64 sorted coordinate indices I_k, uniform without replacement (public stream)."""
    rng = stream(seed, "sqsgd-coordinates", round_index, client)
    return np.sort(rng.choice(d, size=d_tilde, replace=False))


def client_signs(seed: int, round_index: int, client: int, *, n: int) -> np.ndarray:
    """[n] float64 Rademacher diagonal of A (public stream)."""
    rng = stream(seed, "sqsgd-rotation", round_index, client)
    return rng.integers(0, 2, size=n) * 2.0 - 1.0


def rotate(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """R·x = H_n·(A·x)/√n along the last axis (n = len(signs), a power of two)."""
    return fwht(x * signs) / math.sqrt(signs.size)


def unrotate(y: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Rᵀ·y = A·H_n·y/√n (R is orthogonal: H_n symmetric, H_n² = n·I, A² = I)."""
    return signs * fwht(y) / math.sqrt(signs.size)


def project_to_ball(x: np.ndarray, radius: float) -> np.ndarray:
    """x·min(1, U/‖x‖₂): the Euclidean projection onto the ℓ2 ball of radius U."""
    norm = float(np.linalg.norm(x))
    return x if norm <= radius else x * (radius / norm)


def sqsgd_encode(s: np.ndarray, *, coords: np.ndarray, signs: np.ndarray, levels: int, bound: float,
                 epsilon0: float, kappa: int, rng_quantize: np.random.Generator,
                 rng_privatize: np.random.Generator) -> np.ndarray:
    """Client side: s [d] → privatized level indices u [n] (int64). Steps 2–5 of the module docstring."""
    n = signs.size
    x = np.zeros(n)
    x[: coords.size] = project_to_ball(np.asarray(s, dtype=np.float64)[coords], bound)
    v = stochastic_quantize(rotate(x, signs), levels=levels, bound=bound, rng=rng_quantize)
    return privquant(v[None, :], levels=levels, epsilon0=epsilon0, kappa=kappa, rng=rng_privatize)[0]


def sqsgd_decode(u: np.ndarray, *, coords: np.ndarray, signs: np.ndarray, grid: np.ndarray, m: float,
                 d: int) -> np.ndarray:
    """Server side: u [n] → [d] estimate of s restricted to I (zeros elsewhere), before any d/d̃ scaling."""
    x_tilde = unrotate(grid[u] / m, signs)
    out = np.zeros(d)
    out[coords] = x_tilde[: coords.size]
    return out


@dataclass(frozen=True)
class SqsgdParams:
    """``[phy.sqsgd]`` (model §9.3): K_q = ``levels`` ≥ 2 quantization levels, subsampling ``ratio`` r ∈ (0, 1]
    (d̃ = ⌊r·d⌋ ≥ 1), per-round LDP budget ``epsilon0`` ε₀ > 0, cap ``kappa`` κ (an integer in [−n, n − 1], n the
    padded rotation length; None → the κ that maximizes m) and the server ``estimator`` ("unbiased": scaled
    by d/d̃; "sparse": the source's)."""

    levels: int = 2
    ratio: float = 1.0
    epsilon0: float = 1.0
    kappa: int | None = None
    estimator: str = "unbiased"

    moved_from: ClassVar[dict] = {"sq_levels": "levels", "sq_ratio": "ratio", "epsilon0": "epsilon0", "kappa": "kappa",
                                  "sq_estimator": "estimator"}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        check_int_at_least("sqsgd.levels", self.levels, 2)
        if isinstance(self.ratio, bool) or not isinstance(self.ratio, (int, float)) \
                or not math.isfinite(self.ratio) or not 0 < self.ratio <= 1:
            raise ValueError(f"sqsgd.ratio must be a number in (0, 1] (got {self.ratio!r})")
        check_finite_positive("sqsgd.epsilon0", self.epsilon0)
        if self.kappa is not None and (isinstance(self.kappa, bool) or not isinstance(self.kappa, int)):
            raise ValueError(f"sqsgd.kappa must be an integer or unset (got {self.kappa!r})")
        check_choice("sqsgd.estimator", self.estimator, SQ_ESTIMATORS)
        if not active or d is None:
            return
        d_tilde = math.floor(self.ratio * d)
        if d_tilde < 1:
            raise ValueError(f"sqsgd.ratio must be ≥ 1/d = {1 / d:.3g} so that d̃ = ⌊r·d⌋ ≥ 1 (got {self.ratio!r})")
        n = 1 << (d_tilde - 1).bit_length()
        if self.kappa is not None and not -n <= self.kappa <= n - 1:
            raise ValueError(f"sqsgd.kappa must be an integer in [{-n}, {n - 1}] for the padded length n = {n} (got {self.kappa})")


@dataclass(frozen=True)
class SqsgdRound:
    """One sqSGD round: h [K] complex128, admitted [K] bool, channel_uses (Σ_admitted ⌈bits/r_k⌉),
    bits per admitted client, and the unscaled server sum ŝ_sparse [d] (√W)."""

    h: np.ndarray
    admitted: np.ndarray
    channel_uses: int
    bits: int
    s_hat_sparse: np.ndarray


class SqsgdAggregator:
    """sqSGD behind the aggregation interface (model §9, §9.3).

    x̂ = scale·ŝ + Σ_{admitted} μ_k estimates Σ_{admitted} x_k; contributors = K' (admitted).
    Diagnostics: ``admitted``, ``skipped`` (1 when K' = 0), ``channel_uses``, ``bits`` (per
    admitted client), ``m``, ``kappa`` and ``nmse``.
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.seed = check_seed(seed)
        self.params = config.of("sqsgd")
        cfg = self.config
        self.d_tilde, self.n = subsampled_dimension(self.d, self.params.ratio)
        self.bound = cfg.norm_bound(self.d)  # U = C: ‖s_k‖ ≤ C under clip normalization
        if self.params.kappa is None:
            self.kappa, self.m = best_kappa(self.n, levels=self.params.levels, epsilon0=float(self.params.epsilon0))
        else:
            check_mechanism(n=self.n, levels=self.params.levels, epsilon0=float(self.params.epsilon0), kappa=self.params.kappa)
            self.kappa = int(self.params.kappa)
            self.m = unbiasing_constant(self.n, levels=self.params.levels, epsilon0=float(self.params.epsilon0), kappa=self.kappa)
        self.grid = quantization_levels(self.params.levels, self.bound)
        self.bits = sqsgd_bits(self.n, self.params.levels)
        self.uplink = DigitalUplink(cfg, K=self.K, seed=self.seed)

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        """(AggregationResult, SqsgdRound) of one round."""
        x = check_updates(updates, K=self.K, d=self.d)
        cfg, t = self.config, int(round_index)
        nz = normalize(x, rule=cfg.normalization, C=self.bound, clip_norm=cfg.clip_norm)
        h = draw_rayleigh(self.seed, t, K=self.K)
        link = self.uplink.run_round(self.bits, round_index=t, h=h)
        adm = link.admitted
        s_hat = np.zeros(self.d)
        for k in np.flatnonzero(adm):
            coords = client_coordinates(self.seed, t, int(k), d=self.d, d_tilde=self.d_tilde)
            signs = client_signs(self.seed, t, int(k), n=self.n)
            u = sqsgd_encode(nz.s[k], coords=coords, signs=signs, levels=self.params.levels, bound=self.bound,
                             epsilon0=float(self.params.epsilon0), kappa=self.kappa,
                             rng_quantize=stream(self.seed, "sqsgd-quantize", t, int(k)),
                             rng_privatize=stream(self.seed, "sqsgd-privquant", t, int(k)))
            s_hat += sqsgd_decode(u, coords=coords, signs=signs, grid=self.grid, m=self.m, d=self.d)
        k_adm = int(adm.sum())
        trace = SqsgdRound(h, adm, link.channel_uses, self.bits, s_hat.copy())
        if self.params.estimator == "unbiased":
            s_hat *= self.d / self.d_tilde
        estimate = np.zeros(self.d) if k_adm == 0 else denormalize(s_hat, nz, mu_sum=float(nz.mu[adm].sum()))
        err = relative_error(estimate, x[adm].sum(axis=0))
        diag = {"admitted": float(k_adm), "skipped": float(k_adm == 0), "channel_uses": float(link.channel_uses),
                "bits": float(self.bits), "m": self.m, "kappa": float(self.kappa), "nmse": err,
                **clipped_metrics(estimate, nz, adm)}
        return AggregationResult(estimate, k_adm, err, diag), trace

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        return self.aggregate_traced(updates, round_index=round_index)[0]

    def describe(self) -> dict:
        cfg = self.config
        return {
            "scheme": "sqsgd", **cfg.to_dict(), "d_tilde": self.d_tilde, "rotation_length": self.n,
            "bound_U": self.bound, "kappa_used": self.kappa, "m": self.m, "bits_per_client": self.bits,
            "mechanism": "PrivQuant, P(u|v) proportional to exp(epsilon0*1[M(u,v) > kappa]); exactly epsilon0-LDP per "
                         "client and round against any observer (T1 and T2)",
            "uplink": "Shannon-rate TDMA over the shared fading draw, truncation |h|^2 >= g_th (model §5)",
            "adaptive_norm": "not implemented (U = C, fixed and public)",
        }


SQ_ESTIMATORS = ("unbiased", "sparse")  # server estimators (model §9.3)


register_scheme(SchemeSpec(
    name="sqsgd",
    aggregator=lambda config, *, K, d, seed, key, relation: SqsgdAggregator(config, K=K, d=d, seed=seed),
    link_record=SqsgdLinkRecord, params=SqsgdParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "sqsgd": {"levels": 4, "epsilon0": 4.0}},
    description="sqSGD: rotated, subsampled, PrivQuant-quantized updates, epsilon0-LDP per client (model §9.3)",
))
