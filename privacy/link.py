"""Link-level (ε, δ) of FLORAS at finite SNR (issue 10, item 5(a); model §5.1, §6.1, §7.2).

In the simulated link, active client k's term is c_k·s_k/b with c_k = g_k b/(g_k b + w_k)
(g_k the effective gain, w_k = a_jᵀn_s ~ N(0, σ²/L) the pilot noise on its sequence), which is
unbounded. Conditionally on all pilot outputs, ŝ^i/b = Σ_k c_k s_k^i/b + N(0, V + V_act) with
V ~ Lévy(0, γ²) from the inactive sequences and V_act ≥ 0 from the active ones (model §6.1,
sufficient-statistic path); the c_k and V are independent of the data.

Statement: fix c_max. On the event G = {|c_{t,k}| ≤ c_max for every round t and active slot k},
revealing the c's and V leaves, in every round, a mixture over the (data-independent) slot
assignment of Gaussian mechanisms with variance ≥ V and shift ≤ c_max·S. Its RDP is at most the
Cauchy bound of model §7.2 with sensitivity c_max·S (the extra variance V_act is post-processing,
the slot mixture cannot raise the divergence by joint convexity), and sampling is amplified by the
generic bounds (WBK 2019 Thm 9 / Zhu & Wang 2019 Thm 6), which need only the base curve: the
Gaussian-specific sampled bounds assume one Gaussian with a common shift, which the slot mixture
is not, so they are not used here. For every output set A,
P_D(A) = E_c[P_D(A | c)] ≤ E_c[1_G(e^ε P_D'(A | c) + δ')] + P(Gᶜ) ≤ e^ε P_D'(A) + δ' + P(Gᶜ), and
P(Gᶜ) ≤ T·K·P(|c| > c_max) (union bound), so the link is (ε, δ' + T·K·P(|c| > c_max))-DP (one block,
no cell; below for both).
P(|c| > c_max) is computed by one-dimensional quadrature (relative tolerance 1e-10) from the
exact distributions: with u = g·√(L·SNR), n ~ N(0, 1), c = u/(u + n) and
P(|c| > c) = E_u[Φ(|u|/c − |u|) − Φ(−|u| − |u|/c)]; g ~ N(0, ½) without CSIT, g = |h| Rayleigh
(E g² = 1) with phase CSIT (model §5), g = |h|·cos(∠h − ∠ĥ) with phase CSIT from an estimate ĥ of relative error
σ_e² (``csi_error``; :func:`privacy.gain_laws.estimated_phase_density`: a Rayleigh variable plus an independent
Gaussian, whose density divided by r is decreasing, so the cell grid's weight (β_up/β) of phase CSIT holds, model
§5.1). ε_link is minimized over c_max on the levels where T·K·B·P(|c| > c_max) = f·δ, f ∈ {0.5, 0.3, 0.1, 0.03, 0.01,
10⁻³} (:mod:`privacy.link_epsilon`).

Rician gains (``rician_k`` = κ > 0: `phy.rician_k`, or TDL-D/E's κ, model §5.1): h = A·e^{jφ} + h̃/√(κ+1),
A = √(κ/(κ+1)), φ ~ U(0, 2π), h̃ ~ CN(0, 1), so with phase CSIT g = |h| has the Rice density
f(r) = 2(κ+1)·r·exp(−κ − (κ+1)r²)·I₀(2r√(κ(κ+1))), and without CSIT g = Re(h) = A·cos φ + N(0, σ²),
σ² = 1/(2(κ+1)): |g| has density E_φ[φ_σ(r − A cos φ) + φ_σ(r + A cos φ)], the average over φ taken by the
midpoint rule on [0, π] (periodic and analytic in φ: geometric convergence; :data:`PHASE_NODES`). The union bound
needs only each factor's marginal, which is this law on every block (the line of sight's turn over blocks keeps φ
uniform). The inactive sequences carry receiver noise only, so the release's Cauchy term (ε, model §7.2) does not
depend on the fading law.

Cell and pilot blocks (model §5.1, §7.2 "Link level"): with a fixed drop (data-independent and public,
conditioned on) client c's factor has u = g·√(L·SNR·β_eff,c), and with K of M sampled uniformly
P(Gᶜ) ≤ Σ_t Σ_c (K/M)·P_c = T·K·mean_c P_c over the M population clients (``gain_scales``). With per-block
pilots each of the B blocks has its own factor c_{k,m} of the same marginal and its own V_m; on G block m's
shift is c_{k,m}Δ_m, Σ_m ‖c_{k,m}Δ_m‖² ≤ c_max²S², and the per-round curve with B independent V_m is the one-
block curve (model §5.1, superadditivity of −ln(1 − x)), so P(Gᶜ) ≤ T·K·B·mean_c P_c (``blocks``).
A cell re-dropped every round (``drop_rounds`` = T): the drops are data-independent, so condition on
all of them; client c's factor in round t has β_eff,t,c, and P(Gᶜ | drops) ≤ Σ_t Σ_c (K/M)·P_t,c =
T·K·mean_(t,c) P_t,c over the T·M drops of the rounds accounted (the first t·M of them after t rounds). The mean is
one quadrature over |g| with the clients' terms vectorised (breakpoints at 0.1, 1, 10 × 1/a over the spread of
a = √(L·SNR·β)); above :data:`EXACT_SCALES` distinct β it is bounded by rounding β up onto a
:data:`GRID_DB` grid with weight (β_up/β)^{k/2}·exp(κ·(a_up − a)/(a_up + a)), k = 1 without CSIT, 2 with phase
CSIT, N_r with N_r antennas: the density of u = a·g obeys (1/a)f(u/a) ≤ (a_up/a)^k·exp(κ·(a_up − a)/(a_up + a))·(1/a_up)f(u/a_up) for
a ≤ a_up, so P(a) ≤ that factor times P(a_up) whatever the conditional law (rounding down would not do: P is not
monotone in the SNR, it vanishes at low SNR). Derived: with s = 1/a − 1/a_up ≥ 0, t = 1/a + 1/a_up and u ≥ 0,
Rayleigh (κ = 0) has the factor 1 beside (a_up/a)^k; with phase CSIT the Rice ratio is (a_up/a)²·exp(−(κ+1)u²st)·
I₀(2bu/a)/I₀(2bu/a_up), b = √(κ(κ+1)), and I₀(y)/I₀(x) ≤ e^{y−x} for y ≥ x (I₁ < I₀), so the exponent is at most
max_u (2bsu − (κ+1)stu²) = κs/t; without CSIT each component φ_σ(u/a − m)/φ_σ(u/a_up − m), |m| ≤ A, is
exp(−us(ut − 2m)/(2σ²)) ≤ exp(sm²/(2σ²t)) ≤ exp(κs/t) (A²/(2σ²) = κ), and so is their φ-average.

Several receive antennas (``antennas`` = N_r, maximum ratio on the pilots, model §5.2): the factor of active
client k is u_k = Σ_r c_{π(k),r}·g_{k,r} = ⟨x, v⟩/‖x‖² in normalised units (x the sequence's pilots over the
antennas, v = g·√(L·SNR·β) their noiseless part, x − v ~ N(0, I)); |u_k| > c exactly when |⟨x, v⟩| > c‖x‖².
Averaged over the client's gain the probability has a closed form (:func:`antenna_exceed_probability`): v and x
are jointly Gaussian, v ~ N(0, q·I), q = L·SNR·β/2, so given x, ⟨x, v⟩ ~ N(μ‖x‖², μ‖x‖²), μ = q/(1 + q), and
‖x‖² = (1 + q)·χ²_{N_r}; Z/χ_{N_r} = T/√N_r with T Student's t of N_r degrees of freedom, hence
P(|u_k| > c) = P(T > (c(1 + q) − q)√(N_r/q)) + P(T > (c(1 + q) + q)√(N_r/q)). The tail falls as c^{−N_r}, so c_max,
and with it ε_link, shrinks with N_r. The release given the pilots and the factors is again a Gaussian mixture with
the inactive sequences' V of N_r antennas, so the base curve is that of :mod:`privacy.antenna_rdp` at sensitivity
c_max·S. With B > 1 pilot blocks (one per block; model §5.2, "Antennas over coherence blocks") every block's factor
u_{k,m} has this marginal (every antenna's block m is CN(0, β), its pilot noise fresh) and its own V_m; the base
curve with B independent V_m is the one-block curve (the log moment is convex and 0 at 0), so P(Gᶜ) ≤ T·K·B·mean_c P_c
as with one antenna.

A stale pilot (``stale``: one reference slot for B coherence blocks, model §5.1): block m's factor is
g_m b/(g_0 b + w), a ratio of zero-mean jointly Gaussian variables with the closed form of :mod:`privacy.link_stale`;
the blocks share the one pilot and its V, so the base curve is the one-block curve at sensitivity c_max·S, and
P(Gᶜ) ≤ T·K·Σ_m mean_c P_(m,c) = T·K·B·(the mean over blocks), the union bound over every block's factor. With
phase CSIT the factor is |h_m| b/(|h_0| b + w) and each P_(m,c) is replaced by an upper bound (module
:mod:`privacy.link_stale`: |h_m| ≤ ρ_m|h_0| + √(1 − ρ_m²)|w|, the larger event computed exactly); the union bound only needs upper
bounds, and above EXACT_SCALES the grid factor (a_up/a)⁴ of the pair (h_0, h_m) applies to the exact probability
before the bound is taken at a_up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, stdtr

from privacy.gain_laws import gain_density, los_phase_cosines  # noqa: F401 - re-exported: the laws the link averages over

__all__ = ["LinkModel", "antenna_exceed_probability", "exceed_probability", "gain_density", "los_phase_cosines"]

EXACT_SCALES = 512  # distinct β_eff up to which the mean over clients is exact
GRID_DB = 0.05  # the conservative grid above it [dB]


@dataclass(frozen=True)
class LinkModel:
    """The link the active factors c_k come from (model §5, §5.1).

    snr_db: SNR = P·β_ref/σ² in dB (model §5; with a cell, at the reference of §5.1); L chips; CSIT mode.
    gain_scales: β_eff,c of the M population clients relative to the reference (model §5.1), or None (no
    cell, every β_eff = 1). blocks: pilot blocks B per round (per-block pilots, model §5.1; 1 otherwise).
    cell_note: how the scales were obtained (stated in the report). rician_k: κ of the Rician gains (0: Rayleigh;
    `phy.rician_k` or TDL-D/E's K-factor, model §5.1). antennas: N_r receive antennas combined by maximum ratio on
    the pilots (model §5.2; N_r > 1 needs csit "none", Rayleigh gains and one pilot block). stale: with one stale pilot
    for B = ``blocks`` coherence blocks, ρ_m = Re E[h̃_m·h̃*_0] of each block without CSIT, |E[h̃_m·h̃*_0]| with phase
    CSIT (ρ_0 = 1; :mod:`privacy.link_stale`, one antenna); with Rician gains (ρ_m, θ_m) pairs without CSIT (θ_m the
    line of sight's rotation, :mod:`privacy.link_stale_los`) and (ρ_m, D_m) pairs with phase CSIT; or None (a pilot
    per block). drop_rounds: with a cell re-dropped every
    round, the T rounds whose drops ``gain_scales`` holds (T·M gains, round after round; model §7.2 "Link level"),
    None for a fixed drop. undefined: why no ε_link is stated (then :func:`floras_link_epsilon` returns None with
    that reason), or None. csi_error: σ_e² of the estimate whose phase the clients pre-rotate by (phase CSIT, Rayleigh,
    one antenna, one block or a pilot and an estimate per block, each block's gain of the one-block law; model §5.1
    "Imperfect CSI"; 0: the true phase).
    """

    snr_db: float
    L: int = 32
    csit: str = "none"
    gain_scales: tuple | None = None
    blocks: int = 1
    cell_note: str = ""
    undefined: str | None = None
    drop_rounds: int | None = None
    rician_k: float = 0.0
    antennas: int = 1
    stale: tuple | None = None
    csi_error: float = 0.0

    def __post_init__(self):
        if isinstance(self.snr_db, bool) or not isinstance(self.snr_db, (int, float)) or not math.isfinite(self.snr_db):
            raise ValueError(f"snr_db must be a finite number (got {self.snr_db!r})")
        if isinstance(self.L, bool) or not isinstance(self.L, int) or self.L < 1:
            raise ValueError(f"L must be an integer ≥ 1 (got {self.L!r})")
        if self.csit not in ("none", "phase"):
            raise ValueError(f"csit must be one of {{none, phase}} (got {self.csit!r})")
        k = self.rician_k
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not (math.isfinite(k) and k >= 0):
            raise ValueError(f"rician_k must be a finite number ≥ 0 (the Rician K-factor κ, linear; got {k!r})")
        object.__setattr__(self, "rician_k", float(k))
        if isinstance(self.blocks, bool) or not isinstance(self.blocks, int) or self.blocks < 1:
            raise ValueError(f"blocks must be an integer ≥ 1 (got {self.blocks!r})")
        if isinstance(self.antennas, bool) or not isinstance(self.antennas, int) or self.antennas < 1:
            raise ValueError(f"antennas must be an integer ≥ 1 (got {self.antennas!r})")
        if self.antennas > 1 and (self.csit != "none" or self.rician_k):
            raise ValueError(f"antennas = {self.antennas} is derived for csit 'none' and Rayleigh gains (got csit = "
                             f"{self.csit!r}, rician_k = {self.rician_k:g})")
        e = self.csi_error
        if isinstance(e, bool) or not isinstance(e, (int, float)) or not (math.isfinite(e) and e >= 0):
            raise ValueError(f"csi_error must be a finite number ≥ 0 (σ_e², relative; got {e!r})")
        object.__setattr__(self, "csi_error", float(e))
        if e and (self.csit != "phase" or self.rician_k or self.antennas > 1 or self.stale is not None):
            raise ValueError(f"csi_error = {e:g} is derived for phase CSIT over Rayleigh gains, one antenna and a pilot "
                             f"per block (got csit = {self.csit!r}, rician_k = {self.rician_k:g}, antennas = "
                             f"{self.antennas}, stale = {self.stale is not None})")
        object.__setattr__(self, "_los", None)
        if self.stale is not None:
            r = np.asarray(self.stale, dtype=float)
            if r.ndim == 2 and r.shape[1:] == (2,) and self.csit == "none":  # (Re r_m, θ_m): Rician, no CSIT
                theta, r = r[:, 1], r[:, 0]
                if not self.rician_k or not np.all(np.isfinite(theta)) or theta[0] != 0:
                    raise ValueError("stale (ρ_m, θ_m) pairs without CSIT describe Rician blocks: θ_m the line of sight's "
                                     f"phase rotation from block 0 (finite, θ_0 = 0; got rician_k = {self.rician_k:g})")
                object.__setattr__(self, "_los", tuple(float(x) for x in theta))
            elif r.ndim == 2 and r.shape[1:] == (2,):  # (ρ_m, D_m) pairs: phase CSIT with a line of sight
                dist, r = r[:, 1], r[:, 0]
                if not self.rician_k or not np.all((dist >= 0) & (dist <= 2)) or dist[0] != 0:
                    raise ValueError("stale (ρ_m, D_m) pairs describe Rician blocks with phase CSIT: D_m = |e^{jψb_m} − r_m| "
                                     f"in [0, 2], D_0 = 0 (got csit = {self.csit!r}, rician_k = {self.rician_k:g})")
                object.__setattr__(self, "_los", tuple(float(x) for x in dist))
            low, what = (-1.0, "Re r_m in [−1, 1]") if self.csit == "none" else (0.0, "|r_m| in [0, 1]")
            if r.ndim != 1 or r.size != self.blocks or not np.all((r >= low) & (r <= 1.0)) or r[0] != 1.0:
                raise ValueError(f"stale must hold ρ_m = {what} for each of the blocks = {self.blocks} blocks, ρ_0 = 1 "
                                 f"(csit {self.csit!r}; got {self.stale!r:.80})")
            if (self.rician_k and self._los is None) or self.antennas > 1:
                raise ValueError("stale pilots are derived for Rayleigh gains, or Rician gains given as (ρ_m, θ_m) pairs "
                                 "without CSIT and (ρ_m, D_m) pairs with phase CSIT, and one antenna (got rician_k = "
                                 f"{self.rician_k:g}, antennas = {self.antennas})")
            object.__setattr__(self, "stale", tuple(float(x) for x in r))
        if self.gain_scales is not None:
            g = np.asarray(self.gain_scales, dtype=float)
            if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g <= 0):
                raise ValueError("gain_scales must be a non-empty sequence of finite numbers > 0 (β_eff per client, "
                                 f"model §5.1; got {self.gain_scales!r:.80})")
            object.__setattr__(self, "gain_scales", tuple(float(x) for x in g))
        if self.drop_rounds is not None:
            if isinstance(self.drop_rounds, bool) or not isinstance(self.drop_rounds, int) or self.drop_rounds < 1:
                raise ValueError(f"drop_rounds must be an integer ≥ 1 or None (got {self.drop_rounds!r})")
            if self.gain_scales is None or len(self.gain_scales) % self.drop_rounds:
                raise ValueError(f"drop_rounds = {self.drop_rounds} needs gain_scales holding the same number of clients "
                                 "for each of those rounds (T·M values)")
        object.__setattr__(self, "_weights", None)
        object.__setattr__(self, "_blocks", None)

    def scale_weights(self) -> tuple[np.ndarray, np.ndarray, str]:
        """(amplitude factors √β [n], weights [n], how): mean_c P_c ≤ Σ_n weight_n·P(√β_n·a) (see the module doc)."""
        if self._weights is None:
            object.__setattr__(self, "_weights", self._scale_weights())
        return self._weights

    def stale_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct ρ_m, their shares of the B blocks) of a stale pilot (:func:`privacy.link_stale.distinct_blocks`),
        computed once per link."""
        if self._blocks is None:
            from privacy.link_stale import distinct_blocks

            object.__setattr__(self, "_blocks", distinct_blocks(self.stale, self._los))
        return self._blocks

    def _scale_weights(self):
        if self.gain_scales is None:
            return np.ones(1), np.ones(1), "no cell"
        g = np.asarray(self.gain_scales)
        M = g.size
        vals, counts = np.unique(g, return_counts=True)
        who = f"the {M} clients' β_eff" if self.drop_rounds is None else f"the {M} drops' β_eff,t,c"
        if vals.size <= EXACT_SCALES:
            return np.sqrt(vals), counts / M, f"exact mean over {who}"
        # P(a) ≤ (a_hi/a)^k·exp(κ(a_hi − a)/(a_hi + a))·P(a_hi), a ≤ a_hi; k the power of r in the density of the
        # gain's norm near 0: 1 without CSIT, 2 with phase CSIT (Rayleigh), N_r with N_r antennas (r^{N_r−1}·dr); with
        # a stale pilot the pair (g_0, g_m) at scale a, a zero-mean Gaussian in 2 dimensions: (a_up/a)²; with phase
        # CSIT the pair (h_0, h_m), 4 real dimensions: (a_up/a)⁴ (the exact probability, which the bound is then taken of)
        k = ((2 if self.csit == "none" else 4) if self.stale is not None
             else self.antennas if self.antennas > 1 else (1 if self.csit == "none" else 2))
        idx = np.ceil(10.0 * np.log10(g) / GRID_DB)
        hi = 10.0 ** (idx * GRID_DB / 10.0)  # β rounded UP onto the grid
        bins, inv = np.unique(idx, return_inverse=True)
        ratio = np.sqrt(hi / g)  # a_up/a ≥ 1; the factor exp(·) is 1.0 exactly at κ = 0
        if self.stale is not None and self.csit == "none" and self.rician_k:  # a weight per block: [V, bins]
            from privacy.link_stale_los import pair_exponent

            vals, _ = self.stale_blocks()
            kap = pair_exponent(vals[:, 0], vals[:, 1], self.rician_k)
            with np.errstate(over="ignore", invalid="ignore"):
                per = (hi / g)[None, :] * np.exp(kap[:, None] * ((ratio - 1.0) / (ratio + 1.0))[None, :])
            w = np.stack([np.bincount(inv, weights=row, minlength=bins.size) for row in per]) / M
            return np.sqrt(10.0 ** (bins * GRID_DB / 10.0)), w, (
                f"mean over {who} bounded on a {GRID_DB:g} dB grid (β rounded up, weight (β_up/β)·exp(κ'_m(a_up − a)/"
                f"(a_up + a)) per block, κ'_m up to {float(np.max(kap)):.4g} for κ = {self.rician_k:g}: the pair "
                "(Re h_m, Re h_0) given the line of sight's phase, privacy/link_stale_los.py; an upper bound)")
        w = np.bincount(inv, weights=(hi / g) ** (k / 2.0) * np.exp(self.rician_k * (ratio - 1.0) / (ratio + 1.0))) / M
        los = f"·exp(κ(a_up − a)/(a_up + a)), κ = {self.rician_k:g}" if self.rician_k else ""
        return np.sqrt(10.0 ** (bins * GRID_DB / 10.0)), w, (
            f"mean over {who} bounded on a {GRID_DB:g} dB grid (β rounded up, weight (β_up/β)^{k}/2{los}, "
            "an upper bound)")


def exceed_probability(c_max: float, link: LinkModel) -> float:
    """P(|c_k| > c_max) for one active slot, averaged over the population's gain scales (see the module doc), and with
    a stale pilot over the B blocks too (T·K·B times it bounds P(Gᶜ))."""
    c = float(c_max)
    if not (c > 0 and math.isfinite(c)):
        raise ValueError(f"c_max must be a finite number > 0 (got {c_max!r})")
    a0 = math.sqrt(link.L * 10.0 ** (link.snr_db / 10.0))  # u = a·g at β_eff = 1
    amp, weights, _ = link.scale_weights()
    a = a0 * amp
    if link.antennas > 1:  # the gain averaged in closed form (module doc)
        return min(1.0, max(0.0, float(np.dot(weights, antenna_exceed_probability(c, a, link.antennas)))))
    if link.stale is not None and link.csit == "none" and link.rician_k:  # Rician blocks: exact given the LOS phase
        from privacy.link_stale_los import mean_los_stale_exceed_probability

        return min(1.0, max(0.0, mean_los_stale_exceed_probability(c, a, weights, link.stale_blocks(), link.rician_k)))
    if link.stale is not None and link.csit == "none":  # the mean over the blocks of the stale factor's closed form
        from privacy.link_stale import mean_stale_exceed_probability

        return min(1.0, max(0.0, mean_stale_exceed_probability(c, a, weights, link.stale_blocks())))
    if link.stale is not None:  # phase CSIT: the bound over the blocks (privacy.link_stale)
        from privacy.link_stale import mean_stale_phase_bound

        return min(1.0, max(0.0, mean_stale_phase_bound(c, a, weights, link.stale_blocks(), kappa=link.rician_k)))
    return _one_block_mean(c, a, weights, link)


def _one_block_mean(c: float, a: np.ndarray, weights: np.ndarray, link: LinkModel) -> float:
    """Σ_n weights_n·P(|c_k| > c) of the one-block factor c_k = u/(u + n), u = a_n·g, g of the link's CSIT and
    Rician law (one quadrature over |g|, the clients' terms vectorised)."""
    dens = gain_density(link.csit, link.rician_k, link.csi_error)
    given = _given_gain(c)

    if a.size == 1:
        a1, w1 = float(a[0]), float(weights[0])

        def integrand(r: float) -> float:  # P(|c| > c | |g| = r)
            return dens(r) * w1 * float(given(a1 * r))
    else:
        def integrand(r: float) -> float:
            return dens(r) * float(np.dot(weights, given(a * r)))

    from privacy.link_stale import gain_quadrature  # breakpoints at every client's scale |g| ~ 1/a and the Rice peak

    val = gain_quadrature(integrand, a, link.rician_k)
    return min(1.0, max(0.0, val))


def _given_gain(c: float):
    """P(|c_k| > c | ρ) with one antenna as a function of ρ = |v| (array), v = g·√(L·SNR·β) the normalised pilot
    amplitude: c_k = ρ/(ρ + n), P = Φ(ρ/c − ρ) − Φ(−ρ − ρ/c)."""
    return lambda rho: ndtr(rho / c - rho) - ndtr(-rho - rho / c)


def antenna_exceed_probability(c: float, a, antennas: int) -> np.ndarray:
    """P(|u_k| > c) of the maximum-ratio factor u_k = ⟨x, v⟩/‖x‖² with N_r = ``antennas``, averaged over the
    client's Rayleigh gain, for pilot amplitudes ``a`` (array; v = a·g, g ~ N(0, ½·I_{N_r}), x = v + N(0, I)):
    with q = a²/2 and T Student's t of N_r degrees of freedom (module doc, model §7.2 "Link level"),

        P = P(T > (c(1 + q) − q)·√(N_r/q)) + P(T > (c(1 + q) + q)·√(N_r/q)).

    Exact for every N_r ≥ 1 (N_r = 1: T is Cauchy, the ratio of two Gaussians)."""
    q = 0.5 * np.square(np.asarray(a, dtype=np.float64))
    scale = np.sqrt(antennas / q)
    return stdtr(antennas, -(c * (1.0 + q) - q) * scale) + stdtr(antennas, -(c * (1.0 + q) + q) * scale)
