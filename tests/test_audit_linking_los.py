"""The T2 audit with a line of sight at several antennas: detection, the steering estimate, linking by direction
(model §5.2 "Rician fading with several antennas", §7.5; scenarios/audit/detection.py, linking.py, tracking.py)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from phy.assignment import simulation_key
from phy.cell import drop
from phy.config import PhyConfig
from scenarios.audit.detection import drop_detection_probability, np_threshold, theoretical_detection_probability
from scenarios.audit.linking import STEERING_GRID, link_rounds, linking_success, persistent_updates, steering_estimate
from scenarios.audit.signals import T2Uplink
from scenarios.audit.tracking import track_clients

UMI = {"pathloss": "umi", "cell_radius": 250.0, "snr_reference": "median-distance"}


def _cfg(*, N: int, snr_db: float, n_rx: int, kappa: float, cell: dict | None = None) -> PhyConfig:
    return PhyConfig.make(scheme="floras", L=16, snr_db=snr_db, floras={"N": N}, rx_antennas=n_rx, rician_k=kappa,
                          **(cell or {}))


def _rounds(cfg: PhyConfig, *, K: int, rounds: int, seed: int):
    up = T2Uplink(cfg, K=K, seed=seed, key=simulation_key(seed))
    return up, [up.round(persistent_updates(seed, t, K=K, d=2, C=1.0, persistence=0.0), round_index=t)
                for t in range(rounds)]


def _pair_success(views, method: str) -> np.ndarray:
    return np.array([linking_success(link_rounds(views[2 * m][0], views[2 * m + 1][0], method=method, kind="energy"),
                                     views[2 * m][1], views[2 * m + 1][1]) for m in range(len(views) // 2)])


def _pd_quad(tau: float, *, b: float, nv: float, n_rx: int, kappa: float, theta: float | None) -> float:
    """P_D of ‖r‖² > τ from the model's law by adaptive quadrature (independent of the code's midpoint rule): given
    the line of sight's phase φ and azimuth θ, r_r ~ N(A·b·cos(φ + π·r·sin θ), b²/(2(κ+1)) + σ²/L) i.i.d. over r."""
    v1 = b * b / (2 * (kappa + 1)) + nv
    A = math.sqrt(kappa / (kappa + 1))

    def f(phi, th):
        mu = A * b * np.cos(phi + math.pi * np.arange(n_rx) * math.sin(th))
        return stats.ncx2.sf(tau / v1, n_rx, float(mu @ mu) / v1)

    if theta is not None:
        return integrate.quad(lambda p: f(p, theta), 0, 2 * math.pi, limit=200)[0] / (2 * math.pi)
    return integrate.dblquad(lambda p, th: f(p, th), 0, 2 * math.pi, 0, 2 * math.pi, epsabs=1e-7)[0] / (4 * math.pi**2)


def test_steering_estimate_recovers_the_direction_of_a_noiseless_pilot():
    """p_r = a·cos(φ + π·r·u): û = |u| to within one grid step, whatever a > 0, φ and the sign of u (u and −u span
    the same plane); a steering of 2π·r·u (a full-wavelength array) or a missing |·| would fail it."""
    rng = np.random.default_rng(5)
    step = 1.0 / (STEERING_GRID - 1)
    for n_rx in (3, 4, 8):
        u = rng.uniform(-1, 1, 200)
        phi = rng.uniform(0, 2 * math.pi, 200)
        a = rng.uniform(0.1, 10, 200)
        p = a[:, None] * np.cos(phi[:, None] + math.pi * np.arange(n_rx)[None, :] * u[:, None])
        np.testing.assert_array_less(np.abs(steering_estimate(p) - np.abs(u)), step + 1e-12)
    with pytest.raises(ValueError, match="N_r ≥ 3"):
        steering_estimate(np.ones((4, 2)))


@pytest.mark.parametrize("theta", [None, 0.3, 2.0])
def test_los_antenna_detection_probability_is_the_quadrature_of_the_model_law(theta):
    """The energy detector's P_D with a steered line of sight (κ = 3, N_r = 4) against the adaptive quadrature of
    the law in :func:`_pd_quad`, at a given azimuth and averaged over θ ~ U(0, 2π); to 10⁻⁶."""
    b, nv, n_rx, kappa = 1.0, 0.4, 4, 3.0
    tau = np_threshold(noise_var=nv, false_alarm=0.01, kind="energy", n_rx=n_rx)
    got = theoretical_detection_probability(threshold=tau, b=b, noise_var=nv, csit="none", n_rx=n_rx, kappa=kappa,
                                            angle=theta)
    want = _pd_quad(tau, b=b, nv=nv, n_rx=n_rx, kappa=kappa, theta=theta)
    assert 0.2 < want < 0.95 and abs(got - want) < 1e-6, (got, want)
    with pytest.raises(ValueError, match="csit"):
        theoretical_detection_probability(threshold=tau, b=b, noise_var=nv, csit="phase", n_rx=n_rx, kappa=kappa)


def test_los_detection_in_a_cell_matches_the_drop():
    """UMi, κ = 10, N_r = 4, −5 dB at the median distance, fixed drop: the detections of each client over T rounds
    are Bernoulli(P_D(β_k, θ_k)) with its own drop's gain and azimuth (phy.cell.drop; the quadrature of the model
    law), independent over rounds; the pooled count lies in the 99.9 % band of the binomial at the mean P_D (the
    Poisson-binomial's variance is at most the binomial's)."""
    K, N, n_rx, kappa, T = 6, 12, 4, 10.0, 200
    cfg = _cfg(N=N, snr_db=-5.0, n_rx=n_rx, kappa=kappa, cell=UMI)
    up, views = _rounds(cfg, K=K, rounds=T, seed=4)
    tau = np_threshold(noise_var=up.noise_var, false_alarm=0.01, kind="energy", n_rx=n_rx)
    beta = views[0][1].beta_eff
    _, theta, _, _ = drop(4, np.arange(K), radius=250.0, min_distance=cfg.cell_min_distance)
    np.testing.assert_allclose(views[0][1].angles, theta, rtol=0, atol=0)
    pd = np.array([_pd_quad(tau, b=up.b * math.sqrt(bk), nv=up.noise_var, n_rx=n_rx, kappa=kappa, theta=th)
                   for bk, th in zip(beta, theta)])
    hits = sum(int(np.sum(v.statistic("energy")[tr.active] > tau)) for v, tr in views)
    lo, hi = stats.binom.interval(0.999, T * K, pd.mean())
    assert 0.15 < pd.mean() < 0.95 and lo <= hits <= hi, (hits / (T * K), pd.mean())
    # the audit's reported theory averages over the drop's (β_k, θ_k), not over a uniform azimuth
    theory = drop_detection_probability(tau, b=up.b, noise_var=up.noise_var, csit="none", n_rx=n_rx, kappa=kappa,
                                        betas=[tr.beta_eff for _, tr in views], angles=[tr.angles for _, tr in views])
    assert abs(theory - pd.mean()) < 1e-6, (theory, pd.mean())


def test_direction_links_clients_in_a_cell_with_a_line_of_sight():
    """UMi, κ = 10, N_r = 8, 20 dB, N = K (no detection error). In a fixed drop the azimuth stays with the client:
    ``steering`` links far above chance (6 standard errors of the chance rate, 1/(K√m) over m disjoint pairs), and
    ``joint`` above ``pilot`` and ``steering`` by 4 standard errors of the difference. Without a cell (θ drawn
    afresh every round) and in the cell without a line of sight (κ = 0) ``steering`` is at chance (4 standard
    errors)."""
    K, T = 10, 80
    _, views = _rounds(_cfg(N=K, snr_db=20.0, n_rx=8, kappa=10.0, cell=UMI), K=K, rounds=T, seed=11)
    m = T // 2
    ste, pil, joi = (_pair_success(views, x) for x in ("steering", "pilot", "joint"))
    assert ste.mean() > 1 / K + 6 / (K * math.sqrt(m)), ste.mean()
    for other in (pil, ste):
        se = math.sqrt((joi.var(ddof=1) + other.var(ddof=1)) / m)
        assert joi.mean() > other.mean() + 4 * se, (joi.mean(), other.mean())
    for cfg in (_cfg(N=K, snr_db=20.0, n_rx=8, kappa=10.0), _cfg(N=K, snr_db=20.0, n_rx=8, kappa=0.0, cell=UMI)):
        _, views = _rounds(cfg, K=K, rounds=300, seed=12)
        x = _pair_success(views, "steering")
        assert abs(x.mean() - 1 / K) <= 4 / (K * math.sqrt(x.size)), x.mean()


def test_steering_without_a_direction_and_the_joint_tracker():
    """N_r = 2: no direction to estimate, ``steering`` pairs the detected sequences in index order and ``joint`` is
    ``pilot``. N_r = 4: the joint tracker's R = 2 scores are the pairwise ``joint`` link (its first match is that
    link)."""
    K = 5
    _, views = _rounds(_cfg(N=K + 3, snr_db=20.0, n_rx=2, kappa=10.0, cell=UMI), K=K, rounds=6, seed=3)
    for a, b in zip(views[:-1], views[1:]):
        mp = link_rounds(a[0], b[0], method="steering", kind="energy")
        assert list(mp) == sorted(mp) and list(mp.values()) == sorted(mp.values())
        assert link_rounds(a[0], b[0], method="joint", kind="energy") == link_rounds(a[0], b[0], method="pilot",
                                                                                     kind="energy")
    _, views = _rounds(_cfg(N=K + 3, snr_db=20.0, n_rx=4, kappa=10.0, cell=UMI), K=K, rounds=12, seed=3)
    tr = track_clients(views, kind="energy", chain_lengths=(2, 5))
    pair = tr["methods"]["joint"]["pairwise"]["success_rate"]
    assert tr["methods"]["cumulative-joint"]["link"]["2"]["success_rate"] == pair
    assert tr["methods"]["cumulative-joint"]["followed"]["2"]["success_rate"] == pair


def _linking_audit(config: dict, rates: dict) -> dict:
    """A stored T2 audit with an N_r sweep: rates {(N_r, snr): {method: success}}."""
    sweep = [{"rx_antennas": n, "snr_db": snr,
              "tracking": {"methods": {m: {"pairwise": {"success_rate": v}} for m, v in by.items()}}}
             for (n, snr), by in rates.items()]
    base = {"K": 10, "N": 16, "L": 16, "d": 64, "pathloss": "none", "rician_k": 0.0, "coherence_symbols": None,
            "timing_offset": 0.0, "csit": "none", "csi_error": 0.0, "pilots": "per-block", "fading_correlation": "iid"}
    return {"threat": "T2", "empirical_epsilon_lower": 0.1, "config": {**base, **config}, "linking_sweep": sweep,
            "rounds": 100, "seed": 0}


def test_linking_figure_draws_the_best_attack_of_each_stored_audit(tmp_path, monkeypatch):
    """figures.audit_linking reads the stored JSON only: one line per audit with an N_r sweep, its points the largest
    pairwise rate over the methods (in %), its label the channel named from the stored configuration, its colour the
    same in every SNR panel; an audit without an N_r sweep is not drawn."""
    import json

    import figures.audit_linking as fig_mod

    a = _linking_audit({"pathloss": "umi", "rician_k": 10.0}, {
        (1, 20.0): {"pilot": 0.2, "steering": 0.1, "joint": 0.2}, (8, 20.0): {"pilot": 0.5, "steering": 0.6, "joint": 0.9}})
    b = _linking_audit({"pathloss": "umi", "coherence_symbols": 2, "d": 159, "fading_correlation": "jakes-exact"}, {
        (1, 20.0): {"pilot": 0.39, "signature": 0.1}, (4, 20.0): {"pilot": 0.6, "signature": 0.12},
        (1, 10.0): {"pilot": 0.3}, (2, 10.0): {"pilot": 0.4}})
    c = _linking_audit({}, {(2, 20.0): {"pilot": 0.1}})
    for name, x in (("a", a), ("b", b), ("c", c)):
        (tmp_path / f"{name}.json").write_text(json.dumps(x))
    seen = {}
    monkeypatch.setattr(fig_mod, "save_figure", lambda fig, out, stem, caption: seen.update(fig=fig, caption=caption) or [])
    fig_mod.make(tmp_path, tmp_path / "out")
    low, high = ({l.get_label(): l for l in ax.get_lines() if not l.get_label().startswith("_")}
                 for ax in seen["fig"].axes[:2])  # 10 dB, 20 dB
    assert "UMI cell, κ = 10" not in low and list(low["UMI cell, 159 pilots, jakes-exact"].get_ydata()) == [30.0, 40.0]
    assert low["UMI cell, 159 pilots, jakes-exact"].get_color() == high["UMI cell, 159 pilots, jakes-exact"].get_color()
    lines = high
    assert list(lines["UMI cell, κ = 10"].get_ydata()) == pytest.approx([20.0, 90.0])
    assert list(lines["UMI cell, 159 pilots, jakes-exact"].get_xdata()) == [1, 4]
    assert list(lines["UMI cell, 159 pilots, jakes-exact"].get_ydata()) == pytest.approx([39.0, 60.0])
    assert "no cell" not in lines and "c.json" not in seen["caption"] and "chance 1/K (K = 10)" in lines
