"""Per-round accounting engines: one event, ε after t rounds, under a named accountant (model §7.3, §9.4, §9.5).

=============== ========================================================================= ===========
accountant      what it computes                                                          exact?
=============== ========================================================================= ===========
``rdp``         RDP, mechanism-specific sampling bounds where they exist (default)         upper bound
``rdp-generic`` RDP, generic sampling bounds only (WBK 2019 Thm 9 / Zhu & Wang 2019 Thm 6) upper bound
``pld``         privacy-loss distribution, pessimistic discretization (dp_accounting)      upper bound
``gdp``         μ-GDP; subsampling by the central limit theorem                            APPROXIMATE
``fdp``         trade-off functions (f-DP), C_p / f_p subsampling, numerical ⊗ (model §9.4) upper bound
``tightest``    min of ``rdp`` and the first of ``pld``, ``fdp`` that handles the event   upper bound
=============== ========================================================================= ===========

Each engine answers ``epsilon(rounds)`` → (ε, order or None, warnings) and ``delta_at``; the run
accountants build the reports around them.
"""

from __future__ import annotations

import math

import numpy as np

from privacy.accountant import edge_warning, event_eps_inf, event_rdp
from privacy.events import SampledWithoutReplacement
from privacy.gdp import event_mu, gdp_delta, gdp_epsilon
from privacy.known_sample import known_sample_epsilon, revealed_sample_pld, revealed_sample_rdp
from privacy.rdp import delta_from_rdp, epsilon_from_rdp

__all__ = ["ACCOUNTANTS", "ACCOUNTANT_TEXT", "TIGHTEST_CANDIDATES", "make_engine"]

ACCOUNTANTS = ("rdp", "rdp-generic", "rdp-revealed", "pld", "gdp", "fdp", "tightest")
#: What ``tightest`` minimises over: ``rdp`` always, then the first of the others that handles the event.
TIGHTEST_CANDIDATES = ("pld", "fdp")
ACCOUNTANT_TEXT = {
    "rdp": "rdp: Rényi DP with mechanism-specific sampling bounds where they exist (sampled Gaussian: dp_accounting, "
           "Mironov–Talwar–Zhang 2019 arXiv:1908.10530 / WBK 2019 arXiv:1808.00087 Thm 27; sampled FLORAS: "
           "conditional-Gaussian V-average, model §9.5), generic bounds otherwise; composition by addition",
    "rdp-generic": "rdp-generic: Rényi DP with the generic sampling bounds only (WBK 2019 arXiv:1808.00087 Thm 9; "
                   "Zhu & Wang 2019 Thm 6); composition by addition",
    "rdp-revealed": "rdp-revealed: rdp, and for sampling without replacement also, order by order, the revealed-sample "
                    "curve ln(1 − q + q·e^{(α−1)ε(α)})/(α − 1) of the unsampled round, which bounds the sampled round "
                    "too (model §7.3; the Rényi part of tightest); composition by addition",
    "pld": "pld: privacy-loss distribution with pessimistic (connect-the-dots) discretization, FFT composition "
           "(dp_accounting; Poisson sampling by its add and remove pairs; sampling without replacement by the "
           "symmetric pair of Dong, Roth & Su's C_q(f), replace-one; FLORAS as a pessimistic V-mixture of Gaussian "
           "PLDs, model §9.5)",
    "gdp": "gdp: Gaussian DP (Dong, Roth & Su 2019, arXiv:1905.02383; Zheng et al. 2021), exact μ → (ε, δ) conversion",
    "fdp": "fdp: f-DP trade-off functions (Dong, Roth & Su 2019; Zheng et al. 2021; model §9.4): Gaussian G_μ exact, "
           "randomized response f_{ε₀,0} exact, sampling without replacement by C_p (DRS Thm 4.2), Poisson by the "
           "pair (P, (1−p)P + pQ) in both orders, composition ⊗ on a 1e-4-nat loss grid (ε at most T·1e-4 above "
           "the exact value of these trade-off functions); DDGauss: the f implied by its T-round RDP curve",
    "tightest": "tightest: the smaller ε of two upper bounds, rdp (with the revealed-sample curve for sampling without "
                "replacement, rdp-revealed) and the first of pld, fdp that handles the mechanism (pld where it exists, "
                "else fdp; each a valid (ε, δ) bound, so their minimum is one); which one attained ε, and why a "
                "candidate was not used, is stated per report (model §9.4)",
}


def _check(accountant: str) -> None:
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {{{', '.join(ACCOUNTANTS)}}} (got {accountant!r})")


class _RdpEngine:
    approximate = False

    def __init__(self, event, *, orders, method: str, conversion: str):
        self.orders = np.asarray(orders, dtype=np.float64)
        self.conversion = conversion
        self.round_rdp = event_rdp(event, self.orders, method=method)
        self.eps_inf = event_eps_inf(event)  # pure-DP level per round (∞ unless the mechanism is pure DP)

    def epsilon(self, rounds: int, delta: float):
        curve = rounds * self.round_rdp if rounds else np.zeros_like(self.orders)
        eps, idx = epsilon_from_rdp(self.orders, curve, delta=delta, conversion=self.conversion)
        pure = rounds * self.eps_inf if rounds else 0.0
        if pure < eps:  # basic composition of pure DP, (T·ε∞, 0), is the better bound here
            return pure, None, []
        if not (math.isfinite(eps) and eps > 0):
            return eps, None, []
        w = edge_warning(self.orders, idx, eps)
        return eps, float(self.orders[idx]), [w] if w else []

    def delta_at(self, rounds: int, epsilon: float) -> float:
        return delta_from_rdp(self.orders, rounds * self.round_rdp, epsilon=epsilon, conversion=self.conversion)[0]


def _renyi_sum(engine: _RdpEngine, rounds: int, rate: float, delta: float) -> float:
    """ε over n ~ Binomial(rounds, rate) unsampled rounds of a Rényi engine (model §7.3): the root of Σ_n P(n)·δ_n(ε)
    (:func:`privacy.known_sample.known_sample_epsilon`), its own ε after every round as the upper end."""
    return known_sample_epsilon(lambda n, e: engine.delta_at(n, e), rounds=rounds, rate=rate, delta=delta,
                                epsilon_hi=engine.epsilon(rounds, delta)[0])


class _RevealedRdpEngine(_RdpEngine):
    """``rdp`` with, for sampling without replacement, the revealed-sample curve of the unsampled round taken order by
    order (:func:`privacy.known_sample.revealed_sample_rdp`; it bounds the sampled round too, model §7.3).
    :meth:`revealed_note` says when that curve attained ε."""

    def __init__(self, event, *, orders, conversion: str):
        super().__init__(event, orders=orders, method="tight", conversion=conversion)
        self.sampled_rdp = None  # the sampled bounds' own curve, kept where the revealed-sample curve lowers it
        if isinstance(event, SampledWithoutReplacement):
            known = revealed_sample_rdp(self.orders, event_rdp(event.event, self.orders), rate=event.rate)
            if np.any(known < self.round_rdp):
                self.sampled_rdp = self.round_rdp
                self.round_rdp = np.minimum(self.round_rdp, known)

    def revealed_note(self, rounds: int, delta: float, eps: float) -> str:
        if self.sampled_rdp is None or not rounds:
            return ""
        alone = epsilon_from_rdp(self.orders, rounds * self.sampled_rdp, delta=delta, conversion=self.conversion)[0]
        return (f" with the revealed-sample curve (model §7.3; the sampled bounds alone {alone:.6g})"
                if eps < alone else "")


class _PldEngine:
    approximate = False

    def __init__(self, event, *, discretization: float | None = None, target_error: float | None = None):
        from privacy.pld import DEFAULT_DISCRETIZATION, event_pld

        self.event, self.target_error = event, target_error
        self.discretization = discretization or DEFAULT_DISCRETIZATION
        self.round_pld = event_pld(event, discretization=self.discretization)
        self._cache: dict[int, object] = {}
        self.bracket = None  # with a target error: the last privacy.pld_bracket.PldBracket (ε_pess, ε_opt, interval)

    def _composed(self, rounds: int):
        if rounds not in self._cache:
            from privacy.pld import self_compose

            self._cache = {rounds: self_compose(self.round_pld, rounds) if rounds else None}
        return self._cache[rounds]

    def epsilon(self, rounds: int, delta: float):
        if rounds == 0:
            return 0.0, None, []
        if self.target_error is not None:  # the interval chosen from the target, the error reported (model §9.4)
            from privacy.pld_bracket import epsilon_bracket

            b = self.bracket = epsilon_bracket(self.event, rounds=rounds, delta=delta, target_error=self.target_error,
                                               start=self.discretization)
            note = (f"PLD discretization: ε ∈ [{b.lower:.6g}, {b.upper:.6g}] (optimistic, pessimistic) at interval "
                    f"{b.discretization:.3g} nats")
            return b.upper, None, [note if b.met else note + f"; the target error {b.target_error:g} is not met"]
        eps = float(self._composed(rounds).get_epsilon_for_delta(delta))
        return max(eps, 0.0), None, []

    def delta_at(self, rounds: int, epsilon: float) -> float:
        return 0.0 if rounds == 0 else float(self._composed(rounds).get_delta_for_epsilon(epsilon))

    def known_sample_epsilon(self, rounds: int, rate: float, delta: float) -> float | None:
        """ε over n ~ Binomial(rounds, rate) unsampled rounds (model §7.3): the revealed-sample round's PLD
        (:func:`privacy.known_sample.revealed_sample_pld`) composed ``rounds`` times, read at δ; None when that
        composition is too large (the caller then sums δ_n over n)."""
        from privacy.pld import PldTooLarge, self_compose

        try:
            composed = self_compose(revealed_sample_pld(self.round_pld, rate=rate), rounds)
        except PldTooLarge:
            return None
        return max(float(composed.get_epsilon_for_delta(delta)), 0.0)


class _GdpEngine:
    def __init__(self, event):
        self.event = event
        _, self.approximate, self.rule = event_mu(event, 1)  # validates

    def mu(self, rounds: int) -> float:
        return event_mu(self.event, rounds)[0]

    def epsilon(self, rounds: int, delta: float):
        return gdp_epsilon(delta, self.mu(rounds)), None, []

    def delta_at(self, rounds: int, epsilon: float) -> float:
        return gdp_delta(epsilon, self.mu(rounds))


class _FdpEngine:
    """ε from the trade-off function of the run (:func:`privacy.fdp.accounting.run_tradeoff`), cached per T."""

    approximate = False

    def __init__(self, event, *, orders, discretization: float | None = None):
        from privacy.fdp.accounting import round_tradeoff, uses_rdp
        from privacy.fdp.lossdist import DEFAULT_STEP

        self.event, self.orders, self.step = event, orders, discretization or DEFAULT_STEP
        self.from_rdp = uses_rdp(event)  # f implied by the event's Rényi curve (DDGauss)
        if not self.from_rdp:  # refuses FLORAS; validates the rest before any composition
            round_tradeoff(event, step=self.step)
        self._cache: dict[int, object] = {}

    def tradeoff(self, rounds: int):
        from privacy.fdp.accounting import run_tradeoff

        if rounds not in self._cache:
            self._cache = {rounds: run_tradeoff(self.event, rounds, step=self.step, orders=self.orders)}
        return self._cache[rounds]

    def epsilon(self, rounds: int, delta: float):
        return (0.0 if rounds == 0 else self.tradeoff(rounds).epsilon(delta)), None, []

    def delta_at(self, rounds: int, epsilon: float) -> float:
        return 0.0 if rounds == 0 else float(self.tradeoff(rounds).symmetric_delta(np.array([epsilon]))[0])

    def known_sample_epsilon(self, rounds: int, rate: float, delta: float) -> float | None:
        """Where f comes from the event's Rényi curve (DDGauss), the Rényi sum over n (model §7.3): summing the f-DP
        δ_n instead builds one trade-off per n (~1.5 s each for DDGauss, 3 minutes at T = 200, for 7.6374 against
        the Rényi sum's 7.6372 at σ = 1.98, K = 20 of 100); None otherwise (the caller sums the f-DP δ_n)."""
        if not self.from_rdp:
            return None
        return _renyi_sum(_RdpEngine(self.event, orders=self.orders, method="tight", conversion="tight"), rounds, rate,
                          delta)


class _TightestEngine:
    """``tightest``: ε = min(ε_rdp, ε_other), δ(ε) = min(δ_rdp, δ_other), where "other" is the first of
    :data:`TIGHTEST_CANDIDATES` whose engine accepts the event (ValueError, including a PLD too large to
    build, moves on to the next). Each is an upper bound on the same mechanism's privacy curve, so
    their pointwise minimum is one too (model §9.4). An event without a Rényi bound takes the other alone; an event that neither handles raises the Rényi refusal.
    For sampling without replacement the Rényi curve is also taken, order by order, against the revealed-sample
    curve ln(1 − q + q·e^{(α−1)ε(α)})/(α − 1) of the unsampled round (:func:`privacy.known_sample.revealed_sample_rdp`,
    model §7.3), which bounds the sampled round too and is the smaller where the sampled bound is the generic one."""

    approximate = False

    def __init__(self, event, *, orders, conversion: str, discretization: float | None = None):
        self.other, self.other_name, self.skipped = None, None, []
        try:
            self.rdp = _RevealedRdpEngine(event, orders=orders, conversion=conversion)
        except ValueError as exc:
            self.rdp, rdp_refusal = None, exc
            self.skipped.append(f"rdp: {exc}")
        for name in TIGHTEST_CANDIDATES:
            try:
                self.other = (_PldEngine(event, discretization=discretization) if name == "pld"
                              else _FdpEngine(event, orders=orders))
            except (ValueError, MemoryError) as exc:
                self.skipped.append(f"{name}: {getattr(exc, 'pld_why', None) or exc}")
                continue
            self.other_name = name
            break
        if self.rdp is None and self.other is None:
            raise rdp_refusal
        self.note = None  # the last query's line for the report's assumptions: both ε, the one used, what was skipped

    def epsilon(self, rounds: int, delta: float):
        if self.rdp is None:
            eps, order, warnings = math.inf, None, []
            lines, used = [], None
        else:
            eps, order, warnings = self.rdp.epsilon(rounds, delta)
            lines, used = [f"rdp ε = {eps:.6g}" + self.rdp.revealed_note(rounds, delta, eps)], "rdp"
        if self.other is not None:
            other, _, more = self.other.epsilon(rounds, delta)
            lines.append(f"{self.other_name} ε = {other:.6g}")
            if used is None or other < eps:
                eps, order, warnings, used = other, None, list(more), self.other_name
        self.note = f"tightest: ε from {used} ({', '.join(lines)}" + (
            f"; not used: {'; '.join(self.skipped)})" if self.skipped else ")")
        return eps, order, warnings

    def delta_at(self, rounds: int, epsilon: float) -> float:
        if self.rdp is None:
            return self.other.delta_at(rounds, epsilon)
        d = self.rdp.delta_at(rounds, epsilon)
        return d if self.other is None else min(d, self.other.delta_at(rounds, epsilon))

    def known_sample_epsilon(self, rounds: int, rate: float, delta: float) -> float | None:
        """The smaller of the Rényi part's sum over n and the other part's own figure (the PLD's one composition;
        each a bound on the same pair, model §7.3). An f-DP part from the same Rényi curve is not asked (its figure is
        that sum again); other f-DP δ_n are not summed over n (one trade-off per n). None (the caller sums δ_other)
        with neither."""
        mine = None if self.rdp is None else _renyi_sum(self.rdp, rounds, rate, delta)
        same_curve = mine is not None and getattr(self.other, "from_rdp", False)
        other = None if self.other is None or same_curve else self.other.known_sample_epsilon(rounds, rate, delta)
        found = [x for x in (mine, other) if x is not None]
        return min(found) if found else None


def make_engine(accountant: str, event, *, orders, conversion: str = "tight", discretization: float | None = None,
                pld_target_error: float | None = None):
    """The engine of ``accountant`` for the per-round ``event``; ValueError when it cannot handle it.

    ``pld_target_error`` (pld only): choose the discretization interval per query so that the
    optimistic–pessimistic gap is within this fraction of ε (:func:`privacy.pld_bracket.epsilon_bracket`).
    """
    _check(accountant)
    if accountant == "rdp-revealed":
        return _RevealedRdpEngine(event, orders=orders, conversion=conversion)
    if accountant in ("rdp", "rdp-generic"):
        return _RdpEngine(event, orders=orders, method="tight" if accountant == "rdp" else "generic", conversion=conversion)
    if accountant == "pld":
        return _PldEngine(event, discretization=discretization, target_error=pld_target_error)
    if accountant == "fdp":
        return _FdpEngine(event, orders=orders)
    if accountant == "tightest":
        return _TightestEngine(event, orders=orders, conversion=conversion, discretization=discretization)
    return _GdpEngine(event)
