"""DDGauss at large K, β = 0, dropout after noising and Poisson accounting (model §9.2)."""

import math
import numpy as np
import pytest
from scipy import stats

from phy.config import PhyConfig
from phy.digital.ddgauss import DDGaussAggregator, rounding_norm_bound
from phy.digital.discrete_gaussian import discrete_gaussian_pmf, discrete_gaussian_variance, sample_discrete_gaussian
from phy.digital.discrete_gaussian_sum import TAIL_MASS, summed_discrete_gaussian
from phy.fading import draw_rayleigh
from phy.randomness import stream


def _dd(g_th=1e-9, **own):
    """A DDGauss configuration; ``own`` goes to [phy.ddgauss] (B = 20 unless given)."""
    return PhyConfig.make(scheme="ddgauss", normalization="clip", clip_norm=1.0, g_th=g_th, ddgauss={"bits": 20, **own})


def _exact_sum_pmf(s: float, n: int, width: int) -> np.ndarray:
    """P[Σ_{k=1}^{n} N_ℤ(0, s²) = y] for |y| ≤ n·width by direct convolution of the pmf on [−width, width]."""
    p = discrete_gaussian_pmf(np.arange(-width, width + 1), s)
    out = p
    for _ in range(n - 1):
        out = np.convolve(out, p)
    return out


@pytest.mark.parametrize("s, n", [(0.8, 5), (2.5, 3), (6.0, 1)])
def test_summed_pmf_is_the_n_fold_convolution_truncated_where_stated(s, n):
    table = summed_discrete_gaussian(s, n)
    # T = ⌈s·√(2n·ln(2/ε))⌉, ε = 1e-13 (subgaussian tail of the sum, CKS 2020 Cor. 9)
    T = math.ceil(s * math.sqrt(2 * n * math.log(2 / 1e-13)))
    assert TAIL_MASS == 1e-13 and table.halfwidth == T
    width = T + 40  # each term's mass beyond T + 40 is < e^{-800}
    exact = _exact_sum_pmf(s, n, width)
    mid = exact.size // 2
    inside = exact[mid - T: mid + T + 1]
    assert 1.0 - inside.sum() <= 1e-13  # the mass left out is within the stated bound
    np.testing.assert_allclose(table.pmf, inside / inside.sum(), rtol=0, atol=1e-15)
    assert table.cdf[-1] == 1.0 and table.rounding_error < 1e-13


def test_summed_noise_agrees_with_the_per_client_sampler_chi2():
    """The sum of n per-client draws (the link-level sampler) and one draw from the sum's pmf have the same law.

    n = 10 shares at s = 1.5: the sum has std √10·1.5 ≈ 4.7. 200 000 draws each; bins: every integer with
    pooled count ≥ 10, tails merged into the outermost bins (≈ 33 bins). Two-sample χ² of homogeneity,
    Σ (a_i − b_i)²/(a_i + b_i) for equal sample sizes, df = bins − 1, rejected above the 0.999 quantile
    (fixed seeds: the test is deterministic; a wrong pmf, e.g. one share too many, shifts the variance by
    10 % and the statistic into the thousands)."""
    s, n, size = 1.5, 10, 200_000
    per_client = sum(sample_discrete_gaussian(stream(11, "test-share", j), s, (size,)) for j in range(n))
    summed = summed_discrete_gaussian(s, n).sample(stream(11, "test-sum"), size)
    lo, hi = -25, 25
    values = np.arange(lo, hi + 1)
    a = np.bincount(np.clip(per_client, lo, hi) - lo, minlength=values.size)
    b = np.bincount(np.clip(summed, lo, hi) - lo, minlength=values.size)
    keep = (a + b) >= 10
    first, last = np.flatnonzero(keep)[[0, -1]]
    a = np.concatenate([[a[: first + 1].sum()], a[first + 1: last], [a[last:].sum()]])
    b = np.concatenate([[b[: first + 1].sum()], b[first + 1: last], [b[last:].sum()]])
    stat = float(np.sum((a - b) ** 2 / (a + b)))
    df = a.size - 1
    assert stat <= stats.chi2.ppf(0.999, df), (stat, df)
    # and each matches the exact pmf of the sum (variance n·Var N_ℤ(0, s²)), within 4 standard errors
    var = n * discrete_gaussian_variance(s)
    for draws in (per_client, summed):
        assert np.var(draws) == pytest.approx(var, rel=4 * math.sqrt(2 / size))


def test_aggregate_does_not_depend_on_the_client_chunk():
    K, d = 7, 1000
    cfg = _dd(local_std=0.05, dropout=0.3)
    x = stream(2, "test-chunk-x").standard_normal((K, d)) * 0.1
    for traced in (False, True):
        results = []
        for chunk in (1, 3, 64):
            agg = DDGaussAggregator(cfg, K=K, d=d, seed=5, client_chunk=chunk)
            results.append(agg.aggregate_traced(x, round_index=4)[0] if traced else agg.aggregate(x, round_index=4))
        for r in results[1:]:
            np.testing.assert_array_equal(r.sum_estimate, results[0].sum_estimate)
            assert r.diagnostics == results[0].diagnostics
    with pytest.raises(ValueError, match="client_chunk"):
        DDGaussAggregator(cfg, K=K, d=d, seed=5, client_chunk=0)


def test_summed_and_per_client_noise_give_the_same_error_variance():
    """No signal (x = 0, so ũ = 0): the error is γ·R⁻¹(noise sum), of variance γ²·K·Var N_ℤ(0, (σ/γ)²) per
    coordinate on the d_pad rotated coordinates; both paths match it (d_pad·rounds = 2^14 coordinates,
    relative tolerance 4·√(2/2^14) = 4.4 %; one share more or less is 1/K = 12 %)."""
    K, d, gamma, sigma, rounds = 8, 1024, 0.01, 0.03, 16
    agg = DDGaussAggregator(_dd(grid=gamma, local_std=sigma), K=K, d=d, seed=1)
    x = np.zeros((K, d))
    per_coord = gamma**2 * K * discrete_gaussian_variance(sigma / gamma)
    for traced in (False, True):
        err = [(agg.aggregate_traced(x, round_index=t)[0] if traced else agg.aggregate(x, round_index=t)).sum_estimate
               for t in range(rounds)]
        mse = float(np.mean(np.square(err)))
        assert mse == pytest.approx(per_coord, rel=4 * math.sqrt(2 / (d * rounds)))


# ------------------------------------------------------------------ β = 0
def test_beta_zero_is_unconditional_rounding_with_the_worst_case_bound():
    from privacy.events import DDGaussRound

    c, gamma, d = 1.0, 0.05, 256
    assert rounding_norm_bound(clip=c, grid=gamma, d=d, beta=0.0) == pytest.approx(c / gamma + math.sqrt(d), rel=1e-15)
    assert DDGaussRound(n=10, d=200, clip=c, grid=gamma, local_std=1.0, beta=0.0).delta2 == pytest.approx(20.0 + 16.0)
    # the β → 0 limit of the conditional bound exceeds c/γ + √d, so the minimum is c/γ + √d there too
    assert rounding_norm_bound(clip=c, grid=gamma, d=d, beta=1e-300) == pytest.approx(36.0)
    # β = 0: Δ₂ = c/γ + √d_pad (d_pad = 128) and no attempt is ever redrawn
    agg = DDGaussAggregator(_dd(beta=0.0, local_std=0.01, grid=0.01), K=4, d=100, seed=0)
    assert agg.delta2 == pytest.approx(1.0 / 0.01 + math.sqrt(128))
    for t in range(3):
        assert agg.aggregate(stream(0, "b0").standard_normal((4, 100)), round_index=t).diagnostics["redraws"] == 0.0
    # RDP at β = 0 from the formula: σ/γ = 10 makes τ = 10·Σ exp(−2π²·100·k/(k+1)) < e^{-900}, so the three
    # bounds coincide at α·l₂²/2 with l₂ = γ·Δ₂/(√n·σ)
    ev = DDGaussRound(n=10, d=200, clip=c, grid=gamma, local_std=0.5, beta=0.0)
    l2 = gamma * 36.0 / (math.sqrt(10) * 0.5)
    np.testing.assert_allclose(ev.rdp(np.array([2.0, 8.0])), np.array([2.0, 8.0]) * l2**2 / 2, rtol=1e-12)
    with pytest.raises(ValueError, match="ddgauss.beta must be a number with 0 ≤ beta < 1"):
        _dd(beta=1.0).validate(K=3)
    with pytest.raises(ValueError, match="beta must be in"):
        DDGaussRound(n=1, d=1, clip=1.0, grid=1.0, local_std=1.0, beta=-0.1)


# ------------------------------------------------------------------ dropout after noising
def test_dropout_removes_the_lost_clients_vectors_and_noise_shares():
    K, d, gamma, sigma, f, rounds, seed = 10, 1024, 0.01, 0.03, 0.5, 12, 3
    agg = DDGaussAggregator(_dd(grid=gamma, local_std=sigma, dropout=f, g_th=0.3), K=K, d=d, seed=seed)
    sq, per_coord = [], []
    x = stream(3, "test-drop-x").standard_normal((K, d)) * 0.01
    for t in range(rounds):
        res = agg.aggregate(x, round_index=t)
        admitted = np.flatnonzero(np.abs(draw_rayleigh(seed, t, K=K)) ** 2 >= 0.3)
        n_drop = math.floor(f * admitted.size)
        lost = admitted[stream(seed, "ddgauss-dropout", t).permutation(admitted.size)[:n_drop]]
        survivors = np.setdiff1d(admitted, lost)
        assert res.contributors == survivors.size and res.diagnostics["dropped"] == n_drop
        # the decoder sees the survivors' sum; their shares were drawn at σ_k = σ·√(K/K′) before any was lost
        sq.append(np.sum((res.sum_estimate - x[survivors].sum(axis=0)) ** 2))
        scale = sigma * math.sqrt(K / admitted.size) / gamma
        # noise on d_pad = d coordinates plus the survivors' rounding variance, each ≤ γ²/4 per coordinate
        per_coord.append((survivors.size * gamma**2 * discrete_gaussian_variance(scale),
                          survivors.size * (gamma**2 * discrete_gaussian_variance(scale) + gamma**2 / 4)))
    lower, upper = (sum(v[i] for v in per_coord) * d for i in (0, 1))
    tol = 4 * math.sqrt(2 / (d * rounds))
    # counting the lost clients' shares too would double the noise energy (f = ½)
    assert lower * (1 - tol) <= float(np.sum(sq)) <= upper * (1 + tol)
    with pytest.raises(ValueError, match=r"ddgauss.dropout must be a number with 0 ≤ dropout < 1"):
        _dd(dropout=1.0).validate(K=3)


def test_dropout_accounting_uses_the_survivors_noise():
    """RDP with a noise fraction ρ = 1 − f: α·l₂²/2 with l₂ = γΔ₂/(√(ρn)·σ) (τ negligible at σ/γ = 10), i.e. the
    bound of a ρ-fold smaller noise variance: 1/(1 − f) times the bound without dropout."""
    from privacy import RunAccountant
    from privacy.events import DDGaussRound

    base = dict(n=20, d=200, clip=1.0, grid=0.05, local_std=0.5)
    full, half = DDGaussRound(**base), DDGaussRound(**base, noise_fraction=0.5)
    r = 1.0 / 0.05  # c/γ; d_pad = 256
    d2 = min(r + 16.0, math.sqrt(r**2 + 256 / 4 + math.sqrt(2 * 0.5) * (r + 8.0)))  # β = e^{-1/2}: √(2 ln 1/β) = 1
    alpha = np.array([2.0, 5.0])
    l2 = 0.05 * d2 / (math.sqrt(0.5 * 20) * 0.5)
    np.testing.assert_allclose(half.rdp(alpha), alpha * l2**2 / 2, rtol=1e-12)
    np.testing.assert_allclose(half.rdp(alpha), 2.0 * full.rdp(alpha), rtol=1e-12)
    params = dict(d=200, clip_norm=1.0, grid=0.05, local_std=0.5)
    e_full = RunAccountant("ddgauss", K=20, M=20, **params).epsilon(rounds=10)
    e_drop = RunAccountant("ddgauss", K=20, M=20, noise_fraction=0.8, **params).epsilon(rounds=10)
    assert e_drop > e_full


# ------------------------------------------------------------------ Poisson sampling, add/remove
def test_poisson_accounting_is_zhu_wang_general_bound_on_the_ddgauss_curve():
    """The source's amplified accounting (its §6: the generic bound of [ZW19] for DDGauss): Zhu & Wang 2019
    Thm 6 at integer α on the round's curve ε(l) = l·l₂²/2 (τ negligible at σ/γ = 10), q = K/M, computed here
    from the formula:
    ε'(α) = ln[(1−q)^{α−1}(αq − q + 1) + C(α,2)q²(1−q)^{α−2}e^{ε(2)} + 3Σ_{l=3}^{α} C(α,l)(1−q)^{α−l}q^l e^{(l−1)ε(l)}]/(α−1)."""
    from privacy import RunAccountant
    from privacy.accountant import event_rdp
    from privacy.events import DDGaussRound, PoissonSampled

    K, M, grid, sigma = 100, 3400, 0.05, 0.5
    ev = DDGaussRound(n=K, d=200, clip=1.0, grid=grid, local_std=sigma)
    l2 = grid * ev.delta2 / (math.sqrt(K) * sigma)
    q = K / M

    def eps(l):
        return l * l2**2 / 2

    for alpha in (2, 3, 8, 20):
        terms = [(1 - q) ** (alpha - 1) * (alpha * q - q + 1), math.comb(alpha, 2) * q**2 * (1 - q) ** (alpha - 2) * math.exp(eps(2))]
        terms += [3 * math.comb(alpha, l) * (1 - q) ** (alpha - l) * q**l * math.exp((l - 1) * eps(l)) for l in range(3, alpha + 1)]
        expected = min(math.log(sum(terms)) / (alpha - 1), eps(alpha))
        got = event_rdp(PoissonSampled(ev, rate=q), np.array([float(alpha)]))[0]
        assert got == pytest.approx(expected, rel=1e-9)
    params = dict(d=200, clip_norm=1.0, grid=grid, local_std=sigma)
    poisson = RunAccountant("ddgauss", K=K, M=M, relation="add-remove", sampling="poisson", **params)
    unsampled = RunAccountant("ddgauss", K=K, M=K, relation="add-remove", **params)
    assert 0 < poisson.epsilon(rounds=100) < unsampled.epsilon(rounds=100)
    assert any("Zhu & Wang" in line for line in poisson.report(rounds=1).assumptions)


def test_scenario_wiring_samples_without_replacement_and_passes_the_dropout_fraction():
    from scenarios.config.builtin_schemes import _ddgauss
    from types import SimpleNamespace

    phy = _dd(local_std=0.5, grid=0.05, dropout=0.25)
    cfg = SimpleNamespace(phy=phy, training=SimpleNamespace(clients_per_round=50),
                          partition=SimpleNamespace(clients=1000),
                          privacy=SimpleNamespace(level="client", relation="replace", delta=1e-5, accountant="rdp"))
    acc = _ddgauss(cfg, d=200, D=10)
    assert acc.sampling == "without-replacement" and acc.params["noise_fraction"] == 0.75


# ------------------------------------------------------------------ the optimistic norm bound
def test_optimistic_norm_bound_sets_the_grid_from_sqrt_n_c_and_wraps_aligned_sums():
    """γ = 2k·√(b²/d_pad + nσ²)/√(2^{2B} − k²n) with b = √n·c (optimistic) or n·c (general). Random directions
    (a sum of norm ≈ √n·c) stay inside the modulus at k = 4 (wrap probability ≤ 2·Q(4) = 6.3e-5 per
    coordinate); K identical vectors (norm n·c) wrap far more often under the optimistic bound."""
    from scipy.stats import norm

    from phy.digital.ddgauss import grid_from_bits

    K, d, c, B, k, sigma = 16, 1024, 1.0, 12, 4.0, 0.001
    opt = grid_from_bits(bits=B, n=K, d=d, clip=c, local_std=sigma, k_stddevs=k, norm_bound="optimistic")
    gen = grid_from_bits(bits=B, n=K, d=d, clip=c, local_std=sigma, k_stddevs=k)
    assert opt == pytest.approx(2 * k * math.sqrt(c**2 * K / d + K * sigma**2) / math.sqrt(4.0**B - k**2 * K), rel=1e-12)
    assert gen == pytest.approx(2 * k * math.sqrt(c**2 * K**2 / d + K * sigma**2) / math.sqrt(4.0**B - k**2 * K), rel=1e-12)
    cfg = _dd(bits=B, local_std=sigma, k_stddevs=k, norm_bound="optimistic")
    agg = DDGaussAggregator(cfg, K=K, d=d, seed=2)
    assert agg.grid == pytest.approx(opt, rel=1e-12)
    x = stream(4, "test-opt-x").standard_normal((K, d))  # norms ≈ 32 ≫ c: every client clipped to c
    wrapped = np.mean([agg.aggregate(x, round_index=t).diagnostics["wrapped_fraction"] for t in range(4)])
    assert wrapped <= 2 * norm.sf(k) + 4 * math.sqrt(2 * norm.sf(k) / (4 * d))
    same = np.repeat(x[:1], K, axis=0)  # aligned: the sum has norm K·c = √K = 4 times the optimistic bound
    wrapped_same = np.mean([agg.aggregate(same, round_index=t).diagnostics["wrapped_fraction"] for t in range(4)])
    # per-coordinate std of the rotated sum K·c/√d against the margin k·√K·c/√d: P[|Z| > k/√K = 1] = 0.317
    # (standard error √(0.32·0.68/4096) = 0.007); under the general bound the margin is k·K·c/√d: 2·Q(4)
    assert wrapped_same > 0.25
    with pytest.raises(ValueError, match="ddgauss.norm_bound must be one of"):
        _dd(norm_bound="tight").validate(K=3)
