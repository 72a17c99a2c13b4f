"""Planning for FLORAS runs (model §7.3): the smallest N, or the largest S, that meets a target ε.

Both search over :class:`privacy.run.FlorasRunAccountant` with whatever accountant the caller
names (``accountant=`` in ``config``); ε is monotone in N and in S for every accountant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from privacy.report import PrivacyReport
from privacy.report import fmt as _fmt
from privacy.report import int_at_least as _int_at_least
from privacy.run import FlorasRunAccountant

__all__ = ["PlanResult", "plan_smallest_N", "largest_sensitivity"]


@dataclass(frozen=True)
class PlanResult:
    """Outcome of :func:`plan_smallest_N`: N (None when no N in the range reaches the target)."""

    N: int | None
    target_epsilon: float
    search_range: tuple[int, int]
    report: PrivacyReport
    message: str

    def to_dict(self) -> dict:
        return {
            "N": self.N,
            "gamma": None if self.N is None else self.N - (self.search_range[0]),
            "target_epsilon": self.target_epsilon,
            "search_range": list(self.search_range),
            "message": self.message,
            "report": self.report.to_dict(),
        }


def plan_smallest_N(*, target_epsilon: float, rounds: int, n_max: int = 10**9, **config) -> PlanResult:
    """Smallest N ∈ [K, n_max] whose run reaches ε ≤ ``target_epsilon`` after ``rounds`` rounds.

    ``config`` holds the keyword arguments of :class:`FlorasRunAccountant` except N. ε is
    non-increasing in N (every bound used is non-decreasing in the base RDP, which decreases in
    γ), so a bisection over the integers is exact. The result's report is at the N found, or at
    n_max when none reaches the target.
    """
    if isinstance(target_epsilon, bool) or not isinstance(target_epsilon, (int, float)) or not (
        math.isfinite(target_epsilon) and target_epsilon > 0
    ):
        raise ValueError(f"target_epsilon must be a finite number > 0 (got {target_epsilon!r})")
    rounds = _int_at_least("rounds", rounds, 0)
    if "N" in config:
        raise ValueError("N is what plan_smallest_N searches for; do not pass it")
    K = config.get("K")
    _int_at_least("K", K, 1)
    n_max = _int_at_least("n_max", n_max, K)

    def report_at(n: int) -> PrivacyReport:
        return FlorasRunAccountant(N=n, **config).report(rounds=rounds)

    def smallest(lo: int, hi: int, accountant: str) -> int:
        """Smallest n in (lo, hi] with ε ≤ target, given ε(lo) > target ≥ ε(hi) (bisection; ε falls with N)."""
        cfg = dict(config, accountant=accountant)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if FlorasRunAccountant(N=mid, **cfg).epsilon(rounds=rounds) <= target_epsilon:
                hi = mid
            else:
                lo = mid
        return hi

    lo_report = report_at(K)  # validates the whole configuration before the search
    if lo_report.epsilon <= target_epsilon:
        return PlanResult(K, float(target_epsilon), (K, n_max), lo_report, f"N = K = {K} (γ = 0) already reaches ε ≤ {target_epsilon:g}")
    name = config.get("accountant", "rdp")
    hi = n_max
    if name == "rdp":
        # the generic bound is cheap and never below the tight one: its answer brackets the tight search
        gen = dict(config, accountant="rdp-generic")
        if FlorasRunAccountant(N=n_max, **gen).epsilon(rounds=rounds) <= target_epsilon:
            hi = smallest(K, n_max, "rdp-generic")
    if FlorasRunAccountant(N=hi, **config).epsilon(rounds=rounds) > target_epsilon:
        hi_report = report_at(n_max)
        return PlanResult(
            None, float(target_epsilon), (K, n_max), hi_report,
            f"no N in [{K}, {n_max}] reaches ε ≤ {target_epsilon:g} after {rounds} rounds "
            f"(ε = {_fmt(hi_report.epsilon)} at N = {n_max})",
        )
    hi = smallest(K, hi, name)
    hi_report = report_at(hi)
    return PlanResult(
        hi, float(target_epsilon), (K, n_max), hi_report,
        f"smallest N = {hi} (γ = {hi - K}) reaches ε = {_fmt(hi_report.epsilon)} ≤ {target_epsilon:g} after {rounds} rounds "
        f"({name}); orthonormal sequences then need L ≥ {hi}",
    )


def largest_sensitivity(*, target_epsilon: float, rounds: int, rel_tol: float = 1e-6, **config) -> float:
    """Largest S (bisection in log S) whose run reaches ε ≤ ``target_epsilon`` after ``rounds`` rounds.

    ``config`` holds the keyword arguments of :class:`FlorasRunAccountant` except ``sensitivity``.
    C follows as S·b/2 (replace) or S·b (client-level add-remove). Returns 0.0 when even S → 0
    cannot reach the target (only for γ = 0 or a target below the S = 0 value, which is 0).
    """
    if not (isinstance(target_epsilon, (int, float)) and math.isfinite(target_epsilon) and target_epsilon > 0):
        raise ValueError(f"target_epsilon must be a finite number > 0 (got {target_epsilon!r})")
    if "sensitivity" in config:
        raise ValueError("sensitivity is what largest_sensitivity searches for; do not pass it")

    def eps_at(s: float) -> float:
        return FlorasRunAccountant(sensitivity=s, **config).epsilon(rounds=rounds)

    if config.get("N", 0) - config.get("K", 0) <= 0 and eps_at(1e-300) > target_epsilon:
        return 0.0
    lo, hi = 1e-12, 1.0
    if eps_at(lo) > target_epsilon:
        return 0.0
    while eps_at(hi) <= target_epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return hi
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= target_epsilon:
            lo = mid
        else:
            hi = mid
    return lo
