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
against any observer, T1 and T2 (model §7.1).

Options (``[phy.sqsgd]``, :class:`phy.digital.sqsgd_params.SqsgdParams`, docs/sqsgd.md):

- ``norm_bound = "adaptive"`` (the source's adaptive norm shrinkage): step 3's y is clipped entrywise to
  [−U_t, U_t] and quantized on levels of [−U_t, U_t]; each admitted client also sends
  Z_k = ScalarDP_{ε_s, k, C}(‖y_k‖∞) (:mod:`phy.digital.scalardp`), and the server sets
  U_{t+1} = min(U_t, max(max_k Z_k, C/k)), U_0 = C (the round's report is (ε₀ + ε_s)-LDP);
- ``accumulation = true``: the client privatizes its accumulated v_k with momentum correction and factor
  masking (:mod:`phy.digital.sqsgd_state`; needs the clients' ids);
- ``mechanism = "pm"``: the piecewise mechanism on s_k/C instead of steps 1–5 (:mod:`phy.digital.piecewise`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..aggregation import AggregationResult, check_updates, noise_metrics, relative_error, stream_chunks
from ..config import PhyConfig
from ..fading import draw_rayleigh
from ..normalization import clipped_rows
from ..row_pass import add_clipped_rows, clipped_and_raw
from ..randomness import check_seed, stream
from .rotation import fwht, padded_dimension
from .piecewise import pm_dimensions, piecewise_vector
from .privquant import best_kappa, check_mechanism, level_bits, privquant, quantization_levels, stochastic_quantize, unbiasing_constant
from .scalardp import scalardp
from .sqsgd_coder import SqsgdCoder
from .sqsgd_link import SqsgdLinkRecord
from .sqsgd_params import SQ_ESTIMATORS, SqsgdParams
from .sqsgd_state import ClientAccumulators
from .uplink import DigitalUplink
from ..schemes import SchemeSpec, register_scheme

__all__ = ["SEED_BITS", "NORM_BITS", "PM_VALUE_BITS", "SQ_ESTIMATORS", "SqsgdParams", "subsampled_dimension",
           "sqsgd_bits", "pm_bits", "client_coordinates", "client_signs", "rotate", "unrotate", "project_to_ball",
           "sqsgd_rotated", "sqsgd_privatize", "sqsgd_encode", "sqsgd_decode", "SqsgdRound", "SqsgdAggregator"]

SEED_BITS = 32  # the client's public per-round seed (coordinates and rotation signs)
NORM_BITS = 32  # one float32 norm field per client and round (the source's norm report)
PM_VALUE_BITS = 32  # the piecewise mechanism sends each of its k values as a float32


def subsampled_dimension(d: int, ratio: float) -> tuple[int, int]:
    """(d̃, n): d̃ = ⌊r·d⌋ ≥ 1 coordinates and the padded rotation length n = 2^⌈log2 d̃⌉."""
    d_tilde = int(math.floor(ratio * d))
    if d_tilde < 1:
        raise ValueError(f"sq_ratio·d must be ≥ 1 so that at least one coordinate is sent (got {ratio!r}·{d})")
    return d_tilde, padded_dimension(d_tilde)


def sqsgd_bits(n: int, levels: int) -> int:
    """Bits per admitted client and round: ⌈n·log2 K_q⌉ + SEED_BITS + NORM_BITS."""
    return level_bits(n, levels) + SEED_BITS + NORM_BITS


def pm_bits(k: int) -> int:
    """Bits per admitted client and round of the piecewise mechanism: k·PM_VALUE_BITS + SEED_BITS (public coordinates)."""
    return int(k) * PM_VALUE_BITS + SEED_BITS


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
    norm = float(np.sqrt(np.add.reduce(x * x)))  # pairwise: BLAS's dot (np.linalg.norm) follows its thread count
    return x if norm <= radius else x * (radius / norm)


def sqsgd_rotated(s: np.ndarray, *, coords: np.ndarray, signs: np.ndarray, radius: float) -> np.ndarray:
    """Steps 1–3: y = R·pad(P_radius(s[I])) [n]; ‖y‖∞ ≤ ‖y‖₂ ≤ radius."""
    x = np.zeros(signs.size)
    x[: coords.size] = project_to_ball(np.asarray(s, dtype=np.float64)[coords], radius)
    return rotate(x, signs)


def sqsgd_privatize(y: np.ndarray, *, levels: int, bound: float, epsilon0: float, kappa: int,
                    rng_quantize: np.random.Generator, rng_privatize: np.random.Generator) -> np.ndarray:
    """Steps 4–5: y clipped to [−U, U] entrywise, quantized to K_q levels of [−U, U], PrivQuant → u [n] (int64)."""
    v = stochastic_quantize(np.clip(y, -bound, bound), levels=levels, bound=bound, rng=rng_quantize)
    return privquant(v[None, :], levels=levels, epsilon0=epsilon0, kappa=kappa, rng=rng_privatize)[0]


def sqsgd_encode(s: np.ndarray, *, coords: np.ndarray, signs: np.ndarray, levels: int, bound: float,
                 epsilon0: float, kappa: int, rng_quantize: np.random.Generator,
                 rng_privatize: np.random.Generator) -> np.ndarray:
    """Client side with the fixed bound: s [d] → privatized level indices u [n] (int64). Steps 2–5 above."""
    y = sqsgd_rotated(s, coords=coords, signs=signs, radius=bound)
    return sqsgd_privatize(y, levels=levels, bound=bound, epsilon0=epsilon0, kappa=kappa,
                           rng_quantize=rng_quantize, rng_privatize=rng_privatize)


def sqsgd_decode(u: np.ndarray, *, coords: np.ndarray, signs: np.ndarray, grid: np.ndarray, m: float,
                 d: int) -> np.ndarray:
    """Server side: u [n] → [d] estimate of s restricted to I (zeros elsewhere), before any d/d̃ scaling."""
    x_tilde = unrotate(grid[u] / m, signs)
    out = np.zeros(d)
    out[coords] = x_tilde[: coords.size]
    return out


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
    admitted client), ``m``, ``kappa``, ``nmse``, and ``bound_U`` (the round's quantization bound U_t).
    With the adaptive bound or accumulation the aggregator holds state across rounds (U_t; the clients'
    accumulators) in the memory of the run, and refuses rounds out of order (a resumed run cannot restore it).
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.seed = check_seed(seed)
        self.params = p = config.of("sqsgd")
        cfg = self.config
        self.bound = cfg.norm_bound(self.d)  # C: ‖s_k‖ ≤ C under clip normalization
        if p.mechanism == "pm":
            self.d_tilde = self.n = self.pm_k = pm_dimensions(float(p.epsilon0), self.d)
            self.kappa, self.m, self.bits = None, 1.0, pm_bits(self.pm_k)  # no cap; PM needs no rescaling (m = 1)
        else:
            self.d_tilde, self.n = subsampled_dimension(self.d, p.ratio)
            if p.kappa is None:
                self.kappa, self.m = best_kappa(self.n, levels=p.levels, epsilon0=float(p.epsilon0))
            else:
                check_mechanism(n=self.n, levels=p.levels, epsilon0=float(p.epsilon0), kappa=p.kappa)
                self.kappa = int(p.kappa)
                self.m = unbiasing_constant(self.n, levels=p.levels, epsilon0=float(p.epsilon0), kappa=self.kappa)
            self.bits = sqsgd_bits(self.n, p.levels)
        self.grid = quantization_levels(p.levels, self.bound)
        self.uplink = DigitalUplink(cfg, K=self.K, seed=self.seed)
        self.bound_t = self.bound  # U_t of the adaptive bound (U_0 = C)
        self.accumulators = ClientAccumulators(self.d, float(p.momentum)) if p.accumulation else None
        self._stateful = p.adaptive or p.accumulation
        self._next_round = 0

    def _client_ids(self, clients) -> np.ndarray:
        if clients is None:
            if self.accumulators is not None:
                raise ValueError("phy.sqsgd.accumulation = true keeps each client's residual under its id: the aggregator "
                                 "needs the ids of the round's clients (aggregate(..., clients=ids)); this caller gives none")
            return np.arange(self.K)
        ids = np.asarray(clients).reshape(-1)
        if ids.size != self.K:
            raise ValueError(f"clients must hold K = {self.K} client ids (got {ids.size})")
        return ids

    def _check_round(self, t: int) -> None:
        if self._stateful and t != self._next_round:
            raise ValueError(f"phy.sqsgd.norm_bound = \"adaptive\" and phy.sqsgd.accumulation keep state across rounds in "
                             f"the memory of the run: round {t} came after round {self._next_round - 1} (a resumed or "
                             f"reordered run cannot restore that state; rerun from round 1 in a new --out)")
        self._next_round = t + 1

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        """(AggregationResult, SqsgdRound) of one round; ``clients``: the K client ids (None: 0..K−1)."""
        x = check_updates(updates, K=self.K, d=self.d)
        return self._aggregate([(np.arange(self.K), x)], round_index=round_index, clients=clients)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        return self.aggregate_traced(updates, round_index=round_index, clients=clients)[0]

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` over the round's chunks (:mod:`phy.aggregation`, streaming): each admitted client's
        decoded vector enters ŝ as its chunk arrives, in client order, so the result is the same bit for bit
        whatever the chunks; memory O(c·d)."""
        return self._aggregate(stream_chunks(chunks, K=self.K, d=self.d, finite=False), round_index=round_index,
                               clients=clients)[0]

    def _aggregate(self, chunks, *, round_index: int, clients=None):
        """One round over ``chunks`` ((rows, x_rows) in client order; every chunk is consumed)."""
        cfg, p, t = self.config, self.params, int(round_index)
        ids = self._client_ids(clients)
        self._check_round(t)
        h = draw_rayleigh(self.seed, t, K=self.K)
        link = self.uplink.run_round(self.bits, round_index=t, h=h)
        adm = link.admitted
        bound_t = self.bound_t
        grid = self.grid if bound_t == self.bound else quantization_levels(p.levels, bound_t)
        s_hat, reports = np.zeros(self.d), []
        s_adm, raw, mu, scale = np.zeros(self.d), np.zeros(self.d), np.empty(self.K), 0.0
        s_buf = np.empty(self.d)
        coder = None if p.mechanism == "pm" else SqsgdCoder(
            seed=self.seed, round_index=t, d=self.d, d_tilde=self.d_tilde, n=self.n, levels=p.levels,
            epsilon0=float(p.epsilon0), kappa=self.kappa, m=self.m, grid=grid)
        for rows, x in chunks:
            held = x if self.accumulators is None else self.accumulators.accumulate(ids[rows], x)
            # clip normalization (required): every admitted row's factor and the diagnostics' Σ_adm s_k and Σ_adm x_k
            # in client order on the receiver's threads, then each admitted s_k formed again for its message; the same
            # numbers as normalize(held, rule="clip") bit for bit (phy.normalization.clipped_rows, phy.row_pass)
            nz = clipped_rows(held, C=self.bound, clip_norm=cfg.clip_norm, rows=np.flatnonzero(adm[rows]))
            add_clipped_rows(nz, clipped_and_raw(held, nz, s_adm, raw, raw_x=x))
            for i, j in enumerate(nz.rows.tolist()):
                k = int(rows[j])
                s_j = np.subtract(held[j], nz.mu[j], out=s_buf)
                s_j *= nz.factor[i]
                if coder is None:  # the piecewise mechanism
                    coords = client_coordinates(self.seed, t, k, d=self.d, d_tilde=self.pm_k)
                    s_hat += self.bound * piecewise_vector(s_j / self.bound, epsilon=float(p.epsilon0), coords=coords,
                                                           rng=stream(self.seed, "sqsgd-pm", t, k))
                    continue
                coords, signs = coder.coordinates(k), coder.signs(k)
                y = coder.rotated(s_j, coords, signs, self.bound)
                if p.adaptive:
                    reports.append(float(scalardp(np.max(np.abs(y)), epsilon=float(p.epsilon_s),
                                                  levels=p.norm_levels, r_max=self.bound,
                                                  rng=stream(self.seed, "sqsgd-norm", t, k))))
                coder.add_decoded(s_hat, coder.privatize(y, bound_t, k=k), coords, signs, grid)
                if self.accumulators is not None:
                    self.accumulators.mask(int(ids[k]), coords, float(nz.mu[j]))
            mu[rows], scale = nz.mu, nz.scale
        if reports:  # the server's next bound: the largest report, never above U_t, never below one step C/k
            self.bound_t = min(bound_t, max(max(reports), self.bound / p.norm_levels))
        k_adm = int(adm.sum())
        trace = SqsgdRound(h, adm, link.channel_uses, self.bits, s_hat.copy())
        if p.estimator == "unbiased" and p.mechanism == "privquant":
            s_hat *= self.d / self.d_tilde
        mu_adm = float(mu[adm].sum())
        estimate = np.zeros(self.d) if k_adm == 0 else scale * s_hat + mu_adm
        err = relative_error(estimate, raw)
        diag = {"admitted": float(k_adm), "skipped": float(k_adm == 0), "channel_uses": float(link.channel_uses),
                "bits": float(self.bits), "m": self.m, "kappa": math.nan if self.kappa is None else float(self.kappa), "nmse": err, "bound_U": bound_t,
                **noise_metrics(estimate, scale * s_adm + mu_adm)}
        return AggregationResult(estimate, k_adm, err, diag), trace

    def describe(self) -> dict:
        cfg, p = self.config, self.params
        if p.mechanism == "pm":
            mech = (f"piecewise mechanism on s/C, {self.pm_k} public coordinates each with epsilon0/{self.pm_k}, "
                    "scaled by d/k; epsilon0-LDP per client and round against any observer (T1 and T2)")
        else:
            mech = ("PrivQuant, P(u|v) proportional to exp(epsilon0*1[M(u,v) > kappa]); exactly epsilon0-LDP per "
                    "client and round against any observer (T1 and T2)")
        adaptive = (f"ScalarDP of the rotated vector's l_inf norm, epsilon_s = {float(p.epsilon_s):g} on {p.norm_levels} "
                    "steps of [0, C]; U_(t+1) = min(U_t, max(max_k Z_k, C/k)); per-round report "
                    f"(epsilon0 + epsilon_s) = {p.round_epsilon:g}-LDP") if p.adaptive else "fixed: U = C, public"
        accumulation = (f"momentum correction (beta = {float(p.momentum):g}) and factor masking per client id, in the "
                        "memory of the run") if p.accumulation else "off"
        return {
            "scheme": "sqsgd", **cfg.to_dict(), "d_tilde": self.d_tilde, "rotation_length": self.n,
            "bound_U": self.bound, "kappa_used": self.kappa, "m": self.m, "bits_per_client": self.bits,
            "mechanism": mech,
            "uplink": "Shannon-rate TDMA over the shared fading draw, truncation |h|^2 >= g_th (model §5)",
            "adaptive_norm": adaptive, "accumulation": accumulation,
        }


register_scheme(SchemeSpec(
    name="sqsgd",
    aggregator=lambda config, *, K, d, seed, key, relation: SqsgdAggregator(config, K=K, d=d, seed=seed),
    link_record=SqsgdLinkRecord, params=SqsgdParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "sqsgd": {"levels": 4, "epsilon0": 4.0}},
    description="sqSGD: rotated, subsampled, PrivQuant-quantized updates, epsilon0-LDP per client (model §9.3)",
))
