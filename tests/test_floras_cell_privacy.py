"""FLORAS's ε with a cell and with per-block pilots (model §5.1 "Privacy with these options", §7.2, privacy/link.py)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import integrate

from privacy import FlorasRunAccountant
from privacy.link import LinkModel, exceed_probability
from privacy.link_epsilon import floras_link_epsilon


def _scenario(phy: dict, *, M: int = 10, K: int = 4, accountant: str = "rdp", seed: int = 0):
    from scenarios.config import scenario_from_dict

    return scenario_from_dict({"partition": {"clients": M}, "training": {"clients_per_round": K},
                               "phy": {"scheme": "floras", "snr_db": 20.0, "C": 0.05, "L": 8, "floras": {"N": 8}, **phy},
                               "privacy": {"delta": 1e-5, "accountant": accountant},
                               "run": {"rounds": 3, "seed": seed}}, resolve=False)


def _accountant(phy: dict, *, d: int = 40, **kw):
    from scenarios.config.schemes import scheme_accountant

    return scheme_accountant(_scenario(phy, **kw), d=d, D=1)


# ---------------------------------------------------------------- P(|c| > c_max) with per-client gains
def test_exceed_probability_with_gain_scales_matches_monte_carlo_at_each_clients_snr():
    # c = u/(u + n), u = g·√(L·SNR·β_c), g ~ N(0, ½) (no CSIT), n ~ N(0, 1); client drawn uniformly from the population
    betas, snr_db, L, c_max, n = (1.0, 0.05, 3.0), 10.0, 8, 2.0, 2_000_000
    rng = np.random.default_rng(11)
    beta = np.asarray(betas)[rng.integers(0, 3, n)]
    u = rng.normal(0.0, math.sqrt(0.5), n) * np.sqrt(L * 10 ** (snr_db / 10) * beta)
    mc = np.mean(np.abs(u / (u + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(snr_db, L=L, gain_scales=betas))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n)  # 5 binomial standard deviations


def test_exceed_probability_with_phase_csit_and_a_cell_matches_monte_carlo():
    betas, c_max, n = (0.2, 1.0, 4.0, 0.01), 1.5, 2_000_000
    rng = np.random.default_rng(12)
    beta = np.asarray(betas)[rng.integers(0, 4, n)]
    g = np.abs(rng.normal(0, math.sqrt(0.5), n) + 1j * rng.normal(0, math.sqrt(0.5), n))  # Rayleigh, E g² = 1
    u = g * np.sqrt(4 * 10 ** 0.5 * beta)
    mc = np.mean(np.abs(u / (u + rng.standard_normal(n))) > c_max)
    p = exceed_probability(c_max, LinkModel(5.0, L=4, csit="phase", gain_scales=betas))
    assert abs(p - mc) < 5 * math.sqrt(p * (1 - p) / n)  # 5 binomial standard deviations


@pytest.mark.parametrize("csit", ["none", "phase"])
@pytest.mark.parametrize("c_max", [0.5, 3.0, 1e4])
def test_unit_scales_give_the_unscaled_value_and_two_clients_their_average(csit, c_max):
    plain = exceed_probability(c_max, LinkModel(20.0, L=32, csit=csit))
    assert exceed_probability(c_max, LinkModel(20.0, L=32, csit=csit, gain_scales=(1.0,) * 7)) == plain
    # two clients: the mean of the single-SNR values at SNR·β (β = 0.1 → −10 dB)
    low = exceed_probability(c_max, LinkModel(10.0, L=32, csit=csit))
    two = exceed_probability(c_max, LinkModel(20.0, L=32, csit=csit, gain_scales=(1.0, 0.1)))
    assert two == pytest.approx((plain + low) / 2, rel=1e-8)


@pytest.mark.parametrize("csit", ["none", "phase"])
def test_the_binned_population_mean_is_an_upper_bound_within_the_grid_factor(csit):
    # above 512 distinct scales β is rounded UP onto a 0.05 dB grid with weight (β_up/β)^{k/2} (k = 1, 2):
    # P(a) ≤ (a_up/a)^k·P(a_up) since the density of u = a·g satisfies (1/a)f(u/a) ≤ (a_up/a)^k·(1/a_up)f(u/a_up)
    rng = np.random.default_rng(3)
    betas = 10 ** rng.uniform(-4, 1, 600)
    binned = exceed_probability(50.0, LinkModel(20.0, L=16, csit=csit, gain_scales=tuple(betas)))
    exact = np.mean([exceed_probability(50.0, LinkModel(20.0 + 10 * math.log10(b), L=16, csit=csit)) for b in betas])
    k = 1 if csit == "none" else 2
    assert exact * (1 - 1e-8) <= binned <= exact * 10 ** (0.05 * k / 20) * (1 + 1e-8)


def test_gain_scales_and_blocks_are_checked():
    for bad in ((), (1.0, 0.0), (1.0, -2.0), (math.inf,)):
        with pytest.raises(ValueError, match="gain_scales"):
            LinkModel(10.0, gain_scales=bad)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="blocks"):
            LinkModel(10.0, blocks=bad)


# ---------------------------------------------------------------- the union bound T·K·B·mean_c P_c
def test_delta_truncation_counts_rounds_slots_blocks_and_averages_the_population():
    base = dict(K=4, N=30, M=10, d=5, sensitivity=1.0, accountant="rdp-generic")
    T, B = 3, 5
    for link in (LinkModel(20.0, L=32, blocks=B), LinkModel(20.0, L=32, blocks=B, gain_scales=(1.0, 0.3, 0.01))):
        eps, info = floras_link_epsilon(FlorasRunAccountant(link=link, **base), rounds=T)
        # T·K·B·P(|c| > c_max) is the fraction f of δ the minimiser chose
        assert info["delta_truncation"] == pytest.approx(T * 4 * B * exceed_probability(info["c_max"], link), rel=1e-4)
        assert any(info["delta_truncation"] == pytest.approx(f * 1e-5, rel=1e-9) for f in (0.5, 0.3, 0.1, 0.03, 0.01, 1e-3))
        assert ("B = 5 pilot blocks" in info["assumptions"][0]) and info["blocks"] == B


# ---------------------------------------------------------------- per-block pilots: the round's divergence (§5.1, §7.2)
def _block_expectation(alpha: float, x: np.ndarray) -> float:
    """E_V[exp((α−1)·Σ_m α‖Δ_m‖²/(2V_m))] by quadrature over each 1/V_m ~ Gamma(½, rate γ²/2), x_m = α(α−1)‖Δ_m‖²/γ²."""
    out = 1.0
    for xm in x:
        # γ²/V_m = Y ~ χ²₁ (density y^{−½}e^{−y/2}/√(2π)), so the factor is E exp(x_m·Y/2) = (1 − x_m)^{−½}
        val, _ = integrate.quad(lambda y: y ** -0.5 * math.exp(-y / 2 * (1 - xm)) / math.sqrt(2 * math.pi), 0, math.inf)
        out *= val
    return out


def test_per_block_divergence_never_exceeds_the_one_block_formula():
    alpha, S2, gamma2 = 3.0, 1.0, 10.0  # x = α(α−1)S²/γ² = 0.6 < 1
    x_total = alpha * (alpha - 1) * S2 / gamma2
    one_block = (1 - x_total) ** -0.5  # §7.2: ε(α) = −ln(1 − x)/(2(α−1))
    assert _block_expectation(alpha, np.array([x_total])) == pytest.approx(one_block, rel=1e-9)
    rng = np.random.default_rng(5)
    for B in (2, 3, 8):
        for _ in range(5):
            w = rng.dirichlet(np.ones(B))  # an allocation of S² over the B blocks
            assert _block_expectation(alpha, x_total * w) <= one_block * (1 + 1e-12)
    assert _block_expectation(alpha, np.array([x_total / 2] * 2)) < one_block  # strictly below when split


def test_per_block_mechanism_monte_carlo_against_the_bound():
    # B = 2 blocks of one entry each, Δ = (a, b), a² + b² = S²; V_m = γ²/Z_m², Z_m ~ N(0,1) i.i.d. (Lévy(0, γ²));
    # the divergence with V revealed: E exp((α−1)·α·Σ Δ_m² Z_m²/(2γ²)) vs the one-block closed form
    alpha, gamma, S = 2.0, 3.0, 1.0
    rng = np.random.default_rng(7)
    z = rng.standard_normal((2, 1_000_000))
    x = alpha * (alpha - 1) * S**2 / gamma**2
    bound = -math.log(1 - x) / (2 * (alpha - 1))
    for share in (0.0, 0.3, 0.5):
        d2 = np.array([1 - share, share])[:, None] * S**2
        vals = np.exp((alpha - 1) * alpha * np.sum(d2 * z**2, axis=0) / (2 * gamma**2))
        mean, se = vals.mean(), vals.std() / math.sqrt(vals.size)
        exact = np.prod([(1 - alpha * (alpha - 1) * float(v[0]) / gamma**2) ** -0.5 for v in d2])
        assert abs(mean - exact) < 5 * se  # the closed form of the product, 5 standard errors
        assert math.log(exact) / (alpha - 1) <= bound + 1e-15


# ---------------------------------------------------------------- wiring
def test_headline_epsilon_is_unchanged_bit_for_bit_with_a_cell_and_per_block_pilots():
    base = _accountant({})
    cell = _accountant({"pathloss": "umi", "cell_radius": 250.0, "snr_reference": "median-distance"})
    assert cell.link.gain_scales is not None and len(cell.link.gain_scales) == 10
    assert cell.epsilon(rounds=3) == base.epsilon(rounds=3)
    assert np.array_equal(cell.round_rdp, base.round_rdp)
    plain = _accountant({}, accountant="rdp-generic")
    blocks = _accountant({"coherence_symbols": 11, "floras": {"N": 8, "pilots": "per-block"}}, accountant="rdp-generic")
    assert blocks.link.blocks == 4  # B = ⌈40/10⌉
    assert blocks.epsilon(rounds=3) == plain.epsilon(rounds=3)
    both = _accountant({"pathloss": "log-distance", "cell_radius": 200.0, "coherence_symbols": 21,
                        "fading_correlation": "jakes", "doppler": 0.001}, accountant="rdp-generic")
    assert both.link.blocks == 2 and both.epsilon(rounds=3) == plain.epsilon(rounds=3)


def test_the_cell_scales_are_the_drop_the_run_uses():
    from phy.cell import CellChannel

    cfg = _scenario({"pathloss": "umi", "cell_radius": 250.0, "power_control": "pathloss-inversion"}, seed=4)
    acc = _accountant({"pathloss": "umi", "cell_radius": 250.0, "power_control": "pathloss-inversion"}, seed=4)
    own = CellChannel(cfg.phy, seed=4).large_scale(np.array([3, 7]), K=2, round_index=9).gain_eff
    assert (acc.link.gain_scales[3], acc.link.gain_scales[7]) == tuple(own)
    assert max(acc.link.gain_scales) <= 1.0  # pathloss inversion at 0 dB target caps β_eff at 1


def test_a_floras_scenario_with_a_cell_states_the_cell_in_its_assumptions():
    rep = _accountant({"pathloss": "umi", "cell_radius": 250.0}).report(rounds=3)
    lines = [a for a in rep.assumptions if a.startswith("link level")]
    assert len(lines) == 1 and "cell: per-client SNR·β_eff,c" in lines[0] and "run.seed = 0" in lines[0]
    assert all("\n" not in a for a in rep.assumptions)
    redrop = _accountant({"pathloss": "umi", "cell_radius": 250.0, "redrop": True}).report(rounds=3)
    assert redrop.epsilon == rep.epsilon  # the idealised release does not depend on the drops
    line = next(a for a in redrop.assumptions if a.startswith("link level"))
    assert "re-dropped every round at run.seed = 0" in line and "drops of rounds 1..3" in line


# ---------------------------------------------------------------- a cell re-dropped every round
_REDROP = {"pathloss": "log-distance", "cell_radius": 200.0, "cell_min_distance": 10.0, "pathloss_exponent": 3.0,
           "shadowing_db": 6.0, "redrop": True}


def _redrop_gains(seed: int, rounds: int, M: int) -> np.ndarray:
    """β_eff,t,c from the documented drop (model §5.1), not from phy.cell: stream (seed, "cell-redrop", t, c) gives
    u, v, w uniform then z normal; d = √(r₀² + u(R² − r₀²)); cell-edge reference, full power:
    β_eff = (R/d)^n·10^(−σz/10)."""
    from phy.randomness import stream

    R, r0, n, sigma = 200.0, 10.0, 3.0, 6.0
    out = []
    for t in range(rounds):
        for c in range(M):
            g = stream(seed, "cell-redrop", t, c)
            u, _, _ = g.random(3)
            z = g.standard_normal()
            d = math.sqrt(r0**2 + u * (R**2 - r0**2))
            out.append((R / d) ** n * 10 ** (-sigma * z / 10))
    return np.array(out)


def test_a_redropped_cell_averages_over_every_rounds_drop():
    acc = _accountant(_REDROP, seed=2)  # M = 10, K = 4, run.rounds = 3
    assert acc.link.drop_rounds == 3 and len(acc.link.gain_scales) == 30
    np.testing.assert_allclose(acc.link.gain_scales, _redrop_gains(2, 3, 10), rtol=1e-9)
    for t in (1, 3):
        eps, info = floras_link_epsilon(acc, rounds=t)
        # after t rounds: t·K·P(c_max) with P the mean over the drops of rounds 1..t (the first t·M gains)
        own = LinkModel(20.0, L=8, gain_scales=tuple(_redrop_gains(2, t, 10)))
        assert info["delta_truncation"] == pytest.approx(t * 4 * exceed_probability(info["c_max"], own), rel=1e-6)
        assert f"drops of rounds 1..{t}" in info["assumptions"][0]
    # a fixed drop (round 0's stream differs) gives a different population mean at the same c_max
    fixed = _accountant({**_REDROP, "redrop": False}, seed=2)
    assert fixed.link.drop_rounds is None and len(fixed.link.gain_scales) == 10
    assert not np.allclose(fixed.link.gain_scales, acc.link.gain_scales[:10])


def test_a_redropped_cell_states_no_epsilon_link_past_the_drawn_rounds():
    acc = _accountant(_REDROP)
    eps, info = floras_link_epsilon(acc, rounds=4)
    assert eps is None and "the drops of 3 rounds, not of the 4 asked for" in info["assumptions"][0]
    with pytest.raises(ValueError, match="drop_rounds"):
        LinkModel(20.0, gain_scales=(1.0, 2.0, 3.0), drop_rounds=2)  # 3 gains do not split into 2 rounds
    with pytest.raises(ValueError, match="drop_rounds"):
        LinkModel(20.0, drop_rounds=1)  # no gains at all


def test_a_redropped_population_too_large_to_draw_is_stated_with_its_count():
    from scenarios.config.floras_link import MAX_LINK_POPULATION
    from scenarios.config.schemes import scheme_accountant

    T = MAX_LINK_POPULATION["log-distance"] // 10 + 1  # T·M just above the limit with M = 10
    cfg = _scenario(_REDROP)
    big = replace(cfg, run=replace(cfg.run, rounds=T))
    rep = scheme_accountant(big, d=40, D=1).report(rounds=1)
    assert rep.epsilon_link is None
    assert any(f"T·M = {T}·10 re-drops" in a for a in rep.assumptions)


def test_refusals_kept_for_stale_pilots_timing_and_antennas():
    # a stale pilot over B > 1 blocks: the one-pilot ε and an ε_link over B blocks (tests/test_floras_stale_privacy.py),
    # with phase CSIT too (a bound), and with a line of sight (tests/test_floras_stale_los.py)
    stale = _accountant({"coherence_symbols": 11, "floras": {"N": 8, "pilots": "stale"}})
    assert (stale.pilot_blocks, stale.link.blocks, len(stale.link.stale)) == (1, 4, 4)
    phase = _accountant({"coherence_symbols": 11, "floras": {"N": 8, "pilots": "stale", "csit": "phase"}})
    assert (phase.pilot_blocks, phase.link.blocks, phase.link.csit) == (1, 4, "phase")
    # a stale pilot over one block (n_c ≥ d + 1) is the link of §5
    assert _accountant({"coherence_symbols": 41, "floras": {"N": 8, "pilots": "stale"}}).link.blocks == 1
    # offsets with N > K: the PLD of the law given the pilots only (tests/test_floras_timing_law.py)
    with pytest.raises(ValueError, match=r"privacy\.accountant = 'rdp': FLORAS's ε from the law given the pilots \(chip-timing offsets\)"):
        _accountant({"timing_offset": 0.2, "floras": {"N": 8, "path": "chip"}})
    # several antennas: every accountant (model §9.5, "Several antennas"; tests/test_antenna_rdp.py), no ε_link
    assert math.isfinite(_accountant({"rx_antennas": 2, "floras": {"N": 8, "csit": "none"}}).epsilon(rounds=3))
    from privacy import FlorasRunAccountant

    # the PLD takes the blocks (model §9.5, "Several pilots": the mixture over V_min), above the one-pilot ε
    kw = dict(K=4, N=8, M=10, d=40, C=0.05, relation="add-remove", sampling="poisson", accountant="pld")
    assert FlorasRunAccountant(pilot_blocks=4, **kw).epsilon(rounds=10) > FlorasRunAccountant(**kw).epsilon(rounds=10)
    # and a scenario with per-block pilots takes pld and tightest; an accountant without a FLORAS form is refused
    blocks = {"coherence_symbols": 11, "floras": {"N": 8, "pilots": "per-block"}}
    assert _accountant(blocks, accountant="pld").pilot_blocks == 4
    assert "4 pilot blocks" in "\n".join(_accountant(blocks, accountant="pld").report(rounds=3).assumptions)
    for name in ("gdp", "fdp"):
        with pytest.raises(ValueError, match=rf"accountant:? {name}|accountant = '{name}'"):
            _accountant(blocks, accountant=name)
    # the tight Rényi accountant takes the blocks (model §9.5, "Several pilots"): never below the one-pilot curve
    tight = _accountant({"coherence_symbols": 11})
    assert tight.pilot_blocks == 4 and tight.event.event.blocks == 4
    assert np.all(tight.round_rdp >= _accountant({}).round_rdp)


def test_timing_offsets_without_inactive_sequences_at_epsilon_infinity():
    # N = K (γ = 0): no inactive sequence carries privacy noise, ε = ∞ whatever the link, under every accountant;
    # one inactive sequence (N = K + 1) takes the law given the pilots, which only the PLD accountants bound
    # (model §5.1, "FLORAS's ε with offsets"; tests/test_floras_timing_law.py)
    acc = _accountant({"timing_offset": 0.5, "floras": {"N": 4, "path": "chip"}})
    assert acc.gamma == 0 and math.isinf(acc.epsilon(rounds=3))
    for accountant in ("pld", "tightest"):  # the PLD of γ = 0 is all at infinite loss, and so is its composition
        noiseless = _accountant({"timing_offset": 0.5, "floras": {"N": 4, "path": "chip"}}, accountant=accountant)
        assert math.isinf(noiseless.report(rounds=200).epsilon)
    with pytest.raises(ValueError, match=r"privacy\.accountant = 'rdp': .*\"pld\" or \"tightest\""):
        _accountant({"timing_offset": 0.5, "floras": {"N": 5, "path": "chip"}})


def test_floras_link_csv_reports_epsilon_and_epsilon_link_with_a_cell_and_blocks(tmp_path):
    import csv

    from scenarios.cli.main import main

    path = tmp_path / "s.csv"
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "30", "--rounds", "1",
                 "--pathloss", "umi", "--cell-radius", "250", "--coherence-symbols", "11", "--csv", str(path)]) == 0
    row = next(csv.DictReader(path.open()))
    want = FlorasRunAccountant(K=4, N=8, M=4, d=30, delta=1e-5, accountant="rdp-generic").epsilon(rounds=1)
    assert float(row["epsilon"]) == pytest.approx(want, rel=1e-12) and row["epsilon_link"] != ""
