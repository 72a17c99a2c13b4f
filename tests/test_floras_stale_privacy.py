"""FLORAS's ε_link with one stale pilot over B coherence blocks (model §5.1, §7.2 "Link level"; privacy/link_stale.py):
the factor law against Monte Carlo, its one-pilot limit against the quadrature of privacy/link.py, each block's
correlation with block 0 against the blocks the link draws, and the union bound over the blocks."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import j0

from privacy.link import LinkModel, exceed_probability, floras_link_epsilon
from privacy.link_stale import stale_exceed_probability
from test_floras_cell_privacy import _accountant  # K = 4 of 10, T = 3, d = 40, L = 8, N = 8; snr_db and C in phy


def _cauchy_tail(t):
    return 0.5 - np.arctan(t) / math.pi


@pytest.mark.parametrize("a, r, c_max", [(3.0, 0.9, 2.0), (10.0, 0.5, 5.0), (30.0, 0.999, 1.2), (2.0, 0.0, 3.0),
                                         (4.0, -0.6, 2.5), (6.0, 0.6 * np.exp(0.9j), 2.0)])
def test_the_stale_factor_law_matches_monte_carlo(a, r, c_max):
    """c = a·Re(h_m)/(a·Re(h_0) + n), h_m = r·h_0 + √(1 − |r|²)·w (circular, unit power), n ~ N(0, 1): P(|c| > c_max)
    within 5 binomial standard deviations of 2·10⁶ draws; a complex r enters through Re r only."""
    n = 2_000_000
    rng = np.random.default_rng(21)
    h0 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    hm = r * h0 + math.sqrt(1.0 - abs(r) ** 2) * w
    c = a * hm.real / (a * h0.real + rng.standard_normal(n))
    mc = np.mean(np.abs(c) > c_max)
    p = float(stale_exceed_probability(c_max, a, np.real(r)))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n), (p, mc)


@pytest.mark.parametrize("c_max", [0.7, 3.0, 1e3])
@pytest.mark.parametrize("scales", [None, (1.0, 0.05, 3.0)])
def test_a_block_correlated_one_with_block_0_has_the_one_pilot_law(c_max, scales):
    """ρ = 1: the closed form equals privacy/link.py's quadrature of c = u/(u + n) over the gain (an independent
    computation), with and without a cell."""
    plain = exceed_probability(c_max, LinkModel(12.0, L=16, gain_scales=scales))
    stale = exceed_probability(c_max, LinkModel(12.0, L=16, gain_scales=scales, blocks=1, stale=(1.0,)))
    assert stale == pytest.approx(plain, rel=1e-7)


def _phy(**kw):
    base = dict(fading_correlation="iid", coherence_symbols=10, doppler=0.0, tdl_model="A", delay_spread=300e-9,
                subcarrier_spacing=30e3, tdl_time_blocks=1)
    return SimpleNamespace(**{**base, **kw})


def _expected(phy, B):
    """Re E[h̃_m·h̃*_0] of the laws of model §5.1, written out here."""
    m = np.arange(B)
    x = 2 * math.pi * phy.doppler * phy.coherence_symbols
    if phy.fading_correlation == "iid":
        return (m == 0).astype(float)
    if phy.fading_correlation == "jakes":
        return j0(x) ** m
    if phy.fading_correlation == "jakes-exact":
        return j0(x * m)
    from phy.channels.tdl import tdl_profile

    tau, p = tdl_profile(phy.tdl_model, phy.delay_spread)
    bt = phy.tdl_time_blocks
    sub, tim = m // bt, m % bt
    return np.real(np.array([np.sum(p * np.exp(-2j * math.pi * s * phy.subcarrier_spacing * tau)) for s in sub])
                   * j0((x if bt > 1 else 0.0) * tim))


@pytest.mark.parametrize("phy", [_phy(), _phy(fading_correlation="jakes", doppler=0.01),
                                 _phy(fading_correlation="jakes-exact", doppler=0.01),
                                 _phy(fading_correlation="tdl"),
                                 _phy(fading_correlation="tdl", tdl_time_blocks=3, doppler=0.01)],
                         ids=["iid", "jakes", "jakes-exact", "tdl", "tdl-time"])
def test_block_correlations_with_block_0_are_those_of_the_drawn_blocks(phy):
    """phy.coherence.block0_correlations against the formula of each law and against 40 000 clients' blocks drawn by
    the link (2·mean Re h_m·Re h_0, standard deviation √((1 + ρ²)/K); 5 of them)."""
    from phy.coherence import block0_correlations, draw_blocks, lag_step

    B, K = 7, 40_000
    rho = block0_correlations(phy, B).real
    assert np.allclose(rho, _expected(phy, B), rtol=0, atol=1e-12)
    tdl = None
    if phy.fading_correlation == "tdl":
        tdl = (phy.tdl_model, phy.delay_spread, phy.subcarrier_spacing, phy.tdl_time_blocks, lag_step(phy))
    h = draw_blocks(5, 0, K=K, n_blocks=B, correlation=phy.fading_correlation, rho=float(j0(lag_step(phy))),
                    lag_x=lag_step(phy), tdl=tdl)
    mc = 2.0 * np.mean(h.real * h[:, :1].real, axis=0)
    assert np.all(np.abs(mc - rho) < 5 * np.sqrt((1 + rho**2) / K)), (mc, rho)


def test_the_truncation_event_is_the_union_over_every_blocks_factor():
    """i.i.d. blocks, n_c = 11, d = 40: B = ⌈41/11⌉ = 4, ρ = (1, 0, 0, 0). The reported truncation probability is
    T·K·Σ_m P_m(c_max) with P_m from the Cauchy law written out here (a = √(L·SNR), q = a²/2), and ε is the one-pilot
    release's (the scenario without blocks)."""
    stale = {"coherence_symbols": 11, "floras": {"N": 8, "pilots": "stale"}}
    acc = _accountant({**stale, "snr_db": 40.0})
    assert acc.pilot_blocks == 1 and acc.link.stale == (1.0, 0.0, 0.0, 0.0)
    assert acc.epsilon(rounds=3) == _accountant({"snr_db": 40.0}).epsilon(rounds=3)
    eps_link, info = floras_link_epsilon(acc, rounds=3)
    c = info["c_max"]
    q = 0.5 * 8 * 10 ** 4.0
    total = 0.0
    for rho in (1.0, 0.0, 0.0, 0.0):
        mu, s = q * rho / (1 + q), math.sqrt(q * (1 + q) - (q * rho) ** 2) / (1 + q)
        total += _cauchy_tail((c - mu) / s) + _cauchy_tail((c + mu) / s)
    assert info["delta_truncation"] == pytest.approx(3 * 4 * total, rel=1e-9)
    assert info["delta_truncation"] < 1e-5 and eps_link > acc.epsilon(rounds=3)
    text = "\n".join(info["assumptions"])
    assert "one stale pilot for B = 4 coherence blocks" in text and "aging keeps the link from" in text


def test_aging_sets_a_floor_that_the_snr_does_not_lower():
    """Slow Clarke fading (f_D·T_s = 10⁻⁴, n_c = 11): the stale factor's scale tends to √(1 − ρ²) as q → ∞, so
    c_max barely moves from 50 to 80 dB, while with a pilot per block it falls with the pilots' noise (~ 1/√SNR)."""
    def c_max(pilots, snr):
        phy = {"coherence_symbols": 11, "fading_correlation": "jakes-exact", "doppler": 1e-4,
               "floras": {"N": 8, "pilots": pilots}}
        return floras_link_epsilon(_accountant({**phy, "snr_db": snr, "C": 0.001}), rounds=3)[1]["c_max"]

    assert c_max("stale", 50.0) / c_max("stale", 80.0) < 1.2
    assert c_max("per-block", 50.0) / c_max("per-block", 80.0) > 10.0


def test_stale_options_the_law_does_not_cover_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"stale must hold ρ_m in \[−1, 1\] for each of the blocks = 2 blocks"):
        LinkModel(20.0, blocks=2, stale=(1.0,))
    with pytest.raises(ValueError, match=r"stale must hold .* ρ_0 = 1"):
        LinkModel(20.0, blocks=2, stale=(0.5, 1.0))
    with pytest.raises(ValueError, match=r"stale pilots are derived for csit 'none', Rayleigh gains and one antenna"):
        LinkModel(20.0, blocks=2, stale=(1.0, 0.5), csit="phase")
    with pytest.raises(ValueError, match=r"stale pilots are derived .* rician_k = 2"):
        LinkModel(20.0, blocks=2, stale=(1.0, 0.5), rician_k=2.0)


def test_a_cells_mean_over_clients_and_blocks_matches_monte_carlo_and_its_grid_bound_holds():
    """With a cell the probability is the mean over the population's β_eff and the blocks: exact for few distinct β
    (Monte Carlo over a client drawn uniformly and a block drawn uniformly, 5 binomial standard deviations), and above
    privacy/link.py's EXACT_SCALES an upper bound on the 0.05 dB grid with the weight (β_up/β)^{2/2} of the pair
    (g_0, g_m), checked against the direct mean over 3 000 distinct clients (and within 2 % of it)."""
    from privacy.link import EXACT_SCALES

    rho, betas, snr_db, L, c_max, n = (1.0, 0.8, -0.3), (1.0, 0.05, 3.0), 10.0, 8, 2.0, 2_000_000
    rng = np.random.default_rng(23)
    beta = np.asarray(betas)[rng.integers(0, 3, n)]
    r = np.asarray(rho)[rng.integers(0, 3, n)]
    a = np.sqrt(L * 10 ** (snr_db / 10) * beta)
    h0 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    hm = r * h0 + np.sqrt(1.0 - r**2) * w
    mc = np.mean(np.abs(a * hm.real / (a * h0.real + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(snr_db, L=L, gain_scales=betas, blocks=3, stale=rho))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n), (p, mc)

    many = tuple(10 ** rng.uniform(-3, 1, 3000))  # 3 000 distinct β_eff > EXACT_SCALES: the grid bound
    assert len(set(many)) > EXACT_SCALES
    link = LinkModel(snr_db, L=L, gain_scales=many, blocks=3, stale=rho)
    amp = np.sqrt(L * 10 ** (snr_db / 10) * np.asarray(many))
    for c in (0.5, 2.0, 50.0):
        direct = np.mean([np.mean(stale_exceed_probability(c, amp, x)) for x in rho])
        bound = exceed_probability(c, link)
        assert direct <= bound <= 1.02 * direct, (c, direct, bound)


def _cli_report(tmp_path, *extra):
    import json

    from scenarios.cli.main import main

    out = tmp_path / "r.json"
    argv = ["privacy", "--K", "10", "--N", "16", "--M", "10", "--rounds", "1", "--d", "1000", "--normalization", "clip",
            "--clip-norm", "1", "--C", "0.001", "--snr-db", "80", "--L", "16", *extra, "--json", str(out)]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_floras_privacy_takes_coherence_blocks_and_a_stale_pilot(tmp_path):
    """`floras privacy --coherence-symbols` against the accountant built here from model §5.1's layout: a stale pilot
    over ⌈1001/100⌉ = 11 Clarke blocks (ρ_m = J₀(2π·10⁻⁶·100·m)) keeps the one-pilot ε; a pilot per block has
    ⌈1000/99⌉ = 11 pilots for ε and ε_link."""
    from privacy import FlorasRunAccountant

    kw = dict(K=10, N=16, M=10, d=1000, normalization="clip", clip_norm=1.0, C=0.001, delta=1e-5)
    rho = tuple(float(x) for x in j0(2 * math.pi * 1e-6 * 100 * np.arange(11)))
    stale = _cli_report(tmp_path, "--coherence-symbols", "100", "--pilots", "stale", "--fading-correlation",
                        "jakes-exact", "--doppler", "1e-6")
    want = FlorasRunAccountant(**kw, link=LinkModel(80.0, L=16, blocks=11, stale=rho)).report(rounds=1)
    assert stale["epsilon"] == pytest.approx(want.epsilon, rel=1e-12)
    assert stale["epsilon_link"] == pytest.approx(want.epsilon_link, rel=1e-9) and math.isfinite(want.epsilon_link)
    assert stale["epsilon"] == _cli_report(tmp_path)["epsilon"]  # the one-pilot ε
    per = _cli_report(tmp_path, "--coherence-symbols", "100")
    want = FlorasRunAccountant(**kw, pilot_blocks=11, link=LinkModel(80.0, L=16, blocks=11)).report(rounds=1)
    assert (per["epsilon"], per["epsilon_link"]) == (pytest.approx(want.epsilon, rel=1e-12),
                                                     pytest.approx(want.epsilon_link, rel=1e-9))
    assert stale["epsilon_link"] > 100 * per["epsilon_link"]  # the aging floor at 10⁻⁶ (docs/cell.md)


@pytest.mark.parametrize("extra,message", [
    (["--doppler", "1e-6"], "--fading-correlation, --doppler and --pilots describe coherence blocks"),
    (["--coherence-symbols", "1"], "--coherence-symbols must be an integer ≥ 2 with --pilots per-block"),
    (["--coherence-symbols", "10", "--fading-correlation", "tdl"], "--fading-correlation must be one of {iid, jakes"),
    (["--coherence-symbols", "10", "--fading-correlation", "jakes", "--doppler", "-1"], "--doppler must be a finite"),
    (["--coherence-symbols", "10", "--doppler", "1e-3"], "and 0 with --fading-correlation iid"),
    (["--coherence-symbols", "2", "--pilots", "stale", "--fading-correlation", "jakes-exact", "--d", "100000"],
     "--fading-correlation jakes-exact takes at most 4096 blocks"),
    (["--coherence-symbols", "10", "--pilots", "stale", "--csit", "phase"], "is derived for csit = \"none\""),
])
def test_floras_privacy_rejects_bad_coherence_options_in_one_line(extra, message, capsys):
    from scenarios.cli.main import main

    assert main(["privacy", "--d", "1000", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err, err
