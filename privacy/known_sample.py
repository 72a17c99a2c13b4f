"""ε against an observer that learns which clients each round sampled, over the sampling (model §7.3, "Without
sampling amplification").

Round t samples client k with probability q = K/M (either sampling), independently across rounds, so the number of
rounds it takes part in is n ~ Binomial(T, q). An observer that learns the sampled sets S (which do not depend on the
data under replace-one neighbours) sees the pair (S, Y); S has the same law under both neighbours, so the
hockey-stick divergence of the pair is the mean of the conditional ones, and given S client k's view is n unsampled
rounds composed:

    δ(ε) = Σ_n P(n)·δ_n(ε),   δ_n(ε) the unsampled round's δ after n rounds (0 for n = 0),

exact up to the accountant's own bound on each δ_n. Where the accountant holds the round's privacy-loss
distribution (``pld``, and ``tightest``'s PLD part) the same sum is one composition: the pair's round has loss 0
with probability 1 − q (the client is not in it, so nothing depends on its data) and the unsampled round's loss
otherwise, so its PLD is the mixture (1 − q)·𝟙{0} + q·PLD₁ (infinite loss with mass q·π_∞), and T rounds compose
to Σ_n P(n)·PLD₁^{*n}, whose δ(ε) is the sum above (:func:`revealed_sample_pld`; a pessimistic PLD₁ dominates the
round, so the mixture dominates the pair's round and its composition the pair's T rounds).

Elsewhere the ε reported is the smallest grid point with δ(ε) ≤ δ (a geometric grid up to ε_hi, where
δ(ε_hi) ≤ δ is checked, then a linear grid, so never below the root); the n beyond a range holding all but a
10⁻³ share of δ are counted with δ_n = 1. Every n is composed once per pass (the engines cache the last
composition), so the cost is two compositions per n in the range; ``tightest`` and ``fdp`` take the Rényi sum
where their other part has no one-composition form (:mod:`privacy.engines`).

The same pair in Rényi terms, one round (:func:`revealed_sample_rdp`): the client is in the round with probability q,
and then the round is the unsampled one, so

    ε_known(α) = ln(1 − q + q·e^{(α−1)·ε(α)}) / (α − 1),

ε(α) the unsampled round's Rényi curve. The observer that does not learn the sample sees a function of the pair, so
this is also a valid bound on the sampled round (replace-one; data processing), and the ``tightest`` accountant
takes it order by order beside the sampled bounds (:mod:`privacy.engines`).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy import stats

__all__ = ["known_sample_epsilon", "known_sample_of", "revealed_sample_pld", "revealed_sample_rdp"]

#: the share of δ the Binomial tails outside the computed range may take (counted as δ_n = 1)
TAIL_SHARE = 1e-3
#: grid points per pass (a geometric pass over three decades, then a linear pass inside its bracket)
POINTS = 48


def revealed_sample_rdp(orders, base_rdp, *, rate: float) -> np.ndarray:
    """ε_known(α) = ln(1 − q + q·e^{(α−1)·ε(α)})/(α − 1) at ``orders`` (> 1) from the unsampled curve ``base_rdp``
    (nats; ∞ stays ∞), q = ``rate`` in (0, 1]; computed as a log-sum-exp, exact for any ε(α)."""
    a = np.asarray(orders, dtype=np.float64)
    base = np.asarray(base_rdp, dtype=np.float64)
    q = float(rate)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"rate must be in (0, 1] (got {rate!r})")
    if np.any(a <= 1.0) or a.shape != base.shape:
        raise ValueError("orders must be > 1 and as many as the curve's values")
    if q == 1.0:
        return base.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        x = (a - 1.0) * base
        out = np.logaddexp(math.log1p(-q), math.log(q) + x) / (a - 1.0)
    return np.where(np.isinf(base), np.inf, out)


def revealed_sample_pld(pld, *, rate: float):
    """The PLD of one round of the pair (sampled or not, release) from the unsampled round's ``pld`` (a dp_accounting
    ``PrivacyLossDistribution``): each of its PMFs becomes (1 − q)·𝟙{loss 0} + q·PMF, infinity mass q·π_∞, q =
    ``rate`` in (0, 1]. Its composition over T rounds has δ(ε) = Σ_n Binomial(n; T, q)·δ_n(ε) (model §7.3)."""
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution as _pld

    from privacy.pld import mixture_pmf

    q = float(rate)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"rate must be in (0, 1] (got {rate!r})")
    if q == 1.0:
        return pld

    def mixed(pmf):
        dense = pmf.to_dense_pmf()
        h, pess = dense._discretization, dense._pessimistic_estimate
        zero_loss = pld_pmf.DensePLDPmf(h, 0, np.ones(1), 0.0, pess)  # not in the round: loss 0
        return mixture_pmf([(q, dense), (1.0 - q, zero_loss)], discretization=h, pessimistic=pess)

    remove = mixed(pld._pmf_remove)
    return _pld.PrivacyLossDistribution(remove) if pld._symmetric else _pld.PrivacyLossDistribution(
        remove, mixed(pld._pmf_add))


def known_sample_epsilon(delta_at: Callable[[int, float], float], *, rounds: int, rate: float, delta: float,
                         epsilon_hi: float) -> float:
    """ε at δ over n ~ Binomial(``rounds``, ``rate``) of ``delta_at(n, ε)`` (the unsampled accountant's δ after n
    rounds). ``epsilon_hi``: an ε with δ_T(ε) ≤ δ (e.g. the unsampled ε after every round), which bounds the answer."""
    T, q, delta = int(rounds), float(rate), float(delta)
    if T < 0 or not 0.0 < q <= 1.0 or not 0.0 < delta < 1.0:
        raise ValueError(f"rounds ≥ 0, rate in (0, 1] and delta in (0, 1) (got {rounds!r}, {rate!r}, {delta!r})")
    if T == 0 or epsilon_hi <= 0.0:
        return 0.0
    if math.isinf(epsilon_hi):
        return math.inf
    law = stats.binom(T, q)
    tail = TAIL_SHARE * delta
    lo_n = max(1, int(law.ppf(tail / 2)))  # P(n < lo_n) ≤ tail/2 (n = 0 costs nothing)
    hi_n = int(law.isf(tail / 2))  # P(n > hi_n) ≤ tail/2
    ns = np.arange(lo_n, hi_n + 1)
    weights = law.pmf(ns)
    outside = float(law.cdf(lo_n - 1) - law.pmf(0)) + float(law.sf(hi_n))

    def profile(grid: np.ndarray) -> np.ndarray:
        total = np.full(grid.size, outside)
        for n, w in zip(ns, weights):  # n outer: one composition each
            total += w * np.array([delta_at(int(n), float(e)) for e in grid])
        return total

    hi = float(epsilon_hi)
    for _ in range(30):  # the tails counted as δ_n = 1 may push δ(ε_hi) a little above δ: widen until it holds
        grid = np.geomspace(hi * 1e-3, hi, POINTS)
        ok = profile(grid) <= delta
        if ok[-1]:
            break
        hi *= 2.0
    else:
        return math.inf
    j = int(np.argmax(ok))
    if j == 0:
        return float(grid[0])
    fine = np.linspace(grid[j - 1], grid[j], POINTS)
    ok = profile(fine) <= delta
    return float(fine[int(np.argmax(ok))]) if ok.any() else float(grid[j])


def known_sample_of(unsampled, *, rounds: int, rate: float, delta: float) -> tuple[float, float]:
    """(ε over the sampling, ε after every round) of a run accountant ``unsampled`` built at sampling rate 1 (its
    ``epsilon(rounds=)`` and ``delta_at(rounds=, epsilon=)``), for a client sampled with probability ``rate``."""
    every = float(unsampled.epsilon(rounds=rounds)) if rounds > 0 else 0.0
    if rounds <= 0 or every <= 0.0 or math.isinf(every):
        return (0.0 if rounds <= 0 or every <= 0.0 else math.inf), every
    direct = getattr(unsampled, "known_sample_epsilon", None)  # the engine's own route (a PLD: one composition)
    ante = direct(rounds=rounds, rate=rate) if direct is not None else None
    if ante is None:
        ante = known_sample_epsilon(lambda n, e: unsampled.delta_at(rounds=n, epsilon=e), rounds=rounds, rate=rate,
                                    delta=delta, epsilon_hi=every)
    return ante, every
