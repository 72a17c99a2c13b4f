"""Events, composition algebra and the accountant's contract (model §7.3; STYLE: events vs accountant)."""

import math

import dp_accounting as dpa
import numpy as np
import pytest

from privacy import (
    CauchyRound,
    Composed,
    GaussianRound,
    PoissonSampled,
    PrivacyEvent,
    RdpAccountant,
    SampledWithoutReplacement,
    SelfComposed,
    event_rdp,
)

ORDERS = [1.25, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0]
CAUCHY = SampledWithoutReplacement(CauchyRound(gamma=40.0, sensitivity=2.0), sample_size=20, population_size=100)


def test_events_are_frozen_and_validate_on_construction():
    e = CauchyRound(gamma=10.0, sensitivity=2.0)
    with pytest.raises(Exception):
        e.gamma = 3.0  # frozen
    with pytest.raises(ValueError, match="sensitivity"):
        CauchyRound(gamma=10.0, sensitivity=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        CauchyRound(gamma=math.nan, sensitivity=1.0)
    with pytest.raises(ValueError, match="sample_size"):
        SampledWithoutReplacement(e, sample_size=120, population_size=100)
    with pytest.raises(ValueError, match="rate"):
        PoissonSampled(e, rate=1.5)
    with pytest.raises(ValueError, match="count"):
        SelfComposed(e, count=-1)
    with pytest.raises(ValueError, match="events"):
        Composed((e, "not an event"))
    assert hash(Composed([e, e])) == hash(Composed((e, e)))


@pytest.mark.parametrize("event", [CAUCHY, GaussianRound(noise_std=2.0), PoissonSampled(CauchyRound(gamma=30.0, sensitivity=1.0), rate=0.1)])
def test_composition_algebra(event):
    six = RdpAccountant(ORDERS).compose(event, 6)
    three_times_two = RdpAccountant(ORDERS)
    for _ in range(3):
        three_times_two.compose(event, 2)
    one_at_a_time = RdpAccountant(ORDERS)
    for _ in range(6):
        one_at_a_time.compose(event)
    self_composed = RdpAccountant(ORDERS).compose(SelfComposed(event, 6))
    composed = RdpAccountant(ORDERS).compose(Composed((event,) * 6))
    for other in (three_times_two, one_at_a_time, self_composed, composed):
        np.testing.assert_allclose(other.rdp, six.rdp, rtol=1e-13)
    np.testing.assert_allclose(six.rdp, 6 * event_rdp(event, ORDERS), rtol=1e-13)
    assert one_at_a_time.history == ((event, 6),)  # run-length history
    assert RdpAccountant(ORDERS).compose(event, 0).history == ()


def test_many_rounds_at_once_equal_one_at_a_time():
    T = 200
    at_once = RdpAccountant(ORDERS).compose(CAUCHY, T)
    stepwise = RdpAccountant(ORDERS)
    for _ in range(T):
        stepwise.compose(CAUCHY)
    np.testing.assert_allclose(stepwise.rdp, at_once.rdp, rtol=1e-12)
    assert stepwise.get_epsilon(1e-5) == pytest.approx(at_once.get_epsilon(1e-5), rel=1e-12)


def test_gaussian_accountant_agrees_with_dp_accounting():
    orders = np.array(dpa.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS, dtype=float)
    theirs = dpa.rdp.RdpAccountant(list(orders))
    theirs.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(5.0), 300))
    ours = RdpAccountant(orders).compose(SelfComposed(GaussianRound(noise_std=5.0), 300))
    for delta in (1e-5, 1e-8):
        e1, o1 = theirs.get_epsilon_and_optimal_order(delta)
        e2, o2 = ours.get_epsilon_and_order(delta)
        assert e2 == pytest.approx(e1, rel=1e-12) and o2 == o1
    assert ours.get_delta(1.0) == pytest.approx(theirs.get_delta(1.0), rel=1e-10)


class _Unknown(PrivacyEvent):
    pass


def test_validation_happens_before_mutation():
    acc = RdpAccountant(ORDERS).compose(CAUCHY, 3)
    before_rdp, before_hist = acc.rdp, acc.history
    with pytest.raises(ValueError, match="unsupported privacy event"):
        acc.compose(Composed((CAUCHY, _Unknown())))
    with pytest.raises(ValueError, match="count"):
        acc.compose(CAUCHY, -2)
    with pytest.raises(ValueError, match="count"):
        acc.compose(CAUCHY, 1.5)
    np.testing.assert_array_equal(acc.rdp, before_rdp)
    assert acc.history == before_hist
    with pytest.raises(ValueError, match="orders"):
        RdpAccountant([1.0, 2.0])
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(1.0)


def test_epsilon_delta_round_trip_on_the_cauchy_accountant():
    acc = RdpAccountant().compose(CAUCHY, 150)
    for conversion in ("tight", "standard"):
        eps = acc.get_epsilon(1e-6, conversion=conversion)
        assert math.isfinite(eps) and eps > 0
        assert acc.get_delta(eps, conversion=conversion) == pytest.approx(1e-6, rel=1e-8)
        assert acc.get_epsilon(acc.get_delta(eps, conversion=conversion), conversion=conversion) == pytest.approx(eps, rel=1e-8)


def test_gamma_zero_is_infinite_and_zero_sensitivity_free():
    acc = RdpAccountant(ORDERS).compose(CauchyRound(gamma=0.0, sensitivity=1.0))
    assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(10.0) == 1.0
    acc = RdpAccountant(ORDERS).compose(CauchyRound(gamma=0.0, sensitivity=0.0), 100)
    assert acc.get_epsilon(1e-5) == 0.0


def test_monotone_in_rounds_gamma_and_sampling_rate():
    def eps(gamma=40.0, T=100, K=20, M=100):
        ev = SampledWithoutReplacement(CauchyRound(gamma=gamma, sensitivity=2.0), sample_size=K, population_size=M)
        return RdpAccountant().compose(ev, T).get_epsilon(1e-5)

    by_T = [eps(T=T) for T in (1, 10, 100, 1000)]
    by_gamma = [eps(gamma=g) for g in (10.0, 20.0, 40.0, 80.0, 160.0)]
    by_rate = [eps(M=M) for M in (20, 40, 100, 400, 2000)]  # rates 1, 0.5, 0.2, 0.05, 0.01
    assert all(a < b for a, b in zip(by_T, by_T[1:]))
    assert all(a > b for a, b in zip(by_gamma, by_gamma[1:]))
    # The general sampling bounds amplify only at orders where q^j C(α, j) is small, so ε is
    # non-increasing in the rate and strictly smaller once the rate is small enough.
    assert all(a >= b for a, b in zip(by_rate, by_rate[1:])) and by_rate[-1] < by_rate[-2] < by_rate[0]
