"""The leaf-event interface of privacy.events.PrivacyEvent: a new mechanism is one class.

(a) a Gaussian-like leaf defined only here runs through the accountant, both sampling wrappers
(generic bounds) and composition; (b) a leaf without ``rdp`` is refused by name; (c) every
built-in leaf's curve is exactly its mathematics function called with the raw parameters.
"""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from privacy import rdp as _rdp
from privacy.accountant import RdpAccountant, event_eps_inf, event_rdp
from privacy.ddgauss import ddgauss_rdp
from privacy.engines import make_engine
from privacy.events import (
    CauchyRound,
    Composed,
    DDGaussRound,
    GaussianRound,
    PoissonSampled,
    PrivacyEvent,
    RandomizedResponseRound,
    SampledWithoutReplacement,
    SelfComposed,
)
from privacy.randomized_response import randomized_response_rdp

ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0])


@dataclass(frozen=True)
class ShiftedNormal(PrivacyEvent):
    """A test-only Gaussian-like leaf: RDP α·S²/(2σ²), nothing else declared."""

    sigma: float
    sens: float = 1.0

    def rdp(self, orders):
        return orders * self.sens**2 / (2.0 * self.sigma**2)


@dataclass(frozen=True)
class WithTightCurve(ShiftedNormal):
    """Declares a (deliberately optimistic) mechanism-specific sampled curve: the accountant must use it."""

    def sampled_rdp(self, orders, *, scheme, rate):
        return np.zeros_like(orders)


@dataclass(frozen=True)
class NoRdp(PrivacyEvent):
    epsilon: float = 1.0


def closed_form(sigma, sens=1.0):
    return ORDERS * sens**2 / (2.0 * sigma**2)


def test_new_leaf_runs_through_accountant_wrappers_and_composition():
    ev = ShiftedNormal(sigma=2.0)
    np.testing.assert_array_equal(event_rdp(ev, ORDERS), closed_form(2.0))
    acc = RdpAccountant(ORDERS).compose(ev, 7)
    np.testing.assert_allclose(acc.rdp, 7 * closed_form(2.0), rtol=1e-15)
    assert acc.history == ((ev, 7),)
    assert math.isfinite(acc.get_epsilon(1e-5))

    composed = event_rdp(SelfComposed(ev, 10), ORDERS)
    np.testing.assert_array_equal(composed, 10 * closed_form(2.0))
    np.testing.assert_array_equal(event_rdp(SelfComposed(ev, 0), ORDERS), np.zeros_like(ORDERS))
    np.testing.assert_array_equal(event_rdp(Composed((ev, ev, ev)), ORDERS), 3 * closed_form(2.0))

    unsampled = closed_form(2.0)
    for wrapped in (SampledWithoutReplacement(ev, 20, 100), PoissonSampled(ev, 0.2)):
        for method in ("tight", "generic"):
            sampled = event_rdp(wrapped, ORDERS, method=method)
            assert np.all(sampled >= 0.0) and np.all(sampled <= unsampled), (wrapped, method)
        # no sampled_rdp declared: the tight method is the generic bound
        np.testing.assert_array_equal(event_rdp(wrapped, ORDERS), event_rdp(wrapped, ORDERS, method="generic"))
        assert event_rdp(wrapped, [2.0])[0] < unsampled[ORDERS == 2.0][0]  # sampling helps at α = 2
        np.testing.assert_array_equal(event_rdp(SelfComposed(wrapped, 10), ORDERS), 10 * event_rdp(wrapped, ORDERS))

    # rate 1 changes nothing
    np.testing.assert_array_equal(event_rdp(PoissonSampled(ev, 1.0), ORDERS), unsampled)
    # defaults of the interface
    assert event_eps_inf(ev) == math.inf and event_eps_inf(SelfComposed(ev, 3)) == math.inf
    with pytest.raises(ValueError, match="accountant pld does not support ShiftedNormal"):
        make_engine("pld", ev, orders=ORDERS)
    with pytest.raises(ValueError, match="accountant pld does not support PoissonSampled"):
        make_engine("pld", PoissonSampled(ev, 0.2), orders=ORDERS)
    with pytest.raises(ValueError, match=r"gdp supports Gaussian events only \(got PoissonSampled of ShiftedNormal\)"):
        make_engine("gdp", PoissonSampled(ev, 0.2), orders=ORDERS)


def test_declared_sampled_curve_is_used_under_tight_only():
    ev = WithTightCurve(sigma=2.0)
    for wrapped in (SampledWithoutReplacement(ev, 20, 100), PoissonSampled(ev, 0.2)):
        np.testing.assert_array_equal(event_rdp(wrapped, ORDERS), np.zeros_like(ORDERS))
        assert np.all(event_rdp(wrapped, ORDERS, method="generic") > 0.0)


def test_event_without_rdp_is_refused_by_name():
    with pytest.raises(ValueError, match="unsupported privacy event NoRdp"):
        event_rdp(NoRdp(), ORDERS)
    acc = RdpAccountant(ORDERS)
    with pytest.raises(ValueError, match="unsupported privacy event NoRdp"):
        acc.compose(PoissonSampled(NoRdp(), 0.5))
    with pytest.raises(ValueError, match="unsupported privacy event NoRdp"):
        acc.compose(Composed((ShiftedNormal(1.0), NoRdp())))
    assert acc.history == () and np.all(acc.rdp == 0.0)


def test_builtin_leaves_are_their_mathematics():
    a = np.array([1.5, 2.0, 3.0, 8.0, 32.0])
    cases = [
        (CauchyRound(gamma=50.0, sensitivity=2.0), _rdp.cauchy_rdp_bound(a, sensitivity=2.0, gamma=50.0)),
        (CauchyRound(gamma=50.0, sensitivity=2.0, scalar=True), _rdp.cauchy_scalar_rdp(a, sensitivity=2.0, gamma=50.0)),
        (GaussianRound(noise_std=3.0, sensitivity=1.5), _rdp.gaussian_rdp(a, noise_std=3.0, sensitivity=1.5)),
        (RandomizedResponseRound(1.3), randomized_response_rdp(a, epsilon0=1.3)),
    ]
    dd = DDGaussRound(n=20, d=100, clip=1.0, grid=0.05, local_std=1.0)
    cases.append((dd, ddgauss_rdp(a, dd)))
    for ev, expected in cases:
        np.testing.assert_array_equal(event_rdp(ev, a), expected, err_msg=repr(ev))
        np.testing.assert_array_equal(ev.rdp(a), expected, err_msg=repr(ev))
    assert event_eps_inf(RandomizedResponseRound(1.3)) == 1.3
    assert event_eps_inf(dd) == math.inf and event_eps_inf(GaussianRound(noise_std=3.0, sensitivity=0.0)) == 0.0
    assert event_eps_inf(CauchyRound(gamma=50.0, sensitivity=2.0, scalar=True)) == _rdp.cauchy_scalar_eps_inf(
        sensitivity=2.0, gamma=50.0)
