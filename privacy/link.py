"""Link-level (ε, δ) of FLORAS at finite SNR (issue 10, item 5(a); model §6.1, §7.2).

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
P(Gᶜ) ≤ T·K·P(|c| > c_max) (union bound), so the link is (ε, δ' + T·K·P(|c| > c_max))-DP.
P(|c| > c_max) is computed by one-dimensional quadrature (relative tolerance 1e-10) from the
exact distributions: with u = g·√(L·SNR), n ~ N(0, 1), c = u/(u + n) and
P(|c| > c) = E_u[Φ(|u|/c − |u|) − Φ(−|u| − |u|/c)]; g ~ N(0, ½) without CSIT, g = |h| Rayleigh
(E g² = 1) with phase CSIT (model §5). ε_link is minimized over c_max on the levels where
T·K·P(|c| > c_max) = f·δ, f ∈ {0.5, 0.3, 0.1, 0.03, 0.01, 10⁻³}.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from scipy import integrate
from scipy.optimize import brentq
from scipy.special import ndtr

__all__ = ["LinkModel", "exceed_probability", "floras_link_epsilon"]

FRACTIONS = (0.5, 0.3, 0.1, 0.03, 0.01, 1e-3)


@dataclass(frozen=True)
class LinkModel:
    """The link the active factors c_k come from: SNR = P/σ² in dB (model §5), chips L, CSIT mode."""

    snr_db: float
    L: int = 32
    csit: str = "none"

    def __post_init__(self):
        if isinstance(self.snr_db, bool) or not isinstance(self.snr_db, (int, float)) or not math.isfinite(self.snr_db):
            raise ValueError(f"snr_db must be a finite number (got {self.snr_db!r})")
        if isinstance(self.L, bool) or not isinstance(self.L, int) or self.L < 1:
            raise ValueError(f"L must be an integer ≥ 1 (got {self.L!r})")
        if self.csit not in ("none", "phase"):
            raise ValueError(f"csit must be one of {{none, phase}} (got {self.csit!r})")


def exceed_probability(c_max: float, link: LinkModel) -> float:
    """P(|c_k| > c_max) for one active slot (see the module doc)."""
    c = float(c_max)
    if not (c > 0 and math.isfinite(c)):
        raise ValueError(f"c_max must be a finite number > 0 (got {c_max!r})")
    a = math.sqrt(link.L * 10.0 ** (link.snr_db / 10.0))  # u = a·g

    def cond(r: float) -> float:  # P(|c| > c | |g| = r)
        u = a * r
        return float(ndtr(u / c - u) - ndtr(-u - u / c))

    if link.csit == "none":
        dens = lambda r: 2.0 * math.exp(-r * r) / math.sqrt(math.pi)  # |g|, g ~ N(0, 1/2)
    else:
        dens = lambda r: 2.0 * r * math.exp(-r * r)  # Rayleigh, E g² = 1
    scale = 1.0 / a  # the conditional probability changes on the scale |g| ~ 1/a
    pts = [scale * x for x in (0.1, 1.0, 10.0) if scale * x < 8.0]
    with warnings.catch_warnings():
        # roundoff flags when the probability is far below the integrand's peak; the tests check
        # the value against Monte Carlo
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, _ = integrate.quad(lambda r: dens(r) * cond(r), 0.0, 8.0, points=pts or None, epsabs=0.0, epsrel=1e-10, limit=400)
    return min(1.0, max(0.0, val))


def _c_for(target: float, link: LinkModel) -> float | None:
    """The c_max with P(|c| > c_max) = target (P decreases in c_max), or None."""
    lo, hi = 1e-3, 1e12
    if exceed_probability(hi, link) > target:
        return None
    if exceed_probability(lo, link) <= target:
        return lo
    return float(math.exp(brentq(lambda lc: exceed_probability(math.exp(lc), link) - target, math.log(lo), math.log(hi),
                                 xtol=1e-6)))


def floras_link_epsilon(acc, *, rounds: int) -> tuple[float, dict]:
    """(ε_link, details) for a :class:`privacy.run.FlorasRunAccountant` with ``acc.link`` set."""
    link: LinkModel = acc.link
    if rounds == 0:
        return 0.0, {"c_max": None, "exceed_probability": 0.0, "delta_truncation": 0.0, "assumptions": []}
    best = (math.inf, None, None)
    first = True
    for f in FRACTIONS:
        p = f * acc.delta / (rounds * acc.K)
        c = _c_for(p, link)
        if c is None:
            continue
        generic = acc.with_sensitivity_generic(c * acc.sensitivity)
        eps = generic._engine.epsilon(rounds, acc.delta * (1.0 - f))[0]
        if eps < best[0] or first:
            best, first = (eps, c, p), False
    eps, c, p = best
    snr = f"SNR = {link.snr_db:g} dB (P/σ², model §5), L = {link.L}, CSIT {link.csit}"
    if c is None:
        text = f"link level ({snr}): no truncation level c_max gives T·K·P(|c_k| > c_max) below δ; ε_link = ∞"
        return math.inf, {"c_max": None, "exceed_probability": None, "delta_truncation": None, "assumptions": [text]}
    text = (
        f"link level ({snr}): active-client factors c_k = g_k b/(g_k b + w_k) truncated at c_max = {c:.6g}; "
        f"P(|c_k| > c_max) = {p:.3g} exactly from the fading and pilot-noise distributions, T·K·P = {rounds * acc.K * p:.3g} "
        f"folded into δ; the rest accounted with sensitivity c_max·S = {c * acc.sensitivity:.6g} and the generic sampling "
        "bounds (privacy/link.py); ε_link = "
        + ("∞" if eps == math.inf else f"{eps:.6g}") + " is what the simulated link guarantees, ε the idealised release"
    )
    return eps, {"c_max": c, "exceed_probability": p, "delta_truncation": rounds * acc.K * p, "snr_db": link.snr_db,
                 "L": link.L, "csit": link.csit, "assumptions": [text]}
