"""Private aggregation baselines (model §9.1, §9.2) against closed forms from the raw configuration."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from phy.schemes import make_aggregator
from phy.config import PhyConfig
from phy.digital.discrete_gaussian import discrete_gaussian_variance
from phy.fading import draw_rayleigh
from phy.randomness import stream


def _x(K, d, t=0, scale=1.0):
    return scale * stream(0, "test-baselines", t).standard_normal((K, d))


def _small(K, d, R, t=0):
    """Updates whose centred norms are below R (no clipping): x̂ − Σ x is pure noise."""
    x = _x(K, d, t)
    x -= x.mean(axis=1, keepdims=True)
    return x * (0.5 * R / np.linalg.norm(x, axis=1, keepdims=True))


# ------------------------------------------------------------------ central Gaussian
@pytest.mark.parametrize("relation, factor", [("replace", 2.0), ("add-remove", 1.0)])
def test_central_gaussian_noise_variance(relation, factor):
    K, d, R, z, rounds = 5, 4096, 3.0, 0.7, 25
    cfg = PhyConfig.make(scheme="central-gaussian", normalization="clip", clip_norm=R, **{"central-gaussian": {"noise_multiplier": z}})
    agg = make_aggregator(cfg, K=K, d=d, seed=1, relation=relation)
    x = _small(K, d, R)
    err = np.concatenate([agg.aggregate(x, round_index=t).sum_estimate - x.sum(axis=0) for t in range(rounds)])
    # std z·S in s units, S = 2C or C, and x̂ = (R/C)·ŝ: z·2R or z·R in model units, whatever C
    predicted = (z * factor * R) ** 2
    assert np.var(err) / predicted == pytest.approx(1.0, abs=4 * math.sqrt(2 / err.size))


# ------------------------------------------------------------------ analog Gaussian
def _receiver_variance(snr_db, P, L, resource):
    sigma2 = P / 10 ** (snr_db / 10)
    return sigma2 / L if resource == "equal" else sigma2


@pytest.mark.parametrize("resource", ["equal", "source-literal"])
@pytest.mark.parametrize("rule", ["threshold", "min-admitted"])
@pytest.mark.parametrize("snr_db, z", [(20.0, 0.05), (-10.0, 0.001)])  # target dominates / receiver dominates
def test_analog_gaussian_total_noise_variance(resource, rule, snr_db, z):
    K, d, R, P, L, g_th, C, rounds = 6, 2048, 2.0, 1.5, 16, 0.05, 4.0, 30
    cfg = PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=R, snr_db=snr_db, power=P, L=L, g_th=g_th, C=C, resource=resource, rho_rule=rule, **{"analog-gaussian": {"noise_multiplier": z}})
    agg = make_aggregator(cfg, K=K, d=d, seed=2)
    x = _small(K, d, R)
    target = (z * 2 * C) ** 2
    rx = _receiver_variance(snr_db, P, L, resource)
    measured, predicted = [], []
    for t in range(rounds):
        res = agg.aggregate(x, round_index=t)
        gain = np.abs(draw_rayleigh(2, t, K=K)) ** 2
        adm = gain >= g_th
        rho = g_th if rule == "threshold" else gain[adm].min()
        e = (res.sum_estimate - x[adm].sum(axis=0)) * (C / R)  # back to ŝ units
        measured.append(np.mean(e**2))
        predicted.append(max(target, rx / rho))  # receiver noise + artificial noise reach the target, or exceed it
        assert res.diagnostics["receiver_noise_exceeds_target"] == float(rx / rho > target)
    ratio = np.sum(measured) / np.sum(predicted)
    assert ratio == pytest.approx(1.0, abs=0.05)
    assert ratio == pytest.approx(1.0, abs=4 * math.sqrt(2 / (d * rounds)))


# ------------------------------------------------------------------ DDGauss
def _dd(**kw):
    """A DDGauss configuration; ``bits``, ``grid``, ``local_std``, ``beta``, ``k_stddevs`` go to [phy.ddgauss]."""
    own = {"bits": 20}
    for key in ("bits", "grid", "local_std", "beta", "k_stddevs"):
        if key in kw:
            own[key] = kw.pop(key)
    return PhyConfig.make(**{"scheme": "ddgauss", "normalization": "clip", "clip_norm": 1.0, "g_th": 1e-9, **kw,
                             "ddgauss": own})


def test_ddgauss_mse_matches_noise_plus_rounding_when_nothing_wraps():
    K, d, gamma, sigma, rounds = 8, 1024, 0.01, 0.04, 30  # d = d_pad: the rotation is a true rotation of R^d
    agg = make_aggregator(_dd(clip_norm=1.0, grid=gamma, local_std=sigma), K=K, d=d, seed=3)
    x = _small(K, d, 1.0)
    mse = []
    for t in range(rounds):
        res = agg.aggregate(x, round_index=t)
        assert res.contributors == K and res.diagnostics["wrapped_fraction"] == 0.0
        mse.append(np.sum((res.sum_estimate - x.sum(axis=0)) ** 2))
    mse = float(np.mean(mse))
    # E‖err‖² = γ²·(d·n·Var N_ℤ(0,(σ/γ)²) + Σ rounding variances), each rounding variance in [0, 1/4]
    lower = d * K * gamma**2 * discrete_gaussian_variance(sigma / gamma)
    upper = d * K * (gamma**2 * discrete_gaussian_variance(sigma / gamma) + gamma**2 / 4)
    assert upper <= d * K * (sigma**2 + gamma**2 / 4)  # the closed form d·n·(σ² + γ²/4) bounds it
    tol = 4 * math.sqrt(2 / (d * rounds))
    assert lower * (1 - tol) <= mse <= upper * (1 + tol)


def test_ddgauss_zero_noise_reconstructs_the_clipped_sum_up_to_rounding():
    K, d, c = 5, 300, 2.0
    agg = make_aggregator(_dd(clip_norm=c, bits=30), K=K, d=d, seed=4)
    x = _x(K, d, scale=1.0)  # norms ≈ √300 ≫ c: every client is clipped
    mu = x.mean(axis=1, keepdims=True)
    v = x - mu
    clipped = v * np.minimum(1.0, c / np.linalg.norm(v, axis=1, keepdims=True)) + mu
    res = agg.aggregate(x, round_index=0)
    gamma = res.diagnostics["grid"]
    # every coordinate of every client is off by less than one grid step: ‖err‖ ≤ K·γ·√d_pad
    err = np.linalg.norm(res.sum_estimate - clipped.sum(axis=0))
    assert err <= K * gamma * math.sqrt(512)
    assert err / np.linalg.norm(clipped.sum(axis=0) - mu.sum()) < 1e-6


def test_ddgauss_grid_from_the_bit_budget_and_wrapping():
    K, d, c, sigma, B, k = 10, 1024, 0.01, 1.0, 12, 4.0
    # 2^B = 2k·√(c²n²/d + (γ²/4 + σ²)n)/γ solved for γ with n = K
    gamma = 2 * k * math.sqrt(c**2 * K**2 / d + K * sigma**2) / math.sqrt(4.0**B - k**2 * K)
    assert (2 * k * math.sqrt(c**2 * K**2 / d + (gamma**2 / 4 + sigma**2) * K) / gamma) == pytest.approx(2.0**B)
    agg = make_aggregator(_dd(clip_norm=c, bits=B, local_std=sigma, k_stddevs=k), K=K, d=d, seed=5)
    x = _small(K, d, c)
    fr = [agg.aggregate(x, round_index=t).diagnostics for t in range(10)]
    assert fr[0]["grid"] == pytest.approx(gamma, rel=1e-12)
    # the noise dominates: the sum has std at most √n·√(σ² + γ²/4), kept k std inside half the modulus,
    # so a coordinate wraps with probability at most 2·Q(k) (6.3e-5 at k = 4)
    wf = np.mean([f["wrapped_fraction"] for f in fr])
    n_coords = 10 * d
    assert wf <= 2 * norm.sf(k) + 4 * math.sqrt(2 * norm.sf(k) / n_coords)
    # at k = 1 about 2·Q(1) = 31.7 % wrap (a little less: the rounding variance is below γ²/4)
    agg1 = make_aggregator(_dd(clip_norm=c, bits=B, local_std=sigma, k_stddevs=1.0), K=K, d=d, seed=5)
    wf1 = np.mean([agg1.aggregate(x, round_index=t).diagnostics["wrapped_fraction"] for t in range(10)])
    se = math.sqrt(0.32 * 0.68 / n_coords)
    assert 2 * norm.sf(1.0) - 0.02 - 4 * se <= wf1 <= 2 * norm.sf(1.0) + 4 * se


def test_ddgauss_default_k_wraps_nothing_on_link_vectors():
    K, d = 20, 2000
    agg = make_aggregator(_dd(clip_norm=50.0, bits=16, local_std=0.1, g_th=0.01), K=K, d=d, seed=0)
    for t in range(5):
        res = agg.aggregate(_x(K, d, t), round_index=t)
        assert res.diagnostics["wrapped_fraction"] == 0.0


def test_wrap_mod_is_the_centred_residue():
    """wrap_mod(v, B) ≡ v (mod 2^B) and lies in [−2^{B−1}, 2^{B−1}), negatives and the int64 range included."""
    from phy.digital.ddgauss import wrap_mod

    rng = np.random.default_rng(7)
    for bits in (1, 8, 16, 48):
        m, half = 1 << bits, 1 << (bits - 1)
        v = np.concatenate([rng.integers(-(1 << 60), 1 << 60, size=5000), np.arange(-2 * m, 2 * m + 1, max(1, m // 64)),
                            [half - 1, half, -half, -half - 1]])
        w = wrap_mod(v, bits)
        assert w.min() >= -half and w.max() < half
        assert np.all((v - w) % m == 0)
        assert np.array_equal(w, np.array([((int(x) + half) % m) - half for x in v]))


def test_ddgauss_channel_uses_and_contributors_follow_the_digital_uplink():
    K, d, B, snr_db, g_th = 12, 700, 10, 5.0, 0.5
    agg = make_aggregator(_dd(bits=B, snr_db=snr_db, g_th=g_th, local_std=0.1), K=K, d=d, seed=6)
    for t in range(6):
        res = agg.aggregate(_x(K, d, t), round_index=t)
        gain = np.abs(draw_rayleigh(6, t, K=K)) ** 2
        adm = gain >= g_th
        rates = 0.5 * np.log2(1 + gain[adm] * 10 ** (snr_db / 10))
        assert res.contributors == adm.sum()
        assert res.diagnostics["bits_per_client"] == 1024 * B
        assert res.diagnostics["channel_uses"] == np.sum(np.ceil(1024 * B / rates))
        # each admitted client scales its noise so the aggregate equals K clients' at σ
        assert res.diagnostics["local_std_per_client"] == pytest.approx(0.1 * math.sqrt(K / adm.sum()))


# ------------------------------------------------------------------ all private baselines
def _configs():
    return {
        "central-gaussian": PhyConfig.make(scheme="central-gaussian", normalization="clip", clip_norm=2.0, **{"central-gaussian": {"noise_multiplier": 0.3}}),
        "analog-gaussian": PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=2.0, rho_rule="min-admitted", **{"analog-gaussian": {"noise_multiplier": 0.3}}),
        "ddgauss": _dd(clip_norm=2.0, bits=14, local_std=0.05, g_th=0.01),
        "channel-inversion": PhyConfig(scheme="channel-inversion", normalization="clip", clip_norm=2.0, snr_db=0.0),
    }


# FLORAS is not in the list: its Cauchy error has no mean (model §6.1), so "unbiased" has no meaning there
@pytest.mark.parametrize("scheme", ["central-gaussian", "analog-gaussian", "ddgauss", "channel-inversion"])
def test_unbiased(scheme):
    K, d, rounds = 6, 256, 60
    agg = make_aggregator(_configs()[scheme], K=K, d=d, seed=7)
    x = _x(K, d) * 0.05  # below the clip norm
    u = stream(0, "test-direction").standard_normal(d)
    u /= np.linalg.norm(u)
    proj = []
    for t in range(rounds):
        res = agg.aggregate(x, round_index=t)
        gain = np.abs(draw_rayleigh(7, t, K=K)) ** 2
        target = x.sum(axis=0) if scheme == "central-gaussian" else x[gain >= 0.01].sum(axis=0)
        proj.append(float(u @ (res.sum_estimate - target)))
    proj = np.asarray(proj)
    assert abs(proj.mean()) <= 4 * proj.std(ddof=1) / math.sqrt(rounds)


@pytest.mark.parametrize("scheme", ["central-gaussian", "analog-gaussian", "ddgauss"])
def test_deterministic_and_chunk_independent(scheme):
    K, d = 4, 9000
    x = _x(K, d)
    cfg = _configs()[scheme]
    a = make_aggregator(replace(cfg, chunk_size=4096), K=K, d=d, seed=8).aggregate(x, round_index=3)
    b = make_aggregator(replace(cfg, chunk_size=65536), K=K, d=d, seed=8).aggregate(x, round_index=3)
    c = make_aggregator(cfg, K=K, d=d, seed=9).aggregate(x, round_index=3)
    np.testing.assert_array_equal(a.sum_estimate, b.sum_estimate)
    assert a.diagnostics == b.diagnostics
    assert not np.array_equal(a.sum_estimate, c.sum_estimate)


@pytest.mark.parametrize("resource", ["equal", "source-literal"])
def test_channel_uses_of_the_analog_schemes(resource):
    K, d, L = 5, 300, 16
    x = _x(K, d)
    base = dict(normalization="clip", clip_norm=1.0, L=L, resource=resource, floras={"N": 8},
                **{"central-gaussian": {"noise_multiplier": 0.1}, "analog-gaussian": {"noise_multiplier": 0.1}})
    per_symbol = L if resource == "equal" else 1
    expected = {"floras": (d + 1) * L, "channel-inversion": d * per_symbol, "ideal": d * per_symbol,
                "central-gaussian": d * per_symbol, "analog-gaussian": d * per_symbol}
    for scheme, uses in expected.items():
        agg = make_aggregator(PhyConfig.make(scheme=scheme, **base), K=K, d=d, seed=0, key=bytes(16))
        assert agg.aggregate(x, round_index=0).diagnostics["channel_uses"] == uses, scheme


def test_validation_names_the_key():
    with pytest.raises(ValueError, match="normalization must be 'clip'.*public clip norm"):
        PhyConfig(scheme="ddgauss", normalization="paper").validate(K=3)
    with pytest.raises(ValueError, match="^central-gaussian.noise_multiplier must be set"):
        PhyConfig(scheme="central-gaussian", normalization="clip", clip_norm=1.0).validate(K=3)
    with pytest.raises(ValueError, match="^analog-gaussian.noise_multiplier must be a finite number ≥ 0"):
        PhyConfig.make(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, **{"analog-gaussian": {"noise_multiplier": -1.0}}).validate(K=3)
    with pytest.raises(ValueError, match="^ddgauss.bits must be an integer with 2 ≤ bits ≤ 48"):
        _dd(bits=64).validate(K=3)
    with pytest.raises(ValueError, match="^ddgauss.beta"):
        _dd(beta=1.0).validate(K=3)
    with pytest.raises(ValueError, match="^dd_bits must satisfy"):
        _dd(bits=2, k_stddevs=4.0).validate(K=3)
    with pytest.raises(ValueError, match="^ddgauss.local_std"):
        _dd(local_std=-0.1).validate(K=3)


def test_conditional_rounding_redraws_until_the_bound_holds():
    from phy.digital.ddgauss import conditional_rounding, rounding_norm_bound

    # u = ½·1 in R^101: ũ ∈ {0,1}^101 and ‖ũ‖² ~ Binomial(101, ½); with bound² = 50.5 an attempt passes
    # with probability exactly ½, so the redraws are geometric with mean 1/p − 1 = 1 and variance (1 − p)/p² = 2
    n, calls = 101, 400
    redraws = []
    for c in range(calls):
        v, r = conditional_rounding(np.full(n, 0.5), bound=math.sqrt(50.5), seed=0, round_index=0, client=c)
        assert set(np.unique(v)) <= {0, 1} and v @ v <= 50.5
        redraws.append(r)
    assert np.mean(redraws) == pytest.approx(1.0, abs=4 * math.sqrt(2 / calls))
    # Δ₂ of the source's reference point (c = 10, γ = 0.05, d = 256, β = e^{-1/2}): 200.679
    assert rounding_norm_bound(clip=10, grid=0.05, d=256, beta=math.exp(-0.5)) == pytest.approx(200.679, abs=5e-4)


def test_analog_guaranteed_noise_std_from_raw_numbers():
    from phy.analog_gaussian import guaranteed_noise_std

    base = dict(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, power=2.0, L=8, g_th=0.02)
    d = 50
    C = math.sqrt(d * 2.0)
    # 0 dB, equal resource: σ_n² = P/L = 0.25 → σ_n/√g_th = √12.5 = 3.54 exceeds z·2C = 0.01·2·10 = 0.2
    cfg = PhyConfig.make(**base, snr_db=0.0, **{"analog-gaussian": {"noise_multiplier": 0.01}})
    assert guaranteed_noise_std(cfg, d=d, relation="replace") == pytest.approx(math.sqrt(2.0 / 8 / 0.02))
    cfg = PhyConfig.make(**base, snr_db=30.0, **{"analog-gaussian": {"noise_multiplier": 0.5}})
    assert guaranteed_noise_std(cfg, d=d, relation="add-remove") == pytest.approx(0.5 * C)
    cfg = PhyConfig.make(**base, snr_db=0.0, rho_rule="min-admitted", **{"analog-gaussian": {"noise_multiplier": 0.01}})
    assert guaranteed_noise_std(cfg, d=d, relation="replace") == pytest.approx(0.01 * 2 * C)
