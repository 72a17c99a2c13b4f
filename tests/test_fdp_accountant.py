"""The fdp accountant (model §9.4): run accountants, the mechanism declarations and ``floras privacy --accountant fdp``.

References: the gdp accountant's exact μ → (ε, δ) conversion (unsampled Gaussian), dp_accounting's PLD
(Poisson Gaussian, 7.31 at z = 2.0134), the exact binomial composition of randomized response (2.919 at
200 rounds of ε₀ = 0.05), the rdp accountant for DDGauss, whose only known bound is its RDP curve.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privacy import RunAccountant
from privacy.engines import ACCOUNTANTS
from privacy.fdp.lossdist import DEFAULT_STEP
from privacy.gdp import gdp_epsilon
from privacy.mechanisms import mechanism
from scenarios.cli.main import main

PARAMS = {  # one valid parameter set per built-in mechanism with a run accountant of its own kind
    "gaussian": dict(clip_norm=1.0, noise_std=4.0),
    "ddgauss": dict(d=256, clip_norm=10.0, grid=0.05, local_std=5.0),
    "ldp": dict(epsilon0=0.5),
}


def test_fdp_is_an_accountant():
    assert "fdp" in ACCOUNTANTS


def test_unsampled_gaussian_equals_gdp_exactly():
    """G_μ composed T times is G_{μ√T} (closed form): the same ε as the gdp accountant, μ = S/σ·√T = 2/4·√100 = 5."""
    acc = RunAccountant("gaussian", K=10, M=10, accountant="fdp", **PARAMS["gaussian"])
    assert acc.epsilon(rounds=100) == pytest.approx(gdp_epsilon(1e-5, 5.0), rel=1e-9)
    assert acc.report(rounds=100).approximate is False


def test_poisson_gaussian_agrees_with_pld_within_the_grid_error():
    """Both are upper bounds; fdp is at most T·h = 200·1e-4 = 0.02 above the exact ε of the Poisson pair, and
    dp_accounting's PLD (step 1e-3, connect-the-dots) gives 7.31: they must agree within 0.02."""
    kw = dict(K=20, M=100, relation="add-remove", sampling="poisson", clip_norm=1.0, noise_std=2.0134)
    fdp = RunAccountant("gaussian", accountant="fdp", **kw).epsilon(rounds=200)
    pld = RunAccountant("gaussian", accountant="pld", **kw).epsilon(rounds=200)
    assert abs(fdp - pld) <= 200 * DEFAULT_STEP
    assert fdp == pytest.approx(7.31, abs=0.01)
    # both orders of the pair count: ε is the larger of f_p^{⊗T} (remove, 7.31) and (f_p⁻¹)^{⊗T} (add, 6.23 measured)
    from privacy.fdp.accounting import run_tradeoff

    f = run_tradeoff(RunAccountant("gaussian", accountant="fdp", **kw).event, 200)
    orders = (f.up.epsilon(1e-5), f.down.epsilon(1e-5))
    assert fdp == max(orders) and min(orders) < fdp - 0.5


def test_gaussian_without_replacement_is_c_p_between_the_tight_pair_and_rdp():
    """K = 20 of M = 100, z = 3.744, T = 200: C_p(G_{1/z})^{⊗T} (3.52 measured) must be at least the ε of the
    mechanism's own dominating pair ((1−p)N(0,1) + pN(±1/(2z), 1), 3.19 by numerical composition, docs/privacy.md),
    and below the WBK RDP bound (8.0)."""
    kw = dict(K=20, M=100, clip_norm=1.0, noise_std=2 * 3.744)
    fdp = RunAccountant("gaussian", accountant="fdp", **kw).epsilon(rounds=200)
    rdp = RunAccountant("gaussian", accountant="rdp", **kw).epsilon(rounds=200)
    assert 3.19 - 0.05 <= fdp <= rdp


def test_ldp_is_the_exact_binomial_composition():
    """200 rounds of ε₀ = 0.05 randomized response: the exact value 2.919 (the binomial law of the loss; the pld
    accountant's 1e-3 discretisation gives 3.050, rdp 3.160)."""
    acc = RunAccountant("ldp", K=10, M=10, accountant="fdp", epsilon0=0.05)
    assert acc.epsilon(rounds=200) == pytest.approx(2.919, abs=5e-4)
    assert acc.epsilon(rounds=200) < RunAccountant("ldp", K=10, M=10, accountant="pld", epsilon0=0.05).epsilon(rounds=200)
    # with ε_s each round is f_{ε₀,0} ⊗ f_{ε_s,0}: 100 rounds of (0.025, 0.025) are 200 rounds of 0.025
    # (a part dropped gives the 100-round value, a round counted as pure 0.05-DP the larger value above)
    both = RunAccountant("ldp", K=10, M=10, accountant="fdp", epsilon0=0.025, epsilon_s=0.025).epsilon(rounds=100)
    assert both == pytest.approx(RunAccountant("ldp", K=10, M=10, accountant="fdp", epsilon0=0.025).epsilon(rounds=200), abs=1e-3)


def test_sampled_ldp_is_amplified():
    """K = 20 of 100 without replacement: C_{0.2}(f_{ε₀,0}) per round, below the unsampled composition."""
    sampled = RunAccountant("ldp", K=20, M=100, accountant="fdp", epsilon0=0.5).epsilon(rounds=50)
    full = RunAccountant("ldp", K=100, M=100, accountant="fdp", epsilon0=0.5).epsilon(rounds=50)
    assert sampled < 0.5 * full


def test_ddgauss_uses_the_tradeoff_implied_by_its_rdp_curve():
    """No closed-form f is known for DDGauss: fdp converts the T-round RDP curve through the Rényi divergence of
    every test (all orders at once). That conversion is at least as good as the single-order one up to the
    α-grid's error, and never below what the Gaussian with the same l₂ would give."""
    kw = dict(K=100, M=100, relation="add-remove", **PARAMS["ddgauss"])
    fdp = RunAccountant("ddgauss", accountant="fdp", **kw).epsilon(rounds=1)
    rdp = RunAccountant("ddgauss", accountant="rdp", **kw).epsilon(rounds=1)
    assert 0.9 * rdp <= fdp <= rdp * 1.002
    assert rdp == pytest.approx(0.7975, abs=5e-4)  # the DDGauss text's Theorem 1 value, through rdp


def test_floras_is_refused_with_the_alternatives():
    with pytest.raises(ValueError, match="no closed-form trade-off function; use --accountant rdp, rdp-generic or pld"):
        RunAccountant("floras", K=20, M=100, accountant="fdp", d=10, N=30)


def test_every_builtin_mechanism_declares_whether_it_has_a_tradeoff_function():
    """A declared trade-off function means fdp accounts the mechanism; none means fdp refuses it."""
    for name in ("floras", "gaussian", "ddgauss", "ldp"):
        mech = mechanism(name)
        if mech.trade_off is None:
            with pytest.raises(ValueError, match="trade-off function"):
                RunAccountant(name, K=20, M=100, accountant="fdp", d=10, N=30)
        else:
            eps = RunAccountant(name, K=20, M=100, accountant="fdp", **PARAMS[name]).epsilon(rounds=3)
            assert 0 < eps < math.inf


def test_cli_fdp_json(capsys):
    rc = main(["privacy", "--mechanism", "ldp", "--epsilon0", "0.05", "--K", "10", "--M", "10", "--rounds", "200",
               "--accountant", "fdp", "--json", "-"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accountant"] == "fdp" and out["epsilon"] == pytest.approx(2.919, abs=5e-4) and out["approximate"] is False
    assert main(["privacy", "--d", "10", "--accountant", "fdp"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "FLORAS (Cauchy)" in err[0] and "pld" in err[0]


def test_delta_at_is_the_inverse_of_epsilon():
    acc = RunAccountant("gaussian", K=20, M=100, relation="add-remove", sampling="poisson", accountant="fdp",
                        clip_norm=1.0, noise_std=2.0)
    eps = acc.epsilon(rounds=50)
    assert acc.delta_at(rounds=50, epsilon=eps) == pytest.approx(1e-5, rel=1e-6)
    assert acc.delta_at(rounds=50, epsilon=eps * 0.9) > 1e-5
    assert np.isclose(acc.delta_at(rounds=0, epsilon=0.1), 0.0)
