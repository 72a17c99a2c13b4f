"""Analog Gaussian with chip-timing offsets (model §5.1, §9.1; phy/chip_timing.py, phy/analog_gaussian.py).

Each admitted client's data and artificial noise ν_k ~ N(0, v·I) reach the matched filter through its two-tap filter
F_k = (1 − a_k)·I + a_k·S, a_k = τ_k/L_eff; the clients inflate v by 1/(1 − 2a_max)². The predictions are built here
from the raw configuration: the offsets from the keyed stream (seed, "timing-offset", t), the filters as matrices.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.analog_gaussian import AnalogGaussianAggregator
from phy.config import PhyConfig
from phy.randomness import stream


def _cfg(**kw):
    base = dict(scheme="analog-gaussian", snr_db=40.0, normalization="clip", clip_norm=1.0, L=8, g_th=1e-6,
                rho_rule="min-admitted", **{"analog-gaussian": {"noise_multiplier": 0.5}})
    base.update(kw)
    return PhyConfig.make(**base)


def _filter(a: float, d: int) -> np.ndarray:
    """F(a) = (1 − a)·I + a·S, S the one-symbol down-shift (d × d: the last symbol's late part is not received)."""
    return (1.0 - a) * np.eye(d) + a * np.eye(d, k=-1)


def test_received_noise_has_the_filtered_variance_and_lag_one_covariance():
    # zero updates: ŝ is the noise alone. Per symbol i ≥ 1 its variance is σ_n²/ρ + v·Σ_k[(1 − a_k)² + a_k²] and the
    # covariance of symbols i and i + 1 is v·Σ_k a_k(1 − a_k), v = σ_a²/K with σ_a² = (σ_T² − σ_n²/ρ)/(1 − 2a_max)²;
    # a missing inflation (variance 25× too small), unfiltered noise (no lag-one covariance) or noise drawn per
    # client without the filter fail here
    K, d, tau_max, seed = 5, 1 << 17, 0.4, 7
    cfg = _cfg(timing_offset=tau_max, resource="source-literal")
    agg = AnalogGaussianAggregator(cfg, K=K, d=d, seed=seed)
    a_max = tau_max / 1
    assert agg.inflation == pytest.approx(1.0 / (1.0 - 2.0 * a_max) ** 2, rel=1e-15)
    C = cfg.norm_bound(d)
    sigma_t = 0.5 * 2.0 * C  # z·S, S = 2C (replace-one)
    for t in range(2):
        res = agg.aggregate(np.zeros((K, d)), round_index=t)
        assert res.contributors == K
        e = res.sum_estimate / (1.0 / C)  # ŝ = estimate / scale, scale = R/C with R = 1
        rho = res.diagnostics["rho"]
        rx = (10 ** -4.0) / rho  # σ_n²/ρ, σ_n² = P/SNR (one chip per symbol)
        a = tau_max * stream(seed, "timing-offset", t).random(K)  # a_k = τ_k/L_eff, L_eff = 1
        v = (sigma_t**2 - rx) / (1.0 - 2.0 * a_max) ** 2 / K
        var = rx + v * np.sum((1 - a) ** 2 + a**2)
        cov = v * np.sum(a * (1 - a))
        x = e[1:]
        n = x.size
        assert np.var(x) == pytest.approx(var, rel=5 * math.sqrt(2 / n))
        lag = np.mean(x[:-1] * x[1:])
        assert abs(lag - cov) < 5 * var / math.sqrt(n), (lag, cov)
        assert res.diagnostics["noise_std_effective"] == pytest.approx(math.sqrt(var), rel=1e-12)


@pytest.mark.parametrize("K", [2, 5])
def test_inflated_noise_covers_every_clients_filtered_sensitivity(K):
    # the guarantee of model §5.1: Cov(Σ_j F_j ν_j) ⪰ σ_T²·F_k F_kᵀ for every client k, whatever the offsets in
    # [0, a_max], with v = σ_T²/(K(1 − 2a_max)²) (no receiver noise counted); without the inflation it fails when
    # the others' offsets sit at a_max and client k's at 0
    d, tau_max = 64, 0.375
    cfg = _cfg(timing_offset=tau_max, resource="source-literal")
    a_max = tau_max  # L_eff = 1
    inflation = AnalogGaussianAggregator(cfg, K=K, d=8, seed=0).inflation
    assert inflation == pytest.approx(1.0 / (1.0 - 2.0 * a_max) ** 2, rel=1e-15)
    sigma_t2 = 1.0
    rng = np.random.default_rng(3)
    cases = [np.r_[0.0, np.full(K - 1, a_max)], np.full(K, a_max), np.zeros(K)] + [rng.uniform(0, a_max, K) for _ in range(5)]
    for a in cases:
        F = [_filter(x, d) for x in a]
        base = sum(f @ f.T for f in F)
        for factor, must_hold in ((inflation, True), (1.0, None)):
            cov = sigma_t2 / K * factor * base
            worst = min(np.linalg.eigvalsh(cov - sigma_t2 * f @ f.T).min() for f in F)
            if must_hold:
                assert worst > -1e-10, (a, worst)
        if np.array_equal(a, cases[0]):  # without the inflation the mixed offsets break the bound
            cov = sigma_t2 / K * base
            assert np.linalg.eigvalsh(cov - sigma_t2 * F[0] @ F[0].T).min() < -1e-3


def test_streaming_equals_the_whole_round_and_zero_offset_is_unchanged():
    K, d = 6, 5000
    x = np.random.default_rng(1).standard_normal((K, d)) * 0.01
    agg = AnalogGaussianAggregator(_cfg(timing_offset=0.9), K=K, d=d, seed=4)
    for t in range(3):
        whole = agg.aggregate(x, round_index=t).sum_estimate
        chunks = [(np.arange(0, 2), x[:2]), (np.arange(2, 6), x[2:])]
        assert np.array_equal(agg.aggregate_stream(chunks, round_index=t).sum_estimate, whole)
    plain = AnalogGaussianAggregator(_cfg(), K=K, d=d, seed=4)
    zero = AnalogGaussianAggregator(_cfg(timing_offset=0.0), K=K, d=d, seed=4)
    assert zero.inflation == 1.0
    assert np.array_equal(plain.aggregate(x, round_index=2).sum_estimate, zero.aggregate(x, round_index=2).sum_estimate)


def test_timing_options_out_of_range_are_one_line_errors():
    with pytest.raises(ValueError, match=r"^timing_offset: scheme 'analog-gaussian' needs τ_max/L_eff < 1/2"):
        _cfg(timing_offset=0.5, resource="source-literal").validate(K=4, d=10)
    for key, value in (("coherence_symbols", 5), ("csi_error", 0.1)):
        with pytest.raises(ValueError, match=r"^(timing_offset|csi_error|inversion_csit)"):
            _cfg(timing_offset=0.3, **{key: value}).validate(K=4, d=10)


def _scenario(relation: str, sampling: str, tau: float):
    from scenarios.config import scenario_from_dict

    return scenario_from_dict({"partition": {"clients": 10}, "training": {"clients_per_round": 4, "sampling": sampling},
                               "phy": {"scheme": "analog-gaussian", "snr_db": 20.0, "normalization": "clip",
                                       "clip_norm": 1.0, "L": 8, "timing_offset": tau,
                                       "analog-gaussian": {"noise_multiplier": 1.0}},
                               "privacy": {"delta": 1e-5, "relation": relation},
                               "run": {"rounds": 3, "seed": 0}}, resolve=False)


def test_the_accountant_keeps_its_noise_states_t1_only_and_refuses_add_remove():
    from scenarios.config.schemes import scheme_accountant

    sync = scheme_accountant(_scenario("replace", "without-replacement", 0.0), d=40, D=1)
    late = scheme_accountant(_scenario("replace", "without-replacement", 0.9), d=40, D=1)
    assert late.epsilon(rounds=3) == pytest.approx(sync.epsilon(rounds=3), rel=1e-12)  # the inflation keeps σ
    assert "T1 only" in late.threat_model and "T1 only" not in sync.threat_model
    with pytest.raises(ValueError, match=r"privacy\.relation: analog Gaussian's guarantee with chip-timing offsets"):
        scheme_accountant(_scenario("add-remove", "poisson", 0.9), d=40, D=1)
