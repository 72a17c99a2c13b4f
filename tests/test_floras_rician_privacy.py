"""FLORAS's ε_link with Rician gains: `phy.rician_k` and TDL-D/E (model §5.1 "Privacy with these options", §7.2,
privacy/link.py). The release's Cauchy term comes from the inactive sequences, which carry receiver noise only, so ε
does not change; the active factors c = u/(u + n) take the Rician law of the effective gain."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import i0

from privacy import FlorasRunAccountant
from privacy.link import LinkModel, exceed_probability, gain_density
from privacy.link_epsilon import floras_link_epsilon


def _rician_gain(rng, n: int, kappa: float, csit: str) -> np.ndarray:
    """g drawn from the model §5.1 definition: h = √(κ/(κ+1))·e^{jφ} + CN(0, 1)/√(κ+1), g = Re h or |h|."""
    phi = rng.uniform(0.0, 2.0 * math.pi, n)
    h = math.sqrt(kappa / (kappa + 1)) * np.exp(1j * phi) + (
        rng.standard_normal(n) + 1j * rng.standard_normal(n)) * math.sqrt(0.5 / (kappa + 1))
    return h.real if csit == "none" else np.abs(h)


# ---------------------------------------------------------------- the gain's law
@pytest.mark.parametrize("csit", ["none", "phase"])
@pytest.mark.parametrize("kappa", [0.3, 7.94, 25.0])
def test_gain_density_is_a_density_with_the_model_power(csit, kappa):
    f = gain_density(csit, kappa)
    A = math.sqrt(kappa / (kappa + 1))
    pts = [A]
    mass = integrate.quad(f, 0.0, 8.0, points=pts, limit=200, epsabs=1e-13)[0]
    power = integrate.quad(lambda r: r * r * f(r), 0.0, 8.0, points=pts, limit=200, epsabs=1e-13)[0]
    assert mass == pytest.approx(1.0, abs=1e-9)
    assert power == pytest.approx(0.5 if csit == "none" else 1.0, abs=1e-9)  # E Re(h)² = ½, E|h|² = 1


@pytest.mark.parametrize("kappa", [0.5, 4.0, 20.0])
def test_rice_density_against_the_textbook_form_and_the_phase_average_against_direct_quadrature(kappa):
    r = np.linspace(0.01, 2.5, 40)
    # Rice with ν = A, σ² = 1/(2(κ+1)): (r/σ²)·exp(−(r² + ν²)/(2σ²))·I₀(rν/σ²)
    nu, s2 = math.sqrt(kappa / (kappa + 1)), 0.5 / (kappa + 1)
    want = r / s2 * np.exp(-(r**2 + nu**2) / (2 * s2)) * i0(r * nu / s2)
    got = np.array([gain_density("phase", kappa)(x) for x in r])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # no CSIT: the phase average by adaptive quadrature over φ ∈ [0, 2π) instead of the midpoint rule
    norm = lambda x, m: math.exp(-(x - m) ** 2 / (2 * s2)) / math.sqrt(2 * math.pi * s2)
    for x in r[::7]:
        direct = integrate.quad(lambda p: norm(x, nu * math.cos(p)) + norm(-x, nu * math.cos(p)), 0, 2 * math.pi,
                                limit=200, epsabs=0, epsrel=1e-12)[0] / (2 * math.pi)
        assert gain_density("none", kappa)(x) == pytest.approx(direct, rel=1e-10)


@pytest.mark.parametrize("csit", ["none", "phase"])
@pytest.mark.parametrize("table", [{"rician_k": 3.0}, {"rician_k": 3.0, "coherence_symbols": 10,
                                                       "fading_correlation": "jakes-exact", "doppler": 0.01},
                                   {"coherence_symbols": 10, "fading_correlation": "tdl", "tdl_model": "D",
                                    "delay_spread": 300e-9}])
def test_the_links_own_gains_follow_the_law_the_bound_integrates(csit, table):
    """The simulator's effective gains (every block's marginal) against gain_density by Kolmogorov–Smirnov: the link
    of the run and the law in ε_link are the same (a κ of the wrong convention, a phase not uniform, fail)."""
    from phy.config import PhyConfig
    from phy.fading import effective_gain
    from phy.link_channel import LinkChannel

    cfg = PhyConfig.make(scheme="floras", snr_db=20.0, L=8, **table)
    kappa = cfg.los_k
    assert kappa > 1.0
    link = LinkChannel(cfg, K=500, seed=4)
    blocks = 4 if "coherence_symbols" in table else 1
    g = np.abs(np.concatenate([effective_gain(link.draw(t, n_blocks=blocks), csit=csit).ravel() for t in range(8)]))
    f = gain_density(csit, kappa)
    grid = np.linspace(0.0, 4.0, 801)
    dens = np.array([f(x) for x in grid])
    cdf_grid = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2 * np.diff(grid))])
    cdf = lambda x: np.interp(x, grid, cdf_grid)
    # blocks of one client are correlated: the KS bound uses the number of independent (round, client) draws
    n_ind = 8 * 500
    d = stats.kstest(g, cdf).statistic
    assert d < 1.63 / math.sqrt(n_ind)  # 1 % level of the KS distribution for n_ind independent draws
    # and a Rayleigh law (κ = 0) is rejected: the test can fail
    ray = gain_density(csit, 0.0)
    dens0 = np.array([ray(x) for x in grid])
    cdf0 = np.concatenate([[0.0], np.cumsum((dens0[1:] + dens0[:-1]) / 2 * np.diff(grid))])
    assert stats.kstest(g, lambda x: np.interp(x, grid, cdf0)).statistic > 3 * 1.63 / math.sqrt(n_ind)


# ---------------------------------------------------------------- P(|c| > c_max)
@pytest.mark.parametrize("csit,snr_db,kappa,c_max", [("none", 0.0, 7.94, 20.0), ("phase", 10.0, 2.0, 20.0),
                                                     ("none", 10.0, 21.4, 5.0), ("phase", 0.0, 9.0, 3.0)])
def test_exceed_probability_with_rician_gains_matches_monte_carlo(csit, snr_db, kappa, c_max):
    n, L = 2_000_000, 32
    rng = np.random.default_rng(int(kappa * 10) + (csit == "phase"))
    u = _rician_gain(rng, n, kappa, csit) * math.sqrt(L * 10 ** (snr_db / 10))
    mc = np.mean(np.abs(u / (u + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(snr_db, L=L, csit=csit, rician_k=kappa))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n)  # 5 binomial standard deviations
    # the Rayleigh value is a different number (the test sees κ)
    p0 = exceed_probability(c_max, LinkModel(snr_db, L=L, csit=csit))
    assert abs(p0 - mc) > 10 * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("csit", ["none", "phase"])
def test_kappa_zero_is_the_rayleigh_link_bit_for_bit(csit):
    for c in (0.5, 3.0, 50.0):
        assert (exceed_probability(c, LinkModel(20.0, L=16, csit=csit, rician_k=0.0))
                == exceed_probability(c, LinkModel(20.0, L=16, csit=csit)))


def test_a_cell_with_rician_gains_matches_monte_carlo():
    betas, c_max, n = (0.2, 1.0, 4.0, 0.01), 1.5, 2_000_000
    rng = np.random.default_rng(13)
    beta = np.asarray(betas)[rng.integers(0, 4, n)]
    u = _rician_gain(rng, n, 5.0, "none") * np.sqrt(8 * 10 ** 1.0 * beta)
    mc = np.mean(np.abs(u / (u + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(10.0, L=8, csit="none", gain_scales=betas, rician_k=5.0))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n)


# ---------------------------------------------------------------- the grid bound above 512 scales
@pytest.mark.parametrize("csit", ["none", "phase"])
def test_the_density_inequality_of_the_grid_holds_with_its_line_of_sight_factor_and_needs_it(csit):
    """(1/a)f(u/a) ≤ (a_up/a)^k·exp(κ(a_up − a)/(a_up + a))·(1/a_up)f(u/a_up) for a ≤ a_up (privacy/link.py,
    derived); without the exp factor it fails for κ > 0 (the Rayleigh weight alone would not bound the mean)."""
    k = 1 if csit == "none" else 2
    u = np.linspace(0.0, 60.0, 3001)[1:]
    violated = False
    for kappa in (0.5, 5.0, 22.0):
        f = gain_density(csit, kappa)
        for a, a_up in ((10.0, 10.0 * 10 ** (0.05 / 20)), (20.0, 21.0), (3.0, 3.3)):
            lhs = np.array([f(x / a) for x in u]) / a
            rhs0 = (a_up / a) ** k * np.array([f(x / a_up) for x in u]) / a_up
            factor = math.exp(kappa * (a_up - a) / (a_up + a))
            assert np.all(lhs <= rhs0 * factor * (1 + 1e-12) + 1e-300)
            violated |= bool(np.any(lhs > rhs0 * (1 + 1e-9)))
    assert violated


@pytest.mark.parametrize("csit", ["none", "phase"])
def test_the_binned_population_mean_with_rician_gains_is_an_upper_bound(csit):
    kappa = 8.0
    rng = np.random.default_rng(5)
    betas = 10 ** rng.uniform(-3, 1, 600)
    binned = exceed_probability(20.0, LinkModel(20.0, L=16, csit=csit, gain_scales=tuple(betas), rician_k=kappa))
    exact = np.mean([exceed_probability(20.0, LinkModel(20.0 + 10 * math.log10(b), L=16, csit=csit, rician_k=kappa))
                     for b in betas])
    k = 1 if csit == "none" else 2
    r = 10 ** (0.05 / 20)  # the largest a_up/a on the 0.05 dB grid
    assert exact * (1 - 1e-8) <= binned <= exact * r**k * math.exp(kappa * (r - 1) / (r + 1)) * (1 + 1e-8)


def test_rician_k_is_checked():
    for bad in (-1.0, math.inf, math.nan, True, "3"):
        with pytest.raises(ValueError, match="rician_k must be a finite number ≥ 0"):
            LinkModel(10.0, rician_k=bad)


# ---------------------------------------------------------------- scenarios: the run's accountant
def _accountant(phy: dict, *, accountant: str = "rdp"):
    from scenarios.config import scenario_from_dict
    from scenarios.config.schemes import scheme_accountant

    table = {"partition": {"clients": 10}, "training": {"clients_per_round": 4},
             "phy": {"scheme": "floras", "snr_db": 50.0, "C": 0.05, "L": 64, "floras": {"N": 40, "csit": "phase"},
                     **phy},
             "privacy": {"delta": 1e-5, "accountant": accountant}, "run": {"rounds": 3}}
    return scheme_accountant(scenario_from_dict(table, resolve=False), d=40, D=1)


@pytest.mark.parametrize("phy,kappa", [({"rician_k": 2.5}, 2.5),
                                       ({"coherence_symbols": 11, "fading_correlation": "tdl", "tdl_model": "E",
                                         "delay_spread": 300e-9}, None)])
def test_a_rician_floras_run_states_epsilon_and_an_epsilon_link_of_its_law(phy, kappa):
    from phy.channels.tdl import los_k_factor

    acc = _accountant(phy)
    kappa = los_k_factor("E") if kappa is None else kappa
    assert acc.link.rician_k == pytest.approx(kappa, rel=1e-12)
    rayleigh = _accountant({k: v for k, v in phy.items() if k != "rician_k"} if "rician_k" in phy
                           else {**phy, "tdl_model": "A"})
    # ε (the release) is the Rayleigh run's exactly: the inactive sequences carry receiver noise only
    assert acc.epsilon(rounds=3) == rayleigh.epsilon(rounds=3)
    rep = acc.report(rounds=3)
    assert rep.epsilon_link is not None and math.isfinite(rep.epsilon_link) and rep.epsilon_link >= rep.epsilon
    # the line of sight removes deep fades: fewer large factors c, a smaller ε_link than the Rayleigh run's
    assert rep.epsilon_link < rayleigh.report(rounds=3).epsilon_link
    assert any(f"Rician gains κ = {kappa:.6g}" in a for a in rep.assumptions)
    eps, info = floras_link_epsilon(acc, rounds=3)
    B = acc.link.blocks
    assert info["delta_truncation"] == pytest.approx(3 * 4 * B * exceed_probability(info["c_max"], acc.link), rel=1e-4)


def test_timing_offsets_with_a_line_of_sight_are_refused_and_antennas_take_every_accountant_and_an_epsilon_link():
    # the law given the pilots is drawn for Rayleigh gains (tests/test_floras_timing_law.py)
    with pytest.raises(ValueError, match=r"phy\.csi_error / phy\.rician_k: the law is drawn for perfect CSI and "
                                         r"Rayleigh gains"):
        _accountant({"timing_offset": 0.2, "rician_k": 3.0, "floras": {"N": 40, "csit": "none", "path": "chip"}},
                    accountant="pld")
    antennas = {"rx_antennas": 2, "floras": {"N": 40, "csit": "none"}}
    for accountant in ("rdp", "pld"):  # model §9.5, "Several antennas"; the link bound: tests/test_link_antennas.py
        acc = _accountant(antennas, accountant=accountant)
        assert acc.antennas == 2 and acc.event.event.antennas == 2 and acc.link.antennas == 2
        rep = acc.report(rounds=3)
        assert math.isfinite(rep.epsilon) and rep.epsilon_link >= rep.epsilon


# ---------------------------------------------------------------- floras privacy --rician-k
def test_floras_privacy_takes_rician_k_for_epsilon_link(tmp_path):
    import json

    from scenarios.cli.main import main

    out = tmp_path / "r.json"
    argv = ["privacy", "--K", "20", "--N", "120", "--M", "100", "--rounds", "200", "--d", "1", "--sensitivity", "1.72",
            "--snr-db", "50", "--L", "32", "--csit", "phase"]
    assert main([*argv, "--rician-k", "7.9", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    want = FlorasRunAccountant(K=20, N=120, M=100, d=1, sensitivity=1.72, delta=1e-5,
                               link=LinkModel(50.0, 32, "phase", rician_k=7.9)).report(rounds=200)
    assert rep["epsilon_link"] == pytest.approx(want.epsilon_link, rel=1e-9) and math.isfinite(want.epsilon_link)
    assert main([*argv, "--json", str(out)]) == 0  # Rayleigh: a larger ε_link at the same SNR
    assert json.loads(out.read_text())["epsilon_link"] > 10 * rep["epsilon_link"]


@pytest.mark.parametrize("extra,message", [(["--snr-db", "20", "--rician-k", "-1"], "--rician-k must be a finite number ≥ 0"),
                                           (["--snr-db", "20", "--rician-k", "nan"], "--rician-k must be a finite number ≥ 0"),
                                           (["--rician-k", "2"], "--rician-k sets the gains of the link-level bound")])
def test_floras_privacy_rejects_a_bad_rician_k_in_one_line(extra, message, capsys):
    from scenarios.cli.main import main

    assert main(["privacy", "--d", "100", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
