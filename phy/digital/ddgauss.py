"""DDGauss: distributed discrete Gaussian with secure aggregation (model §9.2; Kairouz, Liu & Steinke 2021).

Parameters: clip c = the public clip norm R [model units]; bit width B (modulus m = 2^B); grid γ
[model units]; local noise std σ [model units]; β (conditional-rounding failure bound, default
e^{−1/2}); k (standard deviations of the modular sum kept inside the modulus, default 4);
d_pad = 2^⌈log2 d⌉.

Per round t, client k (of the scheduled K):

1. s_k = clip_c(x_k − μ_k·1) (the ``clip`` normalization with C = c, so its scale is 1; μ_k goes
   on the control channel, unprotected, as for every scheme), zero-padded to d_pad;
2. rotation u_k = H·D·s_k (:mod:`phy.digital.rotation`), D from the public per-round stream
   (seed, "ddgauss-rotation", t);
3. conditional randomized rounding of u_k/γ: each coordinate rounds up with probability equal
   to its fractional part; the whole vector is redrawn until ‖ũ_k‖₂ ≤ Δ₂ with
   Δ₂ = min{c/γ + √d_pad, √((c/γ)² + d_pad/4 + √(2 ln(1/β))·(c/γ + √d_pad/2))};
4. z_k = ũ_k + N_ℤ(0, (σ_k/γ)²) i.i.d. (exact sampler, :mod:`phy.digital.discrete_gaussian`),
   reduced mod m into [−m/2, m/2);
5. the d_pad·B bits of z_k go over the digital uplink (:mod:`phy.digital.uplink`).

Contributors (choice, from model §5): the digital uplink truncates like channel inversion, so
only the K′ admitted clients (|h_k|² ≥ g_th) send. Admission depends on the channel alone, so K′
is public, and each admitted client draws its noise with σ_k = σ·√(K/K′): the aggregate noise
has the variance K·σ² of K contributors at σ, and the RDP bound of model §9.2 at (n = K′, σ_k) is
at most the bound at (n = K, σ) (l₂ and l₁ are equal, τ is smaller: fewer and smaller terms),
so the accountant's event DDGaussRound(n = K, σ) bounds every round. K′ = 0: nothing is sent,
the round is skipped (diagnostic ``skipped`` = 1).

Server: secure aggregation reveals only Σ_k z_k mod m, computed exactly in int64 (each partial
sum is reduced, so |values| < 2^B ≤ 2^48); it maps the sum into [−m/2, m/2), multiplies by γ,
undoes the rotation and the padding, and adds Σ_{admitted} μ_k.

Grid from the bit budget (model §9.2) when γ is not given: 2^B = 2k·√(c²n²/d_pad + (γ²/4 + σ²)·n)/γ
with n = K (an upper bound on the contributors, so the budget holds for every K′ ≤ K), i.e.
γ = 2k·√(c²n²/d_pad + n·σ²) / √(2^{2B} − k²·n)   (needs 2^{2B} > k²·n).

Diagnostics: ``admitted``, ``skipped``, ``grid``, ``local_std_per_client`` (σ_k), ``delta2``,
``redraws`` (conditional-rounding redraws summed over clients), ``wrapped_fraction`` (fraction
of the d_pad coordinates whose integer sum left [−m/2, m/2)), ``bits_per_client`` (d_pad·B),
``channel_uses`` (Σ_{admitted} ⌈d_pad·B / r_k⌉) and ``nmse``.

Randomness: rounding of client k in attempt a from (seed, "ddgauss-rounding", t, k, a); its noise
from (seed, "ddgauss-noise", t, k). The rotation acts on the whole vector, so ``chunk_size`` does
not enter (results are trivially chunk-independent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..aggregation import AggregationResult, check_updates, clipped_metrics, noise_metrics, relative_error
from ..checks import check_finite_nonnegative, check_finite_positive, check_open_unit
from ..config import PhyConfig
from ..fading import draw_rayleigh
from ..normalization import denormalize, normalize
from ..link_records import BaselineRecord, fmt
from ..randomness import check_seed, stream
from ..schemes import SchemeSpec, register_scheme
from .discrete_gaussian import sample_discrete_gaussian
from .rotation import inverse_randomized_hadamard, padded_dimension, rademacher_signs, randomized_hadamard
from .uplink import DigitalUplink

__all__ = ["grid_from_bits", "resolve_grid", "rounding_norm_bound", "conditional_rounding", "wrap_mod", "modular_sum",
           "DDGaussAggregator", "MAX_ROUNDING_ATTEMPTS"]

MAX_ROUNDING_ATTEMPTS = 1000


@dataclass(frozen=True)
class DDGaussParams:
    """``[phy.ddgauss]`` (model §9.2): B = ``bits`` per coordinate (modulus 2^B, 2 ≤ B ≤ 48), the rounding
    ``grid`` γ [model units] (None: from the bit budget), each client's discrete-Gaussian noise std
    ``local_std`` σ ≥ 0 [model units], the conditional-rounding failure bound ``beta`` ∈ (0, 1) and
    ``k_stddevs`` > 0, standard deviations of the modular sum kept inside the modulus."""

    bits: int = 16
    grid: float | None = None
    local_std: float = 0.0
    beta: float = math.exp(-0.5)
    k_stddevs: float = 4.0

    moved_from: ClassVar[dict] = {"dd_bits": "bits", "dd_grid": "grid", "dd_local_std": "local_std", "dd_beta": "beta",
                                  "dd_k_stddevs": "k_stddevs"}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        if isinstance(self.bits, bool) or not isinstance(self.bits, int) or not 2 <= self.bits <= DD_BITS_MAX:
            raise ValueError(f"ddgauss.bits must be an integer with 2 ≤ bits ≤ {DD_BITS_MAX} (got {self.bits!r})")
        if self.grid is not None:
            check_finite_positive("ddgauss.grid", self.grid)
        check_finite_nonnegative("ddgauss.local_std", self.local_std)
        check_open_unit("ddgauss.beta", self.beta)
        check_finite_positive("ddgauss.k_stddevs", self.k_stddevs)
        if active and self.grid is None:
            # the budget check needs K only; d (when known) only sets the value of γ
            grid_from_bits(bits=self.bits, n=K, d=1 if d is None else d, clip=float(phy.clip_norm),
                           local_std=float(self.local_std), k_stddevs=float(self.k_stddevs))


def grid_from_bits(*, bits: int, n: int, d: int, clip: float, local_std: float, k_stddevs: float) -> float:
    """γ = 2k·√(c²n²/d_pad + n·σ²) / √(2^{2B} − k²n) [model units] (model §9.2); d is padded here."""
    d_pad = padded_dimension(d)
    room = 4.0 ** bits - k_stddevs**2 * n
    if room <= 0:
        raise ValueError(f"dd_bits must satisfy 2^(2*dd_bits) > dd_k_stddevs^2 * n = {k_stddevs**2 * n:g} (got dd_bits = {bits})")
    num = clip**2 * n**2 / d_pad + n * local_std**2
    if num == 0:
        raise ValueError("clip norm and dd_local_std cannot both be zero when dd_grid is derived from dd_bits")
    return 2.0 * k_stddevs * math.sqrt(num) / math.sqrt(room)


def resolve_grid(config: PhyConfig, *, K: int, d: int) -> tuple[float, str]:
    """(γ, where it came from): ``dd_grid`` if set, else :func:`grid_from_bits` with n = K (the aggregator
    and the accountant both call this, so they use the same γ)."""
    p = config.of("ddgauss")
    if p.grid is not None:
        return float(p.grid), "phy.ddgauss.grid"
    grid = grid_from_bits(bits=p.bits, n=int(K), d=int(d), clip=float(config.clip_norm),
                          local_std=float(p.local_std), k_stddevs=float(p.k_stddevs))
    return grid, f"from the bit budget (B = {p.bits}, k = {p.k_stddevs}, n = K = {K})"


def rounding_norm_bound(*, clip: float, grid: float, d: int, beta: float) -> float:
    """Δ₂ = min{c/γ + √d, √((c/γ)² + d/4 + √(2 ln(1/β))·(c/γ + √d/2))} (d the padded dimension)."""
    a = clip / grid
    return min(a + math.sqrt(d), math.sqrt(a * a + d / 4.0 + math.sqrt(2.0 * math.log(1.0 / beta)) * (a + math.sqrt(d) / 2.0)))


def conditional_rounding(u: np.ndarray, *, bound: float, seed: int, round_index: int, client: int) -> tuple[np.ndarray, int]:
    """Randomized rounding of the scaled vector ``u`` [n] to ℤ^n, redrawn until ‖ũ‖₂ ≤ ``bound``.

    Each coordinate is ⌊u⌋ + Bernoulli(u − ⌊u⌋) (unbiased before conditioning). Returns
    (ũ int64 [n], redraws). Raises RuntimeError after :data:`MAX_ROUNDING_ATTEMPTS` attempts.
    """
    base = np.floor(u)  # integers held exactly in float64 (|u| < 2^53)
    frac = u - base
    for attempt in range(MAX_ROUNDING_ATTEMPTS):
        v = stream(seed, "ddgauss-rounding", round_index, client, attempt).random(u.shape[-1]) < frac
        v = base + v
        if float(np.dot(v, v)) <= bound * bound:
            return v.astype(np.int64), attempt
    raise RuntimeError(f"conditional rounding failed {MAX_ROUNDING_ATTEMPTS} times (client {client}, round {round_index}): "
                       "dd_beta too small or dd_grid inconsistent with the clip norm")


def wrap_mod(v: np.ndarray, bits: int) -> np.ndarray:
    """v mod 2^B mapped into [−2^{B−1}, 2^{B−1}) (int64).

    ((v + 2^{B−1}) mod 2^B) − 2^{B−1}, the mod taken as a bit mask: in two's complement
    x & (2^B − 1) equals x mod 2^B ∈ [0, 2^B) for negative x too (an integer division is ~4× slower).
    """
    m = np.int64(1) << np.int64(bits)
    half = m >> np.int64(1)
    return ((np.asarray(v, dtype=np.int64) + half) & (m - np.int64(1))) - half


def modular_sum(z: np.ndarray, bits: int) -> np.ndarray:
    """Σ_k z_k mod 2^B in [−2^{B−1}, 2^{B−1}), exactly: rows added one by one, reduced after each add."""
    z = np.asarray(z, dtype=np.int64)
    acc = np.zeros(z.shape[-1], dtype=np.int64)
    for row in z:
        acc = wrap_mod(acc + row, bits)  # |acc + row| < 2^B ≤ 2^48: no overflow
    return acc


class DDGaussAggregator:
    """DDGauss behind the aggregation interface (see the module docstring)."""

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.seed = check_seed(seed)
        self.d_pad = padded_dimension(self.d)
        self.clip = float(config.clip_norm)
        self.params = p = config.of("ddgauss")
        self.local_std = float(p.local_std)
        self.grid, self.grid_source = resolve_grid(config, K=self.K, d=self.d)
        self.delta2 = rounding_norm_bound(clip=self.clip, grid=self.grid, d=self.d_pad, beta=float(p.beta))
        self.bits_per_client = self.d_pad * int(p.bits)
        self.uplink = DigitalUplink(config, K=self.K, seed=self.seed)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        x = check_updates(updates, K=self.K, d=self.d)
        cfg, t, B = self.config, int(round_index), int(self.params.bits)
        h = draw_rayleigh(self.seed, t, K=self.K)
        link = self.uplink.run_round(self.bits_per_client, round_index=t, h=h)
        adm = link.admitted
        k_adm = int(adm.sum())
        diag = {"admitted": float(k_adm), "skipped": float(k_adm == 0), "grid": self.grid, "delta2": self.delta2,
                "bits_per_client": float(self.bits_per_client), "channel_uses": float(link.channel_uses)}
        if k_adm == 0:
            err = relative_error(np.zeros(self.d), np.zeros(self.d))
            diag.update({"local_std_per_client": 0.0, "redraws": 0.0, "wrapped_fraction": 0.0, "nmse": err,
                         **noise_metrics(np.zeros(self.d), np.zeros(self.d))})
            return AggregationResult(np.zeros(self.d), 0, err, diag)
        nz = normalize(x, rule="clip", C=self.clip, clip_norm=self.clip)  # s_k = clip_c(x_k − μ_k), scale 1
        signs = rademacher_signs(self.seed, "ddgauss-rotation", t, n=self.d_pad)
        sigma_k = self.local_std * math.sqrt(self.K / k_adm)
        clients = np.flatnonzero(adm)
        padded = np.zeros((k_adm, self.d_pad))
        padded[:, : self.d] = nz.s[clients]
        u = randomized_hadamard(padded, signs) / self.grid
        z = np.empty((k_adm, self.d_pad), dtype=np.int64)
        redraws = 0
        for row, k in enumerate(clients):
            v, r = conditional_rounding(u[row], bound=self.delta2, seed=self.seed, round_index=t, client=int(k))
            redraws += r
            v += sample_discrete_gaussian(stream(self.seed, "ddgauss-noise", t, int(k)), sigma_k / self.grid, (self.d_pad,))
            z[row] = v
        true_sum = z.sum(axis=0)  # the integer sum without wrapping (simulator view, for the diagnostic)
        half = 1 << (B - 1)
        wrapped = float(np.mean((true_sum < -half) | (true_sum >= half)))
        agg = modular_sum(wrap_mod(z, B), B)  # what secure aggregation reveals
        s_hat = inverse_randomized_hadamard(agg.astype(np.float64) * self.grid, signs)[: self.d]
        estimate = denormalize(s_hat, nz, mu_sum=float(nz.mu[adm].sum()))
        err = relative_error(estimate, x[adm].sum(axis=0))
        diag.update({"local_std_per_client": sigma_k, "redraws": float(redraws), "wrapped_fraction": wrapped, "nmse": err,
                     **clipped_metrics(estimate, nz, adm)})
        return AggregationResult(estimate, k_adm, err, diag)

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        return self.aggregate(updates, round_index=round_index), None

    def describe(self) -> dict:
        return {
            "scheme": "ddgauss", **self.config.to_dict(),
            "d_pad": self.d_pad, "grid": self.grid, "grid_source": self.grid_source, "delta2": self.delta2,
            "bits_per_client": self.bits_per_client, "modulus": f"2^{self.params.bits}",
            "contributors": "clients admitted by the digital uplink's truncation (|h|^2 >= g_th); each draws "
                            "noise std dd_local_std*sqrt(K/K') so the aggregate noise equals K contributors'",
            "threat_model": "the server, given secure aggregation (it sees only the modular sum)",
            "uplink": "Shannon-rate TDMA over the shared fading draw (model §5)",
        }


DD_BITS_MAX = 48  # scaled coordinates stay exact in float64 and modular sums in int64


class DDGaussRecord(BaselineRecord):
    diagnostics = ("grid", "delta2", "local_std_per_client", "redraws", "wrapped_fraction", "bits_per_client")

    @staticmethod
    def detail(s: dict) -> str:
        m, adm = s.get("diagnostics_mean", {}), s["admitted"]
        return (f"admitted mean={fmt(adm['mean'])} skipped={s['skipped_rounds']} grid={fmt(m.get('grid'))} "
                f"wrapped={fmt(m.get('wrapped_fraction'))} redraws/round={fmt(m.get('redraws'))} "
                f"bits/client={fmt(m.get('bits_per_client'))}")


register_scheme(SchemeSpec(
    name="ddgauss",
    aggregator=lambda config, *, K, d, seed, key, relation: DDGaussAggregator(config, K=K, d=d, seed=seed),
    link_record=DDGaussRecord, params=DDGaussParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "ddgauss": {"bits": 20, "local_std": 0.05}},
    description="distributed discrete Gaussian with secure aggregation over a digital uplink (model §9.2)",
))
