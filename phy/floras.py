"""FLORAS uplink (model §6.1): clients' transmit chain, block-fading channel, BS receiver.

Signal model (model §5, §6.1), real-valued, per round t:

- Assignment: client k (base-station index ι_k = k) uses column a_k := A[:, π_t(k)] of the public
  set A ∈ R^{L×N} (keyed permutation, :mod:`phy.assignment`; client side only).
- Channel: block fading h_k ~ CN(0,1) (Sionna, :mod:`phy.fading`), effective real gain
  g_k = Re(h_k) (``csit="none"``) or |h_k| (``csit="phase"``), shared by all d + 1 slots.
- Reference slot:  y_s = Σ_k g_k·b·a_k + n_s ∈ R^L,  b = √P.
- Data slot i:     y_i = Σ_k g_k·s_k^i·a_k + n_i ∈ R^L,  i = 1..d.
- Noise: i.i.d. N(0, σ²/L) per chip, σ² = P / 10^(SNR/10); SNR := P/σ² (model §5), so the despread
  SNR is L·P/σ².
- Receiver (:class:`phy.receiver.Receiver`, knows A and b only): ŝ^i = b·Σ_{j=1}^{N} r_j^i / r_j^s.

Three implementations:

``chip``
    Builds y_s [L] and y [L, c] explicitly (chunks of c slots) and despreads with Aᵀ. Exact for
    every sequence family (with non-orthogonal "pn" sequences the estimator is biased).
``fast``
    Draws the despread noise Aᵀn directly as i.i.d. N(0, σ²/L) of shape N×(d+1) and adds
    g_k·s_k to row π_t(k). Exact only when AᵀA = I (orthonormal families); ``path="auto"``
    takes it exactly then.

``sufficient``
    model §6.1 "Sufficient-statistic path", exact in distribution when AᵀA = I. Draws the N despread
    reference outputs r^s from the same keyed stream as ``fast`` (so the active set, the gains,
    r^s and V are identical to the fast path sample by sample), then, conditionally on r^s,

        ŝ^i = Σ_k (b·g_k / r^s_{π(k)})·s_k^i + ν^i,   ν^i ~ N(0, (b²σ²/L)·Σ_{j=1}^{N} (r_j^s)^{−2}) i.i.d.,

    i.e. d + N Gaussian draws and one K×d weighted sum instead of N×(d+1) draws. It yields ŝ and V
    only: asking it for a trace (``inactive_noise``) is an error. ``path="auto"`` takes it for
    untraced rounds (learning runs, sweeps) on orthonormal sets and ``fast`` for traced rounds
    (link summaries).

All paths draw noise in logical blocks keyed by (seed, purpose, round, block) (:mod:`phy.blocks`),
so results do not depend on ``chunk_size`` (the sufficient path has no K×d or N×d temporaries
and draws its d-vector ν in blocks of :data:`SUFFICIENT_BLOCK` entries). The chip and fast paths
draw noise of different dimension (N vs L per slot) and the sufficient path draws its
conditional law directly, so the three agree in distribution, not sample by sample (except r^s
and V, shared by fast and sufficient).

Diagnostics (simulator-side, using the true active set, which the receiver never sees):

``V``
    The realised conditional variance of the inactive-sequence noise per entry, in units of
    (ŝ/b)²: conditionally on the reference slot, ŝ = Σ_k s_k + (active-term error) + b·e with
    e ~ N(0, V·I_d), V = (σ²/L)·Σ_{j,l ∈ I} G_jl / (r_j^s r_l^s), G = AᵀA, I = inactive set.
    For orthonormal A, V = Σ_{j∈I} 1/w_j² with w_j = r_j^s/(σ/√L) ~ N(0,1), so V ~ Lévy(0, γ²),
    γ = N − K, whatever the SNR. In ŝ units the variance is b²·V.
``inactive_noise`` (trace only)
    e [d] = Σ_{j∈I} (c_j/b)·(a_jᵀ n_i), c_j = b/r_j^s: the inactive-sequence noise in ŝ/b units;
    each entry is Cauchy(0, γ) across rounds; within a round the entries share the
    denominators (conditionally Gaussian with variance V).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .antennas import antenna_conditional_variance
from .aggregation import (AggregationResult, add_rows, aggregate_concatenated, check_updates, clipped_sum,
                          clipped_sum_factored, noise_metrics, relative_error, stream_chunks)
from .assignment import KeyedAssignment
from .blocks import BLOCK, block_noise, block_ranges, chunk_ranges
from .channel_uses import floras_channel_uses
from .config import SNR_DEFINITION, PhyConfig
from .floras_params import FlorasParams
from .floras_record import FlorasLinkRecord
from .chip_timing import draw_offsets, received_chips
from .coherence import coherence_plan
from .fading import effective_gain
from .floras_antennas import run_antennas
from .floras_blocks import run_blocks
from .link_channel import LinkChannel
from .normalization import denormalize, normalize, row_factors
from .randomness import check_seed, stream
from .receiver import Receiver
from .receiver_rules import energy_variance, receiver_weight
from .schemes import SchemeSpec, register_scheme
from .sequences import is_orthonormal, make_sequences, orthogonality_defect

__all__ = ["FlorasRound", "FlorasLink", "FlorasAggregator", "resolve_path", "SUFFICIENT_BLOCK"]

SUFFICIENT_BLOCK = 16 * BLOCK  # entries of ν per keyed stream on the sufficient path (fewer, longer streams)
_TRACE_ERROR = ("trace: the sufficient path yields ŝ and V only, not the per-sequence outputs (model §6.1); "
                "use path = 'fast', 'chip' or 'auto' for link traces")


def resolve_path(path: str, *, orthonormal: bool, trace: bool = False) -> str:
    """The FLORAS implementation to use for a round (model §6.1).

    "auto" → "chip" unless AᵀA = I; with AᵀA = I, "fast" when a trace is wanted and
    "sufficient" otherwise. "fast" and "sufficient" are exact only when AᵀA = I, and
    "sufficient" cannot produce a trace; both cases raise ValueError.
    """
    if path == "auto":
        if not orthonormal:
            return "chip"
        return "fast" if trace else "sufficient"
    if path not in ("fast", "chip", "sufficient"):
        raise ValueError(f"path must be one of {{auto, fast, chip, sufficient}} (got {path!r})")
    if path in ("fast", "sufficient") and not orthonormal:
        raise ValueError(f"path must be 'chip' or 'auto' for non-orthogonal sequences: the {path} path is exact only when AᵀA = I")
    if path == "sufficient" and trace:
        raise ValueError(_TRACE_ERROR)
    return path


@dataclass(frozen=True)
class FlorasRound:
    """What one FLORAS round produced (the simulator's view; the BS sees only ŝ).

    Attributes
    ----------
    s_hat : [d] float64      ŝ, estimate of Σ_k s_k [√W].
    active : [K] int64       sequence index π_t(k) of client k.
    gains : [K] float64      effective real gains g_k.
    r_ref : [N] float64      despread reference slot r^s [√W].
    V : float                conditional inactive-noise variance per entry [(ŝ/b)², dimensionless].
    path : str               "fast", "chip" or "sufficient".
    inactive_noise : [d] float64 or None   e in ŝ/b units (only when traced).
    gain_blocks : [K, B] or None   g_{k,m} per coherence block (model §5.1; None: one block, ``gains``).
    r_ref_blocks : [P, N] or None  the despread reference slot of each pilot (None: one pilot, ``r_ref``).
    pilot_share : [P] or None      fraction of the d entries equalised with each pilot.
    r_ref_antennas : [N_r, N] or None   the pilots of every receive antenna (model §5.2; None: one antenna).
    gain_antennas : [K, N_r] or None    g_{k,r} per receive antenna (None: one antenna, ``gains``).
    """

    s_hat: np.ndarray
    active: np.ndarray
    gains: np.ndarray
    r_ref: np.ndarray
    V: float
    path: str
    inactive_noise: np.ndarray | None = None
    gain_blocks: np.ndarray | None = None
    r_ref_blocks: np.ndarray | None = None
    pilot_share: np.ndarray | None = None
    r_ref_antennas: np.ndarray | None = None
    gain_antennas: np.ndarray | None = None


class FlorasLink:
    """Composition of the FLORAS transmit chain, channel and receiver for K clients.

    Parameters
    ----------
    config : PhyConfig (scheme "floras"); K : scheduled clients; seed : master seed;
    key : bytes (≥ 16) shared by the clients (never passed to the receiver).
    """

    def __init__(self, config: PhyConfig, *, K: int, seed: int, key: bytes):
        self.config = config.validate(K=K)
        self.params = p = config.of("floras")
        self.K = int(K)
        self.seed = check_seed(seed)
        self.A = make_sequences(p.sequences, L=config.L, N=p.N, seed=self.seed)
        self.orthonormal = is_orthonormal(self.A)
        self.path = resolve_path(p.path, orthonormal=self.orthonormal)  # untraced rounds
        # traced rounds (link summaries): None when the configured path cannot trace
        self.trace_path = None if p.path == "sufficient" else resolve_path(p.path, orthonormal=self.orthonormal, trace=True)
        self.b = float(np.sqrt(config.power))
        self.noise_std = float(np.sqrt(config.noise_variance / config.L))  # per chip / per despread output
        self._clients = KeyedAssignment(key, N=p.N)  # client side
        self.receiver = Receiver(self.A, reference_amplitude=self.b)  # base-station side: A and b only
        self._gram = self.A.T @ self.A
        self.channel = LinkChannel(config, K=K, seed=self.seed)  # cell gains × fading blocks (model §5.1)
        self.timing_offset = float(config.timing_offset)
        if self.timing_offset > 0:  # chip-level offsets need the chip path (FlorasParams.check refuses fast/sufficient)
            self.path = self.trace_path = "chip"

    def plan(self, d: int):
        """The coherence-block layout of an update of d entries (:func:`phy.coherence.coherence_plan`)."""
        return coherence_plan(d, self.config.coherence_symbols, self.params.pilots)

    @property
    def gamma(self) -> int:
        """γ = N − K, the number of inactive sequences."""
        return self.params.N - self.K

    def conditional_variance(self, r_ref: np.ndarray, inactive: np.ndarray) -> float:
        """V = (σ²/L)·Σ_{j,l∈I} G_jl/(r_j^s r_l^s) [dimensionless]; Σ_{j∈I} 1/w_j² when AᵀA = I."""
        if inactive.size == 0:
            return 0.0
        inv = 1.0 / r_ref[inactive]
        G = self._gram[np.ix_(inactive, inactive)]
        return float(self.noise_std**2 * (inv @ G @ inv))

    def run_round(self, s: np.ndarray, *, round_index: int, trace: bool = False, clients=None) -> FlorasRound:
        """Send the normalized vectors s [K, d] (float64, √W) through one round (``clients``: identities, model §5.1).

        Returns a :class:`FlorasRound`; ``trace=True`` adds the inactive-sequence noise e [d]
        (not available on the sufficient path: ValueError).
        """
        path = self.path
        if trace:
            if self.trace_path is None:
                raise ValueError(_TRACE_ERROR)
            path = self.trace_path
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != self.K:
            raise ValueError(f"s must be a K×d array with K = {self.K} (got shape {s.shape})")
        d = s.shape[1]
        cfg, seed, t = self.config, self.seed, int(round_index)
        plan = self.plan(d)
        if cfg.rx_antennas > 1:  # per-antenna despreading, maximum-ratio on the pilots (model §5.2)
            return run_antennas(self, s, round_index=t, clients=clients, trace=trace, path=path)
        if not plan.single:
            return run_blocks(self, s, plan, round_index=t, clients=clients, trace=trace, path=path)
        s_hat = np.empty(d)
        e = np.empty(d) if trace else None

        if path in ("fast", "sufficient"):
            active, inactive, g, r_ref, w = self.pilots(t, clients=clients)
        else:
            active = self._clients.active_set(t, K=self.K)
            inactive = np.setdiff1d(np.arange(self.params.N), active)
            g = effective_gain(self.channel.draw(t, clients=clients)[:, 0], csit=self.params.csit)
        gs = g[:, None]
        if path == "sufficient":
            np.einsum("k,kd->d", w[active] * g, s, out=s_hat)  # not BLAS: steady under CPU contention
            self.add_sufficient_noise(s_hat, w, round_index=t)
        elif path == "fast":
            w_in = w[inactive] / self.b
            for c0, c1 in chunk_ranges(d, cfg.chunk_size):
                for a, z, m in block_ranges(c0, c1):
                    # despread outputs Aᵀy = (AᵀA = I) g_k s_k on row π(k) + N(0, σ²/L) noise
                    r = block_noise((self.params.N,), z - a, seed=seed, purpose="floras-despread-noise",
                                    round_index=t, block=m, std=self.noise_std)
                    if trace:
                        e[a:z] = w_in @ r[inactive]
                    r[active] += gs * s[:, a:z]
                    s_hat[a:z] = self.receiver.combine(w, r)
        else:
            A_act = self.A[:, active]
            tail = None
            if self.timing_offset > 0:  # fractional-chip offsets (phy.chip_timing): Ã and the inter-slot tail
                A_act, tail = received_chips(A_act, draw_offsets(seed, t, K=self.K, max_offset=self.timing_offset))
                tail = tail * g
            n_ref = self.noise_std * stream(seed, "floras-chip-reference-noise", t).standard_normal(cfg.L)
            y_ref = A_act @ (g * self.b) + n_ref
            r_ref = self.receiver.despread(y_ref)
            w = self.receiver.weights(r_ref)
            w_in = w[inactive] / self.b
            A_in_T = np.ascontiguousarray(self.A[:, inactive].T)
            for c0, c1 in chunk_ranges(d, cfg.chunk_size):
                y = A_act @ (gs * s[:, c0:c1])  # chips of the chunk's data slots, [L, c]
                if tail is not None:  # chip 0 of slot i carries the last chip of slot i − 1 (the reference before slot 1)
                    prev = s[:, c0 - 1 : c1 - 1] if c0 > 0 else np.hstack([np.full((self.K, 1), self.b), s[:, : c1 - 1]])
                    y[0] += tail @ prev
                for a, z, m in block_ranges(c0, c1):
                    n = block_noise((cfg.L,), z - a, seed=seed, purpose="floras-chip-noise",
                                    round_index=t, block=m, std=self.noise_std)
                    if trace:
                        e[a:z] = w_in @ (A_in_T @ n)
                    y[:, a - c0 : z - c0] += n
                s_hat[c0:c1] = self.receiver.combine(w, self.receiver.despread(y))
        V = self.conditional_variance(r_ref, inactive)
        return FlorasRound(s_hat, active, g, r_ref, V, path, e)

    def pilots(self, round_index: int, *, clients=None):
        """The round's assignment, gains and despread reference slot (fast and sufficient paths, AᵀA = I).

        Returns (active [K], inactive [N−K], g [K], r^s [N], c [N]) with r^s_j = g_k·b·[j = π(k)] + N(0, σ²/L)
        from the keyed stream ``(seed, "floras-reference-noise", t)`` and c_j = b/r_j^s.
        """
        t = int(round_index)
        active = self._clients.active_set(t, K=self.K)
        inactive = np.setdiff1d(np.arange(self.params.N), active)
        g = effective_gain(self.channel.draw(t, clients=clients)[:, 0], csit=self.params.csit)
        r_ref = self.noise_std * stream(self.seed, "floras-reference-noise", t).standard_normal(self.params.N)
        r_ref[active] += g * self.b
        return active, inactive, g, r_ref, self.receiver.weights(r_ref)

    def add_sufficient_noise(self, out: np.ndarray, w: np.ndarray, *, round_index: int) -> np.ndarray:
        """out += ν, ν^i ~ N(0, (σ²/L)·Σ_j c_j²) i.i.d. (c_j = b/r_j^s): the receiver noise of ŝ given r^s.

        Σ_j c_j·(a_jᵀn_i) with a_jᵀn_i i.i.d. N(0, σ²/L) (AᵀA = I) is that Gaussian (model §6.1); ν is drawn
        in keyed blocks ``(seed, "floras-sufficient-noise", t, m)`` of SUFFICIENT_BLOCK entries.
        """
        std = self.noise_std * float(np.sqrt(np.dot(w, w)))
        d = out.shape[0]
        for a in range(0, d, SUFFICIENT_BLOCK):
            z = min(a + SUFFICIENT_BLOCK, d)
            out[a:z] += block_noise((), z - a, seed=self.seed, purpose="floras-sufficient-noise",
                                    round_index=int(round_index), block=a // SUFFICIENT_BLOCK, std=std)
        return out

    def describe(self) -> dict:
        return {
            "path": self.path,
            "trace_path": self.trace_path,
            "gamma": self.gamma,
            "orthonormal": self.orthonormal,
            "orthogonality_defect": orthogonality_defect(self.A),
            "estimator_biased": not self.orthonormal,
            "snr_definition": SNR_DEFINITION,
            "noise_variance_per_chip": self.noise_std**2,
            "pilots": self.params.pilots,
            "timing_offset_max_chips": self.timing_offset,
            **self.channel.describe(),
        }


class FlorasAggregator:
    """FLORAS behind the aggregation interface (model §2 normalization + §6.1 link).

    ``aggregate`` returns w·x̂, x̂ = scale·ŝ + Σ_k μ_k (model §2) and w the receiver rule's weight
    (``floras.receiver``, model §6.4; 1 for "plain"), contributors K, and diagnostics ``V`` (see
    :mod:`phy.floras`), ``V_hat`` (the rule's noise estimate), ``weight`` (w), ``gamma``, ``nmse``
    (= error, against the raw sum), ``noise_energy``, ``clipped_nmse`` and ``channel_uses`` ((d + 1)·L).
    """

    def __init__(self, config: PhyConfig, *, K: int, d: int, seed: int, key: bytes):
        self.config = config.validate(K=K, d=d)
        self.K, self.d = int(K), int(d)
        self.link = FlorasLink(config, K=K, seed=seed, key=key)
        self.plan = self.link.plan(self.d)

    def aggregate_traced(self, updates: np.ndarray, *, round_index: int, trace: bool | None = None, clients=None):
        """(AggregationResult, FlorasRound) of one round; ``trace=None`` traces when the configured path can.

        ``clients``: the scheduled clients' identities [K] (their cell positions, model §5.1); None: 0..K−1.
        """
        if trace is None:
            trace = self.link.trace_path is not None
        if not trace and self.link.path == "sufficient" and self.plan.single and self.config.rx_antennas == 1:
            return self._aggregate_sufficient(updates, round_index=round_index, clients=clients)
        x = check_updates(updates, K=self.K, d=self.d)
        cfg = self.config
        nz = normalize(x, rule=cfg.normalization, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
        rnd = self.link.run_round(nz.s, round_index=round_index, trace=trace, clients=clients)
        return self._result(denormalize(rnd.s_hat, nz), x.sum(axis=0), clipped_sum(nz), rnd), rnd

    def _result(self, estimate: np.ndarray, raw: np.ndarray, target: np.ndarray, rnd: FlorasRound) -> AggregationResult:
        """The receiver rule (model §6.4) applied to x̂, and the round's diagnostics."""
        p, link = self.link.params, self.link
        if p.noise_estimate == "energy":
            V_hat = energy_variance(rnd.s_hat, b=link.b)
        elif rnd.r_ref_antennas is not None:  # every antenna's pilots (model §5.2)
            V_hat = antenna_conditional_variance(rnd.r_ref_antennas, np.arange(p.N), noise_variance=link.noise_std**2)
        elif rnd.r_ref_blocks is None:  # the pilots: the conditional variance over all N sequences (the BS does not know the active set)
            V_hat = link.conditional_variance(rnd.r_ref, np.arange(p.N))
        else:  # several pilots: the entry-weighted mean of each pilot's conditional variance
            V_hat = float(sum(f * link.conditional_variance(r, np.arange(p.N)) for f, r in zip(rnd.pilot_share, rnd.r_ref_blocks)))
        w = receiver_weight(p.receiver, gamma=link.gamma, V_hat=V_hat, cap=p.receiver_cap)
        if w != 1.0:
            estimate = w * estimate
        err = relative_error(estimate, raw)
        diag = {"V": rnd.V, "V_hat": V_hat, "weight": w, "gamma": float(link.gamma), "nmse": err,
                "channel_uses": float(floras_channel_uses(d=self.d, L=self.config.L, pilots=self.plan.n_pilots)),
                **noise_metrics(estimate, target)}
        return AggregationResult(estimate, self.K, err, diag)

    def _aggregate_sufficient(self, updates: np.ndarray, *, round_index: int, clients=None):
        """The sufficient path with the normalization folded into the weights (no K×d temporary).

        With s_k = f_k·(x_k − μ_k·1) (:func:`phy.normalization.row_factors`) and c_j = b/r_j^s,
        ŝ = Σ_k c_{π(k)} g_k s_k + ν = u@x − (u·μ)·1 + ν with u_k = c_{π(k)}·g_k·f_k: the same ŝ as
        normalizing first and calling the link (to rounding), in three passes over x.
        """
        x = check_updates(updates, K=self.K, d=self.d)  # the traced path's checks (finite values included)
        cfg, t = self.config, int(round_index)
        rf = row_factors(x, rule=cfg.normalization, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
        active, inactive, g, r_ref, w = self.link.pilots(t, clients=clients)
        u = w[active] * g * rf.factor
        s_hat = np.einsum("k,kd->d", u, x)  # one pass, no BLAS threads (steady under CPU contention)
        s_hat -= float(u @ rf.mu)
        self.link.add_sufficient_noise(s_hat, w, round_index=t)
        estimate = rf.scale * s_hat + float(rf.mu.sum())
        rnd = FlorasRound(s_hat, active, g, r_ref, self.link.conditional_variance(r_ref, inactive), "sufficient")
        return self._result(estimate, x.sum(axis=0), clipped_sum_factored(x, rf), rnd), rnd

    def aggregate_stream(self, chunks, *, round_index: int, clients=None) -> AggregationResult:
        """:meth:`aggregate` from running sums over the chunks, on the sufficient path (model §6.1: ŝ depends on the
        updates only through Σ_k u_k·x_k, u_k = c_{π(k)}·g_k·f_k): Σ_k u_k x_k, Σ_k f_k x_k (the clipped target)
        and Σ_k x_k (the raw sum), each accumulated in client order, plus the per-client f_k and μ_k — the same
        numbers as :meth:`_aggregate_sufficient` on the concatenation, bit for bit. The chip and fast paths (they
        need every s_k per sequence row), several coherence blocks, several receive antennas and the ``paper``
        rule (C_max over all K) are concatenated."""
        cfg, t = self.config, int(round_index)
        if not (self.link.path == "sufficient" and self.plan.single and cfg.normalization == "clip" and cfg.rx_antennas == 1):
            return aggregate_concatenated(self, chunks, round_index=round_index, clients=clients)
        active, inactive, g, r_ref, w = self.link.pilots(t, clients=clients)
        wg = w[active] * g
        s_hat, f_sum, raw = np.zeros(self.d), np.zeros(self.d), np.zeros(self.d)
        factor, mu, scale = np.empty(self.K), np.empty(self.K), 0.0
        for rows, x in stream_chunks(chunks, K=self.K, d=self.d):
            rf = row_factors(x, rule=cfg.normalization, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
            factor[rows], mu[rows], scale = rf.factor, rf.mu, rf.scale
            add_rows(s_hat, x, wg[rows] * rf.factor)
            add_rows(f_sum, x, rf.factor)
            add_rows(raw, x)
        u = wg * factor
        s_hat -= float(u @ mu)
        self.link.add_sufficient_noise(s_hat, w, round_index=t)
        estimate = scale * s_hat + float(mu.sum())
        f_sum -= float(factor @ mu)
        target = scale * f_sum + float(mu.sum())
        rnd = FlorasRound(s_hat, active, g, r_ref, self.link.conditional_variance(r_ref, inactive), "sufficient")
        return self._result(estimate, raw, target, rnd)

    def aggregate(self, updates: np.ndarray, *, round_index: int, clients=None) -> AggregationResult:
        return self.aggregate_traced(updates, round_index=round_index, trace=False, clients=clients)[0]

    def describe(self) -> dict:
        return {"scheme": "floras", **self.config.to_dict(), **self.link.describe()}


register_scheme(SchemeSpec(
    name="floras", aggregator=lambda config, *, K, d, seed, key, relation: FlorasAggregator(config, K=K, d=d, seed=seed, key=key),
    link_record=FlorasLinkRecord, params=FlorasParams, needs_key=True, unbiased=False, example={"L": 16, "floras": {"N": 8}},
    description="keyed random sequence assignment; the unused sequences add Cauchy noise (model §6.1)",
    channel="cell-coherence", chip_timing=True, rx_antennas=True,
))
