"""Cell geometry, path loss and power control (model §5.1).

Predictions come from TR 38.901's equations and from the drop's documented keyed stream, computed here
independently of phy/cell.py and phy/channels/.
"""

import math

import numpy as np
import pytest
from scipy import stats

from phy.cell import CellChannel
from phy.config import PhyConfig
from phy.fading import draw_rayleigh
from phy.randomness import stream
from phy.schemes import make_aggregator

LEVEL = 1e-3  # KS tests: a correct model fails with probability 1e-3 (fixed seeds: deterministic)
C = 299_792_458.0
FC = 3.5e9
D2D = np.array([20.0, 100.0, 300.0, 1000.0])
H_UT = 1.5


def _d3(h_bs):
    return np.sqrt(D2D**2 + (h_bs - H_UT) ** 2)


def umi_38901(h_bs=10.0):
    """TR 38.901 Table 7.4.1-1, UMi street canyon: (PL_LoS, PL_NLoS) [dB] at D2D."""
    d3, f = _d3(h_bs), FC / 1e9
    d_bp = 4 * (h_bs - 1) * (H_UT - 1) * FC / C
    pl1 = 32.4 + 21 * np.log10(d3) + 20 * np.log10(f)
    pl2 = 32.4 + 40 * np.log10(d3) + 20 * np.log10(f) - 9.5 * np.log10(d_bp**2 + (h_bs - H_UT) ** 2)
    los = np.where(D2D <= d_bp, pl1, pl2)
    nlos = np.maximum(los, 35.3 * np.log10(d3) + 22.4 + 21.3 * np.log10(f) - 0.3 * (H_UT - 1.5))
    return los, nlos


def uma_38901(h_bs=25.0):
    """UMa (h_E = 1 m: exact for h_UT = 1.5 m, where C(d, h_UT) = 0)."""
    d3, f = _d3(h_bs), FC / 1e9
    d_bp = 4 * (h_bs - 1) * (H_UT - 1) * FC / C
    pl1 = 28.0 + 22 * np.log10(d3) + 20 * np.log10(f)
    pl2 = 28.0 + 40 * np.log10(d3) + 20 * np.log10(f) - 9 * np.log10(d_bp**2 + (h_bs - H_UT) ** 2)
    los = np.where(D2D <= d_bp, pl1, pl2)
    nlos = np.maximum(los, 13.54 + 39.08 * np.log10(d3) + 20 * np.log10(f) - 0.6 * (H_UT - 1.5))
    return los, nlos


def rma_38901(h_bs=35.0, h=5.0, W=20.0):
    """RMa, average building height h = 5 m, street width W = 20 m (the Table's defaults)."""
    d3, f = _d3(h_bs), FC / 1e9
    d_bp = 2 * math.pi * h_bs * H_UT * FC / C

    def pl1(d):
        return (20 * np.log10(40 * math.pi * d * f / 3) + min(0.03 * h**1.72, 10) * np.log10(d)
                - min(0.044 * h**1.72, 14.77) + 0.002 * math.log10(h) * d)

    los = np.where(D2D <= d_bp, pl1(d3), pl1(d_bp) + 40 * np.log10(d3 / d_bp))
    nlos_p = (161.04 - 7.1 * math.log10(W) + 7.5 * math.log10(h) - (24.37 - 3.7 * (h / h_bs) ** 2) * math.log10(h_bs)
              + (43.42 - 3.1 * math.log10(h_bs)) * (np.log10(d3) - 3) + 20 * np.log10(f)
              - (3.2 * math.log10(11.75 * H_UT) ** 2 - 4.97))
    return los, np.maximum(los, nlos_p)


P_LOS = {  # Table 7.4.2-1 (h_UT ≤ 13 m for UMa)
    "umi": np.where(D2D <= 18, 1.0, 18 / D2D + np.exp(-D2D / 36) * (1 - 18 / D2D)),
    "uma": np.where(D2D <= 18, 1.0, 18 / D2D + np.exp(-D2D / 63) * (1 - 18 / D2D)),
    "rma": np.where(D2D <= 10, 1.0, np.exp(-(D2D - 10) / 1000)),
}
SIGMA_SF = {"umi": (4.0, 7.82), "uma": (4.0, 6.0), "rma": (4.0, 8.0)}  # Table 7.4.1-1 (RMa LoS: d < d_BP)


@pytest.mark.parametrize("name,formula", [("umi", umi_38901), ("uma", uma_38901), ("rma", rma_38901)])
def test_tr38901_pathloss_los_probability_and_shadowing_match_the_standard(name, formula):
    from phy.channels import pathloss_model

    cfg = PhyConfig.make(pathloss=name, carrier_ghz=3.5, ut_height=H_UT)
    model = pathloss_model(name)
    los, nlos = formula()
    np.testing.assert_allclose(model.pathloss_db(D2D, los=np.ones(4, bool), config=cfg), los, atol=1e-9)
    np.testing.assert_allclose(model.pathloss_db(D2D, los=np.zeros(4, bool), config=cfg), nlos, atol=1e-9)
    np.testing.assert_allclose(model.los_probability(D2D, config=cfg), P_LOS[name], atol=1e-12)
    np.testing.assert_allclose(model.shadowing_std_db(D2D, los=np.ones(4, bool), config=cfg), SIGMA_SF[name][0])
    np.testing.assert_allclose(model.shadowing_std_db(D2D, los=np.zeros(4, bool), config=cfg), SIGMA_SF[name][1])


def _drop_uniforms(seed, clients, purpose="cell-drop", *index):
    """The documented drop stream (model §5.1): u, v, w uniform then z normal, per client identity."""
    rows = []
    for c in clients:
        g = stream(seed, purpose, *index, int(c))
        rows.append((*g.random(3), g.standard_normal()))
    return np.array(rows).T


R, R0, N_EXP, SNR = 250.0, 10.0, 3.5, 10.0


def _log_distance(**kw):
    return PhyConfig.make(scheme="channel-inversion", pathloss="log-distance", cell_radius=R, cell_min_distance=R0,
                          pathloss_exponent=N_EXP, snr_db=SNR, **kw)


def test_drop_is_a_pure_function_of_seed_and_client_identity():
    cell = CellChannel(_log_distance(), seed=5)
    a = cell.large_scale(np.array([7, 3, 100_000_000]), K=3, round_index=0)
    b = CellChannel(_log_distance(), seed=5).large_scale(np.array([100_000_000, 7]), K=2, round_index=9)
    assert b.distance[0] == a.distance[2] and b.distance[1] == a.distance[0]  # any order, any round, any M
    u = _drop_uniforms(5, [7, 3, 100_000_000])[0]
    np.testing.assert_allclose(a.distance, np.sqrt(R0**2 + u * (R**2 - R0**2)), rtol=1e-14)
    re = CellChannel(_log_distance(redrop=True), seed=5)
    r0, r1 = (re.large_scale(np.array([7, 3]), K=2, round_index=t).distance for t in (0, 1))
    u1 = _drop_uniforms(5, [7, 3], "cell-redrop", 1)[0]
    np.testing.assert_allclose(r1, np.sqrt(R0**2 + u1 * (R**2 - R0**2)), rtol=1e-14)
    assert not np.allclose(r0, r1)


def _received_snr_db(cfg, n):
    ls = CellChannel(cfg, seed=3).large_scale(np.arange(n), K=n, round_index=0)
    return SNR + 10 * np.log10(ls.gain)


def test_received_snr_over_a_drop_follows_the_annulus_law():
    # no shadowing, cell-edge reference: SNR(d) = SNR + 10 n log10(R/d), and P(d ≤ r) = (r² − r0²)/(R² − r0²), so
    # P(SNR_rx ≤ s) = P(d ≥ R·10^{−(s−SNR)/(10n)}) = (R² − r(s)²)/(R² − r0²)
    s = _received_snr_db(_log_distance(), 3000)
    assert s.min() >= SNR - 1e-9 and s.max() <= SNR + 10 * N_EXP * math.log10(R / R0) + 1e-9

    def cdf(x):
        r = np.clip(R * 10 ** (-(np.asarray(x) - SNR) / (10 * N_EXP)), R0, R)
        return (R**2 - r**2) / (R**2 - R0**2)

    assert stats.kstest(s, cdf).pvalue > LEVEL
    # a drop uniform in distance (not in area) is refused by the same test
    d_lin = R0 + (R - R0) * stream(1, "test-linear-drop").random(3000)
    assert stats.kstest(SNR + 10 * N_EXP * np.log10(R / d_lin), cdf).pvalue < LEVEL


def test_received_snr_with_shadowing_is_the_annulus_law_convolved_with_the_lognormal():
    sigma = 8.0
    s = _received_snr_db(_log_distance(shadowing_db=sigma), 2000)
    r = np.linspace(R0, R, 1501)
    w = 2 * r / (R**2 - R0**2)  # density of d
    mean = SNR + 10 * N_EXP * np.log10(R / r)

    def cdf(x):
        x = np.atleast_1d(x)
        return np.trapezoid(stats.norm.cdf((x[:, None] - mean[None, :]) / sigma) * w[None, :], r, axis=1)

    assert stats.kstest(s, cdf).pvalue > LEVEL
    no_shadow = _received_snr_db(_log_distance(), 2000)
    assert stats.kstest(no_shadow, cdf).pvalue < LEVEL  # the shadowing is really there


def test_median_distance_reference_and_pathloss_inversion():
    cfg = _log_distance(snr_reference="median-distance", power_control="pathloss-inversion", pc_target_db=-3.0)
    ls = CellChannel(cfg, seed=3).large_scale(np.arange(400), K=400, round_index=0)
    u = _drop_uniforms(3, range(400))[0]
    d = np.sqrt(R0**2 + u * (R**2 - R0**2))
    d_ref = math.sqrt((R**2 + R0**2) / 2)
    gain = (d_ref / d) ** N_EXP
    np.testing.assert_allclose(ls.gain, gain, rtol=1e-10)
    target = 10 ** (-0.3)
    np.testing.assert_allclose(ls.gain_eff, np.minimum(gain, target), rtol=1e-10)
    np.testing.assert_allclose(ls.power_fraction, np.minimum(1.0, target / gain), rtol=1e-10)
    assert (ls.power_fraction < 1).any() and (ls.power_fraction == 1).any()


def test_channel_inversion_truncates_on_the_composite_channel_of_the_scheduled_clients():
    g_th = 0.5
    cfg = _log_distance(g_th=g_th)
    clients = np.array([40, 2, 17, 999, 5, 63, 8, 71])
    K, d = len(clients), 16
    agg = make_aggregator(cfg, K=K, d=d, seed=4)
    u = _drop_uniforms(4, clients)[0]
    gain = (R / np.sqrt(R0**2 + u * (R**2 - R0**2))) ** N_EXP
    x = stream(0, "test-updates").standard_normal((K, d))
    seen = 0
    for t in range(6):
        h = draw_rayleigh(4, t, K=K)
        _, rnd = agg.aggregate_traced(x, round_index=t, clients=clients)
        np.testing.assert_array_equal(rnd.admitted, gain * np.abs(h) ** 2 >= g_th)
        seen += int((rnd.admitted != (np.abs(h) ** 2 >= g_th)).sum())
    assert seen > 0  # the cell changed who is admitted


def test_cell_options_are_checked_with_one_line_naming_the_key():
    bad = [
        (dict(pathloss="umi", cell_radius=6000.0), "cell_radius"),
        (dict(pathloss="log-distance", cell_min_distance=300.0), "cell_radius"),
        (dict(pathloss="rma", carrier_ghz=40.0), "carrier_ghz"),
        (dict(pathloss="freespace"), "pathloss"),
        (dict(power_control="max"), "power_control"),
        (dict(shadowing_db=-1.0), "shadowing_db"),
        (dict(bs_height=1.0), "bs_height"),
        (dict(scheme="ddgauss", normalization="clip", clip_norm=1.0, pathloss="uma"), "pathloss"),
        (dict(scheme="sqsgd", normalization="clip", clip_norm=1.0, rician_k=1.0), "rician_k"),
    ]
    for table, key in bad:
        with pytest.raises(ValueError) as info:
            PhyConfig.make(**table).validate(K=4, d=10)
        assert str(info.value).startswith(key) and "\n" not in str(info.value), str(info.value)
    PhyConfig.make(scheme="ideal", pathloss="uma").validate(K=4, d=10)  # no radio link: the cell does not apply


def test_fedavg_hands_the_scheduled_identities_to_the_aggregator():
    from fl.federated import FederatedAveraging, sample_clients
    from phy.aggregation import AggregationResult

    M, K, d, seen = 50, 5, 3, []

    class Recorder:
        config = PhyConfig.make(scheme="ideal")

        def aggregate(self, updates, *, round_index, clients=None):
            seen.append(np.asarray(clients).copy())
            return AggregationResult(np.zeros(d), K, 0.0, {})

    class Trainer:
        def train(self, w, clients, round_index):
            return np.zeros((K, d)), np.zeros(K)

    fed = FederatedAveraging(trainer=Trainer(), aggregator=Recorder(), M=M, K=K, seed=8)
    for t in range(3):
        fed.step(np.zeros(d), t)
        np.testing.assert_array_equal(seen[t], sample_clients(seed=8, round_index=t, M=M, K=K))


def test_floras_link_takes_the_cell_and_coherence_keys_and_states_the_snr_reference(tmp_path, capsys):
    import json

    from scenarios.cli.main import main

    out = tmp_path / "s.json"
    rc = main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "40",
               "--rounds", "3", "--set", "phy.pathloss=uma", "--set", "phy.snr_reference=median-distance",
               "--set", "phy.coherence_symbols=11", "--set", "phy.floras.pilots=stale", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert "median distance" in data["conventions"]["snr"] and data["parameters"]["phy"]["pathloss"] == "uma"
    assert data["schemes"]["floras"]["channel_uses"]["mean"] == (40 + 1) * 8  # stale: one reference slot
    capsys.readouterr()
    rc = main(["link", "--scheme", "analog-gaussian", "--K", "4", "--d", "40", "--rounds", "1", "--normalization", "clip",
               "--clip-norm", "1", "--noise-multiplier", "1", "--set", "phy.coherence_symbols=11"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "inversion_csit" in err and "\n" not in err  # stale CSIT: no sensitivity (model §5.1)
    assert main(["link", "--scheme", "channel-inversion", "analog-gaussian", "--K", "4", "--d", "40", "--rounds", "2",
                 "--normalization", "clip", "--clip-norm", "1", "--noise-multiplier", "1",
                 "--set", "phy.coherence_symbols=11", "--set", "phy.inversion_csit=per-block"]) == 0


def test_scenarios_take_the_cell_keys_for_every_analog_scheme():
    import json

    from scenarios.config import scenario_from_dict

    table = {"pathloss": "umi", "cell_radius": 400.0, "power_control": "pathloss-inversion", "rician_k": 2.0}
    cfg = scenario_from_dict({"phy": {"scheme": "channel-inversion", **table}})
    assert scenario_from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg and cfg.phy.pathloss == "umi"
    cfg = scenario_from_dict({"phy": {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0,
                                      "analog-gaussian": {"noise_multiplier": 1.0}, **table}})
    assert cfg.phy.cell_radius == 400.0  # its ε does not depend on the channel (rho = g_th, model §9.1)
    # a cell, coherence blocks and Rician gains are derived for FLORAS (model §5.1, tests/test_floras_cell_privacy.py,
    # tests/test_floras_rician_privacy.py)
    assert scenario_from_dict({"phy": {"scheme": "floras", "pathloss": "uma"}}).phy.pathloss == "uma"
    assert scenario_from_dict({"phy": {"scheme": "floras", "coherence_symbols": 50}}).phy.coherence_symbols == 50
    cfg = scenario_from_dict({"phy": {"scheme": "floras", **table}})
    assert cfg.phy.rician_k == 2.0 and cfg.phy.pathloss == "umi"


def test_floras_link_named_cell_flags_are_the_phy_keys(tmp_path):
    import json

    from scenarios.cli.main import main

    out = tmp_path / "s.json"
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "30", "--rounds", "2",
                 "--pathloss", "log-distance", "--cell-radius", "300", "--power-control", "pathloss-inversion",
                 "--coherence-symbols", "10", "--pilots", "stale", "--json", str(out)]) == 0
    phy = json.loads(out.read_text())["parameters"]["phy"]
    assert (phy["pathloss"], phy["cell_radius"], phy["power_control"], phy["coherence_symbols"]) == \
        ("log-distance", 300.0, "pathloss-inversion", 10)
    assert phy["floras"]["pilots"] == "stale"
