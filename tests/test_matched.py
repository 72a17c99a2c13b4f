"""Matched comparison (model §10): calibration, symbolic targets, validation split, tuning, prediction, figures.

Every calibrated value is checked against the accountant itself (or dp_accounting for the
Gaussian), never against a number the calibration computed: the value must meet the target
and a value 0.1 % less private must not.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from privacy import FlorasRunAccountant
from scenarios.config.calibration import InfeasibleTarget, calibrate_config, model_dimension
from scenarios.cli.main import main
from scenarios.config import load_scenario, scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "scenarios" / "base" / "digits_mlp.toml"
FLORAS = {"partition.clients": 100, "training.clients_per_round": 20, "run.rounds": 200, "phy.floras.N": 30, "phy.L": 32,
          "phy.normalization": "clip", "phy.clip_norm": 1.0}


def floras_eps(cfg, **change) -> float:
    """ε of the FLORAS accountant at the given keys (independent of the calibration code)."""
    N = change.pop("N", cfg.phy.of("floras").N)
    phy = replace(cfg.phy, **change)
    return FlorasRunAccountant(K=20, N=N, M=100, d=model_dimension(cfg), normalization="clip", C=phy.C,
                               clip_norm=1.0, delta=1e-5).report(rounds=200).epsilon


# ------------------------------------------------------------------------------ calibration
@pytest.fixture
def narrow_floras_range():
    """A narrower search range than the default (the tight FLORAS bound is slow at tiny S/γ); same code path."""
    from dataclasses import replace

    from scenarios.config.schemes import register_wiring, wiring
    from scenarios.config.targets import clear_calibration_cache

    row = wiring("floras")
    narrow = {"C": replace(row.calibrated["C"], bracket=(0.3, 10.0)), "N": replace(row.calibrated["N"], bracket=("K", 120))}
    register_wiring(replace(row, calibrated=narrow), replace=True)
    clear_calibration_cache()
    yield
    register_wiring(row, replace=True)
    clear_calibration_cache()


def test_floras_clip_bound_meets_the_target_and_is_the_largest(narrow_floras_range):
    cfg = load_scenario(DIGITS, FLORAS)
    cal = calibrate_config(cfg, 4.0)
    assert cal.parameter == "C" and cal.threat_model.startswith("T1")
    assert floras_eps(cfg, C=cal.value) <= 4.0
    assert floras_eps(cfg, C=cal.value * 1.001) > 4.0  # not needlessly noisy
    assert cal.achieved_epsilon == pytest.approx(floras_eps(cfg, C=cal.value), rel=1e-12)


def test_floras_smallest_N_at_fixed_C(narrow_floras_range):
    cfg = load_scenario(DIGITS, {**FLORAS, "phy.C": 1.0, "privacy.calibrate_key": "N"})
    cal = calibrate_config(cfg, 4.0)
    n = cal.value
    assert isinstance(n, int) and floras_eps(cfg, N=n) <= 4.0 < floras_eps(cfg, N=n - 1)


def test_unreachable_and_non_private_targets_are_infeasible(narrow_floras_range):
    cfg = load_scenario(DIGITS, {**FLORAS, "phy.floras.N": 20})  # γ = 0: no Cauchy noise at any C
    with pytest.raises(InfeasibleTarget, match="no phy.C"):
        calibrate_config(cfg, 8.0)
    ideal = load_scenario(DIGITS, {"phy.scheme": "ideal"})
    with pytest.raises(InfeasibleTarget, match="adds no privacy noise"):
        calibrate_config(ideal, 8.0)
    assert calibrate_config(ideal, math.inf).achieved_epsilon == math.inf


def test_symbolic_target_is_resolved_and_recorded(narrow_floras_range):
    cfg = load_scenario(DIGITS, {**FLORAS, "privacy.target_epsilon": 8})
    assert floras_eps(cfg, C=cfg.phy.C) <= 8.0 < floras_eps(cfg, C=cfg.phy.C * 1.001)
    rec = cfg.to_dict()["privacy"]
    assert rec["target_epsilon"] == 8 and rec["calibrated"]["parameter"] == "C"
    assert rec["calibrated"]["value"] == cfg.phy.C
    # the stored mapping loads back to the same configuration (what a resumed run compares)
    assert scenario_from_dict(cfg.to_dict()) == cfg
    inf = load_scenario(DIGITS, {**FLORAS, "privacy.target_epsilon": "inf"})
    assert inf.phy.of("floras").N == 20  # ε = ∞: no privacy noise (γ = 0)
    with pytest.raises(ValueError, match="privacy.target_epsilon must be"):
        load_scenario(DIGITS, {**FLORAS, "privacy.target_epsilon": -1})


def test_run_records_target_and_resolved_value(tmp_path, narrow_floras_range):
    from scenarios.runs.run import run_scenario

    cfg = load_scenario(DIGITS, {**FLORAS, "run.rounds": 2, "training.batch_size": 10, "privacy.target_epsilon": 8})
    run_scenario(cfg, tmp_path / "run", progress=False)
    stored = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert stored["privacy"]["target_epsilon"] == 8
    assert stored["phy"]["C"] == stored["privacy"]["calibrated"]["value"] == cfg.phy.C


def gaussian_eps_dp_accounting(z: float) -> float:
    from dp_accounting import NeighboringRelation, dp_event, rdp

    acc = rdp.RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    ev = dp_event.SampledWithoutReplacementDpEvent(100, 20, dp_event.GaussianDpEvent(z))
    acc.compose(ev, 200)
    return acc.get_epsilon(1e-5)


def test_gaussian_noise_multiplier_done_when(capsys):
    """Issue 15's check: rdp, K = 20 of M = 100 without replacement, T = 200, δ = 1e-5, ε = 8 → z = 3.744 (±1 %)."""
    assert main(["calibrate", "--scheme", "central-gaussian", "--target-epsilon", "8", "--delta", "1e-5", "--K", "20",
                 "--M", "100", "--rounds", "200", "--accountant", "rdp", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"scheme", "parameter", "value", "achieved_epsilon", "accountant", "threat_model", "noise_multiplier"}
    z = out["noise_multiplier"]
    assert z == pytest.approx(3.744, rel=0.01)
    assert gaussian_eps_dp_accounting(z) == pytest.approx(8.0, rel=0.01)  # dp_accounting's own RDP accountant
    assert gaussian_eps_dp_accounting(z * 0.99) > 8.0


def test_calibrate_cli(capsys, tmp_path, narrow_floras_range):
    assert main(["calibrate", "--scheme", "floras", "--N", "30", "--d", "4810", "--target-epsilon", "8", "--json", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameter"] == "C" and out["achieved_epsilon"] <= 8 and out["threat_model"].startswith("T1")
    # C as a transmit back-off against full power √(d·P), P = 1 W by default (model §2)
    assert out["back_off_db"] == pytest.approx(20 * math.log10(out["value"] / math.sqrt(4810 * 1.0)), rel=1e-12)
    assert main(["calibrate", "--scheme", "floras", "--N", "30", "--d", "4810", "--target-epsilon", "8",
                 "--set", "phy.power=4"]) == 0
    printed = capsys.readouterr().out
    c = float(printed.split("C = ", 1)[1].split()[0])
    want = 20 * math.log10(c / math.sqrt(4810 * 4.0))
    assert f"20·log10(C/√(d·P)) = {want:.2f} dB" in printed
    path = tmp_path / "cal.json"
    assert main(["calibrate", "--scheme", "floras", "--N", "20", "--d", "4810", "--target-epsilon", "8", "--json", str(path)]) == 1
    assert json.loads(path.read_text())["feasible"] is False
    assert main(["calibrate", "--scheme", "floras", "--target-epsilon", "-2", "--d", "10"]) == 2
    assert "target_epsilon must be" in capsys.readouterr().err


# ------------------------------------------------------------------------------ validation split
def test_validation_split_is_disjoint_from_train_and_test():
    from fl.data import load_dataset
    from fl.validation import carve_validation, validation_indices

    data = load_dataset("synthetic", seed=3, synthetic_samples=600, synthetic_features=5, synthetic_classes=3)
    keep, val = validation_indices(data.y_train, fraction=0.2, seed=3)
    assert np.intersect1d(keep, val).size == 0 and keep.size + val.size == data.y_train.size
    for c in range(3):  # stratified: round(0.2 · n_c) of each class
        assert (data.y_train[val] == c).sum() == round(0.2 * (data.y_train == c).sum())
    tuned = carve_validation(data, fraction=0.2, seed=3, evaluate_on="validation")
    rows = lambda x: {r.tobytes() for r in x.reshape(x.shape[0], -1)}  # noqa: E731
    assert not rows(tuned.x_test) & rows(data.x_test)        # never the test set
    assert not rows(tuned.x_test) & rows(tuned.x_train)      # not trained on
    plain = carve_validation(data, fraction=0.2, seed=3)
    assert np.array_equal(plain.x_test, data.x_test) and plain.x_train.shape[0] == keep.size


# ------------------------------------------------------------------------------ tuning
def test_choose_lr_picks_best_validation_accuracy():
    from scenarios.experiments.tune import choose_lr

    rows = [
        {"label": "a", "training.lr": 0.01, "final_test_accuracy_mean": 0.50, "seeds_done": 2},
        {"label": "a", "training.lr": 0.1, "final_test_accuracy_mean": 0.90, "seeds_done": 2},
        {"label": "a", "training.lr": 0.3, "final_test_accuracy_mean": math.nan, "seeds_done": 0},  # diverged
        {"label": "b", "training.lr": 0.1, "final_test_accuracy_mean": 0.70, "seeds_done": 1},
        {"label": "b", "training.lr": 0.01, "final_test_accuracy_mean": 0.70, "seeds_done": 1},
        {"label": "c", "training.lr": 0.1, "final_test_accuracy_mean": math.nan, "seeds_done": 0},
    ]
    got = choose_lr(rows)
    assert got["a"]["lr"] == 0.1 and got["a"]["validation_accuracy"] == 0.90 and len(got["a"]["grid"]) == 3
    assert got["b"]["lr"] == 0.01  # tie → the smaller step
    assert got["c"]["lr"] is None
    assert not got["a"]["at_edge"] and got["b"]["at_edge"]  # a: 0.1, inside its grid; b: 0.01, its smallest


def mini_sweep(tmp_path: Path, rounds: int = 3) -> Path:
    path = tmp_path / "mini.toml"
    path.write_text(f'''name = "matched"
base = "{DIGITS.as_posix()}"
seeds = [0, 1]
[overrides]
"partition.clients" = 100
"training.clients_per_round" = 20
"training.batch_size" = 10
"run.rounds" = {rounds}
"phy.normalization" = "clip"
"phy.clip_norm" = 1.0
"phy.L" = 32
[grid]
"privacy.target_epsilon" = [2, 8, "inf"]
"phy.snr_db" = [20.0, 0.0]
[[cases]]
label = "floras-none"
"phy.scheme" = "floras"
"phy.floras.N" = 32
[[cases]]
label = "ideal"
"phy.scheme" = "ideal"
''')
    return path


def test_predict_only_without_calibrating_plans_every_uncached_point_as_feasible(tmp_path, capsys):
    """--predict-only --no-calibrate computes no noise key (the tests' calibration store is off, so none is cached):
    FLORAS at ε = 2 and 8 (both SNRs) and ideal at ε = 2 and 8 (20 dB; 0 dB is reused) are marked and planned as
    feasible, ε = ∞ needs no calculation. 9 points × 2 seeds = 18 runs, against the 14 that calibrating finds (ideal has
    no finite ε). Plausible bugs: a calibration run anyway, the pending points counted as copies of one another (an
    empty identity), --no-calibrate accepted for a real run."""
    sweep_path = mini_sweep(tmp_path)
    assert main(["matched", str(sweep_path), "--predict-only", "--no-calibrate", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "calibrating" not in out
    assert "matched: 18 run(s) (0 grid point(s) infeasible, not run, 3 reused from another SNR)" in out, out
    assert out.count("not calibrated (ε = ") == 6
    assert "6 grid point(s) not calibrated (--no-calibrate" in out
    assert main(["matched", str(sweep_path), "--no-calibrate", "--workers", "0"]) == 2
    assert "--no-calibrate plans without calibrating, which only --predict-only does" in capsys.readouterr().err


def test_tune_sweep_uses_the_validation_split_at_one_epsilon(tmp_path, narrow_floras_range):
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.experiments.tune import tune_sweep

    tune, at = tune_sweep(load_sweep(mini_sweep(tmp_path)), lr_grid=[0.03, 0.3], at_epsilon=8, at_snr_db=0.0)
    assert at == {"floras-none": "8", "ideal": "inf"}  # ideal has no ε = 8: tuned at ∞
    assert len(tune.points) == 4
    for p in tune.points:
        assert p.overrides["data.evaluate_on"] == "validation" and p.overrides["data.validation_fraction"] == 0.1
        assert p.overrides["phy.snr_db"] == 0.0
        load_scenario(tune.base, {**p.overrides, "run.seed": 0})


HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s,channel_uses"


def rigged_runner(cfg, out_dir, *, resume, progress):
    """Accuracy peaks at η = 0.1 on the validation split but at η = 0.3 on the test set."""
    best = 0.1 if cfg.data.evaluate_on == "validation" else 0.3
    acc = 0.9 - abs(math.log(cfg.training.lr / best)) / 10
    out_dir = Path(out_dir)
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict()}))
    rows = [HEADER] + [f"{r},1.0,1.0,{acc!r},0.1,,,inf,0.1,1" for r in range(1, cfg.run.rounds + 1)]
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_tuning_picks_by_validation_accuracy(tmp_path, capsys, narrow_floras_range):
    import argparse

    from scenarios.cli.matched import run_tuning
    from scenarios.experiments.sweep import InProcessExecutor
    from scenarios.experiments.sweep_file import load_sweep

    args = argparse.Namespace(lr_grid="0.03,0.1,0.3", tune_at_epsilon="8", tune_snr_db=20.0, tune_rounds=2, tune_seeds="0,1",
                              validation_fraction=0.2, quick=False, no_progress=True)
    chosen = run_tuning(args, load_sweep(mini_sweep(tmp_path)), tmp_path / "res", InProcessExecutor(), 1, runner=rigged_runner)
    assert chosen == {"floras-none": 0.1, "ideal": 0.1}
    record = json.loads((tmp_path / "res" / "matched_tune" / "tune.json").read_text())
    grid = record["choices"]["ideal"]["grid"]
    assert [g["lr"] for g in grid] == [0.03, 0.1, 0.3] and all(g["seeds_done"] == 2 for g in grid)
    assert record["tuned_at_epsilon"] == {"floras-none": "8", "ideal": "inf"}


# ------------------------------------------------------------------------------ prediction and figures
def fake_acc(cfg) -> float:
    eps = cfg.privacy.target_epsilon
    base = 0.9 if cfg.phy.scheme == "ideal" else (0.6 if eps == "inf" else 0.3 + 0.02 * float(eps))
    return base - 0.05 * (cfg.phy.snr_db == 0.0) + 0.01 * cfg.run.seed


def fake_runner(cfg, out_dir, *, resume, progress):
    out_dir = Path(out_dir)
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "privacy_report": {"assumptions": ["fake"]}}))
    rows = [HEADER] + [f"{r},1.0,1.0,{fake_acc(cfg)!r},0.1,,,inf,{0.1 * r!r},{320 * r}" for r in range(1, cfg.run.rounds + 1)]
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_prediction_printed_and_figures_from_stored_results(tmp_path, capsys, narrow_floras_range):
    from scenarios.experiments.matched import MATCHED_RECORD, matched_record, plan_sweep, predict
    from scenarios.experiments.matched_timing import RUN_OVERHEAD_S, SECONDS_PER_ROUND, WORKER_START_S
    from scenarios.store import atomic_write_json
    from scenarios.experiments.sweep import run_sweep
    from scenarios.experiments.sweep_file import load_sweep

    sweep_path = mini_sweep(tmp_path)
    assert main(["matched", str(sweep_path), "--predict-only", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    # 2 cases × 3 ε × 2 SNR = 12 points; ideal at ε = 2 and 8 (4 points) infeasible; ideal at ε = ∞ runs
    # at 20 dB only (it learns the same at 0 dB: reused); 7 points × 2 seeds = 14 runs
    t = {s: RUN_OVERHEAD_S["digits"] + 3 * SECONDS_PER_ROUND["digits"][s] for s in ("floras", "ideal")}
    wall = (12 * t["floras"] + 2 * t["ideal"]) / 2 + WORKER_START_S
    assert "matched: 14 run(s) (4 grid point(s) infeasible, not run, 1 reused from another SNR)" in out
    assert f"{wall / 60:.1f} min wall (14 runs)" in out
    assert "ideal_target-epsilon-inf_snr-db-0: reused (ideal_target-epsilon-inf_snr-db-20)" in out
    assert "ideal_target-epsilon-8_snr-db-20: infeasible" in out

    sweep = load_sweep(sweep_path)
    feasible, planned = plan_sweep(sweep, tuned_lr={"floras-none": 0.05, "ideal": 0.2})
    root = tmp_path / "results"
    (root / "matched").mkdir(parents=True)
    atomic_write_json(root / "matched" / MATCHED_RECORD, matched_record(
        sweep, planned, tuned={"floras-none": 0.05, "ideal": 0.2}, prediction=predict(planned, seeds=2, workers=1)))
    run_sweep([(feasible, root / "matched")], runner=fake_runner, progress=False, echo=None)
    figs = tmp_path / "figs"
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    stem = figs / "matched_accuracy_vs_epsilon"
    assert Path(f"{stem}.png").stat().st_size > 10_000
    caption = Path(f"{stem}.caption.txt").read_text()
    for needed in ("δ = 1e-05", "replace relation", "K = 20 of M = 100", "without replacement", "accountant 'rdp'",
                   "floras-none 0.05", "ideal 0.2", "min–max over seeds"):
        assert needed in caption
    table = Path(f"{stem}.table.md").read_text()
    # FLORAS at ε = 8, 20 dB: seeds 0 and 1 → 46 % and 47 %
    row = next(line for line in table.splitlines() if line.startswith("| FLORAS, no CSIT [T1"))
    assert "46.5 [46.0, 47.0] (640 uses; C = " in row.split("|")[3]  # ε = 8 column; uses: mean of 320·r over r = 1..3
    assert "n/a (no privacy noise" in table
    verdict = Path(f"{stem}.verdict.md").read_text()
    # ε = ∞: FLORAS 60 / 61 % against ideal 90 / 91 % (20 dB); at 0 dB FLORAS 55 / 56 % against ideal's
    # reused 20 dB runs; Δ standard error √(0.5/2 + 0.5/2) = 0.707 points
    assert "| 20 | ∞ | FLORAS, no CSIT | 60.5 [60.0, 61.0] | ideal (no privacy) | 90.5 [90.0, 91.0] | -30.0 ± 0.7 | loss |" in verdict
    assert "| 0 | ∞ | FLORAS, no CSIT | 55.5 [55.0, 56.0] | ideal (no privacy) | 90.5 [90.0, 91.0] | -35.0 ± 0.7 | loss |" in verdict
    assert "| 8 | FLORAS, no CSIT | 46.5 [46.0, 47.0] | ideal" not in verdict  # no reference at a finite ε
    assert "| FLORAS, no CSIT | 0 | 0 | 2 | 0 | 0 |" in verdict  # 2 losses (∞ at 20 and 0 dB)


def test_verdict_rule_ranges_and_standard_error():
    import numpy as np

    from figures.matched_verdict import compare

    v, d, se = compare(np.array([50.0, 52.0, 54.0]), np.array([40.0, 45.0, 49.0]))
    assert v == "win" and d == pytest.approx(52.0 - 134 / 3)
    assert se == pytest.approx(math.sqrt(4.0 / 3 + np.var([40, 45, 49], ddof=1) / 3))
    assert compare(np.array([50.0, 52.0, 54.0]), np.array([40.0, 45.0, 50.0]))[0] == "tie"  # 50 ≤ 50: ranges touch
    assert compare(np.array([10.0, 11.0]), np.array([12.0, 30.0]))[0] == "loss"
    assert compare("infeasible", np.array([1.0]))[0] == "FLORAS infeasible"
    assert compare(np.array([1.0]), "infeasible")[0] == "other infeasible"


# ------------------------------------------------------------------------------ CI: the whole pipeline, tiny
def ci_sweep(tmp_path: Path, rounds: int = 4) -> Path:
    """2 schemes × 2 ε × 2 SNR × 1 seed × 4 rounds on digits: the matched pipeline in seconds."""
    path = tmp_path / "ci.toml"
    path.write_text(f'''name = "matched"
base = "{DIGITS.as_posix()}"
seeds = [0]
[overrides]
"partition.clients" = 100
"training.clients_per_round" = 20
"training.batch_size" = 10
"run.rounds" = {rounds}
"phy.normalization" = "clip"
"phy.clip_norm" = 1.0
"phy.L" = 32
"data.validation_fraction" = 0.1
[grid]
"privacy.target_epsilon" = [8, "inf"]
"phy.snr_db" = [20.0, 0.0]
[[cases]]
label = "floras-none"
"phy.scheme" = "floras"
"phy.floras.N" = 32
[[cases]]
label = "central-gaussian"
"phy.scheme" = "central-gaussian"
''')
    return path


def test_ci_matched_end_to_end(tmp_path, capsys, narrow_floras_range):
    """floras matched: calibrate → tune (validation split) → run (real training) → floras figures, in process."""
    root, figs = tmp_path / "results", tmp_path / "figs"
    assert main(["matched", str(ci_sweep(tmp_path)), "--tune", "--lr-grid", "0.1,0.3", "--tune-rounds", "2",
                 "--workers", "0", "--out", str(root), "--no-progress"]) == 0
    out = capsys.readouterr().out
    # the tuning grid's calibrations first: η cannot change ε, so 2 keys for the 2 cases × 2 η
    assert "floras tune: calibrating 2 noise key(s) for 4 grid point(s) in this process" in out
    # the calibrations before planning, a line each: tuning (at ε = 8) calibrated ε = 8 already; neither scheme's
    # ε reads the SNR, so 2 keys serve the 4 points at ε = ∞
    assert "floras matched: calibrating 2 noise key(s) for 4 grid point(s) in this process" in out
    assert "[2/2] matched/central-gaussian_target-epsilon-inf_snr-db-20 (and 1 more point(s)): " in out
    # 8 points; central Gaussian learns the same at 0 dB as at 20 dB: 2 points reused, 6 runs
    assert "matched: 6 run(s) (0 grid point(s) infeasible, not run, 2 reused from another SNR)" in out
    assert "floras matched: 6 run(s) finished, 0 copied from identical runs, 0 already done, 0 failed" in out
    tune = json.loads((root / "matched_tune" / "tune.json").read_text())
    assert set(tune["choices"]) == {"floras-none", "central-gaussian"}
    lr = {k: c["lr"] for k, c in tune["choices"].items()}
    assert all(v in (0.1, 0.3) for v in lr.values())
    record = json.loads((root / "matched" / "matched.json").read_text())
    status = {p["slug"]: p for p in record["points"]}
    reused = [p for p in record["points"] if p["status"] == "reused"]
    assert sorted(p["label"] for p in reused) == ["central-gaussian"] * 2
    for p in reused:
        src = status[p["reuses"]]
        assert src["status"] == "feasible" and src["grid"]["phy.snr_db"] == 20.0
        assert src["grid"]["privacy.target_epsilon"] == p["grid"]["privacy.target_epsilon"]
    runs = sorted((root / "matched").glob("*_seed0_*"))
    assert len(runs) == 6 and all((r / "DONE").exists() for r in runs)
    for r in runs:  # each run used its case's tuned η and the calibrated key of its ε
        cfg = json.loads((r / "config.json").read_text())["config"]
        label = "floras-none" if cfg["phy"]["scheme"] == "floras" else "central-gaussian"
        assert cfg["training"]["lr"] == lr[label]
        if cfg["privacy"]["target_epsilon"] != "inf":
            assert cfg["privacy"]["calibrated"]["achieved_epsilon"] <= 8.0
        lines = (r / "metrics.csv").read_text().strip().splitlines()
        col = lines[0].split(",").index("channel_uses")  # by name: columns are appended at the end
        uses = {line.split(",")[col] for line in lines[1:]}
        # model §5, every run records channel_uses: FLORAS (d + 1)·L (pilot + d symbols), the Gaussian sum d·L
        assert uses == {str((4810 + (label == "floras-none")) * 32)}
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    assert (figs / "matched_accuracy_vs_epsilon.png").stat().st_size > 10_000
    table = (figs / "matched_accuracy_vs_epsilon.table.md").read_text()
    # the 0 dB cell of central Gaussian at ε = 8 is the 20 dB run's final accuracy, read here from metrics.csv
    (src,) = [r for r in runs if "central-gaussian_target-epsilon-8_snr-db-20" in r.name]
    acc = 100 * float((src / "metrics.csv").read_text().strip().splitlines()[-1].split(",")[3])
    zero_db = table.split("## SNR = 0 dB")[1]
    row = next(line for line in zero_db.splitlines() if line.startswith("| central Gaussian"))
    assert f"{acc:.1f} [{acc:.1f}, {acc:.1f}] reused from 20 dB" in row
    assert "Dotted: central Gaussian learn" in (figs / "matched_accuracy_vs_epsilon.caption.txt").read_text()
    # a rerun resumes, nothing redone, with --tuned and with --tune: the stored runs are named by the tuned η, which the
    # check of the output folder before calibration applies (with the file's η it took the folder for another sweep)
    assert any(v != 0.1 for v in lr.values())  # the premise: some tuned η differs from the base file's 0.1
    for again in (["--tuned", str(root / "matched_tune" / "tune.json")],
                  ["--tune", "--lr-grid", "0.1,0.3", "--tune-rounds", "2"]):
        capsys.readouterr()
        assert main(["matched", str(tmp_path / "ci.toml"), *again, "--workers", "0", "--out", str(root), "--no-progress"]) == 0
        assert "6 already done, 0 failed" in capsys.readouterr().out, again
    # the prediction leaves out the runs already finished in --out: all 6 on a rerun; seed 0's 6 when seed 1 is added
    # (the sweep grows in place), so the grown sweep's run time is that of 6 runs, as the first run's was
    path, tuned = tmp_path / "ci.toml", ["--tuned", str(root / "matched_tune" / "tune.json")]
    capsys.readouterr()
    assert main(["matched", str(path), "--predict-only", "--workers", "1", "--out", str(tmp_path / "empty"), *tuned]) == 0
    fresh = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("matched:"))
    assert main(["matched", str(path), "--predict-only", "--workers", "1", "--out", str(root), *tuned]) == 0
    rerun = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("matched:"))
    assert "2 reused from another SNR, 6 already finished in the output folder); predicted 0:00:00 of run time, " \
           "0:00:00 wall" in rerun, rerun
    path.write_text(path.read_text().replace("seeds = [0]", "seeds = [0, 1]"))
    assert main(["matched", str(path), "--predict-only", "--workers", "1", "--out", str(root), *tuned]) == 0
    grown = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("matched:"))
    assert grown.startswith("matched: 12 run(s)") and "6 already finished in the output folder" in grown
    assert grown.split("); ")[1].split(" (at")[0] == fresh.split("); ")[1].split(" (at")[0], (grown, fresh)


def test_calibrate_only_table_per_accountant(tmp_path, capsys, narrow_floras_range):
    """Each accountant is really applied: the generic RDP bound needs more Gaussian noise (and a smaller
    FLORAS C) than the tightest one at the same ε; PLD (sampling without replacement by the symmetric pair of
    privacy.pld_wor) is tighter still: less Gaussian noise and a larger C, each within its target."""
    from scenarios.experiments.matched_accountants import accountant_rows
    from scenarios.experiments.sweep_file import load_sweep

    import dataclasses

    from scenarios.config.calibration import _local_dataset_size, model_dimension, with_phy
    from scenarios.config.loading import build_scenario_file

    sweep = load_sweep(ci_sweep(tmp_path, rounds=200))  # T = 200: where the two RDP bounds differ
    rows = {(r["label"], r["target"]): r for r in accountant_rows(sweep, ("rdp", "rdp-generic"))}
    assert set(rows) == {("floras-none", 8.0), ("central-gaussian", 8.0)}  # ε = ∞ has no key; first SNR only
    gaussian = dataclasses.replace(sweep, points=tuple(p for p in sweep.points if p.label == "central-gaussian"))
    z = rows[("central-gaussian", 8.0)] | accountant_rows(gaussian, ("pld",))[0]
    assert z["parameter"] == "central-gaussian.noise_multiplier" and z["rdp-generic"]["value"] > 1.3 * z["rdp"]["value"]
    c = rows[("floras-none", 8.0)]
    assert c["parameter"] == "C" and c["rdp-generic"]["value"] < c["rdp"]["value"]
    assert z["pld"]["value"] < z["rdp"]["value"] and z["pld"]["achieved_epsilon"] <= 8.0
    for r in rows.values():
        assert r["rdp"]["achieved_epsilon"] <= 8.0 and r["rdp-generic"]["achieved_epsilon"] <= 8.0
    # FLORAS under the PLD: ε at the RDP-calibrated C is below the target, so its PLD C is larger (ε rises with C);
    # one PLD evaluation instead of a search of them (the search itself: tests/test_tightest_accountant.py)
    point = next(p for p in sweep.points if p.label == "floras-none" and str(p.grid["privacy.target_epsilon"]) == "8")
    cfg = build_scenario_file(sweep.base, {**point.overrides, "run.seed": 0, "privacy.accountant": "pld"})
    at_rdp = with_phy(cfg, "C", c["rdp"]["value"]).validate()
    pld_eps = at_rdp.privacy_accountant(d=model_dimension(at_rdp), D=_local_dataset_size(at_rdp)).epsilon(rounds=200)
    assert pld_eps < 8.0 - 0.5, pld_eps  # under rdp it is 8 (the calibration): an accountant not applied fails
    assert main(["matched", str(tmp_path / "ci.toml"), "--calibrate-only", "--accountants", "rdp,rdp-generic"]) == 0
    out = capsys.readouterr().out
    assert "| central-gaussian | 8 | central-gaussian.noise_multiplier |" in out
    assert main(["matched", str(tmp_path / "ci.toml"), "--calibrate-only", "--accountants", "rdp,foo"]) == 2


def test_full_sweeps_use_their_measured_timing_settings():
    """The full sweep files' settings are the ones the timing table measured (an edited batch size or
    population would silently fall back to the K-linear scaling, which overestimates K = 100 five-fold)."""
    from scenarios.experiments.matched_timing import REFERENCE_K, SECONDS_PER_ROUND_BY_SETTING
    from scenarios.experiments.sweep_file import load_sweep

    for name in ("matched", "matched_budget", "matched_snr", "matched_generic", "matched_tightest", "fig4_tuned"):
        over = load_sweep(ROOT / "scenarios" / f"{name}.toml").points[0].overrides
        assert over["training.clients_per_round"] == REFERENCE_K and over["partition.clients"] == 100
    for name in ("matched_xdev", "matched_xdev_tightest"):
        over = load_sweep(ROOT / "scenarios" / f"{name}.toml").points[0].overrides
        key = ("fashion-mnist", over["training.clients_per_round"], over["partition.clients"], over["training.batch_size"])
        assert key in SECONDS_PER_ROUND_BY_SETTING


def test_prediction_counts_runs_copied_from_an_identical_earlier_sweep(tmp_path, capsys, narrow_floras_range):
    """A second sweep whose ε = 8, 20 dB FLORAS points equal the first sweep's: its 2 runs (2 seeds)
    are copied (scenarios/experiments/identical.py), so the prediction keeps them in the count but not in the time."""
    from scenarios.experiments.matched_timing import RUN_OVERHEAD_S, SECONDS_PER_ROUND, WORKER_START_S

    first = mini_sweep(tmp_path)
    second = tmp_path / "second.toml"
    text = first.read_text().replace('name = "matched"', 'name = "matched_second"')
    text = text.replace('"privacy.target_epsilon" = [2, 8, "inf"]\n"phy.snr_db" = [20.0, 0.0]',
                        '"privacy.target_epsilon" = [8, 16]\n"phy.snr_db" = [20.0]')
    second.write_text(text.split("[[cases]]\nlabel = \"ideal\"")[0])  # FLORAS only
    assert main(["matched", str(first), str(second), "--predict-only", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    t = RUN_OVERHEAD_S["digits"] + 3 * SECONDS_PER_ROUND["digits"]["floras"]
    line = next(l for l in out.splitlines() if l.startswith("matched_second:"))
    assert "4 run(s) (0 grid point(s) infeasible, not run, 2 copied from identical runs)" in line
    seconds = 2 * t  # ε = 16's two runs; ε = 8's two are copies
    assert f"predicted 0:00:{round(seconds):02d} of run time" in line
    assert f"{round(seconds / 2 + WORKER_START_S) // 60}:{round(seconds / 2 + WORKER_START_S) % 60:02d} wall" in line


def test_cell_sweep_plans_and_fits_its_budget(narrow_floras_range):
    """scenarios/cell.toml (model §5.1, §10): every channel-inversion and analog-Gaussian point is feasible at the
    tuned η of docs/figures/matched/tune_combined.json (path-loss inversion reusing channel inversion's), analog
    Gaussian meets ε = 8, channel inversion is ε = ∞; its FLORAS points are either planned (calibrated to ε ≤ 8,
    or infeasible with a reason) or, while FLORAS's ε has no cell, refused at planning naming phy.pathloss.
    The whole file, FLORAS included, is predicted within 60 min wall on 2 workers."""
    from dataclasses import replace as dc_replace

    from scenarios.experiments.matched import plan_sweep, predict
    from scenarios.experiments.matched_timing import run_seconds
    from scenarios.experiments.sweep_file import load_sweep
    from scenarios.experiments.tune import read_tuned

    sweep = load_sweep(ROOT / "scenarios" / "cell.toml")
    tuned = read_tuned(ROOT / "docs" / "figures" / "matched" / "tune_combined.json")
    floras = [p for p in sweep.points if p.label.startswith("floras")]
    assert [p.grid["phy.cell_radius"] for p in floras] == [100.0, 250.0, 500.0, 1000.0]
    # FLORAS's ε is the idealised release of model §7.2, which a cell does not change (the inactive sequences
    # carry no client gain, model §5.1): every radius calibrates to the same C as the same point without a cell.
    _, planned = plan_sweep(sweep, tuned_lr=tuned)
    fl = [q for q in planned if q.label.startswith("floras")]
    assert len(fl) == 4 and all(q.status == "feasible" and q.lr == tuned["floras-none-capped"] for q in fl)
    assert all(q.calibration["achieved_epsilon"] <= 8.0 for q in fl)
    assert len({q.calibration["value"] for q in fl}) == 1
    nocell = dc_replace(floras[0], overrides={k: v for k, v in floras[0].overrides.items()
                                               if k not in ("phy.pathloss", "phy.snr_reference", "phy.cell_radius")})
    _, (ref,) = plan_sweep(dc_replace(sweep, points=(nocell,)), tuned_lr=tuned)
    assert ref.calibration["value"] == fl[0].calibration["value"]
    others = dc_replace(sweep, points=tuple(p for p in sweep.points if p not in floras))
    _, planned = plan_sweep(others, tuned_lr=tuned)
    assert len(planned) == 12 and all(p.status == "feasible" for p in planned)
    for p in planned:
        if p.label.startswith("channel-inversion"):
            assert float(p.calibration["achieved_epsilon"]) == float("inf") and p.lr == tuned["channel-inversion"]
        else:
            assert p.scheme == "analog-gaussian" and p.lr == tuned["analog-gaussian"]
            assert p.calibration["parameter"] == "analog-gaussian.noise_multiplier"
            assert p.calibration["achieved_epsilon"] <= 8.0
    pred = predict(planned, seeds=3, workers=2)
    assert pred.runs == 36
    floras_s = 3 * len(floras) * run_seconds(dataset="fashion-mnist", scheme="floras", rounds=200, K=20, M=100, batch_size=50)
    assert pred.wall_seconds + floras_s / 2 <= 3600.0


def test_noniid_cell_sweep_is_the_cell_sweep_with_label_shards():
    """scenarios/cell_noniid.toml: every point is the point of scenarios/cell.toml at the same case and radius, with
    `partition.kind = "shards"` the only change (a drift between the two files would compare unlike runs)."""
    from scenarios.experiments.sweep_file import load_sweep

    iid = {(p.label, p.grid["phy.cell_radius"]): p.overrides for p in load_sweep(ROOT / "scenarios" / "cell.toml").points}
    noniid = load_sweep(ROOT / "scenarios" / "cell_noniid.toml").points
    assert sorted({p.grid["phy.cell_radius"] for p in noniid}) == [100.0, 1000.0] and len(noniid) == 8
    for p in noniid:
        ref = iid[(p.label, p.grid["phy.cell_radius"])]
        assert p.overrides["partition.kind"] == "shards" and ref["partition.kind"] == "iid"
        assert {k: v for k, v in p.overrides.items() if k != "partition.kind"} == \
            {k: v for k, v in ref.items() if k != "partition.kind"}


def test_noniid_low_snr_cell_sweep_is_the_low_snr_sweep_with_label_shards():
    """scenarios/cell_noniid_snr.toml: its UMi points are those of scenarios/cell_snr.toml with label shards and a
    1000 m cell the only changes, and each no-cell point is its UMi point with the path loss the only change (a drift
    between the files, or between the two grid points, would compare unlike runs)."""
    from scenarios.experiments.sweep_file import load_sweep

    iid = {(p.label, p.grid["phy.pathloss"]): p.overrides for p in load_sweep(ROOT / "scenarios" / "cell_snr.toml").points}
    noniid = {(p.label, p.grid["phy.pathloss"]): p.overrides
              for p in load_sweep(ROOT / "scenarios" / "cell_noniid_snr.toml").points}
    assert sorted(noniid) == sorted((label, loss) for label in ("floras-none-capped", "channel-inversion",
                                                                 "analog-gaussian") for loss in ("none", "umi"))
    changed = {"partition.kind": ("iid", "shards"), "phy.cell_radius": (500.0, 1000.0)}
    for (label, loss), ov in noniid.items():
        umi = noniid[(label, "umi")]
        assert {k: v for k, v in ov.items() if k != "phy.pathloss"} == \
            {k: v for k, v in umi.items() if k != "phy.pathloss"}
        if loss == "umi":
            ref = iid[(label, "umi")]
            for key, (before, after) in changed.items():
                assert (ref[key], ov[key]) == (before, after), key
            assert {k: v for k, v in ov.items() if k not in changed} == {k: v for k, v in ref.items() if k not in changed}


def test_the_stale_pilot_sweep_is_the_aging_sweeps_one_pilot_floras_with_stale_blocks():
    """scenarios/cell_aging_stale.toml: each case is scenarios/cell_aging.toml's tight-rdp `floras-none-capped` with
    one stale pilot over the blocks of that file's stale channel-inversion case at the same speed (n_c, law, f_D·T_s);
    same base, seeds and quick variant."""
    from scenarios.experiments.sweep_file import load_sweep

    for quick in (False, True):
        aging = load_sweep(ROOT / "scenarios" / "cell_aging.toml", quick=quick)
        stale = load_sweep(ROOT / "scenarios" / "cell_aging_stale.toml", quick=quick)
        assert stale.base == aging.base and stale.seeds == aging.seeds
        ref = {p.label: p for p in aging.points}
        one = aging.run_overrides(ref["floras-none-capped"], 0)
        assert sorted(p.label for p in stale.points) == [f"floras-none-capped-stale-{v}kmh" for v in ("0.03", "0.3", "3")]
        for p in stale.points:
            speed = p.label.rsplit("-", 1)[1]
            inversion = aging.run_overrides(ref[f"channel-inversion-aging-{speed}"], 0)
            blocks = {k: inversion[k] for k in ("phy.coherence_symbols", "phy.fading_correlation", "phy.doppler")}
            assert stale.run_overrides(p, 0) == {**one, **blocks, "phy.floras.pilots": "stale"}, p.label


def test_the_per_block_estimate_sweep_is_the_aging_sweeps_per_block_cases_with_an_estimation_error():
    """scenarios/cell_aging_csi.toml: every point is scenarios/cell_aging.toml's per-block case of the same scheme at
    3 km/h (channel inversion at ε = ∞, analog Gaussian at ε = 8) with phy.csi_error = σ_e² ∈ {0, 0.01, 0.1} added and
    nothing else changed, so its σ_e² = 0 rows repeat that sweep's; same base and seeds."""
    from scenarios.experiments.sweep_file import load_sweep

    aging = load_sweep(ROOT / "scenarios" / "cell_aging.toml")
    csi = load_sweep(ROOT / "scenarios" / "cell_aging_csi.toml")
    assert csi.base == aging.base and csi.seeds == aging.seeds
    ref = {p.label: aging.run_overrides(p, 0) for p in aging.points}
    seen = set()
    for p in csi.points:
        case, err = p.label, p.overrides["phy.csi_error"]
        want = {**ref[case], "phy.csi_error": float(err)}
        assert csi.run_overrides(p, 0) == want, p.label
        seen.add((case, float(err)))
    assert seen == {(c, e) for c in ("channel-inversion-perblock-3kmh", "analog-gaussian-perblock-3kmh")
                    for e in (0.0, 0.01, 0.1)}


def test_the_antenna_aging_sweeps_are_the_aging_sweeps_with_receive_antennas():
    """scenarios/cell_aging_antennas.toml: every point is scenarios/cell_aging_csi.toml's point of the same scheme and
    σ_e² ∈ {0, 0.1} with phy.rx_antennas = N_r ∈ {1, 2, 4} added, nothing else changed (its N_r = 1 rows repeat that
    sweep's); scenarios/cell_aging_antennas_floras.toml: cell_aging.toml's FLORAS case with a pilot and a weight per
    block under rdp-generic, with N_r ∈ {1, 2, 4}. Same base and seeds."""
    from scenarios.experiments.sweep_file import load_sweep

    csi = load_sweep(ROOT / "scenarios" / "cell_aging_csi.toml")
    ant = load_sweep(ROOT / "scenarios" / "cell_aging_antennas.toml")
    assert ant.base == csi.base and ant.seeds == csi.seeds
    ref = {(p.label, float(p.overrides["phy.csi_error"])): csi.run_overrides(p, 0) for p in csi.points}
    seen = set()
    for p in ant.points:
        key, n_rx = (p.label, float(p.overrides["phy.csi_error"])), int(p.overrides["phy.rx_antennas"])
        assert ant.run_overrides(p, 0) == {**ref[key], "phy.rx_antennas": n_rx}, p.label
        seen.add((*key, n_rx))
    assert seen == {(c, e, n) for c in ("channel-inversion-perblock-3kmh", "analog-gaussian-perblock-3kmh")
                    for e in (0.0, 0.1) for n in (1, 2, 4)}
    aging = load_sweep(ROOT / "scenarios" / "cell_aging.toml")
    floras = load_sweep(ROOT / "scenarios" / "cell_aging_antennas_floras.toml")
    assert floras.base == aging.base and floras.seeds == aging.seeds
    case = "floras-none-capped-generic-blocks1000-block"
    one = aging.run_overrides({p.label: p for p in aging.points}[case], 0)
    assert sorted(int(p.overrides["phy.rx_antennas"]) for p in floras.points) == [1, 1, 2, 2, 4, 4]
    for p in floras.points:
        n_rx = int(p.overrides["phy.rx_antennas"])
        if p.label == case:
            assert floras.run_overrides(p, 0) == {**one, "phy.rx_antennas": n_rx}
        else:  # the same with the tightest accountant
            assert p.label == "floras-none-capped-tightest-blocks1000-block"
            assert floras.run_overrides(p, 0) == {**one, "phy.rx_antennas": n_rx, "privacy.accountant": "tightest"}


def test_the_phase_csit_stale_pilot_sweep_is_the_stale_sweep_with_phase_csit():
    """scenarios/cell_aging_stale_phase.toml: every stale case is scenarios/cell_aging_stale.toml's at the same speed,
    and its pilot-per-block case scenarios/cell_aging.toml's at 3 km/h, with phy.floras.csit = "phase" and the capped
    receiver's tuned η (0.03, which --tuned gave the cases without CSIT) written out; nothing else changed; same
    base, seeds and quick variant."""
    from scenarios.experiments.sweep_file import load_sweep

    for quick in (False, True):
        stale = load_sweep(ROOT / "scenarios" / "cell_aging_stale.toml", quick=quick)
        phase = load_sweep(ROOT / "scenarios" / "cell_aging_stale_phase.toml", quick=quick)
        assert phase.base == stale.base and phase.seeds == stale.seeds
        aging = load_sweep(ROOT / "scenarios" / "cell_aging.toml", quick=quick)
        ref = {p.label: (stale, p) for p in stale.points} | {p.label: (aging, p) for p in aging.points}
        assert len(phase.points) == 4 and len(stale.points) == 3
        assert phase.points[-1].label == "floras-phase-capped-blocks1000-block"
        for p in phase.points:
            sweep, twin = ref[p.label.replace("floras-phase-", "floras-none-")]
            want = {**sweep.run_overrides(twin, 0), "phy.floras.csit": "phase"}
            if not quick:  # the quick variant keeps its own η, as the stale file's does
                want["training.lr"] = 0.03
            assert phase.run_overrides(p, 0) == want, p.label


def test_the_line_of_sight_stale_pilot_sweep_is_the_phase_sweep_without_csit_and_with_a_k_factor():
    """scenarios/cell_aging_stale_los.toml: every case is scenarios/cell_aging_stale_phase.toml's at the same speed (or
    its pilot per block) with phy.floras.csit = "none" and phy.rician_k = 2; nothing else changed; same base, seeds and
    quick variant (the accountant these cases build: tests/test_floras_stale_los.py)."""
    from scenarios.experiments.sweep_file import load_sweep

    for quick in (False, True):
        phase = load_sweep(ROOT / "scenarios" / "cell_aging_stale_phase.toml", quick=quick)
        los = load_sweep(ROOT / "scenarios" / "cell_aging_stale_los.toml", quick=quick)
        assert los.base == phase.base and los.seeds == phase.seeds and len(los.points) == len(phase.points) == 4
        ref = {p.label: p for p in phase.points}
        for p in los.points:
            twin = ref[p.label.replace("floras-none-capped-los-", "floras-phase-capped-")]
            want = {**phase.run_overrides(twin, 0), "phy.floras.csit": "none", "phy.rician_k": 2.0}
            assert los.run_overrides(p, 0) == want, p.label


@pytest.mark.parametrize("name, of, key, before, after", [
    ("cell_edge_snr", "cell_snr", "phy.snr_reference", "median-distance", "cell-edge"),
    ("cell_snr_m10", "cell_snr", "phy.snr_db", 0.0, -10.0),
    ("cell_edge_snr_m10", "cell_snr_m10", "phy.snr_reference", "median-distance", "cell-edge"),
])
def test_cell_snr_variants_change_one_key_of_the_low_snr_sweep(name, of, key, before, after):
    """scenarios/cell_edge_snr.toml and cell_snr_m10.toml: every point is scenarios/cell_snr.toml's with one key changed
    (the SNR reference, the SNR); cell_edge_snr_m10.toml is cell_snr_m10.toml's with the reference changed; same
    cases, scenarios, seeds, base and quick variant."""
    from scenarios.experiments.sweep_file import load_sweep

    for quick in (False, True):
        median = load_sweep(ROOT / "scenarios" / f"{of}.toml", quick=quick)
        other = load_sweep(ROOT / "scenarios" / f"{name}.toml", quick=quick)
        assert other.base == median.base and other.seeds == median.seeds
        ref = {(p.label, p.grid["phy.pathloss"]): p for p in median.points}
        assert sorted(ref) == sorted((p.label, p.grid["phy.pathloss"]) for p in other.points) and len(ref) == 9
        for p in other.points:
            theirs = median.run_overrides(ref[(p.label, p.grid["phy.pathloss"])], 0)
            assert other.run_overrides(p, 0) == {**theirs, key: after} and theirs[key] == before


@pytest.mark.parametrize("name, of, labels, epsilons", [
    ("matched_tightest", "matched", {"floras-none", "floras-none-capped", "central-gaussian", "analog-gaussian"},
     ("1", "2", "4", "8", "16")),
    ("matched_xdev_tightest", "matched_xdev", {"floras-none-capped", "central-gaussian", "analog-gaussian"}, ("2", "8")),
])
def test_the_tightest_sweeps_are_the_matched_sweeps_points_with_only_the_accountant_changed(name, of, labels, epsilons):
    """scenarios/matched_tightest.toml (K = 20 of 100) and matched_xdev_tightest.toml (K = 100 of 1 000): every run is
    the RDP sweep's point of the same case and ε at 20 dB and the same seed, with privacy.accountant = "tightest" the
    only change, so their rows read against the RDP rows; their cases take the η of
    docs/figures/matched/tune_combined.json."""
    from scenarios.experiments.sweep_file import load_sweep

    whole = load_sweep(ROOT / "scenarios" / f"{of}.toml")
    part = load_sweep(ROOT / "scenarios" / f"{name}.toml")
    assert part.base == whole.base and part.seeds == whole.seeds == (0, 1, 2)
    ref = {(p.label, str(p.overrides["privacy.target_epsilon"]), float(p.overrides["phy.snr_db"])): p
           for p in whole.points}
    assert sorted((p.label, str(p.overrides["privacy.target_epsilon"])) for p in part.points) == sorted(
        (label, e) for label in labels for e in epsilons)
    for point in part.points:
        mine = ref[(point.label, str(point.overrides["privacy.target_epsilon"]), 20.0)]
        for seed in part.seeds:
            assert part.run_overrides(point, seed) == {**whole.run_overrides(mine, seed),
                                                       "privacy.accountant": "tightest"}, point.label
    tuned = json.loads((ROOT / "docs" / "figures" / "matched" / "tune_combined.json").read_text())["choices"]
    assert labels <= set(tuned)


@pytest.mark.parametrize("name, sources, labels", [
    ("matched_snr_tightest", ("matched_snr", "matched"), {"floras-none-capped", "central-gaussian", "analog-gaussian"}),
    ("matched_budget_tightest", ("matched_budget",), {"floras-none-capped-L32", "floras-none-capped-L128",
                                                      "analog-gaussian-L8", "analog-gaussian-L32", "analog-gaussian-L128"}),
])
def test_the_tightest_snr_and_budget_sweeps_change_only_the_accountant(name, sources, labels):
    """scenarios/matched_snr_tightest.toml (20, 5, 0, −10 dB at ε = 8) and matched_budget_tightest.toml (chips per
    symbol at ε = 8): every run is the RDP sweep's point of the same case, SNR and seed (0 dB from matched.toml, whose
    grid has it) with privacy.accountant = "tightest" the only change, so their rows read against the RDP rows."""
    from scenarios.experiments.sweep_file import load_sweep

    part = load_sweep(ROOT / "scenarios" / f"{name}.toml")
    assert part.seeds == (0, 1, 2) and {p.label for p in part.points} == labels
    ref = {}
    for of in sources:
        whole = load_sweep(ROOT / "scenarios" / f"{of}.toml")
        assert part.base == whole.base and whole.seeds == part.seeds
        for p in whole.points:
            key = (p.label, str(p.overrides["privacy.target_epsilon"]), float(p.overrides["phy.snr_db"]))
            ref.setdefault(key, (whole, p))
    snrs = set()
    for point in part.points:
        assert point.overrides["privacy.target_epsilon"] == 8 and point.overrides["privacy.accountant"] == "tightest"
        snrs.add(float(point.overrides["phy.snr_db"]))
        whole, mine = ref[(point.label, "8", float(point.overrides["phy.snr_db"]))]
        for seed in part.seeds:
            assert part.run_overrides(point, seed) == {**whole.run_overrides(mine, seed),
                                                       "privacy.accountant": "tightest"}, point.label
    assert snrs == ({20.0, 5.0, 0.0, -10.0} if name == "matched_snr_tightest" else {20.0})
