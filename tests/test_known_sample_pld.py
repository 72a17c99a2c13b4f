"""ε over the sampling in one composition (model §7.3, "Without sampling amplification";
privacy/known_sample.py ``revealed_sample_pld``): the revealed-sample round's PLD, (1 − q)·𝟙{0} + q·PLD₁, composed
T times, has δ(ε) = Σ_n Binomial(n; T, q)·δ_n(ε), predicted here by plain convolutions of the loss PMF."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf, privacy_loss_distribution as _pld
from scipy import stats

from privacy.known_sample import known_sample_epsilon, revealed_sample_pld
from privacy.pld import self_compose
from privacy.run import FlorasRunAccountant

H = 0.05  # the loss grid of the hand-made PMFs (nats)


def _delta_n(lower: int, probs: np.ndarray, inf_mass: float, n: int, eps: float) -> float:
    """δ_n(ε) of ``n`` independent rounds of the loss PMF (losses (lower + i)·H with ``probs``, ∞ with ``inf_mass``):
    P(some round infinite) + E[(1 − e^{ε − L_n})₊; all finite] (model §7.1's hockey-stick form)."""
    if n == 0:
        return 0.0
    conv = np.ones(1)
    for _ in range(n):
        conv = np.convolve(conv, probs)
    losses = (n * lower + np.arange(conv.size)) * H
    finite = float(np.sum(conv * np.clip(-np.expm1(eps - losses), 0.0, None)))
    return 1.0 - (1.0 - inf_mass) ** n + finite


def _pmf(lower: int, probs: np.ndarray, inf_mass: float):
    return pld_pmf.DensePLDPmf(H, lower, probs, inf_mass, True)


@pytest.mark.parametrize("remove, add", [
    # losses 3H … 8H (loss 0 outside the PMF's range: the mixture must extend the grid), 1 % infinite loss; symmetric
    ((3, [0.1, 0.2, 0.3, 0.2, 0.1, 0.09], 0.01), None),
    # an asymmetric pair across 0 (δ is the larger of the two directions' mixtures), one with infinite loss
    ((-4, [0.05, 0.05, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1], 0.0), (-2, [0.3, 0.2, 0.2, 0.1, 0.1, 0.08], 0.02)),
])
def test_the_revealed_sample_pld_composes_to_the_binomial_mixture_of_compositions(remove, add):
    # Bugs it catches: loss 0 put at the wrong grid index, q and 1 − q swapped, the infinite mass not scaled by q,
    # one direction of an asymmetric pair not mixed, the mixture taken over ε instead of over δ.
    T, q = 12, 0.3
    pairs = [remove] if add is None else [remove, add]
    pld = _pld.PrivacyLossDistribution(*[_pmf(lo, np.array(p), inf) for lo, p, inf in pairs])
    composed = self_compose(revealed_sample_pld(pld, rate=q), T)
    weights = stats.binom.pmf(np.arange(T + 1), T, q)
    for eps in (0.0, 0.3, 1.0, 2.5, 5.0):
        predicted = max(sum(w * _delta_n(lo, np.array(p), inf, n, eps) for n, w in enumerate(weights))
                        for lo, p, inf in pairs)
        got = float(composed.get_delta_for_epsilon(eps))
        # dp_accounting moves at most its 1e-15 truncated tail per composition to ∞: a hair above, never below
        assert predicted - 1e-13 <= got <= predicted + 1e-12 + 1e-9 * predicted, (eps, got, predicted)


def test_rate_one_is_the_unsampled_round_and_the_rate_is_checked():
    pld = _pld.PrivacyLossDistribution(_pmf(1, np.array([0.5, 0.5]), 0.0))
    assert revealed_sample_pld(pld, rate=1.0) is pld
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="rate must be in \\(0, 1\\]"):
            revealed_sample_pld(pld, rate=bad)


def test_floras_ex_ante_epsilon_in_one_composition_is_the_sum_over_n():
    # FLORAS under the PLD accountant (its V-mixture PLD, model §9.5): the run's figure now comes from one
    # composition; the sum of δ_n over n on the grid (never below the root, ≤ 0.4 % above) must bracket it.
    common = dict(K=10, N=30, M=10, d=1000, normalization="clip", C=2.0, clip_norm=1.0, accountant="pld")
    T, q, delta = 12, 0.25, 1e-5
    acc = FlorasRunAccountant(**common)
    every = acc.epsilon(rounds=T)
    direct = acc.known_sample_epsilon(rounds=T, rate=q)
    summed = known_sample_epsilon(lambda n, e: acc.delta_at(rounds=n, epsilon=e), rounds=T, rate=q, delta=delta,
                                  epsilon_hi=every)
    assert direct is not None and 0.0 < direct < every
    assert direct <= summed * (1 + 1e-9) and summed <= direct * 1.005, (direct, summed)
    # tightest holds the same PLD beside the Rényi bound: its figure is the smaller of the two, here the PLD's
    tight = FlorasRunAccountant(**{**common, "accountant": "tightest"})
    assert tight.known_sample_epsilon(rounds=T, rate=q) == pytest.approx(direct, rel=1e-12)
    # an accountant without a PLD has no one-composition figure: the caller sums over n
    assert FlorasRunAccountant(**{**common, "accountant": "rdp"}).known_sample_epsilon(
        rounds=T, rate=q) is None
    assert math.isfinite(direct)


def test_tightest_without_a_pld_takes_the_renyi_sum_and_composes_no_trade_off_per_n(monkeypatch):
    # DDGauss has no PLD: tightest is rdp-revealed beside fdp, whose f comes from the same Rényi curve. The ex-ante
    # figure is the Rényi sum over n alone (one f-DP trade-off per n cost ~1.5 s each, 3 minutes at T = 200, for
    # nothing measurable); it must equal the rdp accountant's summed figure and never build a trade-off per n.
    from privacy import RunAccountant, engines
    from privacy.known_sample import known_sample_of

    kw = dict(K=20, M=20, d=159010, clip_norm=1.0, grid=3.5e-4, local_std=1.98)
    T, q = 60, 0.2
    rdp = known_sample_of(RunAccountant("ddgauss", accountant="rdp", **kw), rounds=T, rate=q, delta=1e-5)
    tight = RunAccountant("ddgauss", accountant="tightest", **kw)
    tight.epsilon(rounds=T)  # the every-round ε (one trade-off at T) before the spy

    def no_trade_off_per_n(self, rounds, epsilon):
        raise AssertionError(f"an f-DP trade-off composed for n = {rounds}")

    monkeypatch.setattr(engines._FdpEngine, "delta_at", no_trade_off_per_n)
    ante = tight.known_sample_epsilon(rounds=T, rate=q)
    assert ante == pytest.approx(rdp[0], rel=1e-12) and 0.0 < ante < rdp[1]


def test_fdp_from_a_renyi_curve_takes_the_renyi_sum(monkeypatch):
    # accountant fdp for DDGauss: f is implied by the Rényi curve, so the ex-ante figure is the Rényi sum over n
    # (equal to the rdp accountant's), not one trade-off per n
    from privacy import RunAccountant, engines
    from privacy.known_sample import known_sample_of

    kw = dict(K=20, M=20, d=159010, clip_norm=1.0, grid=3.5e-4, local_std=1.98)
    T, q = 60, 0.2
    rdp = known_sample_of(RunAccountant("ddgauss", accountant="rdp", **kw), rounds=T, rate=q, delta=1e-5)
    fdp = RunAccountant("ddgauss", accountant="fdp", **kw)
    fdp.epsilon(rounds=T)  # the every-round ε (one trade-off at T) before the spy

    def no_trade_off_per_n(self, rounds, epsilon):
        raise AssertionError(f"an f-DP trade-off composed for n = {rounds}")

    monkeypatch.setattr(engines._FdpEngine, "delta_at", no_trade_off_per_n)
    assert fdp.known_sample_epsilon(rounds=T, rate=q) == pytest.approx(rdp[0], rel=1e-12)
    # sqSGD's randomized response has its own f-DP composition: no Rényi shortcut, the caller sums over n
    assert RunAccountant("ldp", K=20, M=20, accountant="fdp", epsilon0=0.4).known_sample_epsilon(
        rounds=T, rate=q) is None
