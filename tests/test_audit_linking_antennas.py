"""The T2 audit with N_r receive antennas and a cell: signals, detection, linking across rounds (model §5.1, §5.2, §7.5)."""

import json
import math
import pathlib
import sys

import numpy as np
import pytest
from scipy import stats

from phy.assignment import simulation_key
from phy.cell import drop
from phy.config import PhyConfig
from scenarios.audit.detection import np_threshold
from scenarios.audit.linking import link_rounds, linking_success, persistent_updates
from scenarios.audit.signals import RoundTruth, T2Uplink
from scenarios.audit.tracking import cumulative_success

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def _band(n: int, p: float, level: float = 0.999) -> tuple[float, float]:
    """Central interval of Binomial(n, p) at ``level``, as rates."""
    lo, hi = stats.binom.interval(level, n, p)
    return lo / n, hi / n


def _cfg(*, N: int, snr_db: float, n_rx: int, cell: dict | None = None) -> PhyConfig:
    return PhyConfig.make(scheme="floras", L=16, snr_db=snr_db, floras={"N": N}, rx_antennas=n_rx, **(cell or {}))


def _rounds(cfg: PhyConfig, *, K: int, rounds: int, seed: int, d: int = 2):
    up = T2Uplink(cfg, K=K, seed=seed, key=simulation_key(seed))
    return up, [up.round(persistent_updates(seed, t, K=K, d=d, C=1.0, persistence=0.0), round_index=t)
                for t in range(rounds)]


def _pair_success(views, method: str) -> np.ndarray:
    """Linking success of ``method`` over the disjoint round pairs (2m, 2m + 1)."""
    return np.array([linking_success(link_rounds(views[2 * m][0], views[2 * m + 1][0], method=method, kind="energy"),
                                     views[2 * m][1], views[2 * m + 1][1]) for m in range(len(views) // 2)])


def _same(a, b, path=()):
    """Every value stored in ``a`` is in ``b`` and equal (NaN equal to NaN); ``b`` may hold more keys.

    Floats agree to 10⁻¹² relative: the reference was written on one CPU, and numpy's reductions take other
    SIMD paths on others (an AMD EPYC gives 0.0517359002395145 for the stored 0.05173590023951454), which move
    the last bits; any change of the computation moves them by far more. Counts and strings are exact."""
    if isinstance(a, dict):
        for k, v in a.items():
            assert k in b, path + (k,)
            _same(v, b[k], path + (k,))
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, path + (i,))
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    elif isinstance(a, float):
        assert isinstance(b, float) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300), (path, a, b)
    else:
        assert a == b, (path, a, b)


def test_one_antenna_audit_is_the_stored_reference():
    """N_r = 1, no cell: detection, decoding, the one-pair linking keys and the game are the numbers the audit
    gave before antennas and cells were added (tests/fixtures/make_audit_one_antenna.py), to the last bits that
    the CPU's SIMD paths may change (:func:`_same`)."""
    sys.path.insert(0, str(FIXTURES))
    try:
        from make_audit_one_antenna import compute
    finally:
        sys.path.remove(str(FIXTURES))
    ref = json.loads((FIXTURES / "audit_one_antenna.json").read_text())
    _same(ref, json.loads(json.dumps(compute())))


def test_view_is_the_simulator_link_with_antennas_and_a_cell():
    """Same (config, seed, round): the gains are those of :func:`phy.floras_antennas.antenna_pilots` bit for bit;
    the pilots differ from the link's only by the two independent noises, r_view − r_link ~ N(0, 2σ²/L) i.i.d.
    (χ² test on the sum of squares, two-sided at 10⁻³); the data outputs minus g_{k,r}·s_k are N(0, σ²/L)
    (KS at 10⁻³)."""
    from phy.floras import FlorasLink
    from phy.floras_antennas import antenna_pilots

    K, N, n_rx, d, T = 5, 12, 4, 6, 40
    cfg = _cfg(N=N, snr_db=10.0, n_rx=n_rx, cell={"pathloss": "log-distance", "pathloss_exponent": 3.5,
                                                   "shadowing_db": 8.0})
    key = simulation_key(2)
    link = FlorasLink(cfg, K=K, seed=2, key=key)
    up = T2Uplink(cfg, K=K, seed=2, key=key)
    nv = cfg.noise_variance / cfg.L
    diff, resid = [], []
    for t in range(T):
        s = persistent_updates(2, t, K=K, d=d, C=2.0, persistence=0.0)
        view, truth = up.round(s, round_index=t)
        active, _, G, R, _ = antenna_pilots(link, t)
        np.testing.assert_array_equal(active, truth.active)
        np.testing.assert_array_equal(G, truth.gains_antennas)
        assert view.r_pilots.shape == (N, n_rx) and view.r_data_antennas.shape == (n_rx, N, d)
        np.testing.assert_array_equal(view.r_pilots[:, 0], view.r_ref)
        diff.append((view.r_pilots - R.T).ravel())
        signal = np.zeros((n_rx, N, d))
        signal[:, active] = G.T[:, :, None] * s[None]
        resid.append((view.r_data_antennas - signal).ravel())
    diff = np.concatenate(diff)
    q = np.sum(diff**2) / (2 * nv)
    assert stats.chi2.ppf(5e-4, diff.size) <= q <= stats.chi2.ppf(1 - 5e-4, diff.size)
    assert stats.kstest(np.concatenate(resid) / math.sqrt(nv), "norm").pvalue > 1e-3


def test_energy_detector_over_antennas_has_the_chi2_false_alarm_and_detection():
    """N_r = 4, no cell: ‖r_j^s‖² > (σ²/L)·χ²₄⁻¹(1 − P_FA); inactive → P_FA, active → χ²₄ survival at
    τ/(b²/2 + σ²/L) (model §5.2), each within the 99.9 % binomial band of its count (orthonormal projections of
    white noise are independent; gains independent across clients and rounds)."""
    K, N, n_rx, T, pfa = 4, 16, 4, 300, 0.05
    cfg = _cfg(N=N, snr_db=-5.0, n_rx=n_rx)
    up, views = _rounds(cfg, K=K, rounds=T, seed=7)
    tau = np_threshold(noise_var=up.noise_var, false_alarm=pfa, kind="energy", n_rx=n_rx)
    assert tau == up.noise_var * stats.chi2.isf(pfa, n_rx)
    assert np_threshold(noise_var=up.noise_var, false_alarm=pfa, kind="energy") == up.noise_var * stats.chi2.isf(pfa, 1)
    fa = det = 0
    for view, truth in views:
        stat = view.statistic("energy")
        np.testing.assert_allclose(stat, np.sum(view.r_pilots**2, axis=1), rtol=1e-12)
        mask = np.zeros(N, dtype=bool)
        mask[truth.active] = True
        fa += int(np.sum(stat[~mask] > tau))
        det += int(np.sum(stat[mask] > tau))
    n_in, n_act = T * (N - K), T * K
    lo, hi = _band(n_in, pfa)
    assert lo <= fa / n_in <= hi
    pd = stats.chi2.sf(tau / (up.b**2 / 2 + up.noise_var), n_rx)
    lo, hi = _band(n_act, pd)
    assert lo <= det / n_act <= hi


UMI = {"pathloss": "umi", "cell_radius": 250.0, "snr_reference": "median-distance"}


def test_signature_linking_is_at_chance_and_pilot_energy_links_in_a_cell():
    """Fading i.i.d. across rounds and antennas: the cosine of the pilot vectors carries no identity, success
    1/K. N = K (every sequence active: no detection error), so per pair the hits are the fixed points of a
    uniform random matching (mean 1, variance 1): over m disjoint pairs the mean rate has standard error
    1/(K√m); tolerance 4 standard errors. In the same cell the pilot energy links far above chance (fixed drop)."""
    K, T = 10, 300
    _, views = _rounds(_cfg(N=K, snr_db=20.0, n_rx=4, cell=UMI), K=K, rounds=T, seed=11)
    sig = _pair_success(views, "signature")
    assert abs(sig.mean() - 1 / K) <= 4 / (K * math.sqrt(sig.size)), sig.mean()
    pil = _pair_success(views, "pilot")
    assert pil.mean() > 1 / K + 6 / (K * math.sqrt(pil.size)), pil.mean()


def test_pilot_energy_linking_is_at_chance_without_a_cell():
    """All β equal: the pilot energies are i.i.d. across clients and rounds, so ``pilot`` is at chance 1/K
    (same tolerance as the signature test)."""
    K, T = 10, 300
    _, views = _rounds(_cfg(N=K, snr_db=20.0, n_rx=4), K=K, rounds=T, seed=12)
    for method in ("pilot", "signature"):
        x = _pair_success(views, method)
        assert abs(x.mean() - 1 / K) <= 4 / (K * math.sqrt(x.size)), (method, x.mean())


def _two_client_order_probability(seed: int, n_rx: int, *, snr_db: float, exponent: float) -> float:
    """p = P(E_1 > E_2) in one round, E_k = (b²β_k/2 + σ²/L)·χ²_{N_r} (g_{k,r} b + noise ~ N(0, b²β_k/2 + σ²/L),
    model §5.2), β_k = (d_ref/d_k)^n of log-distance without shadowing, d_ref = R (cell edge): E_1/E_2 = λ·F(N_r, N_r)."""
    d, *_ = drop(seed, np.array([0, 1]), radius=250.0, min_distance=10.0)
    beta = (250.0 / d) ** exponent
    v = beta / 2 + 10 ** (-snr_db / 10) / 16  # b = 1 (P = 1), σ²/L
    return float(stats.f.sf(v[1] / v[0], n_rx, n_rx))


@pytest.mark.parametrize("n_rx", [1, 4])
def test_two_client_pilot_linking_matches_the_order_probability(n_rx):
    """K = N = 2, log-distance n = 3.5, no shadowing, fixed drop (seed 10: d ≈ 203 m and 250 m). The Hungarian
    match of two log-energies on the line pairs them in order, so a round pair is linked iff both rounds order
    the energies alike: q = p² + (1 − p)² (derived), p from the F distribution; the disjoint pairs are
    Bernoulli(q): 99.9 % binomial band."""
    cell = {"pathloss": "log-distance", "pathloss_exponent": 3.5, "shadowing_db": 0.0}
    _, views = _rounds(_cfg(N=2, snr_db=20.0, n_rx=n_rx, cell=cell), K=2, rounds=500, seed=10)
    p = _two_client_order_probability(10, n_rx, snr_db=20.0, exponent=3.5)
    assert 0.55 < p < 0.9  # a drop where linking is neither certain nor at chance (the test can fail both ways)
    q = p * p + (1 - p) ** 2
    x = _pair_success(views, "pilot")
    assert set(np.unique(x)) <= {0.0, 1.0}
    lo, hi = _band(x.size, q)
    assert lo <= x.mean() <= hi, (x.mean(), q)


def test_cumulative_tracker_is_the_rank_matching_of_each_round():
    """The cumulative attack's algorithm on energies drawn from the model law (K = 2, E_k = v_k·χ²₄, v_2/v_1 = 0.49,
    a fresh uniform assignment each round). With the squared cost every round's matching is the rank matching,
    so the chain that opened on the larger energy takes the larger energy in every round (its running mean stays
    the larger; derived): its last link is right iff rounds R − 2 and R − 1 order the two clients alike, and it
    follows client k iff rounds 0 and R − 1 do. Checked window by window (exact), and the rates against
    q = p² + (1 − p)², p = P(E_1 > E_2) = F₄,₄ tail at v_2/v_1 (99.9 % binomial band): for two clients the
    running means add nothing to the pairwise link."""
    rng = np.random.default_rng(3)
    n_rx, R, windows = 4, 40, 400
    v = np.array([1.0, 0.49])
    p = float(stats.f.sf(v[1] / v[0], n_rx, n_rx))
    q = p * p + (1 - p) ** 2
    links, follows = [], []
    for w in range(windows):
        feats, truths, ordered = [], [], []
        for _ in range(R):
            active = rng.permutation(2)
            E = np.empty(2)
            E[active] = v * rng.chisquare(n_rx, size=2)
            feats.append((np.arange(2), np.log(E)))
            truths.append(RoundTruth(active=active, gains=np.ones(2), s=np.zeros((2, 1))))
            ordered.append(E[active[0]] > E[active[1]])  # client 0 the louder this round
        followed, linked, n = cumulative_success(feats, truths, R)
        assert n == 2 and linked in (0, 2) and followed in (0, 2)
        assert (linked == 2) == (ordered[R - 2] == ordered[R - 1]), w
        assert (followed == 2) == (ordered[0] == ordered[R - 1]), w
        links.append(linked / 2)
        follows.append(followed / 2)
    lo, hi = _band(windows, q)
    assert lo <= np.mean(links) <= hi and lo <= np.mean(follows) <= hi, (np.mean(links), np.mean(follows), q)
    assert not _band(windows, p)[0] <= np.mean(links)  # not the one-round order probability p


def test_audit_cli_with_antennas_and_a_cell(tmp_path):
    """``floras audit --rx-antennas`` with cell keys through --set, and the N_r sweep, write the linking keys."""
    from scenarios.cli.main import main

    out = tmp_path / "a.json"
    rc = main(["audit", "--threat", "T2", "--K", "4", "--N", "8", "--L", "8", "--d", "4", "--rounds", "12",
               "--trials", "4", "--rx-antennas", "2", "--set", 'phy.pathloss="umi"',
               "--set", 'phy.snr_reference="median-distance"', "--sweep-rx-antennas", "1", "4", "--persistence", "0",
               "--json", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["linking"]["rx_antennas"] == 2
    assert set(res["linking"]["by_persistence"]["0"]) == {"similarity", "pilot", "index", "signature", "steering", "joint"}
    tr = res["tracking"]["by_persistence"]["0"]
    assert tr["rx_antennas"] == 2 and set(tr["methods"]) == {"pilot", "signature", "similarity", "steering", "joint",
                                                                     "cumulative", "cumulative-joint", "clustered"}
    assert set(tr["methods"]["pilot"]["chain"]) == {"2", "5", "10"}
    assert res["tracking"]["channel"]["cell"]["pathloss"] == "umi"
    assert [r["rx_antennas"] for r in res["linking_sweep"]] == [1, 4]
    assert "detection_sweep" not in res
    # the T1 figure shown beside it is the maximum-ratio aggregate's (model §9.5, "Several antennas")
    text = " ".join(res["epsilon_upper_report"]["assumptions"])
    assert "2 receive antennas combined by maximum ratio" in text and "epsilon_link computed without the cell" in text
    assert res["epsilon_link"] >= res["epsilon_upper"]


def test_antenna_audit_input_errors_name_the_parameter():
    from scenarios.audit.experiment import run_audit

    cfg = _cfg(N=8, snr_db=10.0, n_rx=2)
    with pytest.raises(ValueError, match="rx_antennas"):
        run_audit(cfg, threat="T1", K=4, d=4, trials=4, rounds=2, seed=0, key=simulation_key(0))
    with pytest.raises(ValueError, match="n_rx"):
        np_threshold(noise_var=1.0, false_alarm=0.1, kind="energy", n_rx=0)
    with pytest.raises(ValueError, match="kind"):
        np_threshold(noise_var=1.0, false_alarm=0.1, kind="signed", n_rx=2)
    with pytest.raises(ValueError, match="timing_offset: chip-timing offsets with rx_antennas = 2"):
        T2Uplink(PhyConfig.make(scheme="floras", L=16, snr_db=10.0, floras={"N": 8}, rx_antennas=2, timing_offset=0.3), K=4,
                 seed=0, key=simulation_key(0))
