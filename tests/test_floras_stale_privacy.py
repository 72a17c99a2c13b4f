"""FLORAS's ε_link with one stale pilot over B coherence blocks (model §5.1, §7.2 "Link level"; privacy/link_stale.py):
the factor law against Monte Carlo, its one-pilot limit against the quadrature of privacy/link.py, each block's
correlation with block 0 against the blocks the link draws, and the union bound over the blocks."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import j0

from privacy.link import LinkModel, exceed_probability
from privacy.link_epsilon import floras_link_epsilon
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
    with pytest.raises(ValueError, match=r"stale must hold ρ_m = Re r_m in \[−1, 1\] for each of the blocks = 2 blocks"):
        LinkModel(20.0, blocks=2, stale=(1.0,))
    with pytest.raises(ValueError, match=r"stale must hold .* ρ_0 = 1"):
        LinkModel(20.0, blocks=2, stale=(0.5, 1.0))
    with pytest.raises(ValueError, match=r"stale must hold ρ_m = \|r_m\| in \[0, 1\] .*csit 'phase'"):
        LinkModel(20.0, blocks=2, stale=(1.0, -0.5), csit="phase")
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
    (["--coherence-symbols", "10", "--pilots", "stale", "--rician-k", "2"], "--rician-k sets the gains of the link-level bound"),
])
def test_floras_privacy_rejects_bad_coherence_options_in_one_line(extra, message, capsys):
    from scenarios.cli.main import main

    assert main(["privacy", "--d", "1000", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err, err


# --- phase CSIT: the factor a|h_m|/(a|h_0| + n), bounded (privacy/link_stale.py, model §7.2 "Link level") -----------


def _phase_draws(a, rho, n, seed):
    rng = np.random.default_rng(seed)
    h0 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    y = np.abs(a * np.abs(h0) + rng.standard_normal(n))
    return h0, w, y


@pytest.mark.parametrize("a, rho, c_max", [(math.sqrt(8.0), 0.5, 3.0), (math.sqrt(80.0), 0.9, 5.0),
                                           (math.sqrt(80.0), 0.99, 5.0), (2.0, 0.7, 2.0), (40.0, 0.95, 20.0)])
def test_the_phase_csit_bound_is_the_triangle_event_and_holds(a, rho, c_max):
    """Against 2·10⁶ draws of h_m = ρ·h_0 + √(1 − ρ²)·w: the bound equals the probability of the larger event
    ρ·a|h_0| + √(1 − ρ²)·a|w| > c|a|h_0| + n| (5 binomial standard deviations: the closed form given |h_0| and the
    quadrature), is at least the factor's own P(|c| > c_max) (5 σ), and at most 1.6 times it here."""
    n = 2_000_000
    h0, w, y = _phase_draws(a, rho, n, 31)
    s = math.sqrt(1.0 - rho * rho)
    true = np.mean(a * np.abs(rho * h0 + s * w) > c_max * y)
    larger = np.mean(rho * a * np.abs(h0) + s * a * np.abs(w) > c_max * y)
    link = LinkModel(0.0, L=1, csit="phase", blocks=2, stale=(1.0, rho))
    from privacy.link_stale import mean_stale_phase_bound

    p = mean_stale_phase_bound(c_max, np.array([a]), np.array([1.0]), (np.array([rho]), np.array([1.0])))
    sd = math.sqrt(p * (1 - p) / n)
    assert abs(p - larger) < 5 * sd, (p, larger)
    assert p > true - 5 * sd and p < 1.6 * true, (p, true)
    assert link.stale == (1.0, rho)


@pytest.mark.parametrize("snr_db, c_max", [(50.0, 1e4), (80.0, 1e6), (20.0, 1e3), (0.0, 1e5)])
def test_the_phase_csit_bound_is_exact_for_independent_and_for_identical_blocks(snr_db, c_max):
    """Deep in the tail, where no Monte Carlo reaches: ρ = 0 gives P(a|w| > c|Y|) = E e^{−(c/a)²Y²} =
    √(1 + 2β)/(1 + 2β + β·a²), β = (c/a)² (|w|² exponential, then a Gaussian and an exponential integral; written out
    here), and ρ = 1 the one-block phase-CSIT law ∫ 2r·e^{−r²}·[Φ(ar/c − ar) − Φ(−ar − ar/c)] dr (scipy's quad here)."""
    from scipy import integrate
    from scipy.special import ndtr

    from privacy.link_stale import mean_stale_phase_bound

    L = 16
    a = math.sqrt(L * 10 ** (snr_db / 10))
    beta = (c_max / a) ** 2
    closed = math.sqrt(1 + 2 * beta) / (1 + 2 * beta + beta * a * a)
    p0 = mean_stale_phase_bound(c_max, np.array([a]), np.array([1.0]), (np.array([0.0]), np.array([1.0])))
    assert p0 == pytest.approx(closed, rel=1e-8)
    one, _ = integrate.quad(lambda r: 2 * r * math.exp(-r * r) * (ndtr(a * r / c_max - a * r) - ndtr(-a * r - a * r / c_max)),
                            0.0, 8.0, points=[0.1 / a, 1 / a, 10 / a], epsabs=0.0, epsrel=1e-11, limit=500)
    p1 = mean_stale_phase_bound(c_max, np.array([a]), np.array([1.0]), (np.array([1.0]), np.array([1.0])))
    assert p1 == pytest.approx(one, rel=1e-7)
    mid = mean_stale_phase_bound(c_max, np.array([a]), np.array([1.0]), (np.array([0.9]), np.array([1.0])))
    assert one < mid < closed * 1.0001  # between identical and independent blocks at these levels


def test_a_phase_csit_stale_scenario_reports_its_bound_and_the_one_pilot_epsilon():
    """A scenario with one stale pilot over 4 Clarke blocks (f_D·T_s = 10⁻⁴, 60 dB) and phase CSIT: ε is the one-pilot
    value (the same as without CSIT), ε_link finite where the real gains' stale factor gives ∞, and the reported
    truncation δ is T·K·Σ_m P_m(c_max), each block's bound computed here from ρ_m = |J₀(x·m)| by its own nested
    quadrature over v = a|h_0| and the pilot noise n (the event ρv + √(1 − ρ²)·a|w| > c|v + n|, |w|² exponential)."""
    from scipy import integrate

    phy = {"coherence_symbols": 11, "fading_correlation": "jakes-exact", "doppler": 1e-4, "snr_db": 60.0}
    phase = _accountant({**phy, "floras": {"N": 8, "pilots": "stale", "csit": "phase"}})
    plain = _accountant({**phy, "floras": {"N": 8, "pilots": "stale"}})
    link = phase.link
    rho = np.abs(j0(2 * math.pi * 1e-4 * 11 * np.arange(4)))
    assert link.csit == "phase" and link.stale == pytest.approx(tuple(rho), abs=1e-15)
    rep, rep_plain = phase.report(rounds=3), plain.report(rounds=3)
    assert rep.epsilon == rep_plain.epsilon
    assert math.isfinite(rep.epsilon_link) and rep.epsilon_link > rep.epsilon and rep_plain.epsilon_link == math.inf
    text = next(s for s in rep.assumptions if s.startswith("link level"))
    assert "|h_(k,m)|" in text and "triangle inequality" in text and "bounded" in text
    c = rep.link["c_max"]
    a = math.sqrt(link.L * 10 ** (link.snr_db / 10))

    def block(r):
        s = math.sqrt(max(0.0, 1.0 - r * r))

        def inner(v):  # ∫ φ(n)·P(event | v, n) dn, split where the event starts to hold whatever w (t = 0)
            def f(n):
                t = c * abs(v + n) - r * v
                p = 1.0 if t <= 0 else (0.0 if s == 0 else math.exp(-(t / (s * a)) ** 2))
                return math.exp(-n * n / 2) / math.sqrt(2 * math.pi) * p
            edges = sorted({-v - 10.0, -v - r * v / c, -v + r * v / c, -v + 10.0})
            return sum(integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-11, limit=200)[0]
                       for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo)

        val, _ = integrate.quad(lambda v: 2 * v / a**2 * math.exp(-(v / a) ** 2) * inner(v), 0.0, 40.0,
                                points=[0.5, 1.0, 2.0, 4.0, 8.0], epsabs=0.0, epsrel=1e-10, limit=200)
        return val
    expected = 3 * 4 * sum(block(float(r)) for r in rho)  # T·K·Σ_m over the B = 4 blocks
    assert rep.link["delta_truncation"] == pytest.approx(expected, rel=1e-5)


def test_a_phase_csit_cells_grid_bound_holds_above_the_exact_scales():
    """Above privacy/link.py's EXACT_SCALES distinct β_eff the mean is taken on the 0.05 dB grid with the weight
    (β_up/β)^{4/2} of the pair (h_0, w) in 4 real dimensions: at least the direct mean over 3 000 distinct clients and
    within 4 % of it; and with 3 distinct β the mean is exact (the clients' direct bounds averaged)."""
    from privacy.link import EXACT_SCALES
    from privacy.link_stale import mean_stale_phase_bound

    rng = np.random.default_rng(29)
    rho, snr_db, L = (1.0, 0.97, 0.6), 10.0, 8
    blocks = (np.array([0.6, 0.97, 1.0]), np.full(3, 1 / 3))
    few = (1.0, 0.05, 3.0)
    amp_few = np.sqrt(L * 10 ** (snr_db / 10) * np.asarray(few))
    p_few = exceed_probability(2.0, LinkModel(snr_db, L=L, csit="phase", gain_scales=few, blocks=3, stale=rho))
    direct_few = np.mean([mean_stale_phase_bound(2.0, np.array([x]), np.ones(1), blocks) for x in amp_few])
    assert p_few == pytest.approx(direct_few, rel=1e-8)
    many = tuple(10 ** rng.uniform(-3, 1, 3000))
    assert len(set(many)) > EXACT_SCALES
    link = LinkModel(snr_db, L=L, csit="phase", gain_scales=many, blocks=3, stale=rho)
    amp = np.sqrt(L * 10 ** (snr_db / 10) * np.asarray(many))
    for c in (0.5, 2.0, 50.0):
        direct = mean_stale_phase_bound(c, amp, np.full(amp.size, 1 / amp.size), blocks)
        grid = exceed_probability(c, link)
        assert direct <= grid <= 1.04 * direct, (c, direct, grid)


@pytest.mark.parametrize("kappa, r, theta, a, c_max", [(2.0, 0.9, 0.3, math.sqrt(80.0), 3.0),
                                                       (7.9, 0.95 * np.exp(0.4j), 1.0, math.sqrt(80.0), 5.0),
                                                       (1.0, 0.5, 2.0, math.sqrt(8.0), 2.0)])
def test_the_phase_csit_bound_with_a_line_of_sight_is_its_triangle_event_and_holds(kappa, r, theta, a, c_max):
    """Rician blocks, h = A·e^{j(φ + θ_m)} + σ·h̃ (A² = κ/(κ+1), σ² = 1/(κ+1), φ uniform, the line of sight turned by
    θ_m = ψ·b_m in block m, h̃_m = r·h̃_0 + √(1 − |r|²)·w): against 2·10⁶ draws, the bound equals the probability of
    |r|·a|h_0| + a·A·|e^{jθ} − r| + √(1 − |r|²)·σ·a|w| > c|a|h_0| + n| (5 σ) and is at least the factor's own (5 σ)."""
    from privacy.link_stale import mean_stale_phase_bound

    n = 2_000_000
    rng = np.random.default_rng(37)
    A, sig, rho = math.sqrt(kappa / (kappa + 1)), math.sqrt(1 / (kappa + 1)), abs(r)
    phi = rng.uniform(0, 2 * math.pi, n)
    g0 = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    w = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2.0)
    h0 = A * np.exp(1j * phi) + sig * g0
    hm = A * np.exp(1j * (phi + theta)) + sig * (r * g0 + math.sqrt(1 - rho**2) * w)
    y = np.abs(a * np.abs(h0) + rng.standard_normal(n))
    dist = abs(np.exp(1j * theta) - r)
    true = np.mean(a * np.abs(hm) > c_max * y)
    larger = np.mean(rho * a * np.abs(h0) + a * A * dist + a * sig * math.sqrt(1 - rho**2) * np.abs(w) > c_max * y)
    p = mean_stale_phase_bound(c_max, np.array([a]), np.ones(1), (np.array([[rho, dist]]), np.ones(1)), kappa=kappa)
    sd = math.sqrt(p * (1 - p) / n)
    assert abs(p - larger) < 5 * sd and p > true - 5 * sd, (p, larger, true)


def test_a_rician_phase_csit_stale_scenario_takes_the_line_of_sights_distances():
    """rician_k = 2 with Clarke blocks, phase CSIT and one stale pilot: the link holds (|J₀(x·m)|, |e^{j·0.7·x·m} −
    J₀(x·m)|) for every block (TR 38.901's f_S = 0.7·f_D, written out here), ε is the Rayleigh scenario's one-pilot ε,
    ε_link is finite at 60 dB (below the Rayleigh blocks' here: the line of sight removes deep pilot fades, more than
    its turn adds), and the distances count (the same link with every D_m = 0 has a smaller probability at the
    reported c_max); (ρ, D) pairs need a line of sight (without CSIT: tests/test_floras_stale_los.py)."""
    phy = {"coherence_symbols": 11, "fading_correlation": "jakes-exact", "doppler": 1e-4, "snr_db": 60.0}
    los = _accountant({**phy, "rician_k": 2.0, "floras": {"N": 8, "pilots": "stale", "csit": "phase"}})
    ray = _accountant({**phy, "floras": {"N": 8, "pilots": "stale", "csit": "phase"}})
    x = 2 * math.pi * 1e-4 * 11
    m = np.arange(4)
    assert los.link.stale == pytest.approx(tuple(np.abs(j0(x * m))), abs=1e-15)
    want = np.abs(np.exp(1j * 0.7 * x * m) - j0(x * m))
    want[0] = 0.0
    assert los.link._los == pytest.approx(tuple(want), abs=1e-12)
    rep, ray_rep = los.report(rounds=3), ray.report(rounds=3)
    assert rep.epsilon == ray_rep.epsilon
    assert math.isfinite(rep.epsilon_link) and rep.epsilon_link < ray_rep.epsilon_link
    c = rep.link["c_max"]
    flat = LinkModel(los.link.snr_db, L=los.link.L, csit="phase", rician_k=2.0, blocks=4,
                     stale=tuple((r, 0.0) for r in los.link.stale))
    assert exceed_probability(c, flat) < 0.9 * exceed_probability(c, los.link)
    assert "line of sight's D_m" in next(s for s in rep.assumptions if s.startswith("link level"))
    with pytest.raises(ValueError, match=r"\(ρ_m, D_m\) pairs describe Rician blocks with phase CSIT"):
        LinkModel(20.0, blocks=2, csit="phase", stale=((1.0, 0.0), (0.5, 0.3)))
