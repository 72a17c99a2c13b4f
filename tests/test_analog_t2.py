"""Analog Gaussian against a base station that keeps its raw signals (threat T2, model §5.2).

With one antenna and synchronous chips the base station sees only the superposition Σ_k (s_k + ν_k) + n/√ρ, the
released aggregate itself, so the aggregate's guarantee covers it. With N_r > 1 antennas (or chip-timing offsets) it
sees other linear combinations of the clients' s_k + ν_k: client k is then protected by v/ℓ_k per symbol
(:func:`phy.antennas.client_leverage`), not by the aggregate's K′·v, and in every case by at least its own share v.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from phy.antennas import client_leverage
from phy.fading import draw_rayleigh_antennas

from test_without_amplification import _gdp_epsilon  # noqa: E402  (tests/; the GDP closed form, solved there)

DELTA, K, M, T = 1e-5, 20, 100, 200


def _leverage_by_pseudoinverse(h: np.ndarray, a: np.ndarray | None = None) -> np.ndarray:
    """ℓ_k = g_kᵀ(GᵀG)⁺g_k from the model's formula: g_k = h_k/(aᴴh_k), a the principal eigenvector of Σ u_k u_kᴴ
    (of ``h``'s rows unless given), real and imaginary parts stacked; an eigendecomposition and a pseudo-inverse of
    its own."""
    if a is None:
        u = h / np.linalg.norm(h, axis=1, keepdims=True)
        w, V = np.linalg.eig(u.T @ u.conj())
        a = V[:, np.argmax(w.real)]
    g = h / (h @ a.conj())[:, None]
    G = np.hstack([g.real, g.imag])
    P = np.linalg.pinv(G.T @ G, rcond=1e-10, hermitian=True)
    return np.einsum("ki,ij,kj->k", G, P, G)


@pytest.mark.parametrize("n_rx", [1, 2, 4])
def test_leverage_is_the_formula_and_sums_to_the_derived_rank(n_rx):
    """At one antenna every client is seen at 1/K′ (the aggregate's noise); with N_r antennas the leverages sum to
    2N_r − 1 (one real direction, Im aᴴg_k = 0, carries nothing), so the mean client is seen with (2N_r − 1)× less
    noise than the aggregate counts. A receiver model that dropped the imaginary part would sum to N_r."""
    for t in range(20):
        h = draw_rayleigh_antennas(3, t, K=K, n_rx=n_rx)
        lev = client_leverage(h)
        np.testing.assert_allclose(lev, _leverage_by_pseudoinverse(h), rtol=1e-8, atol=1e-12)
        assert lev.sum() == pytest.approx(2 * n_rx - 1, rel=1e-10)
        assert lev.min() >= -1e-12 and lev.max() <= 1 + 1e-12
        if n_rx == 1:
            np.testing.assert_allclose(lev, 1.0 / K, rtol=1e-12)


def test_leverage_with_the_links_combiner_of_every_scheduled_client():
    """The clients invert the combiner of every scheduled client (the link's a), not the centroid of the admitted
    ones: with the first two clients dropped the leverages differ, and match the formula with the given a; the rows
    still lie in the hyperplane Im aᴴg_k = 0, so they still sum to 2N_r − 1."""
    from phy.antennas import centroid_combiner

    h = draw_rayleigh_antennas(6, 1, K=K, n_rx=2)
    a, kept = centroid_combiner(h), h[2:]
    lev = client_leverage(kept, combiner=a)
    np.testing.assert_allclose(lev, _leverage_by_pseudoinverse(kept, a), rtol=1e-8, atol=1e-12)
    assert lev.sum() == pytest.approx(3.0, rel=1e-10)
    assert np.max(np.abs(lev - client_leverage(kept))) > 1e-3
    with pytest.raises(ValueError, match="combiner must have N_r = 2 entries"):
        client_leverage(kept, combiner=a[:1])


def test_few_clients_are_separated_completely():
    """K′ ≤ 2N_r − 1 clients with generic channels: G has full row rank, every ℓ_k = 1 — each client seen with its
    own noise v alone (the lower end of the T2 bound, attained)."""
    h = draw_rayleigh_antennas(5, 0, K=3, n_rx=2)
    np.testing.assert_allclose(client_leverage(h), 1.0, rtol=1e-10)


def _config(**phy):
    from scenarios.config import scenario_from_dict

    table = {"scheme": "analog-gaussian", "normalization": "clip", "clip_norm": 1.0, "snr_db": 20.0, "L": 32,
             "analog-gaussian": {"noise_multiplier": 3.0}, **phy}
    return scenario_from_dict({"phy": table, "partition": {"clients": M}, "training": {"clients_per_round": K},
                               "run": {"rounds": T}, "privacy": {"relation": "replace", "delta": DELTA}})


def _dp_accounting_epsilon(noise_multiplier: float) -> float:
    from dp_accounting import NeighboringRelation, dp_event, rdp

    acc = rdp.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_event.SampledWithoutReplacementDpEvent(M, K, dp_event.GaussianDpEvent(noise_multiplier)), T)
    return acc.get_epsilon(DELTA)


def _t2_epsilon(threat: str) -> float:
    return float(threat.split("ε_T2 ≤ ")[1].split(" ")[0])


def test_the_accountant_states_t1_only_and_the_t2_bound_with_several_antennas():
    """N_r = 2: the ε covers the released aggregate only, and the T2 line is the same sampled Gaussian with each
    client's own share, std z·S/√K (S = 2R replace-one, R = 1), computed here with dp_accounting's own RDP."""
    from scenarios.config.schemes import scheme_accountant

    one = scheme_accountant(_config(), d=1000, D=1)
    two = scheme_accountant(_config(rx_antennas=2), d=1000, D=1)
    assert one.threat_model.startswith("T1 and a single-antenna base station") and "ε_T2" not in one.threat_model
    assert two.threat_model.startswith("T1 only") and "2 receive antennas" in two.threat_model
    std = 3.0 * 2.0 / math.sqrt(K)
    assert f"std ≥ {std:.6g} per client" in two.threat_model
    expected = _dp_accounting_epsilon(std / 2.0)
    assert _t2_epsilon(two.threat_model) == pytest.approx(expected, rel=0.02)
    assert _t2_epsilon(two.threat_model) > 4 * two.epsilon(rounds=T)  # the aggregate's ε says little about T2


def test_the_t2_bound_with_timing_offsets_counts_the_inflated_share_or_nothing():
    """One antenna with offsets: σ_a,min² = (σ_T² − σ_n²/g_th)/(1 − 2τ_max/L)² shared by K, in ŝ units (the link
    carries s_k scaled to ‖s_k‖ ≤ C = √(d·P), so σ_T = z·2C), reported in model units (× R/C); at an SNR where the
    receiver noise alone may exceed the target, the clients may add nothing and there is no T2 guarantee."""
    from scenarios.config.schemes import scheme_accountant

    tau, L, g_th = 0.5, 32, 0.1
    acc = scheme_accountant(_config(timing_offset=tau, g_th=g_th), d=1000, D=1)
    sigma_n2 = 1.0 / 10 ** (20.0 / 10) / L  # σ²/L, P = 1 (model §5)
    C = math.sqrt(1000 * 1.0)  # √(d·P), d = 1000
    var = (9.0 * 4.0 * C**2 - sigma_n2 / g_th) / (1 - 2 * tau / L) ** 2 / K / C**2
    assert acc.threat_model.startswith("T1 only")
    assert f"std ≥ {math.sqrt(var):.6g} per client" in acc.threat_model
    # z = 0.01, −10 dB: σ_T² = (0.02·C)² = 0.4 < σ_n²/g_th = (10/32)/0.1 = 3.1
    low = scheme_accountant(_config(timing_offset=tau, g_th=g_th, snr_db=-10.0,
                                    **{"analog-gaussian": {"noise_multiplier": 0.01}}), d=1000, D=1)
    assert "no T2 guarantee" in low.threat_model and "ε_T2" not in low.threat_model


def _scenario(tmp_path, *, n_rx: int, z: float, rounds: int, M: int = 30, K: int = 10, snr_db: float = 10.0,
              g_th: float = 0.3, phy_extra: str = "", accountant: str = "rdp"):
    """A small analog Gaussian scenario on digits (also tests/test_analog_csi.py's, with ``phy_extra`` [phy] lines)."""
    from scenarios.config import load_scenario

    path = tmp_path / f"analog{n_rx}.toml"
    path.write_text(f"""
[data]
name = "digits"
[partition]
clients = {M}
[model]
hidden = [8]
[training]
clients_per_round = {K}
lr = 0.1
batch_size = 10
[phy]
scheme = "analog-gaussian"
normalization = "clip"
clip_norm = 1.0
L = 8
snr_db = {snr_db}
g_th = {g_th}
rx_antennas = {n_rx}
{phy_extra}
[phy.analog-gaussian]
noise_multiplier = {z}
[privacy]
accountant = "{accountant}"
[run]
rounds = {rounds}
seed = 4
""")
    return load_scenario(path, {})


def test_a_scheduling_separating_base_station_is_the_composed_leverage_mechanism(tmp_path, monkeypatch):
    """Given the sampled sets and channels client k is μ_k-GDP, z²μ_k² = Σ_t K′_t·ℓ_{k,t} over its admitted rounds
    (model §5.2): recomputed here from the sampler, the fading draws, the centroid combiner's admission
    |aᴴh_k|² ≥ g_th and the pseudo-inverse leverage, and converted by the GDP closed form. Plausible bugs: the
    aggregate's 1/K′ instead of ℓ (T2 = the aggregate), ℓ without K′ (K′ times too little), every sampled client
    counted although not admitted, another stream than the run's, the combiner recomputed from the admitted clients
    only (the clients inverted the one of every scheduled client)."""
    from fl.sampling import sample_clients
    from scenarios.config.analog_exposure import scheduled_separating

    from scenarios.config import analog_exposure

    monkeypatch.setattr(analog_exposure, "sampled_separating", lambda config, rounds, d=None: {})  # tests/test_analog_t2_sampled.py
    z, T, M, Kr = 2.0, 25, 30, 10
    config = _scenario(tmp_path, n_rx=2, z=z, rounds=T, M=M, K=Kr)
    got = scheduled_separating(config, d=100, rounds=T)
    expo, adm_seen = np.zeros(M), 0
    for t in range(T):
        clients = sample_clients(seed=4, round_index=t, M=M, K=Kr)
        h = draw_rayleigh_antennas(4, t, K=Kr, n_rx=2)
        u = h / np.linalg.norm(h, axis=1, keepdims=True)
        w, V = np.linalg.eig(u.T @ u.conj())
        a = V[:, np.argmax(w.real)]  # the link's combiner: every scheduled client, admitted or not
        adm = np.abs(h @ a.conj()) ** 2 >= 0.3
        adm_seen += int((~adm).sum())
        expo[clients[adm]] += adm.sum() * _leverage_by_pseudoinverse(h[adm], a)
    assert adm_seen > 0  # the threshold drops some clients, so admission is exercised
    mu = math.sqrt(expo.max()) / z
    assert got["mu_most_exposed"] == pytest.approx(mu, rel=1e-9)
    assert got["epsilon_most_exposed"] == pytest.approx(_gdp_epsilon(mu, 1e-5), rel=1e-6)
    assert got["antennas"] == 2 and "seed 4" in got["text"] and "Σ_t K′_t·ℓ_{k,t}/z²" in got["text"]
    assert scheduled_separating(_scenario(tmp_path, n_rx=1, z=z, rounds=T), d=100, rounds=T) is None
    assert scheduled_separating(_scenario(tmp_path, n_rx=2, z=0.0, rounds=T), d=100, rounds=T)["epsilon_most_exposed"] == "inf"


def test_the_replayed_admission_is_the_runs_and_the_run_reports_it(tmp_path, capsys, monkeypatch):
    """A run's own admitted count per round (metrics.csv) equals the replay's, and the run states the figure in
    config.json and on a third privacy line."""
    import csv
    import json

    from scenarios.cli.main import main
    from scenarios.config.analog_exposure import replay_exposure

    from scenarios.config import analog_exposure

    monkeypatch.setattr(analog_exposure, "SAMPLED_DRAWS", 5_000)
    config = _scenario(tmp_path, n_rx=2, z=2.0, rounds=4)
    assert main(["train", str(tmp_path / "analog2.toml"), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    with open(tmp_path / "run" / "metrics.csv") as fh:
        admitted = [int(float(r["admitted"])) for r in csv.DictReader(fh)]
    _, replayed = replay_exposure(config, rounds=4)
    assert admitted == replayed.tolist() and min(admitted) < 10
    beyond = json.loads((tmp_path / "run" / "config.json").read_text())["privacy_report"]["beyond_threat_model"]
    line = [x for x in out.splitlines() if x.startswith("privacy against a base station that schedules")]
    assert len(line) == 1 and "separates its 2 antennas" in line[0]
    assert f"ε = {beyond['epsilon_most_exposed']:.4g} for the most exposed client" in line[0]
    assert f"{beyond['epsilon_sampled']:.4g} if it does not learn who was sampled" in line[0]
    assert beyond["epsilon_sampled_aggregate"] < beyond["epsilon_sampled"]


def test_a_scheduling_base_station_under_add_remove_gets_no_guarantee(tmp_path):
    import dataclasses

    from scenarios.config.analog_exposure import scheduled_separating

    config = _scenario(tmp_path, n_rx=2, z=1.0, rounds=3)
    config = dataclasses.replace(config, privacy=dataclasses.replace(config.privacy, relation="add-remove"))
    got = scheduled_separating(config, d=100, rounds=3)
    assert got["epsilon_most_exposed"] == "inf" and "no guarantee under add/remove" in got["text"]
