"""Frequency-selective fading over OFDM subcarriers from TR 38.901's TDL profiles (model §5.1, phy/channels/tdl.py).

The profiles are checked against the standard's tables (typed here from TR 38.901 Tables 7.7.2-1 to -5, not read
from Sionna); the drawn subcarrier gains against the correlation Σ_l p_l·exp(−j2π·Δ·Δf·τ_l) computed here from
those taps; block 0 against the round's flat draw (one block is the link of model §5 bit for bit).
"""

import math

import numpy as np
import pytest

from phy.channels.tdl import frequency_correlation, los_k_factor, subcarrier_gains, tdl_profile
from phy.coherence import draw_blocks
from phy.config import PhyConfig
from phy.fading import draw_rayleigh

from stale_probe import stale_weights  # tests/stale_probe.py

# (normalized delay, power [dB]) of the first taps; the tap count of each profile (TR 38.901 §7.7.2)
TABLE = {
    "A": (23, [(0.0, -13.4), (0.3819, 0.0), (0.4025, -2.2), (0.5868, -4.0), (0.4610, -6.0), (0.5375, -8.2)]),
    "B": (23, [(0.0, 0.0), (0.1072, -2.2), (0.2155, -4.0), (0.2095, -3.2), (0.2870, -9.8), (0.2986, -1.2)]),
    "C": (24, [(0.0, -4.4), (0.2099, -1.2), (0.2219, -3.5), (0.2329, -5.2), (0.2176, -2.5), (0.6366, 0.0)]),
}


@pytest.mark.parametrize("model", sorted(TABLE))
def test_profiles_are_the_standards_taps_scaled_by_the_delay_spread(model):
    count, taps = TABLE[model]
    ds = 300e-9
    tau, p = tdl_profile(model, ds)
    assert tau.size == count and p.sum() == pytest.approx(1.0, abs=1e-15) and np.all(np.diff(tau) >= 0)
    strongest = p.max()  # each profile has one 0 dB tap
    for delay, power_db in taps:
        i = int(np.argmin(np.abs(tau - delay * ds)))
        assert tau[i] == pytest.approx(delay * ds, rel=1e-6, abs=1e-15)
        assert 10 * math.log10(p[i] / strongest) == pytest.approx(power_db, abs=1e-4)


def test_subcarrier_gains_have_the_profiles_frequency_correlation_and_unit_power():
    model, ds, df, B = "A", 300e-9, 30e3, 48
    tau, p = tdl_profile(model, ds)
    K, rounds = 5000, 8
    h = np.concatenate([draw_blocks(3, t, K=K, n_blocks=B, correlation="tdl", tdl=(model, ds, df)) for t in range(rounds)])
    n = h.shape[0]
    for lag in (0, 1, 12, 47):
        want = complex(np.sum(p * np.exp(-2j * math.pi * lag * df * tau)))  # R[m + lag, m] from the taps
        got = np.mean(h[:, lag] * np.conj(h[:, 0]))
        # E|h_m h_0*|² = 1 + |R|² ≤ 2 for unit-power circular Gaussians: |got − want| has standard deviation ≤ √(2/n)
        assert abs(got - want) < 5 * math.sqrt(2.0 / n), (lag, got, want)
        assert np.mean(np.abs(h[:, lag]) ** 2) == pytest.approx(1.0, abs=5 * math.sqrt(1.0 / n))  # Var|h|² = 1 (exponential)
    assert abs(frequency_correlation(model, ds, df, B)[12, 0] - np.sum(p * np.exp(-2j * math.pi * 12 * df * tau))) < 1e-12
    # the profile decorrelates over the band (coherence bandwidth ≈ 1/DS ≈ 110 subcarriers): not a flat channel
    assert abs(np.mean(h[:, 47] * np.conj(h[:, 0]))) < 0.8


def test_block_zero_is_the_flat_draw_and_the_taps_come_from_their_own_stream():
    h = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3))
    assert np.array_equal(h[:, 0], draw_rayleigh(9, 4, K=30))
    again = subcarrier_gains(draw_rayleigh(9, 4, K=30), seed=9, round_index=4, n_blocks=16, model="B", delay_spread=100e-9,
                             spacing=60e3)
    assert np.array_equal(h, again)
    other = draw_blocks(9, 5, K=30, n_blocks=16, correlation="tdl", tdl=("B", 100e-9, 60e3))
    assert not np.allclose(h[:, 1:], other[:, 1:])
    # a zero delay spread limit: every subcarrier the same gain (flat fading) as DS → 0
    flat = draw_blocks(9, 4, K=30, n_blocks=16, correlation="tdl", tdl=("B", 1e-15, 60e3))
    np.testing.assert_allclose(flat, np.repeat(flat[:, :1], 16, axis=1), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("bad, match", [
    ({"tdl_model": "F"}, r"tdl_model must be one of \{A, B, C, D, E\}"),
    ({"delay_spread": 0.0}, r"delay_spread must be > 0"),
    ({"delay_spread": 1e-3}, r"delay_spread must be ≤ 1e-05"),
    ({"subcarrier_spacing": -15e3}, r"subcarrier_spacing must be > 0"),
    ({"coherence_symbols": None}, r"set phy\.coherence_symbols"),
    ({"rician_k": 2.0}, r"rician_k: the TDL profiles carry their own line of sight"),
    ({"rician_k": 2.0, "tdl_model": "D"}, r"remove phy\.rician_k"),
])
def test_tdl_options_out_of_range_are_refused_by_name(bad, match):
    kw = {"coherence_symbols": 11, "fading_correlation": "tdl", **bad}
    with pytest.raises(ValueError, match=match):
        PhyConfig.make(scheme="channel-inversion", **kw).validate(K=4, d=100)


def test_channel_inversion_inverts_each_subcarrier_and_stale_csit_fails_with_the_delay_spread():
    # per-block CSIT inverts every subcarrier: the error is the receiver noise's whatever DS; block 0's CSIT over the
    # band leaves w_m = Re(h_m/h_0), which departs from 1 as the band exceeds the coherence bandwidth ≈ 1/DS
    from phy.schemes import make_aggregator

    x = np.random.default_rng(0).standard_normal((6, 200)) * 0.05
    nmse = {}
    for csit in ("per-block", "stale"):
        for ds in (30e-9, 1000e-9):
            cfg = PhyConfig.make(scheme="channel-inversion", inversion_csit=csit, coherence_symbols=21, fading_correlation="tdl",
                                 tdl_model="C", delay_spread=ds, normalization="clip", clip_norm=1.0, snr_db=30.0)
            agg = make_aggregator(cfg, K=6, d=200, seed=1)
            nmse[csit, ds] = float(np.median([agg.aggregate(x, round_index=t).diagnostics["clipped_nmse"] for t in range(20)]))
    assert nmse["per-block", 30e-9] < 0.01 and nmse["per-block", 1000e-9] < 0.01
    assert nmse["stale", 1000e-9] > 10 * nmse["stale", 30e-9] and nmse["stale", 1000e-9] > 0.1


def test_floras_with_per_subcarrier_pilots_states_its_epsilon():
    from scenarios.config import scenario_from_dict
    from scenarios.config.schemes import scheme_accountant

    cfg = scenario_from_dict({"partition": {"clients": 10}, "training": {"clients_per_round": 4},
                              "phy": {"scheme": "floras", "snr_db": 20.0, "C": 0.05, "L": 8, "floras": {"N": 8},
                                      "coherence_symbols": 11, "fading_correlation": "tdl", "tdl_model": "A"},
                              "privacy": {"delta": 1e-5, "accountant": "rdp-generic"}, "run": {"rounds": 3}}, resolve=False)
    acc = scheme_accountant(cfg, d=40, D=1)
    assert acc.link.blocks == 4  # ⌈40/10⌉ subcarriers, one pilot each: the per-block bound of model §5.1
    assert math.isfinite(acc.epsilon(rounds=3))


def test_stale_csit_weights_over_subcarriers_follow_the_profiles_correlation():
    """w_{k,m} = Re(h_{k,m}/h_{k,0}) over the admitted clients: mean Re r_m, variance (1 − |r_m|²)·e^g·E₁(g)/2, with
    r_m = Σ_l p_l·exp(−j2π·m·Δf·τ_l) from the profile's taps (model §5.1; the aging law with a complex r_m).

    As tests/test_csit_aging.py: client k sends 1 on entry k of every block, 90 dB, so ŝ's entry (m, k) is w_{k,m}.
    Plausible bugs caught: |r_m| for Re r_m (the phase across the band ignored), a subcarrier index off by one, each
    subcarrier inverted with its own channel (mean 1, variance 0).
    """
    from scipy.special import exp1

    from phy.channel_inversion import ChannelInversionLink

    K, n_c, B, T, g, df, ds = 10, 10, 6, 1500, 0.1, 1e6, 100e-9
    tau, p = tdl_profile("A", ds)
    r = np.exp(-2j * math.pi * df * np.arange(B)[:, None] * tau[None, :]) @ p
    assert np.max(np.abs(r) - r.real) > 0.5  # the phase across the band matters: Re r_m far from |r_m|
    cfg = PhyConfig.make(scheme="channel-inversion", snr_db=90.0, g_th=g, normalization="clip", clip_norm=1.0,
                         coherence_symbols=n_c, fading_correlation="tdl", tdl_model="A", delay_spread=ds,
                         subcarrier_spacing=df)
    link = ChannelInversionLink(cfg, K=K, seed=12)
    w = stale_weights(link, K=K, n_c=n_c, B=B, T=T)  # [Σ K′, B] (tests/stale_probe.py)
    n = w.shape[0]
    inv_h2 = math.exp(g) * float(exp1(g))  # E[1/|h_0|² | |h_0|² ≥ g]
    inv_h4 = math.exp(g) * (math.exp(-g) / g - float(exp1(g)))  # E[1/|h_0|⁴ | |h_0|² ≥ g]
    for m in range(B):
        var = (1.0 - abs(r[m]) ** 2) * inv_h2 / 2.0
        fourth = 3.0 * ((1.0 - abs(r[m]) ** 2) / 2.0) ** 2 * inv_h4  # conditionally Gaussian: E[(w − Re r)⁴]
        assert abs(w[:, m].mean() - r[m].real) < 5.0 * math.sqrt(var / n) + 1e-3, (m, w[:, m].mean(), r[m])
        assert abs(np.mean((w[:, m] - r[m].real) ** 2) - var) < 5.0 * math.sqrt(max(fourth - var**2, 0.0) / n) + 1e-3


# TR 38.901 Tables 7.7.2-4 (TDL-D) and 7.7.2-5 (TDL-E): the specular power [dB], then the Rayleigh taps (normalized
# delay, power [dB]), the first at delay 0 beside the specular component; K₁ = 13.3 dB and 22 dB
LOS_TABLE = {
    "D": (-0.2, [(0.0, -13.5), (0.035, -18.8), (0.612, -21.0), (1.363, -22.8), (1.405, -17.9), (1.804, -20.1),
                 (2.596, -21.9), (1.775, -22.9), (4.042, -27.8), (7.937, -23.6), (9.424, -24.8), (9.708, -30.0),
                 (12.525, -27.7)], 13.3),
    "E": (-0.03, [(0.0, -22.03), (0.5133, -15.8), (0.5440, -18.1), (0.5630, -19.8), (0.5440, -22.9), (0.7112, -22.4),
                  (1.9092, -18.6), (1.9293, -20.8), (1.9589, -22.6), (2.6426, -22.3), (3.7136, -25.6), (5.4524, -20.2),
                  (12.0034, -29.8), (20.6519, -29.2)], 22.0),
}


def _los_taps(model, ds):
    los_db, taps, _ = LOS_TABLE[model]
    tau = np.array([t for t, _ in taps]) * ds
    p = 10.0 ** (np.array([q for _, q in taps]) / 10.0)
    kappa = 10.0 ** (los_db / 10.0) / p.sum()  # the specular power over all the scattered power
    return tau, p / p.sum(), kappa


@pytest.mark.parametrize("model", sorted(LOS_TABLE))
def test_los_profiles_are_the_standards_scattered_taps_and_k_factor(model):
    los_db, taps, k1_db = LOS_TABLE[model]
    ds = 100e-9
    want_tau, want_p, want_kappa = _los_taps(model, ds)
    tau, p = tdl_profile(model, ds)
    order = np.argsort(want_tau, kind="stable")
    np.testing.assert_allclose(tau, want_tau[order], rtol=1e-6, atol=1e-15)
    np.testing.assert_allclose(p, want_p[order], rtol=1e-5)
    assert los_k_factor(model) == pytest.approx(want_kappa, rel=1e-5)
    assert los_db - taps[0][1] == pytest.approx(k1_db, abs=0.01)  # the standard's K₁ (the table typed right)
    for nlos in "ABC":
        assert los_k_factor(nlos) == 0.0
    cfg = PhyConfig.make(scheme="channel-inversion", coherence_symbols=11, fading_correlation="tdl", tdl_model=model)
    assert cfg.los_k == pytest.approx(want_kappa, rel=1e-5)
    assert PhyConfig.make(scheme="channel-inversion", rician_k=3.0).los_k == 3.0


@pytest.mark.parametrize("model", sorted(LOS_TABLE))
def test_los_subcarrier_gains_are_rician_with_the_profiles_correlation(model):
    # h_m = √(κ/(κ+1))·e^{jφ} + h̃_m/√(κ+1): E|h_m|² = 1, E[h_m h_0*] = (κ + Σ p_l e^{−j2π m Δf τ_l})/(κ + 1) and
    # E|h_m|⁴ = (2 + 4κ + κ²)/(κ + 1)² (2 for Rayleigh: a draw without the specular part fails)
    from phy.link_channel import LinkChannel

    ds, df, B, K, rounds = 300e-9, 30e3, 48, 5000, 8
    tau, p, kappa = _los_taps(model, ds)
    cfg = PhyConfig.make(scheme="channel-inversion", coherence_symbols=11, fading_correlation="tdl", tdl_model=model,
                         delay_spread=ds, subcarrier_spacing=df)
    link = LinkChannel(cfg, K=K, seed=3)
    h = np.concatenate([link.draw(t, n_blocks=B) for t in range(rounds)])
    n = h.shape[0]
    fourth = (2.0 + 4.0 * kappa + kappa ** 2) / (kappa + 1.0) ** 2
    for lag in (0, 1, 12, 47):
        want = (kappa + complex(np.sum(p * np.exp(-2j * math.pi * lag * df * tau)))) / (kappa + 1.0)
        prod = h[:, lag] * np.conj(h[:, 0])
        # |h_m h_0*|² has mean ≤ E|h|⁴ ≤ 2: |got − want| has standard deviation ≤ √(2/n)
        assert abs(prod.mean() - want) < 5 * math.sqrt(2.0 / n), (lag, prod.mean(), want)
        a2 = np.abs(h[:, lag]) ** 2
        assert a2.mean() == pytest.approx(1.0, abs=5 * math.sqrt((fourth - 1.0) / n))
        a4 = a2 ** 2
        assert a4.mean() == pytest.approx(fourth, abs=5 * a4.std() / math.sqrt(n)), (lag, a4.mean(), fourth)
    assert abs(frequency_correlation(model, ds, df, B)[12, 0] - (kappa + np.sum(p * np.exp(-2j * math.pi * 12 * df * tau)))
               / (kappa + 1.0)) < 1e-6
    assert link.describe()["fading"]["rician_k"] == pytest.approx(kappa, rel=1e-5)


def test_los_profiles_run_channel_inversion_and_give_floras_an_epsilon_link_of_their_law():
    from phy.schemes import make_aggregator
    from scenarios.config import scenario_from_dict
    from scenarios.config.schemes import scheme_accountant

    x = np.random.default_rng(0).standard_normal((6, 200)) * 0.05
    cfg = PhyConfig.make(scheme="channel-inversion", inversion_csit="per-block", coherence_symbols=21, fading_correlation="tdl",
                         tdl_model="D", delay_spread=300e-9, normalization="clip", clip_norm=1.0, snr_db=30.0)
    agg = make_aggregator(cfg.validate(K=6, d=200), K=6, d=200, seed=1)
    assert float(np.median([agg.aggregate(x, round_index=t).diagnostics["clipped_nmse"] for t in range(20)])) < 0.01
    table = {"partition": {"clients": 10}, "training": {"clients_per_round": 4},
             "phy": {"scheme": "floras", "snr_db": 20.0, "C": 0.05, "L": 8, "floras": {"N": 8},
                     "coherence_symbols": 11, "fading_correlation": "tdl", "tdl_model": "E"},
             "privacy": {"delta": 1e-5, "accountant": "rdp-generic"}, "run": {"rounds": 3}}
    # FLORAS's ε_link takes the profile's Rician law (tests/test_floras_rician_privacy.py)
    acc = scheme_accountant(scenario_from_dict(table, resolve=False), d=40, D=1)
    assert acc.link.rician_k == pytest.approx(PhyConfig.make(fading_correlation="tdl", tdl_model="E",
                                                             coherence_symbols=21).los_k, rel=1e-12) and acc.link.blocks == 4
