"""Analog Gaussian against a base station that keeps every antenna but does not learn who was sampled (model §5.2,
"A sampled T2 bound"): the exposure draws (phy/leverage_law.py), the band law and the revealed-μ mixture
of sampled Gaussians (privacy/gaussian_mixture.py), and the run's record (scenarios/config/analog_exposure.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.antennas import centroid_combiner, client_leverage, effective_channel
from phy.leverage_law import exposure_draws
from phy.randomness import stream
from privacy.gaussian_mixture import band_law, sampled_gaussian_mixture_epsilon


def test_exposure_draws_are_the_documented_rounds():
    # batch 0 of the stream (seed, "t2-leverage-law", 0): K·N_r real then K·N_r imaginary normals per round, /√2;
    # row 0's K′·ℓ with the combiner of all K (client_leverage), 0 when row 0 is not admitted
    K, n_rx, g_th = 6, 2, 0.3
    got = exposure_draws(K=K, n_rx=n_rx, g_th=g_th, draws=40, seed=3)
    rng = stream(3, "t2-leverage-law", 0)
    h = (rng.standard_normal((40, K, n_rx)) + 1j * rng.standard_normal((40, K, n_rx))) / math.sqrt(2.0)
    want = []
    for b in range(40):
        adm = np.abs(effective_channel(h[b])) ** 2 >= g_th
        want.append(adm.sum() * client_leverage(h[b][adm], combiner=centroid_combiner(h[b]))[0] if adm[0] else 0.0)
    want = np.array(want)
    assert (want == 0.0).sum() >= 3 and (want > 0.0).sum() >= 20  # admission exercised both ways
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_rx", [1, 2, 4])
def test_exposure_draws_average_to_the_derived_rank(n_rx):
    # g_th = 0 admits everyone: Σ_k ℓ_k = 2N_r − 1, so the row's K·ℓ has mean 2N_r − 1 exactly (one real direction
    # carries nothing). Bugs: the imaginary part dropped (mean N_r), K′ left out (mean (2N_r − 1)/K).
    K, m = 12, 40_000
    x = exposure_draws(K=K, n_rx=n_rx, g_th=0.0, draws=m, seed=1)
    assert x.min() >= 0.0 and x.max() <= K
    tol = 5.0 * x.std() / math.sqrt(m) + 1e-9  # 5 standard errors
    assert abs(x.mean() - (2 * n_rx - 1)) <= tol, (x.mean(), tol)


def test_a_revealed_mixture_is_the_weighted_hockey_stick_of_its_parts():
    # one round whose μ is 0 with probability 1 − w and μ₁ otherwise, revealed: δ(ε) = w·δ_{μ₁}(ε), so its ε at δ is
    # the point law's ε at δ/w. Bugs: the μ = 0 mass on another loss, weights not normalised, μ rounded down.
    q, mu1, w, delta = 0.2, 0.8, 0.25, 1e-4
    mixed = sampled_gaussian_mixture_epsilon([0.0, mu1], [1 - w, w], rate=q, rounds=1, delta=delta)
    point = sampled_gaussian_mixture_epsilon([mu1], [1.0], rate=q, rounds=1, delta=delta / w)
    assert mixed == pytest.approx(point, abs=2e-3)  # the PLD grid, 1e-3 nats
    unnormalised = sampled_gaussian_mixture_epsilon([0.0, mu1], [3 * (1 - w), 3 * w], rate=q, rounds=1, delta=delta)
    assert unnormalised == pytest.approx(mixed, rel=1e-12)
    # μ between panels is rounded up: never below the exact point law, at most one panel (1 %) above it in μ
    lo = sampled_gaussian_mixture_epsilon([0.5], [1.0], rate=q, rounds=20, delta=1e-5)
    between = sampled_gaussian_mixture_epsilon([0.5, 0.5 * 0.9995], [0.5, 0.5], rate=q, rounds=20, delta=1e-5)
    assert lo - 1e-12 <= between <= lo + 1e-9


def test_the_point_law_is_the_accountants_sampled_gaussian():
    from privacy import RunAccountant

    z = 3.0  # μ = S/σ = 1/z with σ = z·S
    acc = RunAccountant("gaussian", K=20, M=100, accountant="pld", clip_norm=1.0, noise_std=2 * z)
    got = sampled_gaussian_mixture_epsilon([1 / z], [1.0], rate=0.2, rounds=50, delta=1e-5)
    assert got == pytest.approx(acc.epsilon(rounds=50), rel=1e-9)


def test_the_run_record_has_the_sampled_figure_between_the_aggregate_and_the_own_share(tmp_path, monkeypatch):
    import dataclasses

    from scenarios.config import analog_exposure
    from test_analog_t2 import _scenario  # noqa: E402  (the same small analog scenario)

    monkeypatch.setattr(analog_exposure, "SAMPLED_DRAWS", 20_000)
    config = _scenario(tmp_path, n_rx=2, z=2.0, rounds=25)  # K = 10 of 30, g_th = 0.3
    got = analog_exposure.scheduled_separating(config, d=100, rounds=25)
    own = sampled_gaussian_mixture_epsilon([math.sqrt(10) / 2.0], [1.0], rate=10 / 30, rounds=25, delta=1e-5)
    assert got["epsilon_sampled_aggregate"] < got["epsilon_sampled"] < own
    assert got["epsilon_sampled"] < got["epsilon_most_exposed"]  # amplification still buys something
    assert "does not learn who was sampled" in got["sampled_text"] and "20000 Monte Carlo rounds" in got["sampled_text"]
    # not derived: Poisson / add-remove, and a cell (large-scale fading links a channel to its client)
    poisson = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, relation="add-remove"),
                                  training=dataclasses.replace(config.training, sampling="poisson"))
    assert analog_exposure.sampled_separating(poisson, rounds=25)["epsilon_sampled"] is None
    cell = dataclasses.replace(config, phy=dataclasses.replace(config.phy, pathloss="log-distance"))
    assert "a cell" in analog_exposure.sampled_separating(cell, rounds=25)["sampled_text"]


def test_a_pld_too_large_is_reported_not_raised(tmp_path, monkeypatch):
    from scenarios.config import analog_exposure
    from test_analog_t2 import _scenario  # noqa: E402

    monkeypatch.setattr(analog_exposure, "SAMPLED_DRAWS", 2_000)
    config = _scenario(tmp_path, n_rx=2, z=0.01, rounds=5)  # μ_max = √10/0.01: a loss grid far beyond the cap
    got = analog_exposure.sampled_separating(config, rounds=5)
    assert got["epsilon_sampled"] is None and "not computed" in got["sampled_text"]


def test_few_clients_are_seen_alone_and_the_sampled_figure_is_the_own_share():
    # K ≤ 2N_r − 1 scheduled clients, all admitted (g_th = 0): G has full row rank, every ℓ = 1, so every draw is
    # x = K and the round is the sampled Gaussian of each client's own share, std z·S/√K — predicted here by the
    # Gaussian accountant (pld) at that noise, independent of the draws, the band law and the mixture
    from privacy import RunAccountant

    K, M, z, T = 3, 15, 2.0, 30
    x = exposure_draws(K=K, n_rx=2, g_th=0.0, draws=5_000, seed=2)
    np.testing.assert_allclose(x, K, rtol=1e-9)
    values, weights = band_law(np.minimum(np.sqrt(x) / z, math.sqrt(K) / z), upper=math.sqrt(K) / z, beta=1e-6)
    got = sampled_gaussian_mixture_epsilon(values, weights, rate=K / M, rounds=T, delta=1e-5)
    own = RunAccountant("gaussian", K=K, M=M, accountant="pld", clip_norm=1.0, noise_std=2 * z / math.sqrt(K))
    assert got == pytest.approx(own.epsilon(rounds=T), rel=1e-6)


def test_the_bound_from_draws_is_never_below_the_true_laws_epsilon():
    # a law known exactly (μ = 0.2 or 1.0, P(1.0) = 0.3): from m draws the band law's ε must be at least the true law's
    # in every trial (β = 10⁻⁶), and at most the ε of the law with 0.2 raised one panel and eight standard errors more
    # mass on μ = 1.0 (the Clopper–Pearson limit at level β/695 is about 6.4 of them). Bugs: the union bound left out
    # (no effect on the ceiling, caught by test_analog_csi's coverage trials), the counts taken below the threshold
    # (mass on 1.0 missing: below the true ε), a two-sided limit at the wrong side.
    m, beta, T, q = 2000, 1e-6, 20, 0.2
    true = sampled_gaussian_mixture_epsilon([0.2, 1.0], [0.7, 0.3], rate=q, rounds=T, delta=1e-5)
    p_hi = 0.3 + 8 * math.sqrt(0.3 * 0.7 / m)
    ceiling = sampled_gaussian_mixture_epsilon([0.2 * 1.01, 1.0], [1 - p_hi, p_hi], rate=q, rounds=T, delta=1e-5)
    rng = np.random.default_rng(11)
    for _ in range(10):
        draws = np.where(rng.random(m) < 0.3, 1.0, 0.2)
        values, weights = band_law(draws, upper=1.0, beta=beta)
        assert weights[-1] > 0.3  # the mass at 1.0: its count's upper limit
        got = sampled_gaussian_mixture_epsilon(values, weights, rate=q, rounds=T, delta=1e-5)
        assert true <= got <= ceiling, (true, got, ceiling)
