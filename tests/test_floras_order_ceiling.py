"""The order ceiling of FLORAS's RDP accountant (model §9.5, "Order ceiling").

The V-averaged moment is finite only for α(α−1)S² < γ², sampled or not (the sampled mixture keeps the
unsampled term with weight q^α). Every RDP-to-(ε, δ) conversion then costs at least its value at the
ceiling α*, whatever the sampling rate and the number of rounds (short of an RDP under δ² at some order below
α*, where the Bretagnolle–Huber branch returns 0: q far below the 10⁻³ used here), so at ε = 8, δ = 10⁻⁵ no q and no T let
S/γ pass 1/√(α*(α*−1)) with α* solving ln(1 − 1/α) − (ln δ + ln α)/(α − 1) = 8 (the conversion of
privacy.rdp.epsilon_from_rdp, Canonne, Kamath & Steinke 2020). The ceiling is computed here from that
formula; the accountant must agree on both sides of it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from privacy.floras_tight import cauchy_sampled_rdp
from privacy.rdp import epsilon_from_rdp

EPS, DELTA = 8.0, 1e-5
ORDERS = np.concatenate([np.linspace(1.01, 3.0, 400), np.arange(3.25, 12.0, 0.25)])


def _ceiling() -> float:
    """S/γ at which the conversion alone costs EPS (RDP = 0 at every order below α*)."""
    conv = lambda a: math.log1p(-1.0 / a) - (math.log(DELTA) + math.log(a)) / (a - 1.0)
    a_star = brentq(lambda a: conv(a) - EPS, 1.01, 50.0)
    return 1.0 / math.sqrt(a_star * (a_star - 1.0))


def _eps(ratio: float, *, q: float, T: int) -> float:
    rdp, _ = cauchy_sampled_rdp(ORDERS, scheme="without-replacement", rate=q, sensitivity=ratio, gamma=1.0)
    return epsilon_from_rdp(ORDERS, T * rdp, delta=DELTA)[0]


def test_ceiling_value():
    # α* = 2.246, S/γ = 0.5977: with S = 2C (replace-one) FLORAS's C/γ ≤ 0.2989 at ε = 8 under any RDP accounting
    assert _ceiling() == pytest.approx(0.5977, abs=5e-4)


@pytest.mark.parametrize("q", [1e-3, 1e-2])
def test_no_sampling_rate_passes_the_ceiling(q):
    # 2 % above the ceiling: ε > 8 even for a single round at q = 0.001 (sampling cannot lift the ceiling)
    assert _eps(1.02 * _ceiling(), q=q, T=1) > EPS


@pytest.mark.parametrize("q", [1e-3, 1e-2])
def test_below_the_ceiling_composition_costs_little(q):
    # 5 % below it, 100 rounds stay under ε = 8: the RDP of the sampled rounds is small at the orders that
    # matter, and the conversion (7.59 at one round, q = 0.001) is most of ε
    eps100 = _eps(0.95 * _ceiling(), q=q, T=100)
    assert eps100 <= EPS
    assert eps100 - _eps(0.95 * _ceiling(), q=q, T=1) < 0.5
