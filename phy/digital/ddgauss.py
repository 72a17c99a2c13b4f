"""DDGauss: distributed discrete Gaussian with secure aggregation (model §9.2; Kairouz, Liu & Steinke 2021).

Parameters: clip c = the public clip norm R [model units]; bit width B (modulus m = 2^B); grid γ
[model units]; local noise std σ [model units]; β ∈ [0, 1) (conditional-rounding failure bound, default
e^{−1/2}; 0 = unconditional rounding); k (standard deviations of the modular sum kept inside the modulus,
default 4); dropout f ∈ [0, 1); d_pad = 2^⌈log2 d⌉.

Per round t, client k (of the scheduled K):

1. s_k = clip_c(x_k − μ_k·1) (the ``clip`` normalization with C = c, so its scale is 1; μ_k goes
   on the control channel, unprotected, as for every scheme), zero-padded to d_pad;
2. rotation u_k = H·D·s_k (:mod:`phy.digital.rotation`), D from the public per-round stream
   (seed, "ddgauss-rotation", t);
3. conditional randomized rounding of u_k/γ: each coordinate rounds up with probability equal
   to its fractional part; the whole vector is redrawn until ‖ũ_k‖₂ ≤ Δ₂ with
   Δ₂ = min{c/γ + √d_pad, √((c/γ)² + d_pad/4 + √(2 ln(1/β))·(c/γ + √d_pad/2))}; β = 0: no condition,
   Δ₂ = c/γ + √d_pad (‖ũ − u‖₂ < √d_pad always);
4. z_k = ũ_k + N_ℤ(0, (σ_k/γ)²) i.i.d. (exact sampler, :mod:`phy.digital.discrete_gaussian`),
   reduced mod m into [−m/2, m/2);
5. the d_pad·B bits of z_k go over the digital uplink (:mod:`phy.digital.uplink`).

Steps 1–3 run over chunks of clients (:mod:`phy.digital.ddgauss_clients`, memory O(chunk·d_pad)).
Step 4's noise reaches the server only through Σ_k z_k mod m = (Σ_k ũ_k + Σ_k n_k) mod m, so
``aggregate`` draws Σ_k n_k from its own exact pmf (the n-fold convolution of the discrete Gaussian,
:mod:`phy.digital.discrete_gaussian_sum`, total-variation error ≤ 2·10⁻¹³ + FFT rounding): d_pad draws
instead of n·d_pad, the same law for everything the server sees. ``aggregate_traced`` (link studies)
draws every client's share with the exact per-client sampler, as deployed.

Contributors (choice, from model §5): the digital uplink truncates like channel inversion, so
only the K′ admitted clients (|h_k|² ≥ g_th) send. Admission depends on the channel alone, so K′
is public, and each admitted client draws its noise with σ_k = σ·√(K/K′): the aggregate noise
has the variance K·σ² of K contributors at σ, and the RDP bound of model §9.2 at (n = K′, σ_k) is
at most the bound at (n = K, σ) (l₂ and l₁ are equal, τ is smaller: fewer and smaller terms),
so the accountant's event DDGaussRound(n = K, σ) bounds every round. K′ = 0: nothing is sent,
the round is skipped (diagnostic ``skipped`` = 1).

Poisson-sampled runs (model §1, :mod:`phy.cohort`): a round of K_t clients is built with K = K_t rows,
``grid_clients`` = n (γ of the bit budget at n, the run's expected cohort, so γ is the accountant's) and
``noise_shares`` = n: the round then carries exactly n shares of N_ℤ(0, (σ/γ)²) whatever K_t and K′, held
round robin by the K′ admitted clients (admitted client j in client order draws ⌈n/K′⌉ shares if j < n mod K′,
else ⌊n/K′⌋; its noise variance is that count times σ²). The sum's law is that of n shares at σ, exactly the
accountant's DDGaussRound(n, σ), and it does not depend on the cohort (Kairouz, Liu & Steinke's Thm 1 under
add/remove keeps n fixed and zeroes the removed client's vector). Dropout is refused with it. The traced
path draws share i of client k from (seed, "ddgauss-noise", t, k, i).

Dropout after noising (the source's Fig. 9): ⌊f·K′⌋ admitted clients, drawn uniformly from
(seed, "ddgauss-dropout", t), noise their vectors (at σ_k, fixed before any loss) and then never
deliver: the server decodes the survivors' sum, with only their n_s = K′ − ⌊f·K′⌋ noise shares
(variance n_s·σ_k² ≥ (1 − f)·K·σ²). The accountant therefore uses the noise fraction ρ = 1 − f
(:class:`privacy.events.DDGaussRound`). ``contributors`` = n_s; n_s = 0 skips the round.

Server: secure aggregation reveals only Σ_k z_k mod m, computed exactly in int64 (|values| < 2^B ≤ 2^48
per share); it maps the sum into [−m/2, m/2), multiplies by γ, undoes the rotation and the padding, and
adds Σ_{survivors} μ_k.

Grid from the bit budget (model §9.2) when γ is not given: 2^B = 2k·√(c²n²/d_pad + (γ²/4 + σ²)·n)/γ
with n = K (an upper bound on the contributors, so the budget holds for every K′ ≤ K), i.e.
γ = 2k·√(c²n²/d_pad + n·σ²) / √(2^{2B} − k²·n)   (needs 2^{2B} > k²·n); ``norm_bound = "optimistic"``
replaces the sum's norm bound n·c by √n·c (c²n²/d_pad → c²n/d_pad, the source's Fig. 2).

Diagnostics: ``admitted``, ``dropped``, ``skipped``, ``grid``, ``local_std_per_client`` (σ_k), ``delta2``,
``redraws`` (conditional-rounding redraws summed over clients), ``wrapped_fraction`` (fraction
of the d_pad coordinates whose integer sum left [−m/2, m/2)), ``bits_per_client`` (d_pad·B),
``channel_uses`` (Σ_{admitted} ⌈d_pad·B / r_k⌉) and ``nmse``.

Randomness: rounding of client k in attempt a from (seed, "ddgauss-rounding", t, k, a); its own noise
(traced path) from (seed, "ddgauss-noise", t, k); the summed noise from (seed, "ddgauss-noise-sum", t);
dropout from (seed, "ddgauss-dropout", t). Every client's integers and every sum are taken in client
order, so neither ``chunk_size`` nor the client chunk changes a bit of the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..aggregation import AggregationResult, check_updates, noise_metrics, relative_error, stream_chunks
from ..checks import check_finite_nonnegative, check_finite_positive
from ..config import PhyConfig
from ..fading import draw_rayleigh
from ..link_records import BaselineRecord, fmt
from ..randomness import check_seed, stream
from ..schemes import SchemeSpec, register_scheme
from .ddgauss_clients import MAX_ROUNDING_ATTEMPTS, ChunkEncoder, conditional_rounding
from .discrete_gaussian import sample_discrete_gaussian
from .discrete_gaussian_sum import summed_discrete_gaussian
from .rotation import inverse_randomized_hadamard, padded_dimension, rademacher_signs
from .uplink import DigitalUplink

__all__ = ["grid_from_bits", "resolve_grid", "rounding_norm_bound", "conditional_rounding", "wrap_mod", "modular_sum",
           "DDGaussAggregator", "MAX_ROUNDING_ATTEMPTS", "NORM_BOUNDS"]


@dataclass(frozen=True)
class DDGaussParams:
    """``[phy.ddgauss]`` (model §9.2): B = ``bits`` per coordinate (modulus 2^B, 2 ≤ B ≤ 48), the rounding
    ``grid`` γ [model units] (None: from the bit budget), each client's discrete-Gaussian noise std
    ``local_std`` σ ≥ 0 [model units], the conditional-rounding failure bound ``beta`` ∈ [0, 1) (0:
    unconditional rounding, Δ₂ = c/γ + √d_pad), ``k_stddevs`` > 0, standard deviations of the modular sum
    kept inside the modulus, and ``dropout`` ∈ [0, 1), the fraction of the admitted clients whose noised
    shares never arrive (⌊f·K′⌋ per round; model §9.2, "Dropout after noising"), and ``norm_bound`` of the
    bit budget, "general" (‖Σ s_k‖ ≤ n·c) or "optimistic" (√n·c, the source's Fig. 2)."""

    bits: int = 16
    grid: float | None = None
    local_std: float = 0.0
    beta: float = math.exp(-0.5)
    k_stddevs: float = 4.0
    dropout: float = 0.0
    norm_bound: str = "general"

    moved_from: ClassVar[dict] = {"dd_bits": "bits", "dd_grid": "grid", "dd_local_std": "local_std", "dd_beta": "beta",
                                  "dd_k_stddevs": "k_stddevs"}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        if isinstance(self.bits, bool) or not isinstance(self.bits, int) or not 2 <= self.bits <= DD_BITS_MAX:
            raise ValueError(f"ddgauss.bits must be an integer with 2 ≤ bits ≤ {DD_BITS_MAX} (got {self.bits!r})")
        if self.grid is not None:
            check_finite_positive("ddgauss.grid", self.grid)
        check_finite_nonnegative("ddgauss.local_std", self.local_std)
        check_unit_interval("ddgauss.beta", self.beta)
        check_unit_interval("ddgauss.dropout", self.dropout)
        if self.norm_bound not in NORM_BOUNDS:
            raise ValueError(f"ddgauss.norm_bound must be one of {NORM_BOUNDS} (got {self.norm_bound!r}); "
                             "set it in [phy.ddgauss]")
        check_finite_positive("ddgauss.k_stddevs", self.k_stddevs)
        if active and self.grid is None:
            # the budget check needs K only; d (when known) only sets the value of γ
            grid_from_bits(bits=self.bits, n=K, d=1 if d is None else d, clip=float(phy.clip_norm),
                           local_std=float(self.local_std), k_stddevs=float(self.k_stddevs), norm_bound=self.norm_bound)


NORM_BOUNDS = ("general", "optimistic")


def grid_from_bits(*, bits: int, n: int, d: int, clip: float, local_std: float, k_stddevs: float,
                   norm_bound: str = "general") -> float:
    """γ = 2k·√(b²/d_pad + n·σ²) / √(2^{2B} − k²n) [model units] (model §9.2); d is padded here.

    b bounds the norm of the sum of the n clipped vectors: ``general`` b = n·c (any inputs), ``optimistic``
    b = √n·c (the source's Fig. 2 choice: the norm of a sum of n mutually orthogonal vectors of norm c,
    which the rotated sum exceeds for aligned updates; then the modulus wraps more often).
    """
    if norm_bound not in NORM_BOUNDS:
        raise ValueError(f"ddgauss.norm_bound must be one of {NORM_BOUNDS} (got {norm_bound!r})")
    d_pad = padded_dimension(d)
    room = 4.0 ** bits - k_stddevs**2 * n
    if room <= 0:
        raise ValueError(f"dd_bits must satisfy 2^(2*dd_bits) > dd_k_stddevs^2 * n = {k_stddevs**2 * n:g} (got dd_bits = {bits})")
    b2 = clip**2 * (n**2 if norm_bound == "general" else n)
    num = b2 / d_pad + n * local_std**2
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
                          local_std=float(p.local_std), k_stddevs=float(p.k_stddevs), norm_bound=p.norm_bound)
    return grid, f"from the bit budget (B = {p.bits}, k = {p.k_stddevs}, n = K = {K}, {p.norm_bound} norm bound)"


def rounding_norm_bound(*, clip: float, grid: float, d: int, beta: float) -> float:
    """Δ₂ = min{c/γ + √d, √((c/γ)² + d/4 + √(2 ln(1/β))·(c/γ + √d/2))} (d the padded dimension).

    β = 0 (unconditional rounding): the second term is +∞ and Δ₂ = c/γ + √d, the worst case
    ‖ũ‖₂ ≤ ‖u‖₂ + ‖ũ − u‖₂ < c/γ + √d (every coordinate moves by less than one grid step).
    """
    a = clip / grid
    if beta == 0:
        return a + math.sqrt(d)
    return min(a + math.sqrt(d), math.sqrt(a * a + d / 4.0 + math.sqrt(2.0 * math.log(1.0 / beta)) * (a + math.sqrt(d) / 2.0)))


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
    """DDGauss behind the aggregation interface (see the module docstring).

    ``client_chunk``: clients encoded together (memory O(client_chunk·d_pad): four reused buffers); default
    max(1, 2^22 // d_pad) (16 at d_pad = 2^18: 32 MB per buffer). Results do not depend on it.
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int, client_chunk: int | None = None,
                 grid_clients: int | None = None, noise_shares: int | None = None):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.seed = check_seed(seed)
        self.d_pad = padded_dimension(self.d)
        self.clip = float(config.clip_norm)
        self.params = p = config.of("ddgauss")
        self.local_std = float(p.local_std)
        self.dropout = float(p.dropout)
        self.noise_shares = None if noise_shares is None else int(noise_shares)
        if self.noise_shares is not None and (self.noise_shares < 1 or float(p.dropout) != 0.0):
            raise ValueError(f"noise_shares must be ≥ 1 and phy.ddgauss.dropout 0 (got {noise_shares!r}, dropout {p.dropout!r})")
        self.grid, self.grid_source = resolve_grid(config, K=self.K if grid_clients is None else int(grid_clients), d=self.d)
        self.delta2 = rounding_norm_bound(clip=self.clip, grid=self.grid, d=self.d_pad, beta=float(p.beta))
        # β = 0: unconditional rounding (every attempt is within c/γ + √d_pad by the triangle inequality)
        self.rounding_bound = math.inf if float(p.beta) == 0.0 else self.delta2
        self.bits_per_client = self.d_pad * int(p.bits)
        self.uplink = DigitalUplink(config, K=self.K, seed=self.seed)
        if client_chunk is None:
            client_chunk = max(1, (1 << 22) // self.d_pad)
        if isinstance(client_chunk, bool) or not isinstance(client_chunk, int) or client_chunk < 1:
            raise ValueError(f"client_chunk must be an integer ≥ 1 (got {client_chunk!r})")
        self.client_chunk = client_chunk
        # four [min(chunk, K), d_pad] buffers kept between rounds (fresh large arrays cost page faults)
        self._encoder = ChunkEncoder(chunk=min(client_chunk, self.K), d=self.d, d_pad=self.d_pad, clip=self.clip,
                                     grid=self.grid, bound=self.rounding_bound, seed=self.seed)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        x = check_updates(updates, K=self.K, d=self.d)
        return self._aggregate([(np.arange(self.K), x)], round_index, per_client_noise=False)

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` over the round's chunks (:mod:`phy.aggregation`, streaming): each chunk's survivors are
        encoded as they arrive and their integers enter Σ_k z_k in client order (exact integer sums), so the
        result is the same bit for bit whatever the chunks; memory O(c·d_pad)."""
        return self._aggregate(stream_chunks(chunks, K=self.K, d=self.d), round_index, per_client_noise=False)

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, clients=None):
        """The link-level view: every client draws its own noise share (K′·d_pad exact draws), as deployed."""
        x = check_updates(updates, K=self.K, d=self.d)
        return self._aggregate([(np.arange(self.K), x)], round_index, per_client_noise=True), None

    def dropped_clients(self, admitted: np.ndarray, round_index: int) -> np.ndarray:
        """The ⌊f·K′⌋ admitted clients whose noised shares never arrive (f = ``dropout``), uniformly at
        random from the stream (seed, "ddgauss-dropout", t); a bool mask over the K clients."""
        clients = np.flatnonzero(admitted)
        n_drop = math.floor(self.dropout * clients.size)
        mask = np.zeros(self.K, dtype=bool)
        if n_drop:
            mask[clients[stream(self.seed, "ddgauss-dropout", int(round_index)).permutation(clients.size)[:n_drop]]] = True
        return mask

    def summed_noise(self, *, n: int, scale: float, round_index: int) -> np.ndarray:
        """Σ of n clients' N_ℤ(0, scale²) shares [d_pad] int64, drawn from the sum's own pmf
        (:mod:`phy.digital.discrete_gaussian_sum`, stream (seed, "ddgauss-noise-sum", t)); when its table
        is too long, the n shares one by one from (seed, "ddgauss-noise-sum", t, j) (exact too)."""
        t = int(round_index)
        sampler = summed_discrete_gaussian(scale, n)
        if sampler is not None:
            return sampler.sample(stream(self.seed, "ddgauss-noise-sum", t), self.d_pad)
        total = np.zeros(self.d_pad, dtype=np.int64)
        for j in range(n):
            total += sample_discrete_gaussian(stream(self.seed, "ddgauss-noise-sum", t, j), scale, (self.d_pad,))
        return total

    def _aggregate(self, chunks, round_index: int, *, per_client_noise: bool) -> AggregationResult:
        """One round over ``chunks`` ((rows, x_rows) in client order; every chunk is consumed)."""
        t, B = int(round_index), int(self.params.bits)
        h = draw_rayleigh(self.seed, t, K=self.K)
        link = self.uplink.run_round(self.bits_per_client, round_index=t, h=h)
        adm = link.admitted
        k_adm = int(adm.sum())
        dropped = self.dropped_clients(adm, t)
        surviving = adm & ~dropped
        survivors = np.flatnonzero(surviving)
        diag = {"admitted": float(k_adm), "dropped": float(dropped.sum()), "skipped": float(survivors.size == 0),
                "grid": self.grid, "delta2": self.delta2, "bits_per_client": float(self.bits_per_client),
                "channel_uses": float(link.channel_uses)}
        if survivors.size == 0:
            for _ in chunks:  # consumed (and checked) all the same
                pass
            err = relative_error(np.zeros(self.d), np.zeros(self.d))
            diag.update({"local_std_per_client": 0.0, "redraws": 0.0, "wrapped_fraction": 0.0, "nmse": err,
                         **noise_metrics(np.zeros(self.d), np.zeros(self.d))})
            return AggregationResult(np.zeros(self.d), 0, err, diag)
        signs = rademacher_signs(self.seed, "ddgauss-rotation", t, n=self.d_pad)
        if self.noise_shares is None:
            sigma_k = self.local_std * math.sqrt(self.K / k_adm)  # fixed before any share is lost
            scale, shares = sigma_k / self.grid, None
        else:  # n shares at σ whatever K′ (module docstring, Poisson-sampled runs)
            sigma_k = self.local_std * math.sqrt(self.noise_shares / k_adm)  # the rms per admitted client
            scale = self.local_std / self.grid
            shares = np.zeros(self.K, dtype=np.int64)
            shares[survivors] = self.noise_shares // k_adm + (np.arange(k_adm) < self.noise_shares % k_adm)
        total = np.zeros(self.d_pad, dtype=np.int64)  # Σ_k z_k without wrapping (simulator view)
        clipped, raw, mus, redraws = np.zeros(self.d), np.zeros(self.d), np.zeros(self.K), 0
        encoder = self._encoder
        for rows, x in chunks:
            sel = rows[surviving[rows]]
            for lo in range(0, sel.size, self.client_chunk):
                sub = sel[lo:lo + self.client_chunk]
                local = sub - rows[0]
                ints, mu, s, r = encoder.encode(x[local], sub, signs=signs, round_index=t)
                redraws += r
                for i, k in enumerate(sub):  # client order: every sum is the same whatever the chunk
                    np.add(total, ints[i], out=total, casting="unsafe")  # exact: ints holds integers < 2^53
                    if per_client_noise and shares is None:
                        total += sample_discrete_gaussian(stream(self.seed, "ddgauss-noise", t, int(k)), scale, (self.d_pad,))
                    elif per_client_noise:
                        for i_share in range(int(shares[k])):
                            total += sample_discrete_gaussian(stream(self.seed, "ddgauss-noise", t, int(k), i_share), scale,
                                                              (self.d_pad,))
                    clipped += s[i]
                    raw += x[local[i]]
                mus[sub] = mu
        if not per_client_noise:
            n_shares = int(survivors.size) if shares is None else self.noise_shares
            total += self.summed_noise(n=n_shares, scale=scale, round_index=t)
        half = 1 << (B - 1)
        wrapped = float(np.mean((total < -half) | (total >= half)))
        agg = wrap_mod(total, B)  # what secure aggregation reveals: Σ_k z_k mod 2^B
        s_hat = inverse_randomized_hadamard(agg.astype(np.float64) * self.grid, signs)[: self.d]
        mu_sum = float(mus[survivors].sum())
        estimate = s_hat + mu_sum  # the clip normalization has scale R/C = 1
        err = relative_error(estimate, raw)
        diag.update({"local_std_per_client": sigma_k, "redraws": float(redraws), "wrapped_fraction": wrapped, "nmse": err,
                     **noise_metrics(estimate, clipped + mu_sum)})
        return AggregationResult(estimate, int(survivors.size), err, diag)

    def describe(self) -> dict:
        return {
            "scheme": "ddgauss", **self.config.to_dict(),
            "d_pad": self.d_pad, "grid": self.grid, "grid_source": self.grid_source, "delta2": self.delta2,
            "bits_per_client": self.bits_per_client, "modulus": f"2^{self.params.bits}",
            "contributors": ("clients admitted by the digital uplink's truncation (|h|^2 >= g_th); each draws "
                             "noise std dd_local_std*sqrt(K/K') so the aggregate noise equals K contributors'"
                             + (f"; a fraction {self.dropout:g} of them drops out after noising (their shares never "
                                "arrive)" if self.dropout else "")) if self.noise_shares is None else (
                "clients admitted by the digital uplink's truncation (|h|^2 >= g_th) of the round's (Poisson) cohort; "
                f"they hold n = {self.noise_shares} noise shares of std dd_local_std round robin, whatever the cohort "
                "(the accountant's n)"),
            "noise_draws": "aggregate: the sum of the survivors' shares from its exact pmf (d_pad draws); "
                           "aggregate_traced: every client's own share",
            "threat_model": "the server, given secure aggregation (it sees only the modular sum)",
            "uplink": "Shannon-rate TDMA over the shared fading draw (model §5)",
        }


def check_unit_interval(name: str, value) -> None:
    """``value`` a real number with 0 ≤ value < 1, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0.0 <= value < 1.0:
        key = name.rsplit(".", 1)[-1]
        raise ValueError(f"{name} must be a number with 0 ≤ {key} < 1 (got {value!r}); set it in [phy.ddgauss]")


DD_BITS_MAX = 48  # scaled coordinates stay exact in float64 and modular sums in int64


class DDGaussRecord(BaselineRecord):
    diagnostics = ("dropped", "grid", "delta2", "local_std_per_client", "redraws", "wrapped_fraction", "bits_per_client")

    @staticmethod
    def detail(s: dict) -> str:
        m, adm = s.get("diagnostics_mean", {}), s["admitted"]
        return (f"admitted mean={fmt(adm['mean'])} skipped={s['skipped_rounds']} grid={fmt(m.get('grid'))} "
                f"wrapped={fmt(m.get('wrapped_fraction'))} redraws/round={fmt(m.get('redraws'))} "
                f"bits/client={fmt(m.get('bits_per_client'))}"
                + (f" dropped/round={fmt(m.get('dropped'))}" if m.get("dropped") else ""))


register_scheme(SchemeSpec(
    name="ddgauss",
    aggregator=lambda config, *, K, d, seed, key, relation: DDGaussAggregator(config, K=K, d=d, seed=seed),
    link_record=DDGaussRecord, params=DDGaussParams, requires_clip=True,
    example={"normalization": "clip", "clip_norm": 1.0, "ddgauss": {"bits": 20, "local_std": 0.05}},
    description="distributed discrete Gaussian with secure aggregation over a digital uplink (model §9.2)",
))
