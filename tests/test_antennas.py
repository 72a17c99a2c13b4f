"""Receive antennas N_r ≥ 1 (model §5.2): channel, combiners, FLORAS's combined error, privacy refusals.

Predictions come from model §5.2's formulas applied to the raw configuration and to the observations the base
station has (channels, pilot outputs), computed here with numpy independently of phy/antennas.py.
"""

import numpy as np
import pytest

from phy.channel_inversion import ChannelInversionLink
from phy.config import PhyConfig
from phy.fading import draw_rayleigh, draw_rayleigh_antennas
from phy.schemes import make_aggregator

KEY = b"antenna-test-key"
Z = 5.0  # tolerance in standard errors: a correct model fails with probability < 1e-6 per check


def _combiner(h):
    """max over unit a of Σ_k |aᴴu_k|², u_k = h_k/‖h_k‖: the top right-singular vector of U* (independent of eigh)."""
    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    _, _, vh = np.linalg.svd(u.conj())  # rows of U* (= u_kᴴ); ‖U* a‖² = Σ_k |u_kᴴ a|²
    return vh[0].conj()


def test_antenna_zero_is_the_single_antenna_draw_and_entries_are_iid_unit_rayleigh():
    for t in range(3):
        np.testing.assert_array_equal(draw_rayleigh_antennas(4, t, K=6, n_rx=1)[:, 0], draw_rayleigh(4, t, K=6))
        np.testing.assert_array_equal(draw_rayleigh_antennas(4, t, K=6, n_rx=5)[:, 0], draw_rayleigh(4, t, K=6))
    h = np.concatenate([draw_rayleigh_antennas(1, t, K=250, n_rx=8) for t in range(4)])  # [1000, 8]
    p = np.abs(h[:, 1:]) ** 2  # antennas 1..7 (the Sionna draw with num_rx_ant = 7): Exp(1), variance 1
    n = p.size
    assert abs(p.mean() - 1.0) < Z / np.sqrt(n)
    # distinct antennas uncorrelated: |mean of h_1 h_2*| has std 1/√n' (E|h_1 h_2|² = 1)
    assert abs(np.mean(h[:, 1] * h[:, 2].conj())) < Z / np.sqrt(h.shape[0])
    assert abs(np.mean(h[:, 0] * h[:, 3].conj())) < Z / np.sqrt(h.shape[0])


def test_rx_antennas_is_checked_with_one_line_naming_the_key():
    bad = [
        (dict(rx_antennas=0), "rx_antennas"),
        (dict(rx_antennas=2.0), "rx_antennas"),
        (dict(rx_antennas=True), "rx_antennas"),
        (dict(scheme="ddgauss", normalization="clip", clip_norm=1.0, rx_antennas=2), "rx_antennas"),
        (dict(scheme="sqsgd", normalization="clip", clip_norm=1.0, rx_antennas=2), "rx_antennas"),
        (dict(scheme="floras", rx_antennas=2, timing_offset=0.3), "timing_offset"),
        (dict(scheme="floras", rx_antennas=2, floras={"csit": "phase"}), "floras.csit"),
        (dict(scheme="floras", rx_antennas=2, floras={"path": "chip"}), "rx_antennas"),
    ]
    for table, key in bad:
        with pytest.raises(ValueError) as info:
            PhyConfig.make(L=16, **table).validate(K=4, d=10)
        assert str(info.value).startswith(key) and "\n" not in str(info.value), str(info.value)
    PhyConfig.make(scheme="ideal", rx_antennas=4).validate(K=4, d=10)  # no radio link: the key does not apply


def test_channel_inversion_admits_on_the_combiners_channel_and_keeps_one_antennas_noise():
    # min-admitted rule: ρ = min_{admitted} |aᴴh_k|²; error ŝ − Σ_adm s_k ~ N(0, ‖a‖²σ²/(Lρ)), ‖a‖ = 1
    K, d, n_rx, L, snr_db, g_th = 12, 30000, 4, 8, 5.0, 0.5
    cfg = PhyConfig.make(scheme="channel-inversion", L=L, snr_db=snr_db, g_th=g_th, rho_rule="min-admitted",
                         rx_antennas=n_rx)
    link = ChannelInversionLink(cfg, K=K, seed=3)
    s = np.random.default_rng(0).standard_normal((K, d))
    fewer = 0
    for t in range(3):
        rnd = link.run_round(s, round_index=t)
        h = draw_rayleigh_antennas(3, t, K=K, n_rx=n_rx)
        a = _combiner(h)
        heff = h @ a.conj()
        np.testing.assert_allclose(np.abs(rnd.h), np.abs(heff), rtol=1e-9)
        adm = np.abs(heff) ** 2 >= g_th
        np.testing.assert_array_equal(rnd.admitted, adm)
        rho = np.min(np.abs(heff[adm]) ** 2)
        var = (1.0 / 10 ** (snr_db / 10)) / L / rho  # σ² = P/10^(SNR/10), P = 1
        err = rnd.s_hat - s[adm].sum(axis=0)
        assert abs(err.var() / var - 1.0) < Z * np.sqrt(2.0 / d)  # sample variance: relative std √(2/d)
        fewer += int(adm.sum() < (np.abs(h[:, 0]) ** 2 >= g_th).sum())
    assert fewer == 0  # here the combiner admits at least those antenna 0 alone would (seeded rounds)


def test_analog_gaussian_counts_only_the_clients_noise_with_several_antennas():
    from phy.analog_gaussian import guaranteed_noise_std

    K, d, L, snr_db, z, g_th = 6, 20000, 8, 0.0, 0.05, 0.01
    base = dict(scheme="analog-gaussian", L=L, snr_db=snr_db, g_th=g_th, normalization="clip", clip_norm=1.0,
                C=1.0, **{"analog-gaussian": {"noise_multiplier": z}})
    S = 2.0  # replace-one sensitivity 2C, C = 1
    rx_std = np.sqrt(1.0 / 10 ** (snr_db / 10) / L / g_th)  # σ_n/√g_th = √(1/(8·0.01)) ≈ 3.5 > z·S = 0.1
    one = PhyConfig.make(**base)
    four = PhyConfig.make(**base, rx_antennas=4)
    assert guaranteed_noise_std(one, d=d, relation="replace") == pytest.approx(rx_std)
    assert guaranteed_noise_std(four, d=d, relation="replace") == pytest.approx(z * S)
    x = np.random.default_rng(1).standard_normal((K, d)) * 1e-3
    r1 = make_aggregator(one, K=K, d=d, seed=2).aggregate(x, round_index=0)
    r4 = make_aggregator(four, K=K, d=d, seed=2).aggregate(x, round_index=0)
    assert r1.diagnostics["artificial_noise_std"] == 0.0  # receiver noise exceeds the target: counted, none added
    assert r4.diagnostics["artificial_noise_std"] == pytest.approx(z * S)  # the full target from the clients
    assert r4.diagnostics["noise_std_effective"] == pytest.approx(np.hypot(rx_std, z * S))


def _floras(n_rx, *, N=16, L=16, snr_db=0.0, path="fast"):
    return PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, rx_antennas=n_rx, floras={"N": N, "path": path})


def test_floras_combined_error_has_the_derived_conditional_variance():
    # given the pilots r^s [N_r, N]: c_{j,r} = b r_{j,r}/Σ_r r_{j,r}²; ŝ − Σ_k u_k s_k ~ N(0, (σ²/L) Σ_{j,r} c_{j,r}²),
    # u_k = Σ_r c_{π(k),r} g_{k,r}; the inactive part e ~ N(0, V), V = (σ²/L) Σ_{j∈I} 1/Σ_r r_{j,r}² (model §5.2)
    K, d, n_rx, L, snr_db = 5, 20000, 4, 16, 0.0
    noise = (1.0 / 10 ** (snr_db / 10)) / L  # σ²/L, P = b² = 1
    s = np.random.default_rng(4).standard_normal((K, d))
    for path in ("fast", "sufficient"):
        link = make_aggregator(_floras(n_rx, L=L, snr_db=snr_db, path=path), K=K, d=d, seed=5, key=KEY).link
        for t in range(2):
            rnd = link.run_round(s, round_index=t, trace=path == "fast")
            R, G = rnd.r_ref_antennas, rnd.gain_antennas
            assert R.shape == (n_rx, 16) and G.shape == (K, n_rx)
            np.testing.assert_allclose(G, np.real(draw_rayleigh_antennas(5, t, K=K, n_rx=n_rx)), rtol=0, atol=0)
            c = R / (R**2).sum(axis=0)
            u = (c[:, rnd.active] * G.T).sum(axis=0)
            err = rnd.s_hat - u @ s
            var = noise * (c**2).sum()
            assert abs(err.var() / var - 1.0) < Z * np.sqrt(2.0 / d), (path, t)
            inactive = np.setdiff1d(np.arange(16), rnd.active)
            V = noise * np.sum(1.0 / (R[:, inactive] ** 2).sum(axis=0))
            assert rnd.V == pytest.approx(V, rel=1e-12)
            if path == "fast":
                assert abs(rnd.inactive_noise.var() / V - 1.0) < Z * np.sqrt(2.0 / d)


def test_floras_inactive_noise_variance_is_a_sum_of_inverse_chi_squares():
    # V/γ = mean over inactive j of 1/χ²_{N_r}: E = 1/(N_r − 2) = 1/6 for N_r = 8; Var 1/χ²_8 = 1/24 − 1/36 = 1/72,
    # so the mean of R·γ independent terms has std √(1/72/(Rγ)) (≈ 0.0034 for R = 20, γ = 60)
    K, N, n_rx, rounds = 4, 64, 8, 20
    agg = make_aggregator(_floras(n_rx, N=N, L=N, snr_db=10.0, path="sufficient"), K=K, d=1, seed=6, key=KEY)
    gamma = N - K
    v = np.array([agg.aggregate(np.ones((K, 1)), round_index=t).diagnostics["V"] for t in range(rounds)]) / gamma
    assert abs(v.mean() - 1.0 / 6.0) < Z * np.sqrt(1.0 / 72.0 / (rounds * gamma))


def test_the_cells_large_scale_gain_scales_every_antenna():
    from phy.cell import CellChannel
    from phy.link_channel import LinkChannel

    cfg = PhyConfig.make(scheme="channel-inversion", pathloss="log-distance", shadowing_db=4.0, rx_antennas=3)
    clients = np.array([3, 17, 40, 2])
    amp = CellChannel(cfg, seed=9).large_scale(clients, K=4, round_index=1).amplitude
    h = LinkChannel(cfg, K=4, seed=9).draw_antennas(1, clients=clients)
    np.testing.assert_allclose(h, amp[:, None] * draw_rayleigh_antennas(9, 1, K=4, n_rx=3), rtol=1e-15)
    assert np.ptp(amp) > 0  # the clients sit at different distances


def test_floras_epsilon_with_several_antennas_under_every_accountant_and_in_floras_link(tmp_path):
    import json

    from scenarios.cli.main import main
    from scenarios.config import scenario_from_dict

    for accountant in ("rdp", "pld"):  # model §9.5, "Several antennas": the Rényi bound and the PLD
        cfg = scenario_from_dict({"phy": {"scheme": "floras", "rx_antennas": 2}, "privacy": {"accountant": accountant}})
        assert cfg.phy.rx_antennas == 2
    cfg = scenario_from_dict({"phy": {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0,
                                      "rx_antennas": 2, "analog-gaussian": {"noise_multiplier": 1.0}}})
    assert cfg.phy.rx_antennas == 2  # its ε counts the clients' noise only (model §5.2)
    from scenarios.config.schemes import scheme_accountant

    # 0 dB, L = 8, g_th = 0.01: σ_n/√g_th = √(1/(8·0.01)) ≈ 3.5 > z·S = 2·0.1·C: counted at N_r = 1 only
    table = {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0, "snr_db": 0.0, "L": 8, "C": 1.0,
             "analog-gaussian": {"noise_multiplier": 0.1}}
    eps = {}
    for n_rx in (1, 2):
        acc = scheme_accountant(scenario_from_dict({"phy": {**table, "rx_antennas": n_rx}}), d=10, D=1)
        eps[n_rx] = acc.epsilon(rounds=1)
        assert ("receive antennas" in acc.threat_model) == (n_rx > 1)
    assert eps[2] > eps[1]
    out, csv = tmp_path / "s.json", tmp_path / "s.csv"
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "40", "--rounds", "2",
                 "--rx-antennas", "3", "--json", str(out), "--csv", str(csv)]) == 0
    data = json.loads(out.read_text())
    assert data["parameters"]["phy"]["rx_antennas"] == 3
    inactive = data["schemes"]["floras"]["inactive_noise"]  # no Cauchy/Lévy expectation; E V = γ/(N_r − 2) = 4/1
    assert inactive["cauchy_scale_expected"] is None and inactive["v_quantiles_expected_levy"] is None
    assert inactive["v_mean_expected"] == 4.0
    header, row = csv.read_text().splitlines()[:2]
    assert header.split(",")[-2:] == ["epsilon", "epsilon_link"]
    assert float(row.split(",")[-1]) >= float(row.split(",")[-2])  # ε_link over the maximum-ratio factors ≥ ε
    one = json.loads(out.read_text())
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "40", "--rounds", "2",
                 "--json", str(out), "--csv", str(csv)]) == 0
    row_one = csv.read_text().splitlines()[1]
    # less noise with 3 antennas: a larger one-round ε than one antenna's at the same link
    assert float(row.split(",")[-2]) > float(row_one.split(",")[-2]) > 0.0, (row, row_one, one["parameters"]["phy"])


def test_the_t2_audit_sees_every_antenna_and_refuses_phase_pre_rotation_with_several():
    """The audit models N_r antennas (tests/test_audit_linking_antennas.py); one phase cannot align them all."""
    from scenarios.audit.signals import T2Uplink

    view, truth = T2Uplink(_floras(2, N=8, L=8), K=4, seed=0, key=KEY).round(np.ones((4, 3)), round_index=0)
    assert view.r_pilots.shape == (8, 2) and view.r_data_antennas.shape == (2, 8, 3)
    assert truth.gains_antennas.shape == (4, 2)
    with pytest.raises(ValueError) as info:
        T2Uplink(_floras(2, N=8, L=8).with_params("floras", csit="phase"), K=4, seed=0, key=KEY)
    assert str(info.value).startswith("floras.csit") and "\n" not in str(info.value)
