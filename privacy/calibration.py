"""Calibration: the parameter value that meets a target ε (model §7.3 planning, §10 matched comparison).

:func:`calibrate` is a bracketing root finder over one real parameter (like dp_accounting's
``mechanism_calibration``): it assumes ε is monotone in the parameter (``increasing``: ε grows
with it, e.g. ε₀; otherwise ε falls with it, e.g. a noise multiplier) and returns the value on the
safe side of the target within ``rel_tol``. :func:`smallest_noise_multiplier` is the Gaussian case.

A point whose privacy-loss distribution is too large to build (:class:`privacy.pld.PldTooLarge`, e.g. the
Gaussian at σ/S = 10⁻⁴, a bracket end) counts as missing the target. When the risky end of the bracket is such
a point, the search first steps from the safe end by factors of 10 to the first point that misses the target and
searches between the two (points near the cap are computable but slow). The value returned is always one whose ε
was computed and met the target; brackets whose ends can be built are searched exactly as before.
"""

from __future__ import annotations

import math
from typing import Callable

from scipy.optimize import brentq

__all__ = ["calibrate", "smallest_noise_multiplier", "tightest_value"]


def _eps(acc, rounds: int) -> float:
    if hasattr(acc, "epsilon"):
        return float(acc.epsilon(rounds=rounds))
    return float(acc.report(rounds=rounds).epsilon)


def _eps_or_inf(make_accountant, x: float, rounds: int) -> float:
    """ε at x, or ∞ where its PLD is too large to build (such a weak noise misses any usual target)."""
    return _evaluate(make_accountant, x, rounds)[0]


def _evaluate(make_accountant, x: float, rounds: int) -> tuple[float, bool]:
    """(ε at x, whether x's PLD was too large to build: then ε is reported as ∞)."""
    from privacy.pld import PldTooLarge

    try:
        return _eps(make_accountant(x), rounds), False
    except PldTooLarge:
        return math.inf, True


def calibrate(make_accountant: Callable[[float], object], *, target_epsilon: float, rounds: int, lower: float,
              upper: float, increasing: bool, rel_tol: float = 1e-4) -> float:
    """The parameter x in [lower, upper] with ε(x) ≤ target at the safe end of a bracket of relative width ``rel_tol``.

    ``make_accountant(x)`` returns an object with ``epsilon(rounds=t)`` (or ``report``). With
    ``increasing`` the largest x meeting the target is returned, otherwise the smallest. ValueError
    if even the safe end of [lower, upper] misses the target.
    """
    if not (isinstance(target_epsilon, (int, float)) and math.isfinite(target_epsilon) and target_epsilon > 0):
        raise ValueError(f"target_epsilon must be a finite number > 0 (got {target_epsilon!r})")
    if not (0 < lower < upper and math.isfinite(upper)):
        raise ValueError(f"the bracket must satisfy 0 < lower < upper < ∞ (got [{lower!r}, {upper!r}])")
    if not (0 < rel_tol < 1):
        raise ValueError(f"rel_tol must be in (0, 1) (got {rel_tol!r})")

    def ok(x: float) -> bool:
        return _eps_or_inf(make_accountant, x, rounds) <= target_epsilon

    safe, risky = (lower, upper) if increasing else (upper, lower)
    if not ok(safe):
        raise ValueError(f"no parameter in [{lower:g}, {upper:g}] reaches ε ≤ {target_epsilon:g} after {rounds} rounds "
                         f"(ε = {_eps_or_inf(make_accountant, safe, rounds):.6g} at {safe:g})")
    risky_eps, too_large = _evaluate(make_accountant, risky, rounds)
    if risky_eps <= target_epsilon:
        return risky
    if too_large:
        # the risky end's PLD cannot be built (its noise is far too weak): step from the safe end by factors of 10
        # to the first point that misses the target, so the search below never visits such points' neighbours,
        # whose grids are just under the cap and slow to build
        x = safe
        while True:
            nxt = x * 10.0 if increasing else x / 10.0
            if (nxt >= risky) if increasing else (nxt <= risky):
                break
            if ok(nxt):
                safe = x = nxt
            else:
                risky = nxt
                break
    # Brent's method on ln x for speed (ε is continuous and monotone in x), then a safe-side check
    f = lambda lx: _eps_or_inf(make_accountant, math.exp(lx), rounds) - target_epsilon
    try:
        lx = brentq(f, math.log(min(safe, risky)), math.log(max(safe, risky)), xtol=rel_tol / 4, rtol=1e-12, maxiter=200)
        x = math.exp(lx)
        step = rel_tol / 2 if increasing else -rel_tol / 2
        for _ in range(8):
            if ok(x):
                return x
            x *= 1.0 - step
    except ValueError:
        pass  # ε jumps (e.g. to ∞) across the bracket: fall back to bisection
    while abs(risky - safe) > rel_tol * max(abs(safe), abs(risky)):
        mid = math.sqrt(safe * risky)
        if ok(mid):
            safe = mid
        else:
            risky = mid
    return safe


def tightest_value(search: Callable[[str], float | None], *, increasing: bool) -> float | None:
    """The calibrated value under the ``tightest`` accountant (model §9.4), from searches under its parts.

    ε_tightest(x) = min(ε_rdp(x), ε_o(x)), ε_rdp its Rényi part (``rdp-revealed``), o the first of ``privacy.engines.TIGHTEST_CANDIDATES`` that handles
    the round. Both are monotone in x in the same direction, so {x : ε_tightest(x) ≤ t} = {x : ε_rdp(x) ≤ t} ∪
    {x : ε_o(x) ≤ t}, and the value meeting the target under ``tightest`` is the better of the values each part
    meets alone: the largest with ``increasing``, else the smallest. Searching each part alone keeps the PLD's own
    handling of grids too large to build (the step from the safe end in :func:`calibrate`): the ``tightest`` engine
    answers such a point with rdp's ε instead of refusing, so a search through it visits points whose PLD is just
    under the size cap (minutes and gigabytes for one Gaussian key).

    ``search(name)`` returns the value found under accountant ``name``, or None when no value in its bracket meets
    the target. A ValueError (or MemoryError) from a part other than ``rdp`` means that part does not handle the
    round: the next candidate is searched, as the ``tightest`` engine does. A round without a Rényi bound takes the
    candidate alone; when no part handles it the Rényi refusal
    is raised. None when no part meets the target.
    """
    from privacy.engines import TIGHTEST_CANDIDATES

    try:
        found, refusal = [search("rdp-revealed")], None  # tightest's Rényi part (privacy.engines)
    except ValueError as exc:
        found, refusal = [], exc
    for name in TIGHTEST_CANDIDATES:
        try:
            found.append(search(name))
        except (ValueError, MemoryError):
            continue
        refusal = None
        break
    if refusal is not None:
        raise refusal
    found = [x for x in found if x is not None]
    if not found:
        return None
    return max(found) if increasing else min(found)


def smallest_noise_multiplier(*, target_epsilon: float, rounds: int, K: int, M: int, delta: float = 1e-5,
                              relation: str = "replace", sampling: str = "without-replacement", accountant: str = "rdp",
                              lower: float = 0.05, upper: float = 1e3, rel_tol: float = 1e-4, orders=None) -> float:
    """Smallest z = σ/S of the sampled Gaussian mechanism with ε ≤ target after ``rounds`` rounds."""
    from privacy.run_accountant import RunAccountant

    S = 2.0 if relation == "replace" else 1.0  # clip_norm = 1: S is the relation's sensitivity

    def make(z: float):
        return RunAccountant("gaussian", K=K, M=M, relation=relation, sampling=sampling, delta=delta,
                                   accountant=accountant, orders=orders, clip_norm=1.0, noise_std=z * S)

    return calibrate(make, target_epsilon=target_epsilon, rounds=rounds, lower=lower, upper=upper, increasing=False,
                     rel_tol=rel_tol)
