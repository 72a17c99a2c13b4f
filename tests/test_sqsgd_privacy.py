"""sqSGD privacy, mechanism side (model §9.3): the exact Rényi divergences of PrivQuant never exceed
binary randomized response's with the same ε₀, and reach it (n = 1, K_q = 2), so the RR curve is
the tightest per-round RDP valid for every configuration."""

import itertools
import math

import numpy as np
import pytest

from phy.digital.privquant import privquant_log_prob

ORDERS = (1.5, 2.0, 3.0, 8.0, 32.0)


def rr_rdp(alpha, eps):
    """D_α(RR(0) ‖ RR(1)) with P(truth) = e^ε/(1 + e^ε), from its definition (Mironov 2017, Prop. 5)."""
    p = math.exp(eps) / (1.0 + math.exp(eps))
    return math.log(p**alpha * (1 - p) ** (1 - alpha) + (1 - p) ** alpha * p ** (1 - alpha)) / (alpha - 1)


def worst_divergence(n, K, eps, kappa, alpha):
    inputs = np.array(list(itertools.product(range(K), repeat=n)))
    logp = np.array([privquant_log_prob(inputs, v, levels=K, epsilon0=eps, kappa=kappa) for v in inputs])
    worst = -np.inf
    for i in range(len(inputs)):
        for j in range(len(inputs)):
            if i != j:  # D_α(P‖Q) = ln Σ_u P^α Q^{1−α} / (α − 1)
                s = np.logaddexp.reduce(alpha * logp[i] + (1 - alpha) * logp[j])
                worst = max(worst, s / (alpha - 1))
    return worst


@pytest.mark.parametrize("n,K,kappa", [(1, 2, 0), (2, 3, 0), (3, 2, -1), (3, 3, 1)])
def test_privquant_rdp_is_at_most_randomized_response(n, K, kappa):
    eps = 1.7
    for alpha in ORDERS:
        d = worst_divergence(n, K, eps, kappa, alpha)
        bound = rr_rdp(alpha, eps)
        assert d <= bound * (1 + 1e-12)
        if (n, K) == (1, 2):  # PrivQuant with one binary coordinate is randomized response itself
            assert d == pytest.approx(bound, rel=1e-12)
    # and every order's value stays below the pure-DP bound ε₀
    assert rr_rdp(64.0, eps) < eps


def conversion_overhead(delta):
    """Tight RDP→(ε, δ) conversion term at the largest order of the grid, where RR's RDP is capped at ε₀."""
    from privacy import DEFAULT_ORDERS

    a = float(max(DEFAULT_ORDERS))
    return math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)


# ---- accounting side (privacy.RandomizedResponseRound, privacy.RunAccountant; model §9.3)
def test_rdp_of_the_pure_eps0_round_is_randomized_responses():
    from privacy import RandomizedResponseRound, event_rdp

    eps = 1.7
    curve = event_rdp(RandomizedResponseRound(epsilon0=eps), np.array(ORDERS))
    for alpha, value in zip(ORDERS, curve):
        assert value == pytest.approx(rr_rdp(alpha, eps), rel=1e-12)
        # and it is PrivQuant's own exact divergence for one binary coordinate
        assert value == pytest.approx(worst_divergence(1, 2, eps, 0, alpha), rel=1e-12)


@pytest.mark.parametrize("eps,T", [(1.0, 1), (1.0, 10), (0.5, 100), (4.0, 20)])
def test_composed_epsilon_agrees_with_dp_accountings_randomized_response(eps, T):
    from dp_accounting.pld import privacy_loss_distribution as pld

    from privacy import RunAccountant
    from privacy.pld import DEFAULT_DISCRETIZATION

    delta = 1e-5
    # dp_accounting's binary randomized response: truth with probability 1 − noise/2 = e^ε/(1 + e^ε);
    # self_compose(T) (PLDAccountant.compose(event, count) ignores count for this event in 0.6)
    reference = pld.from_randomized_response(2.0 / (1.0 + math.exp(eps)), 2).self_compose(T).get_epsilon_for_delta(delta)
    common = dict(K=10, M=10, epsilon0=eps, delta=delta)  # K = M: no sampling, the unamplified composition
    got_pld = RunAccountant("ldp", accountant="pld", **common).epsilon(rounds=T)
    # pessimistic discretization of the privacy loss adds at most h per composed round
    assert reference - 1e-9 <= got_pld <= reference + T * DEFAULT_DISCRETIZATION
    got_rdp = RunAccountant("ldp", accountant="rdp", **common).epsilon(rounds=T)
    assert got_rdp >= reference - 1e-9  # an upper bound
    assert got_rdp <= T * eps + conversion_overhead(delta)  # and at most pure composition + conversion


def test_scenario_accountant_of_sqsgd_names_any_observer_and_uses_client_sampling():
    from scenarios.config import scenario_from_dict

    base = {"partition": {"clients": 50}, "training": {"clients_per_round": 10},
            "phy": {"scheme": "sqsgd", "normalization": "clip", "clip_norm": 1.0, "sqsgd": {"epsilon0": 2.0}}}
    cfg = scenario_from_dict(base)
    report = cfg.privacy_accountant(d=100, D=30).report(rounds=5)
    assert report.threat_model.startswith("any observer (T1 and T2)")
    assert any("ε₀ = 2" in line for line in report.assumptions)
    full = scenario_from_dict({**base, "partition": {"clients": 10}}).privacy_accountant(d=100, D=30)
    assert report.epsilon < full.epsilon(rounds=5) <= 5 * 2.0 + conversion_overhead(1e-5)  # sampling helps T1
    with pytest.raises(ValueError, match=r"^phy\.sqsgd\.epsilon0 must be a finite number > 0"):
        scenario_from_dict({**base, "phy": {**base["phy"], "sqsgd": {"epsilon0": -1.0}}})


def test_randomized_response_rdp_for_large_eps0_is_finite():
    # regression: ln(1 − p) overflowed in math.exp(ε₀) for ε₀ > 709 (sqSGD without effective privacy uses such ε₀)
    from privacy import RandomizedResponseRound, event_rdp

    for eps in (709.0, 800.0, 5000.0):
        curve = event_rdp(RandomizedResponseRound(epsilon0=eps), np.array(ORDERS))
        assert np.all(np.isfinite(curve)) and np.all(curve <= eps)
        # D_2 = ln(e^{2ε₀}/(1 + e^{ε₀}) + 1/(e^{ε₀}(1 + e^{ε₀}))) = ε₀ − ln(1 + e^{−ε₀}) + O(e^{−3ε₀}) = ε₀ here
        assert curve[ORDERS.index(2.0)] == pytest.approx(eps, rel=1e-12)


def test_ldp_cli_and_run_print_one_threat_model_with_the_t2_caveat(capsys):
    """floras privacy --mechanism ldp and a sqSGD run carry the same text: amplified for T1, K = M for T2."""
    from scenarios.cli.main import main
    from scenarios.config import scenario_from_dict

    assert main(["privacy", "--mechanism", "ldp", "--epsilon0", "1", "--K", "10", "--M", "50", "--rounds", "3"]) == 0
    cli_text = capsys.readouterr().out
    cfg = scenario_from_dict({"partition": {"clients": 50}, "training": {"clients_per_round": 10},
                              "phy": {"scheme": "sqsgd", "normalization": "clip", "clip_norm": 1.0, "sqsgd": {"epsilon0": 1.0}}})
    run_threat = cfg.privacy_accountant(d=100, D=30).report(rounds=3).threat_model
    assert "(T2) gets the unamplified composition" in run_threat and "K = M" in run_threat
    assert f"threat model: {run_threat}\n" in cli_text
