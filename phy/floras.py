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

import numpy as np

from .aggregation import (AggregationResult, aggregate_concatenated, check_updates, clipped_sum,
                          clipped_sum_factored, noise_metrics, relative_error, stream_chunks)
from .antennas import antenna_conditional_variance
from .channel_uses import floras_channel_uses
from .config import PhyConfig
from .floras_link import SUFFICIENT_BLOCK, FlorasLink, FlorasRound, resolve_path  # noqa: F401  (re-exported)
from .floras_params import FlorasParams
from .floras_record import FlorasLinkRecord
from .normalization import clipped_rows, denormalize, normalize, row_factors
from .row_pass import add_clipped_rows
from .receiver_rules import energy_variance, receiver_weight
from .schemes import SchemeSpec, register_scheme

__all__ = ["FlorasRound", "FlorasLink", "FlorasAggregator", "resolve_path", "SUFFICIENT_BLOCK"]

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
        V_blocks = None  # each pilot's own V̂_m (several pilots, noise estimate "pilots")
        if p.noise_estimate == "energy":
            V_hat = energy_variance(rnd.s_hat, b=link.b)
        elif rnd.r_ref_antennas is not None and rnd.r_ref_antennas.ndim == 3:  # every pilot of every antenna
            V_blocks = [antenna_conditional_variance(r, np.arange(p.N), noise_variance=link.noise_std**2)
                        for r in rnd.r_ref_antennas]
            V_hat = float(sum(f * v for f, v in zip(rnd.pilot_share, V_blocks)))
        elif rnd.r_ref_antennas is not None:  # every antenna's pilots (model §5.2)
            V_hat = antenna_conditional_variance(rnd.r_ref_antennas, np.arange(p.N), noise_variance=link.noise_std**2)
        elif rnd.r_ref_blocks is None:  # the pilots: the conditional variance over all N sequences (the BS does not know the active set)
            V_hat = link.conditional_variance(rnd.r_ref, np.arange(p.N))
        else:  # several pilots: the entry-weighted mean of each pilot's conditional variance
            V_blocks = [link.conditional_variance(r, np.arange(p.N)) for r in rnd.r_ref_blocks]
            V_hat = float(sum(f * v for f, v in zip(rnd.pilot_share, V_blocks)))
        w = receiver_weight(p.receiver, gamma=link.gamma, V_hat=V_hat, cap=p.receiver_cap, antennas=self.config.rx_antennas)
        if p.receiver_scope == "block" and V_blocks is not None:
            # each pilot's entries weighted by the rule on its own V̂_m (model §6.4); w reported as the entry mean
            w_m = np.array([receiver_weight(p.receiver, gamma=link.gamma, cap=p.receiver_cap, V_hat=v,
                                            antennas=self.config.rx_antennas) for v in V_blocks])
            estimate = w_m[self.plan.indices()[1]] * estimate
            w = float(np.asarray(rnd.pilot_share) @ w_m)
        elif w != 1.0:
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
        for rows, x in stream_chunks(chunks, K=self.K, d=self.d, finite=False):  # clipped_rows checks
            cr = clipped_rows(x, C=cfg.norm_bound(self.d), clip_norm=cfg.clip_norm)
            weight = wg[rows]

            def add(j, fk, cols, buf, x=x, weight=weight):  # Σ u_k x_k, Σ f_k x_k, Σ x_k in client order
                row = x[j, cols]
                np.multiply(row, weight[j] * fk, out=buf)
                s_hat[cols] += buf
                np.multiply(row, fk, out=buf)
                f_sum[cols] += buf
                raw[cols] += row

            add_clipped_rows(cr, add)  # each row's μ, f from that row alone; the sums column range by column range
            factor[rows], mu[rows], scale = cr.factor, cr.mu, cr.scale
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
    channel="cell-coherence", chip_timing=True, rx_antennas=True, antennas_with=("coherence_symbols",),
))
