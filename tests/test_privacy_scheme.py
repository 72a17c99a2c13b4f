"""Other mechanisms and accountants: DDGauss, randomized response, GDP, PLD, RunAccountant, calibration, CLI."""

import json
import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp

from privacy import DDGaussRound, RandomizedResponseRound, RdpAccountant, RunAccountant, SelfComposed, event_rdp
from privacy.calibration import calibrate, smallest_noise_multiplier
from privacy.gdp import clt_mu_poisson, clt_mu_without_replacement, gdp_delta, gdp_epsilon
from scenarios.cli.main import main


def test_ddgauss_reference_and_replace_one():
    ev = DDGaussRound(n=100, d=256, clip=10.0, grid=0.05, local_std=5.0, beta=math.exp(-0.5), relation="add-remove")
    r = 10 / 0.05  # model §9.2: Δ₂ = min{c/γ + √d, √((c/γ)² + d/4 + √(2 ln(1/β))·(c/γ + √d/2))}
    assert ev.delta2 == pytest.approx(min(r + 16, math.sqrt(r * r + 64 + 1.0 * (r + 8))), rel=1e-12)
    assert ev.delta2 == pytest.approx(200.679, abs=1e-3)
    acc = RunAccountant("ddgauss", K=100, M=100, relation="add-remove", d=256, clip_norm=10.0, grid=0.05,
                              local_std=5.0, beta=math.exp(-0.5))
    assert acc.epsilon(rounds=1) == pytest.approx(0.7975, abs=5e-4)
    l2 = 0.05 * ev.delta2 / (10 * 5.0)  # τ ≈ 0 here: RDP(α) = α l₂²/2
    np.testing.assert_allclose(event_rdp(ev, [2.0, 10.0]), [l2**2, 5 * l2**2], rtol=1e-9)
    rep = DDGaussRound(n=100, d=200, clip=10.0, grid=0.05, local_std=5.0, relation="replace")
    assert rep.d_pad == 256
    np.testing.assert_allclose(event_rdp(rep, [2.0]), [4 * l2**2], rtol=1e-9)  # l₂ doubled


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_randomized_response_rdp_matches_dp_accounting(eps0):
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    p = 2.0 / (1.0 + math.exp(eps0))  # dp_accounting's noise parameter: P(keep) = 1 − p/2 = e^ε₀/(1 + e^ε₀)
    ref = dpa_rdp._compute_randomized_response_rdp(p, 2, orders, dpa.NeighboringRelation.REPLACE_ONE)
    np.testing.assert_allclose(event_rdp(RandomizedResponseRound(eps0), orders), ref, rtol=1e-9)
    T = 50
    pld = dpa_pld.from_randomized_response(p, 2, value_discretization_interval=1e-4).self_compose(T)
    eps_pld = pld.get_epsilon_for_delta(1e-5)
    raw = RdpAccountant().compose(SelfComposed(RandomizedResponseRound(eps0), T)).get_epsilon(1e-5)
    eps_rdp = RunAccountant("ldp", K=10, M=10, epsilon0=eps0).epsilon(rounds=T)
    assert eps_rdp == min(raw, T * eps0)  # the run accountant also knows basic composition of pure DP
    assert eps_pld <= eps_rdp * (1 + 1e-6) and eps_rdp <= 1.5 * eps_pld + 0.05
    ours = RunAccountant("ldp", K=10, M=10, accountant="pld", epsilon0=eps0).epsilon(rounds=T)
    assert ours == pytest.approx(eps_pld, rel=2e-2)


def test_gdp_reference_values():
    assert gdp_epsilon(1e-5, 1.0) == pytest.approx(4.3772, abs=1e-4)
    assert gdp_delta(1.0, 1.0) == pytest.approx(0.12694, abs=1e-5)
    mu = clt_mu_poisson(rate=0.2, noise_multiplier=2.0134, rounds=200)
    assert mu == pytest.approx(0.2 * math.sqrt(200) * math.sqrt(math.expm1(1 / 2.0134**2)), rel=1e-12)


def test_gdp_clt_without_replacement_matches_the_published_reference_and_the_large_noise_limit():
    """Bu, Dong, Long & Su (HDSR 2020), their accountant's uniform-subsampling example: 60 000 records,
    batch 256, 15 epochs, z = 1.3, δ = 1e-5 → ε = 1.0685. And with the √2 both CLT formulas tend to
    p√T/z for large z (a missing or doubled √2 gives ratio 1/√2 or √2)."""
    n, m, epochs = 60000, 256, 15
    mu = clt_mu_without_replacement(rate=m / n, noise_multiplier=1.3, rounds=epochs * n / m)
    assert gdp_epsilon(1e-5, mu) == pytest.approx(1.0685, abs=1e-4)
    for z in (50.0, 500.0):
        mu_wor = clt_mu_without_replacement(rate=0.1, noise_multiplier=z, rounds=100)
        assert mu_wor == pytest.approx(0.1 * 10 / z, rel=2 / z)  # p√T/z, correction O(1/z)
        assert mu_wor == pytest.approx(clt_mu_poisson(rate=0.1, noise_multiplier=z, rounds=100), rel=2 / z)


def test_poisson_gaussian_pld_and_clt_reference():
    kw = dict(K=20, M=100, relation="add-remove", sampling="poisson", clip_norm=1.0, noise_std=2.0134)
    pld = RunAccountant("gaussian", accountant="pld", **kw).report(rounds=200)
    clt = RunAccountant("gaussian", accountant="gdp", **kw).report(rounds=200)
    assert pld.epsilon == pytest.approx(7.31, abs=0.02) and not pld.approximate
    assert clt.epsilon == pytest.approx(7.03, abs=0.02) and clt.approximate
    assert clt.to_dict()["approximate"] is True and "APPROXIMATE" in " ".join(clt.assumptions) and "APPROXIMATE" in str(clt)


def test_gaussian_sensitivity_follows_the_relation():
    rep = RunAccountant("gaussian", K=5, M=5, relation="replace", clip_norm=1.0, noise_std=4.0).report(rounds=10)
    add = RunAccountant("gaussian", K=5, M=5, relation="add-remove", clip_norm=1.0, noise_std=2.0).report(rounds=10)
    assert rep.sensitivity == 2.0 and add.sensitivity == 1.0 and rep.epsilon == pytest.approx(add.epsilon, rel=1e-12)
    text = " ".join(rep.assumptions)
    for needle in ("threat model", "neighbouring relation", "sensitivity", "δ = ", "accountant: rdp", "Canonne"):
        assert needle in text, needle
    with pytest.raises(ValueError, match="relation must be 'replace'"):
        RunAccountant("gaussian", K=5, M=10, relation="add-remove", clip_norm=1.0, noise_std=1.0)
    with pytest.raises(ValueError, match="missing"):
        RunAccountant("gaussian", K=5, M=10, clip_norm=1.0)
    with pytest.raises(ValueError, match="gdp supports Gaussian"):
        RunAccountant("ldp", K=5, M=10, accountant="gdp", epsilon0=1.0)
    # Sampled without replacement: the Gaussian round has its PLD (model §9.5), tighter than RDP's bound;
    # randomized response has none, and the refusal names the accountant that does.
    pld = RunAccountant("gaussian", K=5, M=10, accountant="pld", clip_norm=1.0, noise_std=3.0).report(rounds=10)
    rdp = RunAccountant("gaussian", K=5, M=10, accountant="rdp", clip_norm=1.0, noise_std=3.0).report(rounds=10)
    assert 0.0 < pld.epsilon < rdp.epsilon
    with pytest.raises(ValueError, match="pld does not support.*RandomizedResponseRound.*--accountant rdp"):
        RunAccountant("ldp", K=5, M=10, accountant="pld", epsilon0=1.0).report(rounds=10)


def test_calibration_reproduces_the_noise_multiplier():
    z = smallest_noise_multiplier(target_epsilon=8.0, rounds=200, K=20, M=100, orders=np.arange(2.0, 10.0))
    assert z == pytest.approx(3.744, rel=0.01)
    make = lambda e0: RunAccountant("ldp", K=20, M=20, epsilon0=e0)
    e0 = calibrate(make, target_epsilon=2.0, rounds=10, lower=1e-3, upper=10.0, increasing=True, rel_tol=1e-5)
    assert make(e0).epsilon(rounds=10) <= 2.0 < make(e0 * 1.001).epsilon(rounds=10)
    with pytest.raises(ValueError, match="no parameter"):
        calibrate(make, target_epsilon=1e-9, rounds=10, lower=1.0, upper=10.0, increasing=True)


def test_cli_json_stdout_ddgauss_reference(capsys):
    rc = main(["privacy", "--mechanism", "ddgauss", "--K", "100", "--M", "100", "--rounds", "1", "--d", "256",
               "--clip-norm", "10", "--grid", "0.05", "--local-std", "5", "--beta", "0.6065306597",
               "--relation", "add-remove", "--delta", "1e-5", "--json", "-"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == pytest.approx(0.7975, abs=5e-4) and out["delta2"] == pytest.approx(200.679, abs=1e-3)
    assert out["accountant"] == "rdp" and out["approximate"] is False and "epsilon_link" in out


def test_cli_floras_json_carries_accountant_and_link(capsys, tmp_path):
    assert main(["privacy", "--d", "1", "--sensitivity", "1.72", "--N", "30", "--snr-db", "20", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accountant"] == "rdp" and out["epsilon"] == pytest.approx(5.0, abs=0.1) and out["epsilon_link"] == "inf"
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("argv,needle", [
    (["--mechanism", "gaussian", "--noise-multiplier", "-1"], "noise-multiplier"),
    (["--mechanism", "gaussian", "--noise-multiplier", "nan"], "noise-multiplier"),
    (["--mechanism", "gaussian"], "noise-multiplier"),
    (["--accountant", "exact", "--d", "10"], "accountant"),
    (["--accountant", "gdp", "--d", "10"], "gdp"),
    (["--mechanism", "ldp", "--epsilon0", "-2"], "epsilon0"),
    (["--mechanism", "ddgauss", "--d", "16", "--clip-norm", "1", "--local-std", "1", "--bits", "2", "--K", "100", "--M", "100"], "bits"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, needle, capsys):
    assert main(["privacy", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("floras: error:") and needle in err[0]
