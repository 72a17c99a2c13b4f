"""FLORAS link (model §6.1): recovery, Cauchy inactive noise, conditional Gaussianity, paths, chunks."""

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from phy.schemes import make_aggregator
from phy.config import PhyConfig
from phy.floras import FlorasAggregator, FlorasLink
from phy.normalization import normalize
from phy.randomness import stream
from phy.statistics import excess_kurtosis

KEY = bytes(range(100, 132))
LEVEL = 1e-3  # significance level of every KS / chi-square test here


def _s(K, d, seed=0, t=0):
    """Normalized unit-power vectors (paper rule, C = √(dP))."""
    x = stream(seed, "test-vectors", t).standard_normal((K, d))
    return normalize(x, rule="paper", C=np.sqrt(d), clip_norm=None).s


@pytest.mark.parametrize("path", ["fast", "chip"])
@pytest.mark.parametrize("csit", ["none", "phase"])
def test_high_snr_recovers_the_sum_with_predicted_error(path, csit):
    """γ = 0, first order in the noise: ŝ^i − Σ_k s_k^i = Σ_k (n_{k,i}/g_k − s_k^i·ε_k), ε_k = n_{s,k}/(g_k b).

    Given the round's gains and reference noise, A_i = Σ_k n_{k,i}/g_k is i.i.d. N(0, σ_A²),
    σ_A² = (σ²/L)·Σ_k 1/g_k², and B_i = −Σ_k s_k^i ε_k is fixed. So mean_i(err²) has mean
    σ_A² + mean(B²) and standard deviation √((2σ_A⁴ + 4σ_A²·mean(B²))/d).
    """
    K, d = 20, 4000
    cfg = PhyConfig.make(L=32, snr_db=80.0, floras={"N": K, "path": path, "csit": csit})
    link = FlorasLink(cfg, K=K, seed=1, key=KEY)
    s = _s(K, d)
    for t in range(3):
        r = link.run_round(s, round_index=t)
        err = r.s_hat - s.sum(axis=0)
        # from the raw configuration (model §5): σ²/L per chip, σ² = P/10^(SNR/10), b = √P (P = 1 here)
        sigma2_per_chip = 1.0 / 10 ** (80.0 / 10) / 32
        b = 1.0
        var_a = sigma2_per_chip * np.sum(1 / r.gains**2)
        eps = (r.r_ref[r.active] - r.gains * b) / (r.gains * b)
        mean_b2 = np.mean((eps @ s) ** 2)
        sd = np.sqrt((2 * var_a**2 + 4 * var_a * mean_b2) / d)
        assert abs(np.mean(err**2) - (var_a + mean_b2)) < 5 * sd
        assert np.mean(err**2) / np.mean(s.sum(axis=0) ** 2) < 1e-5
        assert r.V == 0.0


def test_aggregator_recovers_updates_for_both_normalizations():
    K, d = 8, 300
    x = stream(2, "test-x").normal(size=(K, d)) * 0.01 + 0.3
    for cfg in (PhyConfig.make(L=8, snr_db=120.0, floras={"N": K}), PhyConfig.make(L=8, snr_db=120.0, normalization="clip", clip_norm=0.05, floras={"N": K})):
        agg = make_aggregator(cfg, K=K, d=d, seed=0, key=KEY)
        assert isinstance(agg, FlorasAggregator)
        res = agg.aggregate(x, round_index=0)
        target = x.sum(axis=0)
        if cfg.normalization == "clip":  # clip_R(x − μ) with R below the norms: compare with the clipped sum
            centred = x - x.mean(axis=1, keepdims=True)
            n = np.linalg.norm(centred, axis=1, keepdims=True)
            target = (centred * np.minimum(1, 0.05 / n)).sum(axis=0) + x.mean(axis=1).sum()
        assert np.sum((res.sum_estimate - target) ** 2) / np.sum(target**2) < 1e-8
        assert res.contributors == K and res.diagnostics["V"] == 0.0


@pytest.mark.parametrize("path", ["fast", "chip"])
def test_active_part_recovered_and_noise_is_inactive_term(path):
    """γ > 0 at high SNR: ŝ − Σ s_k − b·e → 0, e the traced inactive-sequence noise."""
    K, d = 20, 500
    link = FlorasLink(PhyConfig.make(L=32, snr_db=90.0, power=4.0, floras={"N": 30, "path": path}), K=K, seed=2, key=KEY)
    s = _s(K, d) * 2.0
    r = link.run_round(s, round_index=0, trace=True)
    resid = r.s_hat - s.sum(axis=0) - link.b * r.inactive_noise
    assert np.mean(resid**2) < 1e-6 * np.mean(s.sum(axis=0) ** 2)
    assert np.mean((link.b * r.inactive_noise) ** 2) > 1.0  # the Cauchy term does not vanish with SNR


def _trace_rounds(path, rounds, *, d, snr_db=20.0, sequences="walsh-hadamard"):
    K, N = 20, 30
    link = FlorasLink(PhyConfig.make(L=32, snr_db=snr_db, floras={"N": N, "path": path, "sequences": sequences}), K=K, seed=4, key=KEY)
    s = _s(K, d)
    out = [link.run_round(s, round_index=t, trace=True) for t in range(rounds)]
    return link, out


@pytest.fixture(scope="module")
def fast_rounds():
    return _trace_rounds("fast", 400, d=64)


@pytest.fixture(scope="module")
def chip_rounds():
    return _trace_rounds("chip", 400, d=64)


@pytest.mark.parametrize("which", ["fast_rounds", "chip_rounds"])
def test_inactive_noise_is_cauchy_across_rounds_and_V_is_levy(which, request):
    link, rounds = request.getfixturevalue(which)
    gamma = link.gamma
    e0 = np.array([r.inactive_noise[0] for r in rounds])  # one entry per round: independent samples
    assert stats.kstest(e0, "cauchy", args=(0, gamma)).pvalue > LEVEL
    V = np.array([r.V for r in rounds])
    assert stats.kstest(V, "levy", args=(0, gamma**2)).pvalue > LEVEL


def test_fast_and_chip_paths_agree_in_distribution(fast_rounds, chip_rounds):
    (_, fast), (_, chip) = fast_rounds, chip_rounds
    for stat in (lambda r: r.inactive_noise[0], lambda r: r.V, lambda r: r.s_hat[1]):
        a = np.array([stat(r) for r in fast])
        b = np.array([stat(r) for r in chip])
        assert stats.ks_2samp(a, b).pvalue > LEVEL


def test_conditionally_gaussian_within_a_round():
    """Shared denominators: e/√V ~ N(0,1) i.i.d. within a round; an i.i.d.-Cauchy draw would fail."""
    d = 20000
    link, rounds = _trace_rounds("fast", 5, d=d)
    se = np.sqrt(24 / d)
    for r in rounds:
        z = r.inactive_noise / np.sqrt(r.V)
        assert stats.kstest(z, "norm").pvalue > LEVEL
        assert abs(excess_kurtosis(r.inactive_noise)) < 4 * se
    pooled = np.concatenate([r.inactive_noise for r in rounds])
    assert excess_kurtosis(pooled) > 10 * se  # mixing rounds (different V) is heavy-tailed
    iid_cauchy = stats.cauchy(scale=link.gamma).rvs(size=d, random_state=np.random.default_rng(0))
    assert excess_kurtosis(iid_cauchy) > 100 * se


@pytest.mark.parametrize("path", ["fast", "chip"])
def test_results_do_not_depend_on_chunk_size(path):
    K, d = 20, 10000
    s = _s(K, d)
    outs = []
    for chunk in (1, 4096, 8192, 65536):
        link = FlorasLink(PhyConfig.make(chunk_size=chunk, floras={"N": 30, "path": path}), K=K, seed=3, key=KEY)
        outs.append(link.run_round(s, round_index=2, trace=True))
    for o in outs[1:]:
        np.testing.assert_array_equal(o.s_hat, outs[0].s_hat)
        np.testing.assert_array_equal(o.inactive_noise, outs[0].inactive_noise)
        assert o.V == outs[0].V


def test_round_is_a_pure_function_of_seed_key_round():
    K, d = 20, 100
    s = _s(K, d)
    link = FlorasLink(PhyConfig.make(floras={"N": 30}), K=K, seed=5, key=KEY)
    a = link.run_round(s, round_index=9)
    link.run_round(s, round_index=3)
    b = FlorasLink(PhyConfig.make(floras={"N": 30}), K=K, seed=5, key=KEY).run_round(s, round_index=9)
    np.testing.assert_array_equal(a.s_hat, b.s_hat)
    other_key = FlorasLink(PhyConfig.make(floras={"N": 30}), K=K, seed=5, key=bytes(32)).run_round(s, round_index=9)
    assert not np.array_equal(a.active, other_key.active)


def test_pn_sequences_use_the_chip_path_and_are_flagged_biased():
    link = FlorasLink(PhyConfig.make(L=32, floras={"N": 30, "sequences": "pn"}), K=20, seed=0, key=KEY)
    assert link.path == "chip" and link.describe()["estimator_biased"]
    with pytest.raises(ValueError, match="^floras.path"):
        FlorasLink(PhyConfig.make(L=32, floras={"N": 30, "sequences": "pn", "path": "fast"}), K=20, seed=0, key=KEY)
    # N > L is allowed for pn
    r = FlorasLink(PhyConfig.make(L=32, floras={"N": 40, "sequences": "pn"}), K=20, seed=0, key=KEY).run_round(_s(20, 10), round_index=0)
    assert np.all(np.isfinite(r.s_hat))


@pytest.mark.parametrize("path", ["fast", "chip"])
def test_inactive_noise_does_not_depend_on_snr_or_power(path):
    """e and V are ratios of noise projections: the same draws give the same values at any P, σ²."""
    s = _s(20, 300)
    outs = [FlorasLink(PhyConfig.make(snr_db=snr, power=p, floras={"N": 30, "path": path}), K=20, seed=8, key=KEY)
            .run_round(s * np.sqrt(p), round_index=1, trace=True) for snr, p in ((0.0, 1.0), (40.0, 1.0), (10.0, 9.0))]
    for o in outs[1:]:
        assert o.V == pytest.approx(outs[0].V, rel=1e-10)
        np.testing.assert_allclose(o.inactive_noise, outs[0].inactive_noise, rtol=1e-9)


def test_auto_path_is_fast_or_sufficient_exactly_for_orthonormal_sets():
    """auto: sufficient (untraced) / fast (traced) on orthonormal sets, chip on pn sets."""
    for family, path, trace_path in (("walsh-hadamard", "sufficient", "fast"),
                                     ("random-orthonormal", "sufficient", "fast"), ("pn", "chip", "chip")):
        link = FlorasLink(PhyConfig.make(L=32, floras={"N": 30, "sequences": family}), K=20, seed=0, key=KEY)
        assert (link.path, link.trace_path) == (path, trace_path)


def test_conditional_variance_formula_holds_for_non_orthogonal_sets():
    """pn sets: V = (σ²/L)·Σ_{j,l∈I} G_jl/(r_j^s r_l^s) is still the within-round variance of e."""
    d = 20000
    _, rounds = _trace_rounds("chip", 3, d=d, sequences="pn")
    for r in rounds:
        assert stats.kstest(r.inactive_noise / np.sqrt(r.V), "norm").pvalue > LEVEL


def test_floras_needs_a_long_enough_key():
    with pytest.raises(ValueError, match="^key"):
        make_aggregator(PhyConfig.make(floras={"N": 30}), K=20, d=10, seed=0, key=b"0123456789")
    with pytest.raises(ValueError, match="^key"):
        make_aggregator(PhyConfig().with_params("floras", N=30), K=20, d=10, seed=0, key=None)
