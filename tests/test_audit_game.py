"""Distinguishing games on FLORAS rounds (model §7.5) and the ``floras audit`` command."""

import json

import numpy as np
import pytest
from scipy import stats

from phy.assignment import simulation_key
from phy.config import PhyConfig
from scenarios.audit.experiment import accountant_upper
from scenarios.audit.game import make_canary_worlds, play_game, t1_statistic
from scenarios.cli.main import main


def _game(threat, *, K=10, d=8, trials=150, seed=7, neighbour="replace", **phy):
    own = {k: phy.pop(k) for k in ("N", "sequences", "csit", "path") if k in phy}  # [phy.floras]
    cfg = PhyConfig.make(scheme="floras", **phy, floras=own)
    return play_game(cfg, threat=threat, K=K, d=d, trials=trials, seed=seed, key=simulation_key(seed), delta=1e-5,
                     neighbour=neighbour)


def test_canary_worlds_differ_only_in_the_canary():
    for neighbour, dist in (("replace", 2.0), ("zero", 1.0)):
        w = make_canary_worlds(0, K=5, d=12, neighbour=neighbour)
        np.testing.assert_array_equal(w.x0[1:], w.x1[1:])
        assert np.linalg.norm(w.x0[0] - w.x1[0]) == pytest.approx(dist)
        assert abs(w.u.sum()) < 1e-12 and np.allclose(w.x0[1:] @ w.u, 0.0)


def test_t1_statistic_is_the_cauchy_likelihood_ratio():
    """Λ = ln f(y − μ₁) − ln f(y − μ₀) for the isotropic Cauchy density ∝ (γ² + ‖x‖²)^{−(d+1)/2}."""
    d, gamma = 5, 3.0
    rng = np.random.default_rng(0)
    y, mu0, mu1 = rng.normal(size=(3, d))
    dens = stats.multivariate_t(loc=np.zeros(d), shape=gamma**2 * np.eye(d), df=1)
    expected = dens.logpdf(y - mu1) - dens.logpdf(y - mu0)
    assert t1_statistic(y, mu0, mu1, gamma=gamma) == pytest.approx(expected, rel=1e-10)


def test_noise_free_release_is_distinguished_perfectly():
    """γ = N − K = 0 and SNR 100 dB: the release is Σ s_k up to ~10⁻⁵; the audit saturates."""
    res = _game("T1", N=10, L=16, snr_db=100.0)
    assert res.bound.saturated
    assert res.bound.epsilon == pytest.approx(res.bound.max_reportable)


@pytest.mark.parametrize("phy", [dict(N=16, L=16, snr_db=20.0, C=0.5), dict(N=16, L=16, snr_db=20.0, C=0.05)])
def test_t1_audit_never_exceeds_the_accountant(phy):
    """The empirical T1 lower bound stays below the T1 accountant's ε (ε_upper ≈ 1.94 and ≈ 0.14).

    Both bounds lie below the largest ε that 300 trials can certify, so the comparison can fail (with
    C = √(dP) the bound, ≈ 20, would be far above anything 300 trials can show).
    """
    res = _game("T1", trials=300, **phy)
    upper = accountant_upper(K=10, N=phy["N"], d=8, C=phy.get("C"), power=1.0, clip_norm=1.0, neighbour="replace",
                             delta=1e-5)
    assert np.isfinite(upper["epsilon"])
    assert upper["epsilon"] < res.bound.max_reportable
    assert res.bound.epsilon <= upper["epsilon"]


def test_t2_base_station_distinguishes_the_canary_almost_surely_at_high_snr():
    """Phase pre-rotation, 30 dB: an error needs the canary's gain |h| below ≈ 0.1 (18 noise standard
    deviations), probability 1 − e^{−0.01} < 0.01; held-out errors are bounded by the 0.999 quantile of
    Binomial(n, 0.01), and ε_lower is then well above the T1 audit of the same round."""
    t2 = _game("T2", N=16, L=16, snr_db=30.0, csit="phase")
    b = t2.bound
    n = b.n_eval_world0 + b.n_eval_world1
    assert b.false_positives + b.false_negatives <= stats.binom.ppf(0.999, n, 0.01)
    t1 = _game("T1", N=16, L=16, snr_db=30.0, csit="phase")
    assert b.epsilon > t1.bound.epsilon


def test_floras_audit_command_writes_the_documented_keys(tmp_path, capsys, monkeypatch):
    out = tmp_path / "audit.json"
    rc = main(["audit", "--threat", "T2", "--K", "6", "--N", "8", "--L", "8", "--d", "6", "--trials", "30",
               "--rounds", "12", "--persistence", "0", "--sweep-snr-db", "0", "10", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    for key in ("detection_probability", "false_alarm_probability", "decoding_nmse", "empirical_epsilon_lower",
                "confidence", "epsilon_upper", "epsilon_upper_report", "detection", "decoding", "linking", "game"):
        assert key in data, key
    assert 0 <= data["detection_probability"] <= 1 and 0 <= data["false_alarm_probability"] <= 1
    assert data["confidence"] == 0.95
    assert data["epsilon_upper_report"]["assumptions"]
    assert [r["snr_db"] for r in data["detection_sweep"]] == [0.0, 0.0, 10.0, 10.0]
    text = capsys.readouterr().out
    assert "assumptions:" in text and "T1 only" in text

    out1 = tmp_path / "t1.json"
    assert main(["audit", "--threat", "T1", "--K", "6", "--N", "8", "--L", "8", "--d", "6", "--trials", "30",
                 "--json", str(out1)]) == 0
    d1 = json.loads(out1.read_text())
    assert "detection_probability" not in d1 and "empirical_epsilon_lower" in d1 and "epsilon_upper" in d1

    # the figures read the stored JSON only, and draw its numbers
    from figures import audit_epsilon, audit_roc

    drawn = {}
    for module in (audit_roc, audit_epsilon):
        real = module.save_figure

        def spy(fig, out_dir, stem, caption, _real=real, **kw):
            drawn[stem] = [(line.get_label(), np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
                           for ax in fig.axes for line in ax.get_lines()]
            return _real(fig, out_dir, stem, caption, **kw)

        monkeypatch.setattr(module, "save_figure", spy)
    for module, stem in ((audit_roc, "audit_roc"), (audit_epsilon, "audit_epsilon")):
        paths = module.make(tmp_path, tmp_path / "fig")
        assert {p.name for p in paths} == {f"{stem}.png", f"{stem}.pdf", f"{stem}.caption.txt"}
    points = {(x, y) for _, xs, ys in drawn["audit_roc"] for x, y in zip(xs, ys)}
    for r in data["detection_sweep"]:  # every operating point of the sweep is drawn where the JSON puts it
        assert (r["false_alarm_probability"], r["detection_probability"]) in points
    ys = {label: ys for label, _, ys in drawn["audit_epsilon"] if ys.size}
    for rec, threat in ((d1, "T1"), (data, "T2")):
        assert ys[f"largest reportable with the {threat} trials"] == pytest.approx([rec["game"]["max_reportable"]])
        lower = [v for label, y in ys.items() if label.startswith((f"empirical ε lower bound, {threat}", f"{threat}: attack"))
                 for v in y]
        assert lower == pytest.approx([rec["empirical_epsilon_lower"]])
    assert "T1 only" in (tmp_path / "fig" / "audit_epsilon.caption.txt").read_text()


@pytest.mark.parametrize("argv, name", [
    (["--threat", "T1", "--trials", "2"], "trials"),
    (["--threat", "T2", "--d", "2"], "d"),
    (["--threat", "T2", "--false-alarm", "1.5"], "false-alarm"),
    (["--threat", "T2", "--N", "10", "--K", "20"], "N"),
    (["--threat", "T2", "--persistence", "2"], "persistence"),
])
def test_floras_audit_rejects_bad_input_with_one_line(argv, name, capsys):
    assert main(["audit", *argv]) == 2
    err = capsys.readouterr().err
    assert name in err and "Traceback" not in err


def test_the_audit_takes_rician_gains_at_one_antenna():
    """`phy.rician_k` (model §5.1): the T2 uplink draws the simulator's own Rician channel, the T1 game stays below
    the accountant's ε (the release's Cauchy term does not depend on the gains), and ε_link states the Rician law."""
    from phy.fading import effective_gain
    from phy.link_channel import LinkChannel
    from scenarios.audit.signals import T2Uplink

    cfg = PhyConfig.make(scheme="floras", L=16, snr_db=20.0, C=0.5, rician_k=5.0, floras={"N": 16})
    up = T2Uplink(cfg, K=10, seed=3, key=simulation_key(3))
    s = np.zeros((10, 8))
    for t in (0, 1):
        _, truth = up.round(s, round_index=t)
        want = effective_gain(LinkChannel(cfg.validate(K=10), K=10, seed=3).draw(t)[:, 0], csit="none")
        np.testing.assert_array_equal(truth.gains, want)
    res = _game("T1", trials=300, N=16, L=16, snr_db=20.0, C=0.5, rician_k=5.0)
    upper = accountant_upper(K=10, N=16, d=8, C=0.5, power=1.0, clip_norm=1.0, neighbour="replace", delta=1e-5,
                             snr_db=20.0, L=16, rician_k=5.0)
    rayleigh = accountant_upper(K=10, N=16, d=8, C=0.5, power=1.0, clip_norm=1.0, neighbour="replace", delta=1e-5)
    assert upper["epsilon"] == rayleigh["epsilon"] and res.bound.epsilon <= upper["epsilon"]
    assert any("Rician gains κ = 5" in a for a in upper["assumptions"])
    with pytest.raises(ValueError, match="timing_offset and coherence_symbols cannot be combined"):
        T2Uplink(PhyConfig.make(scheme="floras", L=16, timing_offset=0.3, coherence_symbols=5, floras={"N": 16}), K=10,
                 seed=3, key=simulation_key(3))
