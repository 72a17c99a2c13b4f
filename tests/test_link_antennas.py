"""The link-level bound of FLORAS with N_r receive antennas (model §7.2 "Link level", §5.2; privacy/link.py).

With maximum ratio on the pilots the active client's factor is u = ⟨x, v⟩/‖x‖², x = v + n; P(|u| > c), averaged over
the gain, has a closed form in Student's t (model §7.2 "Link level"), checked here against the two-ball picture
(noncentral χ² CDFs integrated over the gain, an independent derivation), the simulator's own pilots and combiner
(phy/floras_antennas.py), the small-ball asymptotics of the model document, and at one antenna the one-antenna formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from privacy import FlorasRunAccountant
from privacy.link import LinkModel, exceed_probability


def _two_balls(c: float, a: float, n_rx: int) -> float:
    """P(|u| > c) from the geometry alone: |u| > c ⇔ ‖x ∓ v/(2c)‖² < ρ²/(4c²), ρ = ‖v‖ = a‖g‖, two noncentral
    χ²_{N_r} CDFs given ρ, integrated over ‖g‖ (density 2r^{N_r−1}e^{−r²}/Γ(N_r/2)) by adaptive quadrature."""
    from scipy import integrate
    from scipy.special import chndtr

    log_norm = math.log(2.0) - math.lgamma(n_rx / 2.0)

    def f(r: float) -> float:
        rho = a * r
        x = rho * rho / (4.0 * c * c)
        given = chndtr(x, n_rx, (rho * (1.0 - 0.5 / c)) ** 2) + chndtr(x, n_rx, (rho * (1.0 + 0.5 / c)) ** 2)
        return math.exp(log_norm + (n_rx - 1) * math.log(r) - r * r) * given if r > 0 else 0.0

    pts = [x for x in (0.1 / a, 1.0 / a, 10.0 / a) if x < 8.0]
    return integrate.quad(f, 0.0, 8.0, points=pts, epsabs=0.0, epsrel=1e-11, limit=500)[0]


@pytest.mark.parametrize("n_rx", [2, 3, 4, 8])
def test_closed_form_is_the_two_ball_integral(n_rx):
    """The Student-t closed form against the noncentral χ² integral over the gain, from pilot amplitudes far below
    to far above 1 and factor levels from below E|u| to the tail (a wrong μ = q/(1 + q), a missing √N_r or a
    one-sided sum would each miss by far more than 1e-7)."""
    from privacy.link import antenna_exceed_probability

    for a in (0.3, 3.0, 30.0, 300.0):
        for c in (0.5, 1.0, 3.0, 100.0, 1e4):
            want = _two_balls(c, a, n_rx)
            got = float(antenna_exceed_probability(c, np.array([a]), n_rx)[0])
            assert got == pytest.approx(want, rel=1e-7, abs=1e-300), (n_rx, a, c)


def _simulated_factors(n_rx: int, *, snr_db: float, L: int, rounds: int, K: int = 4) -> np.ndarray:
    """|u_k| of every active slot over ``rounds`` rounds of the simulator's FLORAS link with N_r antennas (N = L
    sequences, K of them active: with AᵀA = I each factor depends on its own pilot alone, so K sets only how many
    factors a round gives)."""
    from phy.config import PhyConfig
    from phy.floras_antennas import antenna_pilots
    from phy.schemes import make_aggregator

    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, rx_antennas=n_rx, floras={"N": L, "csit": "none"})
    link = make_aggregator(cfg, K=K, d=1, seed=3, key=bytes(16)).link
    out = []
    for t in range(rounds):
        active, _, G, _, W = antenna_pilots(link, t)
        out.append(np.abs(np.einsum("kr,rk->k", G, W[:, active])))  # ŝ = Σ_k u_k s_k (model §5.2)
    return np.concatenate(out)


@pytest.mark.parametrize("n_rx", [2, 3])
def test_exceed_probability_against_the_simulated_maximum_ratio_factors(n_rx):
    snr_db = -3.0 - 10.0 * math.log10(4.0)  # L·SNR ≈ 4 with L = 32
    u = _simulated_factors(n_rx, snr_db=snr_db, L=32, rounds=1_250, K=16)  # 20 000 factors
    link = LinkModel(snr_db=snr_db, L=32, antennas=n_rx)
    for c in (1.5, 3.0):
        p = exceed_probability(c, link)
        hits = float(np.mean(u > c))
        se = math.sqrt(p * (1.0 - p) / u.size)
        assert abs(hits - p) < 5.0 * se, (n_rx, c, hits, p, se)


@pytest.mark.parametrize("n_rx", [2, 4])
def test_exceed_probability_in_the_tail_is_the_small_ball_volume(n_rx):
    """|u| > c ⇔ x in two balls of radius ρ/(2c) through the origin; for large c the density of x there is
    φ_N(v) = (2π)^{−N/2}e^{−ρ²/2}, so P ≈ 2·V_N·(ρ/(2c))^N·(2π)^{−N/2}·E[e^{−ρ²/2}ρ^N ...] averaged over ρ = a‖g‖,
    ‖g‖² ~ χ²_N/2: P ≈ 2·V_N·(2c)^{−N}(2π)^{−N/2}·a^N·Γ(N)/(Γ(N/2)(1 + a²/2)^N), V_N = π^{N/2}/Γ(N/2 + 1)."""
    L, snr_db = 32, 20.0
    a = math.sqrt(L * 10.0 ** (snr_db / 10.0))
    N = n_rx
    for c in (1e3, 1e4):
        log_pred = (math.log(2.0) + 0.5 * N * math.log(math.pi) - gammaln(N / 2.0 + 1.0) - N * math.log(2.0 * c)
                    - 0.5 * N * math.log(2.0 * math.pi) + N * math.log(a) + gammaln(N) - gammaln(N / 2.0)
                    - N * math.log1p(a * a / 2.0))
        got = exceed_probability(c, LinkModel(snr_db=snr_db, L=L, antennas=n_rx))
        assert got == pytest.approx(math.exp(log_pred), rel=20.0 / c), (n_rx, c)


def test_one_antenna_is_the_ratio_formula_and_more_antennas_thin_the_tail():
    from scipy.special import ndtr

    L, snr_db, c = 8, 10.0, 4.0
    a = math.sqrt(L * 10.0 ** (snr_db / 10.0))
    r = np.linspace(1e-4, 8.0, 400_001)  # E over |g|, g ~ N(0, ½), trapezoid on a fine grid
    f = 2.0 * np.exp(-r * r) / math.sqrt(math.pi) * (ndtr(a * r / c - a * r) - ndtr(-a * r - a * r / c))
    assert exceed_probability(c, LinkModel(snr_db=snr_db, L=L)) == pytest.approx(np.trapezoid(f, r), rel=1e-6)
    from privacy.link import antenna_exceed_probability  # at N_r = 1 the closed form's t is Cauchy: the same law

    assert float(antenna_exceed_probability(c, np.array([a]), 1)[0]) == pytest.approx(np.trapezoid(f, r), rel=1e-6)
    p = [exceed_probability(c, LinkModel(snr_db=snr_db, L=L, antennas=n)) for n in (1, 2, 4)]
    assert p[0] > 5.0 * p[1] > 25.0 * p[2]


def test_epsilon_link_with_antennas_approaches_epsilon():
    """K = 4 of 10, N = 40, L = 64, T = 3, no CSIT: one antenna's factor tail ~ 1/c leaves ε_link two orders above
    ε at 50 dB; with N_r = 4 the tail ~ c^{−4} and ε_link is within 10 % of ε (model §7.2, "Link level")."""
    common = dict(K=4, N=40, M=10, d=40, normalization="clip", C=0.05, clip_norm=1.0, accountant="rdp")
    eps = {}
    for n in (1, 2, 4):
        acc = FlorasRunAccountant(**common, antennas=n, link=LinkModel(snr_db=50.0, L=64, antennas=n))
        rep = acc.report(rounds=3)
        eps[n] = (rep.epsilon, rep.epsilon_link)
        assert rep.epsilon_link >= rep.epsilon
        if n > 1:
            assert any(f"{n} receive antennas, maximum ratio" in s for s in rep.assumptions)
    assert eps[1][1] > 100.0 * eps[1][0]
    assert eps[2][1] < 2.0 * eps[2][0] and eps[4][1] < 1.1 * eps[4][0]
    with pytest.raises(ValueError, match="LinkModel has antennas = 1, the run 2"):  # the link must be the run's
        FlorasRunAccountant(**common, antennas=2, link=LinkModel(snr_db=50.0, L=64))
    with pytest.raises(ValueError, match="csit 'none' and Rayleigh gains"):
        LinkModel(snr_db=50.0, L=64, antennas=2, csit="phase")


def test_the_cell_grid_bound_holds_with_antennas():
    """Above 512 distinct β_eff the mean over clients is bounded by rounding β up onto a 0.05 dB grid with weight
    (β_up/β)^{N_r/2}: the density of ρ = a‖g‖ is ∝ ρ^{N_r−1}e^{−ρ²/a²}/a^{N_r}, so (1/a)f(ρ/a) ≤ (a_up/a)^{N_r}·
    (1/a_up)f(ρ/a_up) for a ≤ a_up. At high SNR and large c the tail is P(a) ∝ (2/a)^{N_r} (the small-ball law above),
    the worst case of that inequality, where one antenna's weight (β_up/β)^{1/2} would leave the bound below the mean."""
    rng = np.random.default_rng(5)
    scales = tuple(float(x) for x in 10.0 ** rng.uniform(-1.0, 0.0, 600))  # 10 dB of β_eff spread, all distinct
    c = 300.0
    for n_rx in (2, 4):
        exact = np.mean([exceed_probability(c, LinkModel(snr_db=30.0, L=32, antennas=n_rx, gain_scales=(b,)))
                         for b in scales])
        bound = exceed_probability(c, LinkModel(snr_db=30.0, L=32, antennas=n_rx, gain_scales=scales))
        assert exact <= bound <= exact * 10.0 ** (0.05 * n_rx / 20.0) * (1.0 + 1e-9), (n_rx, exact, bound)


def test_floras_privacy_takes_rx_antennas(tmp_path, capsys):
    """``floras privacy --rx-antennas`` reports the maximum-ratio aggregate's ε and ε_link, the accountant's own."""
    import json

    from scenarios.cli.main import main

    out = tmp_path / "p.json"
    argv = ["privacy", "--K", "4", "--N", "40", "--M", "10", "--rounds", "3", "--d", "40", "--normalization", "clip",
            "--C", "0.05", "--clip-norm", "1", "--snr-db", "50", "--L", "64"]
    assert main([*argv, "--rx-antennas", "4", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    want = FlorasRunAccountant(K=4, N=40, M=10, d=40, normalization="clip", C=0.05, clip_norm=1.0, antennas=4,
                               link=LinkModel(snr_db=50.0, L=64, antennas=4)).report(rounds=3)
    assert rep["epsilon"] == pytest.approx(want.epsilon, rel=1e-12)
    assert rep["epsilon_link"] == pytest.approx(want.epsilon_link, rel=1e-12)
    assert "4 receive antennas" in rep["threat_model"]
    assert main([*argv, "--rx-antennas", "2", "--csit", "phase"]) == 2
    assert "--rx-antennas 2 is derived for --csit none" in capsys.readouterr().err
    assert main([*argv, "--rx-antennas", "0"]) == 2
