"""FLORAS's noise-aware receivers with N_r > 1 receive antennas (model §6.4, "Several antennas").

With the maximum-ratio combiner V = Σ_{j=1}^{γ} 1/χ²_{N_r,j} (model §5.2), and the rules weigh a round by
w = V_ref/V̂ (capped at w_max), V_ref = 1/E[1/V], so that E[V_ref/V] = 1 as γ²/V has for one antenna. Predictions
come from closed forms of E[1/V], a Monte Carlo of the χ² law drawn here, and the pilots the base station holds.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.receiver_rules import receiver_weight, reference_variance
from phy.schemes import make_aggregator

KEY = b"antenna-receiver-key"
Z = 5.0  # tolerance in standard errors


def test_reference_variance_has_the_closed_forms_of_E_inverse_V():
    # N_r = 1: V ~ Lévy(0, γ²) = γ²/Z², E[1/V] = 1/γ²
    assert reference_variance(12, 1) == 144.0
    # γ = 1: 1/V = χ²_{N_r}, E[1/V] = N_r
    for n_rx in (2, 3, 4, 8):
        assert reference_variance(1, n_rx) == pytest.approx(1.0 / n_rx, rel=1e-9)
    # γ = 2, N_r = 2: X_j ~ χ²₂ = Exp(mean 2); 1/V = X₁X₂/(X₁ + X₂) = U(1 − U)·S with U ~ U(0, 1) independent of
    # S ~ Gamma(2, scale 2), E = (1/6)·4 = 2/3
    assert reference_variance(2, 2) == pytest.approx(1.5, rel=1e-9)
    # γ ≫ 1, N_r > 4: E[1/V] = (1/μ_V)(1 + σ_V²/μ_V² + O(γ⁻²)), μ_V = γ/(N_r − 2), σ_V² = γ·Var(1/χ²_{N_r})
    g, n_rx = 1000, 8
    mu, var = 1.0 / (n_rx - 2), 1.0 / ((n_rx - 2) * (n_rx - 4)) - 1.0 / (n_rx - 2) ** 2
    assert reference_variance(g, n_rx) == pytest.approx(g * mu - var / mu, rel=1e-5)


@pytest.mark.parametrize("n_rx", [2, 4])
def test_the_reference_makes_the_inverse_variance_weight_unbiased(n_rx):
    gamma, n = 12, 200_000
    V = (1.0 / np.random.default_rng(n_rx).chisquare(n_rx, (n, gamma))).sum(axis=1)
    w = reference_variance(gamma, n_rx) / V
    assert abs(w.mean() - 1.0) < Z * w.std() / math.sqrt(n)
    # the plain γ² of one antenna would be far off: γ²/V has mean 144·E[1/V] = 144/V_ref ≫ 1 here
    assert (gamma**2 / V).mean() > 5.0


def test_rule_definitions_with_antennas():
    assert receiver_weight("inverse-variance", gamma=2, V_hat=0.5, cap=4.0, antennas=2) == pytest.approx(3.0)
    assert receiver_weight("capped", gamma=2, V_hat=0.5, cap=2.0, antennas=2) == 2.0
    assert receiver_weight("capped", gamma=2, V_hat=1.5, cap=4.0, antennas=2) == pytest.approx(1.0)
    assert receiver_weight("plain", gamma=2, V_hat=1e-9, cap=4.0, antennas=4) == 1.0
    assert receiver_weight("capped", gamma=5, V_hat=5.0, cap=4.0, antennas=1) == 4.0  # one antenna: γ²/V̂ as before
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="antennas"):
            reference_variance(3, bad)
    with pytest.raises(ValueError, match="gamma"):
        reference_variance(0, 2)


@pytest.mark.parametrize("rule", ["capped", "inverse-variance"])
def test_the_round_is_weighted_by_the_reference_over_the_pilots_variance(rule):
    """γ = 2, N_r = 2 (V_ref = 3/2): w = min(w_max, V_ref/V_p), V_p = (σ²/L)·Σ_{j=1}^{N} 1/Σ_r (r_{j,r}^s)² over every
    sequence (the base station does not know the active set, model §6.4), computed here from the round's pilots;
    the release is w times the plain receiver's, bit for bit up to rounding."""
    K, N, L, snr_db, d, cap = 4, 6, 8, 10.0, 40, 1.2
    noise = 10 ** (-snr_db / 10) / L  # σ²/L with P = b² = 1
    x = np.random.default_rng(3).standard_normal((K, d))

    def agg(receiver):
        cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, rx_antennas=2, normalization="clip", clip_norm=1e6,
                             floras={"N": N, "path": "fast", "receiver": receiver, "receiver_cap": cap})
        return make_aggregator(cfg, K=K, d=d, seed=9, key=KEY)

    weighted, plain = agg(rule), agg("plain")
    seen = set()
    for t in range(40):
        res, rnd = weighted.aggregate_traced(x, round_index=t, trace=True)
        ref, _ = plain.aggregate_traced(x, round_index=t, trace=True)
        R = rnd.r_ref_antennas
        v_p = noise * float(np.sum(1.0 / (R**2).sum(axis=0)))
        w = 1.5 / v_p if rule == "inverse-variance" else min(cap, 1.5 / v_p)
        assert res.diagnostics["weight"] == pytest.approx(w, rel=1e-9)
        np.testing.assert_allclose(res.sum_estimate, w * ref.sum_estimate, rtol=1e-9, atol=1e-12)
        seen.add(w == cap)
    if rule == "capped":
        assert seen == {True, False}  # the cap binds in some rounds and not in others


def test_the_scenario_accepts_the_rules_with_antennas_and_the_accountant_ignores_them():
    """A capped FLORAS run with N_r = 2 is accounted as the plain one: the weight is post-processing of the release
    given the pilots (model §6.4), so the run's privacy event (and so its ε) does not depend on the rule."""
    from scenarios.config.loading import load_scenario

    base = Path(__file__).resolve().parents[1] / "scenarios" / "base" / "digits_mlp.toml"
    over = {"phy.scheme": "floras", "phy.floras.csit": "none", "phy.floras.N": 14, "training.clients_per_round": 10,
            "phy.rx_antennas": 2, "privacy.accountant": "tightest", "phy.normalization": "clip", "phy.clip_norm": 1.0}
    plain = load_scenario(base, over)
    capped = load_scenario(base, {**over, "phy.floras.receiver": "capped"})
    assert capped.phy.of("floras").receiver == "capped" and capped.phy.rx_antennas == 2
    a, b = plain.privacy_accountant(d=500, D=20), capped.privacy_accountant(d=500, D=20)  # lazy: no PLD built here
    assert a.event == b.event and a.event.event.antennas == 2
