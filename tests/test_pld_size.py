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
    pld = event_pld(PoissonSampled(GaussianRound(noise_std=0.5, sensitivity=1.0), rate=0.01))
    assert pld.get_epsilon_for_delta(1e-5) > 0
    # the cap admits the finest grid the population calibrations use (σ/S = 0.05 at q = 0.2: 3.9·10⁵ points at
    # h = 10⁻³, 3.9·10⁸ at the refinement's finest interval 10⁻⁶ would not pass and is reported as not met)
    assert MAX_GRID_POINTS >= 2 * 393_526 * 10


def test_composition_too_large_for_memory_is_refused_before_the_fft():
    """A per-round grid under MAX_GRID_POINTS can still ask for an FFT of hundreds of millions of points over many
    rounds: a Gaussian at σ/S = 0.007 (q = 0.2, T = 200) once asked dp_accounting for 9.2·10⁸ points (13.7 GiB) and the
    worker was killed for memory. Here σ/S = 0.05 at q = 0.2 (3.9·10⁵ points a round) over 20 000 rounds: dp_accounting's
    own truncation bounds give 3.5·10⁸ points (5.3 GiB per complex array), refused after the bounds alone."""
    import tracemalloc

    from privacy.events import SelfComposed
    from privacy.pld import MAX_COMPOSED_POINTS, self_compose

    event = PoissonSampled(GaussianRound(noise_std=0.05, sensitivity=1.0), rate=0.2)
    round_pld = event_pld(event)
    tracemalloc.start()
    try:
        with pytest.raises(PldTooLarge, match=r"composing a PLD of 393526 loss points 20000 times needs an FFT of 3\.5"):
            self_compose(round_pld, 20_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20  # the bounds only; the FFT alone would be 16·3.5·10⁸ bytes
    with pytest.raises(PldTooLarge):  # the event path composes through the same guard
        event_pld(SelfComposed(event, 20_000))
    # under the cap the guard is dp_accounting's composition itself, to the last bit
    weak = PoissonSampled(GaussianRound(noise_std=0.5, sensitivity=1.0), rate=0.2)
    p = event_pld(weak)
    assert (self_compose(p, 100).get_epsilon_for_delta(1e-5) == p.self_compose(100).get_epsilon_for_delta(1e-5))
    assert MAX_COMPOSED_POINTS == 2**26


def test_engine_epsilon_counts_a_too_large_composition_as_missing_the_target(monkeypatch):
    """The accountant engine composes through the guard, so calibration (privacy.calibration) sees PldTooLarge at
    the bracket's weak end and treats the point as missing its target instead of dying of memory."""
    import privacy.pld as pld
    from privacy.calibration import smallest_noise_multiplier

    refused, guard = [], pld.self_compose

    def counting(p, count):
        try:
            return guard(p, count)
        except PldTooLarge:
            refused.append(count)
            raise

    monkeypatch.setattr(pld, "self_compose", counting)
    z = smallest_noise_multiplier(target_epsilon=8.0, rounds=20_000, K=20, M=100, relation="add-remove",
                                  sampling="poisson", accountant="pld", delta=1e-5, lower=0.05, upper=1e3)
    assert refused and set(refused) == {20_000}  # the weak end's composition was refused, not computed
    assert 0.05 < z < 1e3
    assert _library_eps(z, q=0.2, T=20_000, delta=1e-5) <= 8.0 * (1 + 1e-3)  # dp_accounting's own accountant


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
    from privacy.pld_bracket import epsilon_bracket

    event = PoissonSampled(GaussianRound(noise_std=0.5, sensitivity=1.0), rate=0.01)
    # σ/S = 0.5 needs about 1.7·10⁴ points at h = 10⁻³; a cap of 3·10⁴ lets the first interval through and stops
    # the refinement a target of 10⁻⁶ asks for (the next interval is at most half as wide: ≥ 3.4·10⁴ points)
    monkeypatch.setattr(pld, "MAX_GRID_POINTS", 30_000)
    bracket = epsilon_bracket(event, rounds=10, delta=1e-5, target_error=1e-6)
    assert bracket.discretization == 1e-3 and not bracket.met
    assert 0 < bracket.lower <= bracket.upper
    # at the first interval itself the refusal propagates
    monkeypatch.setattr(pld, "MAX_GRID_POINTS", 1_000)
    with pytest.raises(PldTooLarge):
        epsilon_bracket(event, rounds=10, delta=1e-5, target_error=1e-6)
