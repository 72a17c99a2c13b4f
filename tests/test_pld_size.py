"""PLD size guard (privacy.pld.PldTooLarge) and calibration under accountant pld (privacy.calibration).

Before the guard, calibrating a Gaussian under ``pld`` evaluated the bracket end σ/S = 10⁻⁴ and asked
dp_accounting for a 5·10¹⁰-point loss grid (373 GiB): the calibration died of memory. The references
below are dp_accounting's own accountant, not this package's PLD path.
"""

from __future__ import annotations

import time

import dp_accounting
import pytest
from dp_accounting.pld import pld_privacy_accountant

from privacy.calibration import smallest_noise_multiplier
from privacy.events import GaussianRound, PoissonSampled
from privacy.pld import MAX_GRID_POINTS, PldTooLarge, cauchy_mixture_pld, event_pld


def _library_eps(z: float, *, q: float, T: int, delta: float) -> float:
    """ε(δ) of T Poisson-sampled Gaussian rounds (σ/S = z, add/remove) by dp_accounting's PLD accountant."""
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    acc.compose(dp_accounting.SelfComposedDpEvent(event, T))
    return acc.get_epsilon(delta)


def test_weak_gaussian_is_refused_before_allocating():
    t0 = time.perf_counter()
    with pytest.raises(PldTooLarge, match=r"noise std 0\.0001 at sensitivity 1.*accountant rdp"):
        event_pld(PoissonSampled(GaussianRound(noise_std=1e-4, sensitivity=1.0), rate=0.01))
    assert time.perf_counter() - t0 < 5.0  # counted, not built (building it needs 373 GiB)
    # the FLORAS mixture is checked at its last panel (σ = γ/6.7, the widest grid) before any panel is built
    with pytest.raises(PldTooLarge):
        cauchy_mixture_pld(sensitivity=1e4, gamma=1.0, rate=0.01)
    assert time.perf_counter() - t0 < 5.0


def test_ordinary_gaussian_is_not_refused():
    # σ/S = 0.5 at q = 0.01 needs about 1.7·10⁴ points at h = 10⁻³: far below the cap
    assert MAX_GRID_POINTS >= 2**26
    pld = event_pld(PoissonSampled(GaussianRound(noise_std=0.5, sensitivity=1.0), rate=0.01))
    assert pld.get_epsilon_for_delta(1e-5) > 0


def test_gaussian_calibration_under_pld_meets_the_target_at_the_edge():
    q, T, delta, target = 0.1, 5, 1e-5, 2.0
    z = smallest_noise_multiplier(target_epsilon=target, rounds=T, K=10, M=100, relation="add-remove",
                                  sampling="poisson", accountant="pld", delta=delta, lower=1e-4, upper=1e5)
    # the library's accountant: z meets the target and a noise 0.2 % smaller misses it (rel_tol 1e-4 plus
    # the 1e-3 discretization's effect on ε, well under 0.2 % in z here)
    assert _library_eps(z, q=q, T=T, delta=delta) <= target * (1 + 1e-3)
    assert _library_eps(z * 0.998, q=q, T=T, delta=delta) > target
    # and the PLD needs less noise than the RDP bound for the same target (a looser accountant needs more)
    z_rdp = smallest_noise_multiplier(target_epsilon=target, rounds=T, K=10, M=100, relation="add-remove",
                                      sampling="poisson", accountant="rdp", delta=delta, lower=1e-4, upper=1e5)
    assert z < z_rdp


def test_refinement_stops_at_the_cap_and_reports_the_target_missed(monkeypatch):
    import privacy.pld as pld

    event = PoissonSampled(GaussianRound(noise_std=0.5, sensitivity=1.0), rate=0.01)
    # σ/S = 0.5 needs about 1.7·10⁴ points at h = 10⁻³; a cap of 3·10⁴ lets the first interval through and stops
    # the refinement a target of 10⁻⁶ asks for (the next interval is at most half as wide: ≥ 3.4·10⁴ points)
    monkeypatch.setattr(pld, "MAX_GRID_POINTS", 30_000)
    bracket = pld.epsilon_bracket(event, rounds=10, delta=1e-5, target_error=1e-6)
    assert bracket.discretization == 1e-3 and not bracket.met
    assert 0 < bracket.lower <= bracket.upper
    # at the first interval itself the refusal propagates
    monkeypatch.setattr(pld, "MAX_GRID_POINTS", 1_000)
    with pytest.raises(PldTooLarge):
        pld.epsilon_bracket(event, rounds=10, delta=1e-5, target_error=1e-6)
