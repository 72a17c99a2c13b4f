"""FlorasRunAccountant reports, sensitivity, planning and the ``floras privacy`` command (model §7.2–§7.4)."""

import json
import math
import subprocess
import sys

import pytest

from privacy import FlorasRunAccountant, plan_smallest_N, release_sensitivity
from privacy.planning import largest_sensitivity
from scenarios.cli.main import main

BASE = dict(K=20, M=100, d=1, C=0.5, delta=1e-5)  # S = 2C/b = 1


def test_sensitivity_from_normalization():
    s = release_sensitivity(normalization="paper", d=10_000, relation="replace", level="client", power=4.0)
    assert s.C == pytest.approx(200.0) and s.b == pytest.approx(2.0) and s.value == pytest.approx(2 * math.sqrt(10_000))
    assert any("C_max" in c and "public" in c for c in s.caveats)
    s = release_sensitivity(normalization="clip", d=100, relation="add-remove", level="client", C=3.0, clip_norm=0.1)
    assert s.value == pytest.approx(3.0)  # C/b, client add/remove
    assert any("μ_k" in c and "unprotected" in c for c in s.caveats)
    s = release_sensitivity(normalization="clip", d=100, relation="add-remove", level="item", C=3.0, clip_norm=0.1)
    assert s.value == pytest.approx(6.0)  # a record added/removed still moves s_k within the ball
    with pytest.raises(ValueError, match="clip_norm"):
        release_sensitivity(normalization="clip", d=100, relation="replace", level="client")


def test_report_carries_every_assumption():
    acc = FlorasRunAccountant(N=60, **BASE)
    rep = acc.report(rounds=200)
    assert math.isfinite(rep.epsilon) and rep.epsilon > 0
    assert rep.threat_model == "T1" and rep.sensitivity == pytest.approx(1.0) and rep.delta == 1e-5
    assert rep.best_order in acc.orders
    text = " ".join(rep.assumptions)
    for needle in ("T1", "T2", "neighbouring relation", "replace", "S = 2C/b", "without replacement", "Wang, Balle",
                   "C_max", "μ_k", "δ = 1e-05", f"α = {rep.best_order:.6g}", "accountant", "Canonne"):
        assert needle in text, needle
    s = str(rep)
    assert "ε = " in s and "assumptions:" in s and "T1" in s
    d = json.loads(json.dumps(rep.to_dict()))
    for key in ("epsilon", "delta", "best_order", "sensitivity", "threat_model", "assumptions"):
        assert key in d
    assert isinstance(d["assumptions"], list) and all(isinstance(a, str) for a in d["assumptions"])


def test_full_power_paper_normalization_reports_infinity_honestly():
    rep = FlorasRunAccountant(K=20, N=30, M=100, d=100_000).report(rounds=200)
    assert rep.epsilon == math.inf and rep.best_order is None
    assert rep.to_dict()["epsilon"] == "inf"
    assert rep.sensitivity == pytest.approx(2 * math.sqrt(100_000))
    assert any("α(α−1) < γ²/S²" in w for w in rep.warnings)
    assert FlorasRunAccountant(K=20, N=20, **{k: v for k, v in BASE.items() if k != "K"}).report(rounds=1).epsilon == math.inf


def test_report_is_the_per_round_curve_times_t():
    acc = FlorasRunAccountant(N=60, **BASE)
    acc_many = acc.accountant(37)
    assert acc.report(rounds=37).epsilon == pytest.approx(acc_many.get_epsilon(1e-5), rel=1e-13)
    assert acc.report(rounds=0).epsilon == 0.0
    eps = [acc.report(rounds=t).epsilon for t in (1, 10, 100, 1000)]
    assert all(a < b for a, b in zip(eps, eps[1:]))
    d = acc.delta_at(rounds=100, epsilon=eps[2])
    assert d == pytest.approx(1e-5, rel=1e-8)  # ε → δ round trip through the run API


def test_monotone_in_N():
    eps = [FlorasRunAccountant(N=n, **BASE).report(rounds=100).epsilon for n in (25, 30, 40, 80, 200)]
    assert all(a > b for a, b in zip(eps, eps[1:]))


def test_item_level():
    client = FlorasRunAccountant(N=30, **BASE).report(rounds=100).epsilon
    full_epochs = FlorasRunAccountant(N=30, level="item", **BASE).report(rounds=100).epsilon
    assert full_epochs == pytest.approx(client, rel=1e-13)  # q_touch = 1: item level equals client level
    steps = dict(level="item", local_steps=3, batch_size=10, local_dataset_size=500)
    amplified = FlorasRunAccountant(N=30, relation="add-remove", **steps, **BASE).report(rounds=100)
    assert amplified.epsilon < client
    assert any("q_touch" in a and "Zhu & Wang" in a for a in amplified.assumptions)
    not_amplified = FlorasRunAccountant(N=30, relation="replace", **steps, **BASE).report(rounds=100)
    assert not_amplified.epsilon == pytest.approx(client, rel=1e-13)
    assert any("no amplification" in a for a in not_amplified.assumptions)


def test_poisson_client_sampling_uses_add_remove():
    rep = FlorasRunAccountant(N=60, sampling="poisson", relation="add-remove", **BASE).report(rounds=100)
    assert rep.sensitivity == pytest.approx(0.5)  # C/b
    assert any("Zhu & Wang" in a for a in rep.assumptions)
    with pytest.raises(ValueError, match="add-remove"):
        FlorasRunAccountant(N=60, sampling="poisson", relation="replace", **BASE)
    with pytest.raises(ValueError, match="replace"):
        FlorasRunAccountant(N=60, sampling="without-replacement", relation="add-remove", **BASE)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta"), (dict(K=120), "K must be ≤ M"),
        (dict(N=10), "N must be ≥ K"), (dict(sensitivity=-1.0), "sensitivity"), (dict(orders=[1.0, 2.0]), "orders"),
        (dict(level="record"), "level"), (dict(normalization="clip"), "clip_norm"), (dict(d=0), "d must"),
        (dict(level="item", local_steps=2, batch_size=50, local_dataset_size=10), "batch_size"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, match):
    cfg = dict(N=30, **BASE)
    cfg.update(kwargs)
    with pytest.raises(ValueError, match=match):
        FlorasRunAccountant(**cfg)


def test_edge_of_grid_warning():
    rep = FlorasRunAccountant(N=60, orders=[2.0, 3.0], **BASE).report(rounds=10)
    assert rep.best_order == 3.0 and any("largest of the grid" in w for w in rep.warnings)
    rep = FlorasRunAccountant(N=60, orders=[40.0, 64.0], **BASE).report(rounds=10)
    assert rep.best_order == 40.0 and any("smallest of the grid" in w for w in rep.warnings)


def test_plan_smallest_N():
    cfg = dict(BASE)
    res = plan_smallest_N(target_epsilon=2.0, rounds=200, **cfg)
    assert res.N is not None
    assert FlorasRunAccountant(N=res.N, **cfg).report(rounds=200).epsilon <= 2.0
    assert FlorasRunAccountant(N=res.N - 1, **cfg).report(rounds=200).epsilon > 2.0
    none = plan_smallest_N(target_epsilon=2.0, rounds=200, n_max=30, **cfg)
    assert none.N is None and "no N in [20, 30]" in none.message
    with pytest.raises(ValueError, match="target_epsilon"):
        plan_smallest_N(target_epsilon=-1.0, rounds=10, **cfg)


def test_largest_sensitivity_inverts_the_target():
    cfg = {k: v for k, v in BASE.items() if k != "C"}
    s = largest_sensitivity(target_epsilon=4.0, rounds=100, N=60, **cfg)
    assert FlorasRunAccountant(N=60, sensitivity=s, **cfg).report(rounds=100).epsilon <= 4.0
    assert FlorasRunAccountant(N=60, sensitivity=s * 1.001, **cfg).report(rounds=100).epsilon > 4.0


# ------------------------------------------------------------------------------------- CLI
def test_cli_report_and_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["privacy", "--K", "20", "--N", "30", "--M", "100", "--rounds", "200", "--delta", "1e-5",
               "--level", "client", "--d", "100000", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "ε = ∞" in text and "assumptions:" in text
    d = json.loads(out.read_text())
    assert d["epsilon"] == "inf" and d["threat_model"] == "T1" and d["delta"] == 1e-5
    rc = main(["privacy", "--d", "100000", "--sensitivity", "1", "--N", "60"])
    assert rc == 0 and "given by the user" in capsys.readouterr().out


def test_cli_plan(capsys):
    assert main(["privacy", "plan", "--target-epsilon", "8", "--d", "100000", "--rounds", "200"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("smallest N = ")
    assert main(["privacy", "plan", "--target-epsilon", "8", "--d", "100000", "--n-max", "100"]) == 0
    assert "no N in [20, 100]" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["privacy", "--d", "10", "--delta", "1.5"], "delta"),
        (["privacy", "--d", "10", "--K", "200"], "K must be ≤ M"),
        (["privacy", "--d", "10", "--N", "5"], "N must be ≥ K"),
        (["privacy", "--d", "10", "--sensitivity", "-2"], "sensitivity"),
        (["privacy", "--N", "30"], "d must be given"),
        (["privacy", "plan", "--d", "10"], "target-epsilon"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_privacy_never_imports_tensorflow():
    code = (
        "import sys, privacy, privacy.curves, scenarios.cli.privacy, figures.privacy_curves; "
        "from scenarios.cli.main import main; main(['privacy', '--d', '10', '--N', '60', '--C', '0.5']); "
        "assert 'tensorflow' not in sys.modules, 'tensorflow imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_cli_curves_writes_data_and_figures(tmp_path, monkeypatch):
    import privacy.curves as curves

    small = dict(curves.DEFAULT_SETTINGS, n_gamma=6, rounds_for_gamma=[1, 100], gamma_over_S_for_rounds=[1.0, 10.0], T_max=100)
    monkeypatch.setattr(curves, "DEFAULT_SETTINGS", small)
    assert main(["privacy", "curves", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "privacy_curves.json").read_text())
    assert data["eps_vs_gamma"]["client"]["T"] == [1, 100]
    for stem in ("privacy_eps_vs_gamma", "privacy_eps_vs_rounds"):
        for ext in ("png", "pdf", "caption.txt"):
            assert (tmp_path / f"{stem}.{ext}").stat().st_size > 0
    caption = (tmp_path / "privacy_eps_vs_gamma.caption.txt").read_text()
    for needle in ("T1", "δ = 1e-05", "without replacement", "C_max", "μ_k", "Canonne"):
        assert needle in caption
