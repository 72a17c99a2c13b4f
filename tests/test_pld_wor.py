"""privacy/pld_wor.py: the PLD of a round sampled without replacement under replace-one (model §9.5).

Predictions come from the model's formulas computed here independently of the code under test: the hockey-stick
divergences of A = q·N(S, σ²) + (1 − q)·N(0, σ²) and Q = N(0, σ²) by numerical integration, the Gaussian's closed-form
profile, and the f-DP accountant's C_q(f) (privacy/fdp: trade-off envelopes on its own loss grid, Dong, Roth & Su
Thm 4.2), a second implementation of the same theorem.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import ndtr
from scipy.stats import norm

from privacy.events import CauchyRound, GaussianRound, PoissonSampled, SampledWithoutReplacement
from privacy.pld import event_pld
from privacy.pld_bracket import epsilon_bracket
from privacy.pld_wor import symmetric_profile

DELTA = 1e-5


def _hockey(eps: float, sigma: float, S: float, q: float, *, mixture_first: bool) -> float:
    """H_{e^ε}(A‖Q) (mixture_first) or H_{e^ε}(Q‖A) = ∫ (p₁ − e^ε p₂)₊ by quadrature over x."""
    def a(x):
        return q * norm.pdf(x, S, sigma) + (1 - q) * norm.pdf(x, 0.0, sigma)

    def b(x):
        return norm.pdf(x, 0.0, sigma)

    p1, p2 = (a, b) if mixture_first else (b, a)
    lo, hi = -12 * sigma, S + 12 * sigma
    pts = np.linspace(lo, hi, 41)
    return float(sum(integrate.quad(lambda x: max(p1(x) - math.exp(eps) * p2(x), 0.0), u, v, epsabs=1e-14,
                                    epsrel=1e-10, limit=200)[0] for u, v in zip(pts[:-1], pts[1:])))


@pytest.mark.parametrize("sigma,q", [(0.5, 0.01), (1.0, 0.2), (2.0, 0.05)])
def test_the_profile_is_the_larger_directional_hockey_stick_and_dominates_both_below_zero(sigma, q):
    """ε ≥ 0: δ_sym = max of the two orders' divergences (the ADD order matters only for ε < −ln(1 − q)); ε < 0:
    δ_sym ≥ either order's divergence there (the round is dominated in every order at every α)."""
    S = 1.0
    small = -0.5 * math.log1p(-q)  # inside [0, −ln(1 − q)], where H(Q‖A) is positive
    for eps in (0.0, small, 0.3, 1.5):
        want = max(_hockey(eps, sigma, S, q, mixture_first=True), _hockey(eps, sigma, S, q, mixture_first=False))
        got = float(symmetric_profile(eps, std=sigma, sensitivity=S, rate=q)[0])
        assert got == pytest.approx(want, rel=1e-6, abs=1e-13), eps
    for eps in (-0.02, -0.3, -1.5):
        got = float(symmetric_profile(eps, std=sigma, sensitivity=S, rate=q)[0])
        for first in (True, False):
            assert got >= _hockey(eps, sigma, S, q, mixture_first=first) - 1e-9, (eps, first)


def test_unsampled_it_is_the_gaussian_closed_form():
    """q = 1: T rounds of G_{S/σ} compose to G_{√T·S/σ}; δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    sigma, T = 2.0, 50
    mu = math.sqrt(T) / sigma
    exact = brentq(lambda e: ndtr(-e / mu + mu / 2) - math.exp(e) * ndtr(-e / mu - mu / 2) - DELTA, 0.0, 100.0)
    ev = SampledWithoutReplacement(GaussianRound(noise_std=sigma, sensitivity=1.0), sample_size=10, population_size=10)
    got = event_pld(ev, discretization=1e-3).self_compose(T).get_epsilon_for_delta(DELTA)
    assert exact <= got + 1e-9 and got <= exact + T * 1e-3


@pytest.mark.parametrize("sigma,K,M,T", [(1.0, 10, 1000, 100), (0.5, 10, 1000, 100), (0.8, 50, 1000, 20)])
def test_the_composed_round_agrees_with_the_fdp_accountants_c_q(sigma, K, M, T):
    """The same theorem implemented twice: the pessimistic PLD at h = 10⁻⁴ nats and the f-DP accountant's ε of C_q(G)^⊗T
    (its grid 10⁻⁴ nats) each lie in [ε_true, ε_true + T·10⁻⁴], so they differ by at most T·10⁻⁴ (0.01 at T = 100;
    keeping the orders apart would move ε by 0.05–0.17 here)."""
    from privacy.fdp.accounting import run_tradeoff
    from privacy.fdp.lossdist import DEFAULT_STEP

    h = 1e-4
    ev = SampledWithoutReplacement(GaussianRound(noise_std=sigma, sensitivity=1.0), sample_size=K, population_size=M)
    fdp = run_tradeoff(ev, T).epsilon(DELTA)
    pld = event_pld(ev, discretization=h).self_compose(T).get_epsilon_for_delta(DELTA)
    assert abs(pld - fdp) <= T * max(h, DEFAULT_STEP) + 1e-9, (pld, fdp)
    b = epsilon_bracket(ev, rounds=T, delta=DELTA, target_error=1e-2)
    assert b.lower <= fdp <= b.upper + T * DEFAULT_STEP


def test_composing_each_order_alone_would_understate_epsilon():
    """One neighbouring pair meets both orders in every round: the symmetric pair's T-fold ε exceeds the larger of
    the two orders composed separately (dp_accounting's Poisson add/remove PLD, the same two pairs), here by more
    than 2 % — what a construction that kept the orders apart would have missed. RDP (Wang, Balle &
    Kasiviswanathan's bound) stays above both."""
    from privacy.engines import make_engine
    from privacy.rdp import DEFAULT_ORDERS

    sigma, q, T = 0.5, 0.01, 100
    wor = SampledWithoutReplacement(GaussianRound(noise_std=sigma, sensitivity=1.0), sample_size=10, population_size=1000)
    pois = PoissonSampled(GaussianRound(noise_std=sigma, sensitivity=1.0), rate=q)
    e_wor = event_pld(wor, discretization=1e-4).self_compose(T).get_epsilon_for_delta(DELTA)
    e_pois = event_pld(pois, discretization=1e-4).self_compose(T).get_epsilon_for_delta(DELTA)
    assert e_wor > 1.02 * e_pois
    assert make_engine("rdp", wor, orders=DEFAULT_ORDERS).epsilon(T, DELTA)[0] > e_wor


def _floras_round_delta(eps: float, *, gamma: float, S: float, q: float, scale: float = 1.0) -> float:
    """E_V[δ_sym(ε; σ = √V)] with √V = γ/(scale·|Z|), |Z| half-normal, by quadrature over |Z| (model §9.5)."""
    f = lambda z: 2 * norm.pdf(z) * float(symmetric_profile(eps, std=gamma / (scale * z), sensitivity=S, rate=q)[0])  # noqa: E731
    edges = [1e-9, 0.05, 0.2, 0.5, 1, 2, 3, 4, 5, 6, 6.7]
    return float(sum(integrate.quad(f, u, v, epsabs=1e-13, limit=200)[0] for u, v in zip(edges[:-1], edges[1:])))


def test_the_floras_round_is_the_v_mixture_of_the_symmetric_pairs():
    """FLORAS given V is the Gaussian round of variance V; its PLD mixes the symmetric pairs over panels of |Z| with
    the smallest V of each panel (ratio 1.05): one round's δ lies between the exact V-average and the average with
    every |Z| enlarged by 1.05, plus the tail mass 2Φ̄(6.7) sent to +∞."""
    gamma, S, q = 28.0, 20.0, 0.01
    ev = SampledWithoutReplacement(CauchyRound(gamma=gamma, sensitivity=S), sample_size=1000, population_size=100_000)
    pld = event_pld(ev, discretization=1e-3)
    tail = 2 * float(ndtr(-6.7))
    for eps in (0.0, 0.2, 1.0):
        got = float(pld.get_delta_for_epsilon(eps))
        low = _floras_round_delta(eps, gamma=gamma, S=S, q=q)
        high = _floras_round_delta(eps, gamma=gamma, S=S, q=q, scale=1.05) + tail
        assert low * (1 - 1e-6) <= got <= high * (1 + 1e-3) + 1e-12, (eps, low, got, high)


def test_floras_without_replacement_is_accounted_and_far_below_rdp_at_population_scale():
    """K = 1 000 of M = 10⁵, T = 100, γ = 28 (the population sweep): at S/γ = 0.8 no RDP conversion can reach ε = 8
    (its value at the largest finite order α* already exceeds 12, the order ceiling of model §9.5), while the PLD of the
    same 100 rounds is below 8 (and far from 0: sampling 1 % does not make the round free)."""
    gamma = 28.0
    ev = SampledWithoutReplacement(CauchyRound(gamma=gamma, sensitivity=0.8 * gamma), sample_size=1000,
                                   population_size=100_000)
    e = event_pld(ev, discretization=1e-2).self_compose(100).get_epsilon_for_delta(DELTA)
    ceiling = (1 + math.sqrt(1 + 4 / 0.8**2)) / 2  # α* at S/γ = 0.8: the RDP bound's smallest possible ε exceeds 8
    rdp_floor = math.log(1 - 1 / ceiling) - (math.log(DELTA) + math.log(ceiling)) / (ceiling - 1)
    assert rdp_floor > 8.0 > e > 1.0


def test_other_events_sampled_without_replacement_name_the_alternative():
    from privacy.events import RandomizedResponseRound

    ev = SampledWithoutReplacement(RandomizedResponseRound(epsilon0=1.0), sample_size=2, population_size=10)
    with pytest.raises(ValueError, match="Gaussian, Gaussian-mixture and FLORAS rounds only.*use --accountant rdp"):
        event_pld(ev)
    blocks = SampledWithoutReplacement(CauchyRound(gamma=10.0, sensitivity=1.0, blocks=2), sample_size=2,
                                       population_size=10)
    # several pilot blocks: the symmetric pairs mixed over V_min (model §9.5, "Several pilots"), not refused
    from privacy.pld import cauchy_mixture_pld

    want = cauchy_mixture_pld(sensitivity=1.0, gamma=10.0, rate=0.2, sampling="without-replacement", blocks=2)
    assert event_pld(blocks).get_epsilon_for_delta(DELTA) == want.get_epsilon_for_delta(DELTA)


def test_the_floras_run_accountant_states_the_construction_and_matches_the_event():
    """FlorasRunAccountant with accountant pld, K of M without replacement: the ε of the composed V-mixture of symmetric
    pairs at S = 2C (replace-one), and assumptions that name the pair and the FFT composition (no RDP wording)."""
    from privacy import FlorasRunAccountant

    acc = FlorasRunAccountant(K=20, N=30, M=100, d=1000, normalization="clip", C=2.0, clip_norm=1.0, accountant="pld")
    ev = SampledWithoutReplacement(CauchyRound(gamma=10.0, sensitivity=4.0), sample_size=20, population_size=100)
    want = event_pld(ev).self_compose(20).get_epsilon_for_delta(DELTA)
    assert acc.epsilon(rounds=20) == pytest.approx(want, rel=1e-9)
    text = "\n".join(acc.report(rounds=20).assumptions)
    assert "C_q(f)" in text and "FFT" in text and "RDP curves added" not in text
