"""sqSGD's options (model §9.3, docs/sqsgd.md): the ScalarDP norm report and the adaptive bound, local
accumulation with momentum correction and factor masking, the piecewise-mechanism baseline, their
validation and their privacy accounting."""

import math

import numpy as np
import pytest
from scipy.stats import binom, chisquare

from phy.config import PhyConfig
from phy.digital.piecewise import piecewise, piecewise_vector, pm_dimensions
from phy.digital.scalardp import scalardp
from phy.digital.sqsgd_state import ClientAccumulators
from phy.randomness import stream
from phy.schemes import make_aggregator


def sample_moments(z):
    """(mean, its standard error, variance, the variance's standard error) of i.i.d. draws z.

    SE of the sample variance: √((μ₄ − σ⁴)/N) to first order, μ₄ the fourth central moment (estimated)."""
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    mean, var = z.mean(), z.var(ddof=1)
    m4 = np.mean((z - mean) ** 4)
    return mean, math.sqrt(var / n), var, math.sqrt(max(m4 - var * var, 0.0) / n)


# ---------------------------------------------------------------- ScalarDP (phy/digital/scalardp.py)
def scalardp_moments(x, eps, k, r):
    """E[Z] and Var[Z] from the closed form of the module docstring (rounding J, then (k+1)-ary RR, then debias)."""
    pos = k * x / r
    lo = math.floor(pos)
    f = pos - lo
    ej, ej2 = pos, (1 - f) * lo**2 + f * (lo + 1) ** 2  # E[J], E[J²] of the stochastic rounding
    e = math.exp(eps)
    m1 = (ej * (e - 1) + k * (k + 1) / 2) / (e + k)
    m2 = (ej2 * (e - 1) + k * (k + 1) * (2 * k + 1) / 6) / (e + k)
    a = (e + k) / (e - 1)
    b = k * (k + 1) / (2 * (e - 1))
    return (r / k) * (a * m1 - b), (r / k) ** 2 * a**2 * (m2 - m1**2)


@pytest.mark.parametrize("x,eps,k", [(0.0, 1.0, 4), (0.3, 1.0, 4), (1.37, 4.0, 16), (2.0, 4.0, 16), (0.9, 12.0, 32)])
def test_scalardp_is_unbiased_with_the_variance_of_its_formula(x, eps, k):
    r, n = 2.0, 200_000
    z = scalardp(np.full(n, x), epsilon=eps, levels=k, r_max=r, rng=stream(3, "test-scalardp", k))
    mean, se, var, se_var = sample_moments(z)
    want_mean, want_var = scalardp_moments(x, eps, k, r)
    assert want_mean == pytest.approx(x, abs=1e-12)  # the formula's own unbiasedness (a, b as in the docstring)
    assert abs(mean - x) <= 5 * se
    assert abs(var - want_var) <= 5 * se_var


def test_scalardp_on_the_grid_is_k_plus_one_ary_randomized_response():
    # x = 3·r/k: J = 3 exactly; P(Ĵ = 3) = e^ε/(e^ε + k), every other value 1/(e^ε + k): ratio e^ε (ε-LDP)
    eps, k, r, n = 1.5, 6, 1.0, 60_000
    z = scalardp(np.full(n, 3 * r / k), epsilon=eps, levels=k, r_max=r, rng=stream(4, "test-scalardp-rr"))
    a = (math.exp(eps) + k) / (math.expm1(eps))
    b = k * (k + 1) / (2 * math.expm1(eps))
    j_hat = np.rint((z * k / r + b) / a).astype(int)
    counts = np.bincount(j_hat, minlength=k + 1)
    probs = np.full(k + 1, 1.0 / (math.exp(eps) + k))
    probs[3] = math.exp(eps) / (math.exp(eps) + k)
    assert counts.size == k + 1 and chisquare(counts, n * probs).pvalue > 1e-3


# ---------------------------------------------------------------- the piecewise mechanism (phy/digital/piecewise.py)
@pytest.mark.parametrize("t,eps", [(-1.0, 0.5), (-0.4, 2.5), (0.0, 2.5), (0.7, 8.0), (1.0, 1.0)])
def test_piecewise_mechanism_is_unbiased_with_wangs_variance(t, eps):
    n = 200_000
    z = piecewise(np.full(n, t), epsilon=eps, rng=stream(5, "test-pm", int(10 * eps)))
    e2 = math.exp(eps / 2)
    c = (e2 + 1) / (e2 - 1)
    left = (c + 1) / 2 * t - (c - 1) / 2
    assert np.all(np.abs(z) <= c)
    # the centre piece [ℓ(t), ℓ(t) + C − 1] carries e^{ε/2}/(e^{ε/2} + 1); binomial SE
    p_centre = e2 / (e2 + 1)
    inside = np.mean((z >= left) & (z <= left + c - 1))
    assert abs(inside - p_centre) <= 5 * math.sqrt(p_centre * (1 - p_centre) / n)
    mean, se, var, se_var = sample_moments(z)
    assert abs(mean - t) <= 5 * se
    assert abs(var - (t * t / (e2 - 1) + (e2 + 3) / (3 * (e2 - 1) ** 2))) <= 5 * se_var


def test_multidimensional_pm_splits_the_budget_over_floor_eps_over_2_5_coordinates():
    d, eps, draws = 20, 10.0, 40_000
    k = pm_dimensions(eps, d)
    assert k == 4 and pm_dimensions(2.0, d) == 1 and pm_dimensions(1000.0, d) == d
    t = np.linspace(-0.9, 0.9, d)
    rng = stream(6, "test-pm-vector")
    est = np.array([piecewise_vector(t, epsilon=eps, coords=np.sort(rng.choice(d, k, replace=False)), rng=rng)
                    for _ in range(draws)])
    e2 = math.exp(eps / k / 2)
    v1 = t * t / (e2 - 1) + (e2 + 3) / (3 * (e2 - 1) ** 2)  # per-coordinate PM variance with ε/k
    want_var = (d / k) * (v1 + t * t) - t * t
    se = est.std(axis=0, ddof=1) / math.sqrt(draws)
    assert np.all(np.abs(est.mean(axis=0) - t) <= 5 * se)
    # sample variance within 5 SE; |t*_j| ≤ (d/k)·C bounds μ₄, but the estimated μ₄ is the tighter SE
    for j in range(d):
        _, _, var, se_var = sample_moments(est[:, j])
        assert abs(var - want_var[j]) <= 5 * se_var


# ---------------------------------------------------------------- configuration
def sq_config(**own):
    base = dict(scheme="sqsgd", normalization="clip", clip_norm=2.0, C=2.0, snr_db=30.0, g_th=1e-6)
    return PhyConfig.make(**base, sqsgd={"levels": 2, "ratio": 1.0, "epsilon0": 4.0, **own})


@pytest.mark.parametrize("own,match", [
    (dict(norm_bound="shrink"), r"sqsgd.norm_bound must be one of"),
    (dict(epsilon_s=0.0), r"sqsgd.epsilon_s must be a finite number > 0"),
    (dict(norm_levels=0), r"sqsgd.norm_levels must be an integer ≥ 1"),
    (dict(momentum=1.0), r"sqsgd.momentum must be a number in \[0, 1\)"),
    (dict(accumulation=1), r"sqsgd.accumulation must be true or false"),
    (dict(mechanism="vq"), r"sqsgd.mechanism must be one of"),
    (dict(accumulation=True), r"sqsgd.accumulation = true .* set sqsgd.estimator = \"sparse\""),
    (dict(mechanism="pm", norm_bound="adaptive"), r"sqsgd.norm_bound = 'adaptive' applies to mechanism"),
    (dict(mechanism="pm", accumulation=True, estimator="sparse"), r"sqsgd.accumulation = True applies to mechanism"),
])
def test_bad_options_are_one_line_errors_naming_the_key(own, match):
    with pytest.raises(ValueError, match=match) as info:
        sq_config(**own).validate(K=4, d=16)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- the adaptive bound (aggregator)
def difference_updates(scales, d, j, l):
    """x_k = c_k·(e_j − e_l): zero mean, so s_k = (C/R)·x_k when ‖x_k‖ ≤ R, and any rotation
    R = H·A/√n maps it to entries in {0, ±2c_k(C/R)/√n}: ‖y_k‖∞ = 2·c_k·(C/R)/√n whatever the signs."""
    x = np.zeros((len(scales), d))
    x[:, j], x[:, l] = scales, -np.asarray(scales)
    return x


def test_adaptive_bound_is_the_largest_norm_report_never_increasing():
    K, d, C, R, k = 4, 64, 2.0, 2.0, 1000
    cfg = sq_config(norm_bound="adaptive", epsilon_s=200.0, norm_levels=k)  # ε_s = 200: no RR flip, Z = rounded ‖y‖∞
    agg = make_aggregator(cfg, K=K, d=d, seed=21)
    scales = np.array([0.1, 0.4, 0.25, 0.05])
    res0 = agg.aggregate(difference_updates(scales, d, 3, 40), round_index=0)
    assert res0.contributors == K and res0.diagnostics["bound_U"] == C  # U_0 = C
    peak = 2 * scales.max() * (C / R) / math.sqrt(d)  # max_k ‖y_k‖∞ = 0.1
    res1 = agg.aggregate(difference_updates(scales / 4, d, 3, 40), round_index=1)
    assert abs(res1.diagnostics["bound_U"] - peak) <= C / k  # rounding to the grid of step C/k
    res2 = agg.aggregate(difference_updates(scales * 4, d, 3, 40), round_index=2)  # larger reports: U does not grow
    assert abs(res2.diagnostics["bound_U"] - peak / 4) <= C / k
    assert agg.aggregate(difference_updates(scales, d, 3, 40), round_index=3).diagnostics["bound_U"] == \
        res2.diagnostics["bound_U"]
    res_tiny = agg.aggregate(difference_updates(scales * 1e-6, d, 3, 40), round_index=4)
    agg.aggregate(difference_updates(scales, d, 3, 40), round_index=5)
    assert agg.bound_t == pytest.approx(C / k)  # the floor: one step of the report's grid
    assert res_tiny.diagnostics["bound_U"] <= res2.diagnostics["bound_U"]
    with pytest.raises(ValueError, match=r"keep state across rounds .* round 7 came after round 5"):
        agg.aggregate(difference_updates(scales, d, 3, 40), round_index=7)


def test_adaptive_bound_quantizes_on_the_shrunk_range():
    # K_q = 2, r = 1, d = n: every level is ±U/m, so ‖z_k‖² = n·U_t²/m² exactly and the error energy of one
    # client is E‖z_k − y_k‖² = n·U_t²/m² − ‖y_k‖² (unbiased, no clipping since ‖y_k‖∞ ≤ ‖s_k‖ ≤ U_t/2);
    # independent clients add. m from model §9.3's closed form at κ = 0 (t = n/2 + 1).
    K, d, C, R, eps0, rounds = 6, 64, 2.0, 2.0, 40.0, 150
    cfg = sq_config(norm_bound="adaptive", epsilon_s=200.0, norm_levels=2000, epsilon0=eps0, kappa=0)
    agg = make_aggregator(cfg, K=K, d=d, seed=22)
    t_thr = d // 2 + 1
    em1 = math.expm1(eps0)
    m = em1 * t_thr * binom.pmf(t_thr, d, 0.5) / (d * (1 + em1 * binom.sf(t_thr - 1, d, 0.5)))
    rng = stream(7, "test-adaptive-x")
    ratios, shrink = [], []
    agg.aggregate(difference_updates(np.full(K, 0.3), d, 0, 1), round_index=0)
    for t in range(1, rounds):
        u_t = agg.bound_t
        x = rng.standard_normal((K, d))
        x -= x.mean(axis=1, keepdims=True)
        x *= (u_t / 2) * (R / C) / np.linalg.norm(x, axis=1, keepdims=True)  # ‖s_k‖ = U_t/2, inside the clip
        res = agg.aggregate(x, round_index=t)
        assert res.diagnostics["bound_U"] == u_t
        err_s = (res.sum_estimate - x.sum(axis=0)) * (C / R)  # back to transmit units
        predicted = K * (d * u_t**2 / m**2 - (u_t / 2) ** 2)
        ratios.append(float(err_s @ err_s) / predicted)
        shrink.append(u_t / C)
    ratios = np.array(ratios)
    assert abs(ratios.mean() - 1) <= 5 * ratios.std(ddof=1) / math.sqrt(ratios.size)
    assert shrink[-1] < 0.05  # the bound did shrink (with the fixed bound the ratio would be (C/U_t)² > 400)


# ---------------------------------------------------------------- accumulation
def test_momentum_correction_and_factor_masking_follow_the_update_rules():
    acc = ClientAccumulators(4, momentum=0.5)
    x1, x2 = np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, 0.0, 1.0, 2.0])
    v = acc.accumulate([7], x1[None, :])
    np.testing.assert_array_equal(v[0], x1)  # u = x1, v = x1
    acc.mask(7, np.array([1, 3]), mu=2.5)
    u, v = acc.state(7)
    np.testing.assert_array_equal(u, [1.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(v, [1.0 - 2.5, 0.0, 3.0 - 2.5, 0.0])
    v2 = acc.accumulate([7], x2[None, :])[0]
    u_want = 0.5 * np.array([1.0, 0.0, 3.0, 0.0]) + x2
    np.testing.assert_allclose(v2, np.array([-1.5, 0.0, 0.5, 0.0]) + u_want)
    assert 7 in acc and 8 not in acc and len(acc) == 1


def test_accumulating_aggregator_keeps_state_per_client_id_and_needs_ids():
    K, d, M = 3, 32, 1000
    cfg = sq_config(accumulation=True, estimator="sparse", ratio=0.25, momentum=0.9, epsilon0=8.0)
    agg = make_aggregator(cfg, K=K, d=d, seed=23)
    x = stream(8, "test-acc-x").standard_normal((K, d)) * 0.05  # inside the clip norm
    with pytest.raises(ValueError, match=r"accumulation = true keeps each client's residual under its id"):
        agg.aggregate(x, round_index=0)
    ids = np.array([5, 912, 40])
    agg = make_aggregator(cfg, K=K, d=d, seed=23)
    agg.aggregate(x, round_index=0, clients=ids)
    assert len(agg.accumulators) == K and all(int(c) in agg.accumulators for c in ids)
    for k, c in enumerate(ids):  # after round 0: v = x, cleared on the public coordinates, mean removed elsewhere
        coords = np.sort(stream(23, "sqsgd-coordinates", 0, k).choice(d, size=8, replace=False))
        want = x[k] - x[k].mean()
        want[coords] = 0.0
        np.testing.assert_allclose(agg.accumulators.state(int(c))[1], want, atol=1e-15)
    agg.aggregate(x, round_index=1, clients=np.array([5, 6, 7]))
    assert len(agg.accumulators) == 5 < M  # only the clients seen are held


# ---------------------------------------------------------------- the PM variant in the aggregator
def test_pm_variant_is_unbiased_and_sends_k_floats():
    K, d, eps0, rounds = 3, 12, 10.0, 500
    cfg = sq_config(mechanism="pm", epsilon0=eps0)
    agg = make_aggregator(cfg, K=K, d=d, seed=24)
    assert agg.bits == 4 * 32 + 32  # k = ⌊10/2.5⌋ values of 32 bits and the public 32-bit seed
    x = stream(9, "test-pm-agg").standard_normal((K, d))
    x -= x.mean(axis=1, keepdims=True)
    x *= 1.5 / np.linalg.norm(x, axis=1, keepdims=True)  # ‖x_k‖ = 1.5 < R = 2
    diffs = np.array([agg.aggregate(x, round_index=t).sum_estimate - x.sum(axis=0) for t in range(rounds)])
    se = diffs.std(axis=0, ddof=1) / math.sqrt(rounds)
    assert np.all(np.abs(diffs.mean(axis=0)) <= 5 * se)


# ---------------------------------------------------------------- privacy accounting of the adaptive bound
def rr_rdp(alpha, eps):
    p = math.exp(eps) / (1.0 + math.exp(eps))
    return math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def test_adaptive_bound_composes_eps_s_into_the_per_round_budget():
    from privacy import RunAccountant, event_rdp
    from privacy.mechanisms.ldp import round_event
    from scenarios.config import scenario_from_dict

    e0, es, T = 2.0, 0.5, 7
    base = {"partition": {"clients": 10}, "training": {"clients_per_round": 10},
            "phy": {"scheme": "sqsgd", "normalization": "clip", "clip_norm": 1.0,
                    "sqsgd": {"epsilon0": e0, "epsilon_s": es}}}
    fixed = scenario_from_dict(base).privacy_accountant(d=100, D=30)
    adaptive_cfg = {**base, "phy": {**base["phy"], "sqsgd": {"epsilon0": e0, "epsilon_s": es, "norm_bound": "adaptive"}}}
    adaptive = scenario_from_dict(adaptive_cfg).privacy_accountant(d=100, D=30)
    # ε_s is spent only by the adaptive bound; then the round is RR(ε₀) ∘ RR(ε_s), RDP adding order by order
    assert fixed.epsilon(rounds=T) == RunAccountant("ldp", K=10, M=10, epsilon0=e0, delta=1e-5).epsilon(rounds=T)
    assert adaptive.epsilon(rounds=T) == RunAccountant("ldp", K=10, M=10, epsilon0=e0, epsilon_s=es,
                                                       delta=1e-5).epsilon(rounds=T)
    orders = np.array([1.5, 2.0, 8.0, 32.0])
    curve = event_rdp(round_event({"epsilon0": e0, "epsilon_s": es}, K=10, relation="replace").event, orders)
    np.testing.assert_allclose(curve, [rr_rdp(a, e0) + rr_rdp(a, es) for a in orders], rtol=1e-12)
    assert fixed.epsilon(rounds=T) < adaptive.epsilon(rounds=T) < fixed.epsilon(rounds=T) + T * es + 1e-9
    assert any("ε_s = 0.5" in line for line in adaptive.report(rounds=T).assumptions)
