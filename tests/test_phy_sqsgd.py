"""sqSGD (model §9.3): exact ε₀-LDP of PrivQuant, the unbiasing constant m, the samplers,
unbiasedness of the whole pipeline, bits and channel uses, bad inputs."""

import itertools
import math

import numpy as np
import pytest
from scipy.linalg import hadamard
from scipy.stats import chisquare

from phy.schemes import make_aggregator
from phy.config import PhyConfig
from phy.digital.privquant import (
    agreement_pmf,
    best_kappa,
    privquant,
    privquant_log_prob,
    quantization_levels,
    stochastic_quantize,
    unbiasing_constant,
)
from phy.digital.sqsgd import client_signs, rotate, sqsgd_decode, sqsgd_encode, unrotate
from phy.fading import draw_rayleigh
from phy.randomness import stream


def brute_force_pmf(v, *, K, eps, kappa):
    """P(u | v) over every u ∈ {0..K−1}^n, from the definition exp(ε₀·1[M(u, v) > κ]) / Z."""
    n = len(v)
    outputs = np.array(list(itertools.product(range(K), repeat=n)))
    score = 2 * (outputs == np.asarray(v)).sum(axis=1) - n
    w = np.exp(eps * (score > kappa))
    return outputs, w / w.sum()


def test_reference_m_of_spec():
    # d̃ = 15, K_q = 2, ε₀ = 1, κ = 0: m = C(14, 7)(2p − 1)/2^14 with p = e/(1 + e) (model §9.3)
    p = math.e / (1.0 + math.e)
    expected = math.comb(14, 7) * (2 * p - 1) / 2**14
    assert expected == pytest.approx(0.09680, abs=5e-6)
    assert unbiasing_constant(15, levels=2, epsilon0=1.0, kappa=0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n,K,eps", [(4, 3, 0.8), (3, 4, 2.5), (5, 2, 1.0)])
def test_m_equals_the_brute_force_conditional_mean_for_every_kappa(n, K, eps):
    grid = quantization_levels(K, 1.0)
    v = np.arange(n) % K
    ms = {}
    for kappa in range(-n, n):
        outputs, pmf = brute_force_pmf(v, K=K, eps=eps, kappa=kappa)
        mean = pmf @ grid[outputs]  # E[B_u | v], coordinate by coordinate
        nonzero = grid[v] != 0
        m_brute = mean[nonzero] / grid[v][nonzero]
        np.testing.assert_allclose(m_brute, m_brute[0], rtol=1e-10)  # the same m for every coordinate
        np.testing.assert_allclose(mean[~nonzero], 0.0, atol=1e-12)
        m = unbiasing_constant(n, levels=K, epsilon0=eps, kappa=kappa)
        assert m == pytest.approx(m_brute[0], rel=1e-10)
        ms[kappa] = m_brute[0]
    kappa_best, m_best = best_kappa(n, levels=K, epsilon0=eps)
    assert m_best == pytest.approx(max(ms.values()), rel=1e-10)
    assert ms[kappa_best] == pytest.approx(m_best, rel=1e-10)


@pytest.mark.parametrize("kappa", [-3, -1, 0, 1, 2])
def test_privquant_is_exactly_eps0_ldp_over_every_output(kappa):
    n, K, eps = 3, 3, 1.3
    inputs = np.array(list(itertools.product(range(K), repeat=n)))
    outputs = inputs
    # the module's probabilities equal the definition's, and sum to one
    table = np.empty((len(inputs), len(outputs)))
    for i, v in enumerate(inputs):
        _, pmf = brute_force_pmf(v, K=K, eps=eps, kappa=kappa)
        logp = privquant_log_prob(outputs, v, levels=K, epsilon0=eps, kappa=kappa)
        np.testing.assert_allclose(np.exp(logp), pmf, rtol=1e-12)
        table[i] = np.exp(logp)
    np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)
    ratio = table.max(axis=0) / table.min(axis=0)  # worst pair of inputs, per output
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    if -n <= kappa <= n - 1:  # the bound is attained: the guarantee is no looser than stated
        assert ratio.max() == pytest.approx(math.exp(eps), rel=1e-12)


def test_privquant_sampler_matches_the_output_distribution():
    n, K, eps, kappa = 3, 3, 1.3, -1
    v = np.array([0, 2, 1])
    outputs, pmf = brute_force_pmf(v, K=K, eps=eps, kappa=kappa)
    draws = 30_000
    u = privquant(np.tile(v, (draws, 1)), levels=K, epsilon0=eps, kappa=kappa, rng=stream(5, "test-privquant"))
    index = (u * K ** np.arange(n)[::-1]).sum(axis=1)  # outputs are in lexicographic order
    counts = np.bincount(index, minlength=K**n)
    assert chisquare(counts, pmf * draws).pvalue > 1e-3


def test_agreement_count_sampler_against_its_exact_distribution():
    n, K, eps, kappa = 20, 4, 2.0, -3
    a = np.arange(n + 1)
    w = np.array([math.comb(n, i) * (K - 1) ** (n - i) for i in a], dtype=float) * np.exp(eps * (2 * a - n > kappa))
    expected = w / w.sum()
    np.testing.assert_allclose(agreement_pmf(n, levels=K, epsilon0=eps, kappa=kappa), expected, rtol=1e-12)
    draws = 20_000
    v = stream(1, "test-v").integers(0, K, size=(draws, n))
    u = privquant(v, levels=K, epsilon0=eps, kappa=kappa, rng=stream(2, "test-agreements"))
    counts = np.bincount((u == v).sum(axis=1), minlength=n + 1)
    # pool the sparse tails so every cell expects ≥ 5
    e = expected * draws
    keep = e >= 5
    lo, hi = np.flatnonzero(keep)[[0, -1]]
    obs = np.r_[counts[: lo + 1].sum(), counts[lo + 1: hi], counts[hi:].sum()]
    exp = np.r_[e[: lo + 1].sum(), e[lo + 1: hi], e[hi:].sum()]
    assert chisquare(obs, exp).pvalue > 1e-3


def test_stochastic_quantization_is_unbiased():
    U, K, draws = 2.0, 5, 40_000
    y = np.array([-2.0, -1.3, 0.1, 0.99, 2.0])
    grid = quantization_levels(K, U)
    np.testing.assert_allclose(grid, np.linspace(-U, U, K), atol=1e-15)
    idx = stochastic_quantize(np.tile(y, (draws, 1)), levels=K, bound=U, rng=stream(3, "test-q"))
    vals = grid[idx]
    se = vals.std(axis=0, ddof=1) / math.sqrt(draws)
    assert np.all(np.abs(vals.mean(axis=0) - y) <= 4 * se + 1e-12)
    step = 2 * U / (K - 1)
    assert np.all(np.abs(vals - y) < step + 1e-12)  # always a neighbouring level


def test_rotation_is_the_normalized_hadamard_with_signs_and_is_inverted():
    n = 8
    signs = client_signs(0, 3, 1, n=n)
    R = hadamard(n) @ np.diag(signs) / math.sqrt(n)
    x = stream(0, "test-rot").standard_normal((4, n))
    np.testing.assert_allclose(rotate(x, signs), x @ R.T, atol=1e-12)
    np.testing.assert_allclose(R @ R.T, np.eye(n), atol=1e-12)
    np.testing.assert_allclose(unrotate(rotate(x, signs), signs), x, atol=1e-12)


def test_encode_decode_is_unbiased_within_4_standard_errors():
    d, d_tilde, n, K, eps, U = 6, 3, 4, 3, 2.0, 1.0
    s = np.array([0.5, -0.3, 0.0, 0.2, -0.6, 0.1])  # ‖s‖ < U: the projection is inactive
    kappa, m = best_kappa(n, levels=K, epsilon0=eps)
    grid = quantization_levels(K, U)
    draws = 6_000
    est = np.empty((draws, d))
    for r in range(draws):
        coords = np.sort(stream(9, "test-coords", r).choice(d, size=d_tilde, replace=False))
        signs = client_signs(9, r, 0, n=n)
        u = sqsgd_encode(s, coords=coords, signs=signs, levels=K, bound=U, epsilon0=eps, kappa=kappa,
                         rng_quantize=stream(9, "test-q", r), rng_privatize=stream(9, "test-p", r))
        est[r] = sqsgd_decode(u, coords=coords, signs=signs, grid=grid, m=m, d=d) * (d / d_tilde)
    se = est.std(axis=0, ddof=1) / math.sqrt(draws)
    assert np.all(np.abs(est.mean(axis=0) - s) <= 4 * se)
    # the source's sparse estimator (no d/d̃ scaling) is biased towards (d̃/d)·s: away from s
    sparse = est * (d_tilde / d)
    assert np.all(np.abs(sparse.mean(axis=0) - (d_tilde / d) * s) <= 4 * se * (d_tilde / d))


def sqsgd_config(**kw):
    """A sqSGD configuration; ``levels``, ``ratio``, ``epsilon0``, ``kappa``, ``estimator`` go to [phy.sqsgd]."""
    own = dict(levels=3, ratio=0.5, epsilon0=3.0)
    for key in ("levels", "ratio", "epsilon0", "kappa", "estimator"):
        if key in kw:
            own[key] = kw.pop(key)
    base = dict(scheme="sqsgd", normalization="clip", clip_norm=3.0, C=3.0, snr_db=10.0, g_th=0.3)
    base.update(kw)
    return PhyConfig.make(**base, sqsgd=own)


def test_aggregator_is_unbiased_for_the_admitted_sum_and_counts_channel_uses():
    K, d, seed, rounds = 4, 10, 11, 400
    cfg = sqsgd_config()
    agg = make_aggregator(cfg, K=K, d=d, seed=seed)
    x = stream(0, "test-x").standard_normal((K, d))
    x -= x.mean(axis=1, keepdims=True)
    x *= 0.8 * 3.0 / np.linalg.norm(x, axis=1, keepdims=True)  # centred, inside the clip norm
    d_tilde = 5
    n = 8
    bits = math.ceil(n * math.log2(3)) + 64  # level bits + 32-bit seed + 32-bit norm
    diffs = []
    for t in range(rounds):
        res, trace = agg.aggregate_traced(x, round_index=t)
        h = draw_rayleigh(seed, t, K=K) if t < 5 else trace.h  # the shared draw (checked on a few rounds)
        np.testing.assert_array_equal(trace.h, h)
        g2 = np.abs(h) ** 2
        adm = g2 >= 0.3
        assert res.contributors == int(adm.sum())
        expected_uses = sum(math.ceil(bits / (0.5 * math.log2(1 + g * 10.0))) for g in g2[adm])
        assert res.diagnostics["channel_uses"] == expected_uses
        assert res.diagnostics["bits"] == bits
        if adm.any():
            diffs.append(res.sum_estimate - x[adm].sum(axis=0))
    assert agg.d_tilde == d_tilde and agg.n == n
    diffs = np.array(diffs)
    se = diffs.std(axis=0, ddof=1) / math.sqrt(len(diffs))
    assert np.all(np.abs(diffs.mean(axis=0)) <= 4 * se)


def test_m_decreases_with_the_number_of_levels_in_the_exact_form():
    # the source's claim "m grows with K" does not hold for P(u|v) ∝ exp(ε₀·1[M > κ]) (docs/sqsgd.md)
    for n, eps in ((16, 1.0), (256, 1.0), (256, 4.0)):
        ms = [best_kappa(n, levels=K, epsilon0=eps)[1] for K in (2, 4, 16, 64)]
        assert all(a > b for a, b in zip(ms, ms[1:]))


@pytest.mark.parametrize("kw,match", [
    (dict(levels=1), r"sqsgd.levels must be an integer ≥ 2"),
    (dict(ratio=0.0), r"sqsgd.ratio must be a number in \(0, 1\]"),
    (dict(ratio=1.5), r"sqsgd.ratio must be a number in \(0, 1\]"),
    (dict(epsilon0=0.0), r"sqsgd.epsilon0 must be a finite number > 0"),
    (dict(epsilon0=float("inf")), r"sqsgd.epsilon0 must be a finite number > 0"),
    (dict(epsilon0=float("nan")), r"sqsgd.epsilon0 must be a finite number > 0"),
    (dict(kappa=8), r"sqsgd.kappa must be an integer in \[-8, 7\]"),
    (dict(kappa=1.5), r"sqsgd.kappa must be an integer or unset"),
    (dict(estimator="mean"), r"sqsgd.estimator must be one of"),
    (dict(normalization="paper"), r"normalization must be 'clip' for scheme 'sqsgd'"),
    (dict(ratio=0.05), r"sqsgd.ratio must be ≥ 1/d"),
])
def test_bad_inputs_are_one_line_errors(kw, match):
    with pytest.raises(ValueError, match=match) as info:
        sqsgd_config(**kw).validate(K=4, d=10)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("n,K,eps", [(2000, 256, 3000.0), (8192, 2, 8.0), (300, 16, 40.0)])
def test_m_in_log_space_is_accurate_far_in_the_tails(n, K, eps):
    # regression: a binomial survival function that underflows to 0 in the far tail made m > 1
    a = np.arange(n + 1)
    for kappa in (best_kappa(n, levels=K, epsilon0=eps)[0], n - 1, -n // 2):
        pmf = agreement_pmf(n, levels=K, epsilon0=eps, kappa=kappa)
        m_direct = (K * (pmf @ a) / n - 1) / (K - 1)  # the definition, from E[a]
        m = unbiasing_constant(n, levels=K, epsilon0=eps, kappa=kappa)
        assert 0 <= m <= 1  # (κ = n − 1 at moderate ε₀: m underflows to 0, its log does not)
        assert m == pytest.approx(m_direct, rel=1e-9, abs=n * K * 1e-15)  # the direct form cancels: ~n·K·ulp
