"""Sweep engine: expansion, validation before any run, atomic resumable runs, failures, summary.

The engine is exercised with a fake scenario loader and a fake runner (deterministic,
checkpointing each round like the real one), in process; one test runs it on a dask
LocalCluster.
"""

from __future__ import annotations

import csv
import json
import math
import tomllib
from pathlib import Path

import pytest

from scenarios.experiments.sweep import (
    DaskExecutor,
    InProcessExecutor,
    load_sweep,
    read_manifest,
    run_sweep,
    summarize,
    validate_sweep,
)

KNOWN_KEYS = {"data.partition", "training.lr", "phy.scheme", "phy.snr_db", "phy.floras.N", "run.rounds", "run.seed", "run.K"}
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"


def fake_loader(base: Path, overrides: dict) -> dict:
    """Stand-in for scenarios.config.load_scenario: base TOML flattened, overrides checked."""
    with open(base, "rb") as fh:
        data = tomllib.load(fh)
    flat = {f"{t}.{k}": v for t, table in data.items() for k, v in table.items()}
    for key, value in overrides.items():
        if key not in KNOWN_KEYS:
            raise ValueError(f"unknown key {key}")
        if key == "phy.snr_db" and not isinstance(value, (int, float)):
            raise ValueError(f"phy.snr_db must be a finite number of dB (got {value!r})")
        flat[key] = value
    return flat


def _value(config: dict, rnd: int) -> tuple[float, float, float]:
    """Deterministic metrics of a fake run (depend on every override and the seed)."""
    h = sum(ord(c) for c in json.dumps(config, sort_keys=True)) % 97
    acc = 0.5 + 0.4 * (1 - math.exp(-(rnd + 1) / 3)) + 0.001 * h + 0.002 * config["run.seed"]
    return 2.0 / (rnd + 2) + 0.001 * h, 2.2 / (rnd + 2), acc


class FakeRunner:
    """Writes metrics.csv one round at a time with a checkpoint, like the real runner.

    ``interrupt_at`` = (call number, round): raise KeyboardInterrupt in that call after that
    round's checkpoint; ``fail_when`` = predicate on the config: raise ValueError instead.
    """

    def __init__(self, *, interrupt_at=None, fail_when=None):
        self.calls: list[str] = []
        self.resumed: list[str] = []
        self.interrupt_at = interrupt_at
        self.fail_when = fail_when

    def __call__(self, config, out_dir, *, resume, progress):
        out_dir = Path(out_dir)
        self.calls.append(out_dir.name)
        if self.fail_when and self.fail_when(config):
            raise ValueError("fake training diverged")
        ckpt = out_dir / "checkpoint.json"
        start = 0
        if resume and ckpt.is_file():
            start = json.loads(ckpt.read_text())["next_round"]
            self.resumed.append(out_dir.name)
        else:
            (out_dir / "metrics.csv").write_text(HEADER + "\n")
            bare = {"epsilon_most_sampled": 20.0 + config["run.seed"], "epsilon_ex_ante": 15.0}  # model §7.3
            (out_dir / "config.json").write_text(json.dumps({"config": config, "epsilon_assumptions": "fake T1",
                                                             "privacy_report": {"without_amplification": bare}}))
        rounds = config["run.rounds"]
        for rnd in range(start, rounds):
            tr, te, acc = _value(config, rnd)
            eps = math.inf if config.get("phy.floras.N", 30) == config.get("run.K", 20) else 10.0 / (rnd + 1)
            with (out_dir / "metrics.csv").open("a") as fh:
                fh.write(f"{rnd + 1},{tr!r},{te!r},{acc!r},0.0,,,{eps!r},{0.01 * (rnd + 1)!r}\n")
            ckpt.write_text(json.dumps({"next_round": rnd + 1}))
            if self.interrupt_at == (len(self.calls), rnd):
                raise KeyboardInterrupt
        ckpt.unlink()
        (out_dir / "DONE").write_text("")
        return {"final_test_accuracy": acc, "rounds": rounds}


BASE = """
[data]
partition = "iid"
[training]
lr = 0.005
[phy]
scheme = "floras"
snr_db = 20
[phy.floras]
N = 30
[run]
rounds = 4
seed = 0
K = 20
"""

SWEEP = """
name = "demo"
base = "base.toml"
seeds = [0, 1]
[overrides]
"run.rounds" = 4
[grid]
"phy.scheme" = ["floras", "channel-inversion"]
"phy.snr_db" = [15, 0]
[[cases]]
label = "iid"
"data.partition" = "iid"
"training.lr" = 0.005
[[cases]]
label = "non-iid"
"data.partition" = "shards"
"training.lr" = 0.001
[quick]
seeds = [3]
[quick.overrides]
"run.rounds" = 2
[quick.grid]
"phy.snr_db" = [0]
"""


def _write(tmp: Path, sweep: str = SWEEP, base: str = BASE) -> Path:
    (tmp / "base.toml").write_text(base)
    path = tmp / "sweep.toml"
    path.write_text(sweep)
    return path


def _tree(out: Path) -> dict[str, str]:
    """Every file's text below a results directory, keyed by relative path."""
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def test_expansion_cases_times_grid_and_quick(tmp_path):
    path = _write(tmp_path)
    sweep = load_sweep(path)
    assert sweep.name == "demo" and sweep.seeds == (0, 1) and sweep.n_runs == 16
    slugs = [p.slug for p in sweep.points]
    assert slugs[0] == "iid_scheme-floras_snr-db-15" and slugs[-1] == "non-iid_scheme-channel-inversion_snr-db-0"
    p = sweep.points[-1]
    assert p.overrides == {"run.rounds": 4, "data.partition": "shards", "training.lr": 0.001,
                           "phy.scheme": "channel-inversion", "phy.snr_db": 0}
    names = {sweep.run_name(p, s) for p in sweep.points for s in sweep.seeds}
    assert len(names) == 16  # distinct, and stable across loads:
    assert names == {load_sweep(path).run_name(p, s) for p in load_sweep(path).points for s in sweep.seeds}
    quick = load_sweep(path, quick=True)
    assert quick.seeds == (3,) and quick.n_runs == 4
    assert all(p.overrides["run.rounds"] == 2 and p.overrides["phy.snr_db"] == 0 for p in quick.points)
    # the quick variant's directories differ from the full ones (different overrides)
    assert not {quick.run_name(p, 3) for p in quick.points} & names


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda s: s.replace('name = "demo"', 'name = "demo"\nrepeats = 3'), "'repeats'"),
        (lambda s: s.replace("[quick]", "[quick]\nrounds = 2"), "[quick]: unknown key 'rounds'"),
        (lambda s: s.replace('"phy.snr_db" = [15, 0]', '"phy.snr_db" = 15'), "'phy.snr_db' must be a non-empty list"),
        (lambda s: s.replace("seeds = [0, 1]", "seeds = [0, -1]"), "seeds"),
        (lambda s: s.replace('"phy.snr_db" = [15, 0]', '"run.seed" = [1, 2]'), "'run.seed'"),
        (lambda s: s.replace('label = "iid"\n', ""), "cases[0]"),
        (lambda s: s.replace('"training.lr" = 0.001', '"training.lr" = 0.001\n"phy.scheme" = "ideal"'),
         "'phy.scheme' is set both by case 'non-iid' and by [grid]"),
        (lambda s: s.replace('base = "base.toml"', 'base = "nowhere.toml"'), "base"),
        (lambda s: s.replace('"phy.snr_db" = [0]', 'snr = [0]'), "[quick.grid]: key 'snr'"),
    ],
)
def test_invalid_sweep_file_names_the_key(tmp_path, edit, needle):
    path = _write(tmp_path, edit(SWEEP))
    with pytest.raises(ValueError) as info:
        load_sweep(path)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda s: s.replace('"training.lr" = 0.001', '"training.lrate" = 0.001'), "unknown key training.lrate"),
        (lambda s: s.replace('"phy.snr_db" = [15, 0]', '"phy.snr_db" = [15, "high"]'), "phy.snr_db must be"),
    ],
)
def test_invalid_override_fails_before_any_run(tmp_path, edit, needle):
    path = _write(tmp_path, edit(SWEEP))
    runner = FakeRunner()
    out = tmp_path / "out"
    with pytest.raises(ValueError) as info:
        run_sweep(load_sweep(path), out, runner=runner, loader=fake_loader, progress=False, echo=None)
    assert needle in str(info.value) and "grid point" in str(info.value)
    assert runner.calls == [] and not out.exists()


def test_interrupted_sweep_resumes_without_repeating_finished_runs(tmp_path):
    path = _write(tmp_path)
    sweep = load_sweep(path)
    reference = FakeRunner()
    run_sweep(sweep, tmp_path / "ref", runner=reference, loader=fake_loader, progress=False, echo=None)
    assert len(reference.calls) == 16

    out = tmp_path / "out"
    first = FakeRunner(interrupt_at=(5, 1))  # 5th run stops after its round 1
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, out, runner=first, loader=fake_loader, progress=False, echo=None)
    assert len(first.calls) == 5
    interrupted = first.calls[-1]
    assert interrupted.endswith(".partial") and (out / interrupted / "checkpoint.json").is_file()
    finished = {c for c in first.calls[:4]}
    assert all((out / c.removeprefix(".").removesuffix(".partial") / "DONE").is_file() for c in finished)

    second = FakeRunner()
    outcomes = run_sweep(sweep, out, runner=second, loader=fake_loader, progress=False, echo=None)
    assert len(second.calls) == 12 and not finished & set(second.calls)  # nothing finished is repeated
    assert second.resumed == [interrupted]  # the interrupted run continued from its checkpoint
    assert sorted(o.status for o in outcomes).count("skipped") == 4
    assert not list(out.glob(".*.partial"))
    assert _tree(out) == _tree(tmp_path / "ref")  # identical to the uninterrupted sweep

    third = FakeRunner()
    run_sweep(sweep, out, runner=third, loader=fake_loader, progress=False, echo=None)
    assert third.calls == []


def test_failing_grid_point_does_not_lose_the_others(tmp_path):
    path = _write(tmp_path)
    sweep = load_sweep(path)
    out = tmp_path / "out"
    bad = lambda c: c["phy.scheme"] == "channel-inversion" and c["phy.snr_db"] == 0 and c["data.partition"] == "shards"
    runner = FakeRunner(fail_when=bad)
    outcomes = run_sweep(sweep, out, runner=runner, loader=fake_loader, progress=False, echo=None)
    assert len(runner.calls) == 16
    assert sum(o.status == "failed" for o in outcomes) == 2 and sum(o.status == "done" for o in outcomes) == 14
    errors = sorted(out.glob(".*.partial/error.json"))
    assert len(errors) == 2
    err = json.loads(errors[0].read_text())
    assert err["type"] == "ValueError" and err["message"] == "fake training diverged"
    assert "Traceback" in err["traceback"] and err["overrides"]["phy.scheme"] == "channel-inversion"
    rows = {r["point"]: r for r in summarize(out)}
    assert rows["non-iid_scheme-channel-inversion_snr-db-0"]["seeds_failed"] == 2
    assert math.isnan(rows["non-iid_scheme-channel-inversion_snr-db-0"]["final_test_accuracy_mean"])
    assert rows["iid_scheme-floras_snr-db-15"]["seeds_done"] == 2
    with open(out / "summary.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 8
    # a rerun retries only the failed runs
    retry = FakeRunner()
    run_sweep(sweep, out, runner=retry, loader=fake_loader, progress=False, echo=None)
    assert len(retry.calls) == 2 and not list(out.glob(".*.partial"))


def test_summary_mean_and_std_over_seeds(tmp_path):
    path = _write(tmp_path)
    sweep = load_sweep(path)
    out = tmp_path / "out"
    lines = []
    run_sweep(sweep, out, runner=FakeRunner(), loader=fake_loader, progress=False, echo=lines.append)
    manifest = read_manifest(out)
    for row, point in zip(summarize(out), manifest["points"]):
        accs = []
        for run in point["runs"]:
            cfg = fake_loader(tmp_path / "base.toml", {**point["overrides"], "run.seed": run["seed"]})
            accs.append(_value(cfg, cfg["run.rounds"] - 1)[2])
        mean = sum(accs) / 2
        std = abs(accs[0] - accs[1]) / math.sqrt(2)  # sample std of two values
        assert row["final_test_accuracy_mean"] == pytest.approx(mean, rel=1e-12)
        assert row["final_test_accuracy_std"] == pytest.approx(std, rel=1e-9)
        assert row["epsilon_mean"] == pytest.approx(10.0 / 4)
        seeds = [run["seed"] for run in point["runs"]]
        assert row["epsilon_most_sampled_mean"] == pytest.approx(20.0 + sum(seeds) / len(seeds))
        assert row["epsilon_unamplified_mean"] == 15.0
    text = "\n".join(lines)
    assert "ε assumptions (all grid points): fake T1" in text and "iid_scheme-floras_snr-db-15" in text


def test_validate_loads_every_expanded_scenario(tmp_path):
    seen = []
    sweep = load_sweep(_write(tmp_path), quick=True)
    validate_sweep(sweep, loader=lambda base, o: seen.append(dict(o)) or o)
    assert len(seen) == 4 and all(o["run.seed"] == 3 and o["run.rounds"] == 2 for o in seen)


def test_dask_local_cluster_runs_the_grid(tmp_path):
    path = _write(tmp_path)
    sweep = load_sweep(path, quick=True)
    executor = DaskExecutor.local(2)
    try:
        outcomes = run_sweep(sweep, tmp_path / "dask", executor=executor, runner=FakeRunner(),
                             loader=fake_loader, progress=False, echo=None)
    finally:
        executor.close()
    assert sorted(o.status for o in outcomes) == ["done"] * 4
    ref = tmp_path / "ref"
    run_sweep(sweep, ref, executor=InProcessExecutor(), runner=FakeRunner(), loader=fake_loader,
              progress=False, echo=None)
    assert _tree(tmp_path / "dask") == _tree(ref)


def test_quick_sweep_end_to_end_with_the_real_runner(tmp_path, capsys):
    """`floras sweep scenarios/snr_sweep.toml --quick` trains for real, then `floras figures` draws it."""
    from scenarios.cli.main import main

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "results"
    assert main(["sweep", str(root / "scenarios" / "snr_sweep.toml"), "--quick", "--workers", "0", "--verbose",
                 "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "6 run(s) finished, 0 copied from identical runs, 0 already done, 0 failed" in text
    assert "ε assumptions (all grid points):" in text and "T1" in text
    rows = summarize(out / "snr_sweep")
    assert len(rows) == 6 and all(r["seeds_done"] == 1 for r in rows)
    assert all(0.0 <= r["final_test_accuracy_mean"] <= 1.0 for r in rows)
    for point in read_manifest(out / "snr_sweep")["points"]:
        run = out / "snr_sweep" / point["runs"][0]["dir"]
        assert (run / "DONE").is_file() and not (run / "checkpoint.npz").exists()
        assert json.loads((run / "sweep_run.json").read_text())["overrides"]["phy.snr_db"] == point["overrides"]["phy.snr_db"]
    # a rerun does nothing but rewrite the summary
    assert main(["sweep", str(root / "scenarios" / "snr_sweep.toml"), "--quick", "--workers", "0", "--verbose",
                 "--out", str(out), "--no-progress"]) == 0
    assert "0 run(s) finished, 0 copied from identical runs, 6 already done" in capsys.readouterr().out
    assert main(["figures", "--results", str(out), "--out", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / "snr_sweep_accuracy.png").stat().st_size > 10_000


def test_cli_rejects_unknown_scenario_key_before_any_run(tmp_path, capsys):
    from scenarios.cli.main import main

    root = Path(__file__).resolve().parents[1]
    text = (root / "scenarios" / "fig4.toml").read_text().replace('"training.lr" = 0.001', '"training.lrate" = 0.001')
    text = text.replace('base = "base/fashion_mlp.toml"', f'base = "{root / "scenarios" / "base" / "fashion_mlp.toml"}"')
    text = text.replace('base = "base/digits_mlp.toml"', f'base = "{root / "scenarios" / "base" / "digits_mlp.toml"}"')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    out = tmp_path / "results"
    assert main(["sweep", str(bad), "--out", str(out), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "grid point non-iid_scheme-floras_snr-db-15" in err and "unknown key training.lrate" in err
    assert "Traceback" not in err and not out.exists()


def test_dry_run_validates_counts_and_predicts_without_writing(tmp_path, capsys, monkeypatch):
    """`floras sweep --dry-run`: every sweep file loaded and validated, runs per sweep, a predicted time, no directory."""
    from scenarios.cli.main import main
    from scenarios.experiments.matched_timing import run_seconds

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results"
    files = [str(root / "scenarios" / "snr_sweep.toml"), str(root / "scenarios" / "fig4.toml")]
    assert main(["sweep", *files, "--quick", "--out", str(out), "--dry-run", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert not out.exists() and list(tmp_path.iterdir()) == []  # nothing written anywhere
    sweeps = [load_sweep(f, quick=True) for f in files]
    for sweep in sweeps:
        seconds = sum(run_seconds(dataset=c.data.name, scheme=c.phy.scheme, rounds=c.run.rounds,
                                  K=c.training.clients_per_round, M=c.partition.clients,
                                  batch_size=c.training.batch_size) for c in validate_sweep(sweep))
        assert f"{sweep.name}: {sweep.n_runs} run(s)" in text and f"predicted {seconds:.0f} s of run time" in text
    assert f"{sum(s.n_runs for s in sweeps)} run(s) valid" in text and "nothing written" in text
    # an invalid sweep file is still the one-line error, before anything
    bad = tmp_path / "bad.toml"
    bad.write_text((root / "scenarios" / "fig4.toml").read_text().replace('"training.lr" = 0.001', '"training.lrate" = 0.001')
                   .replace('base = "base/', f'base = "{root / "scenarios" / "base"}/'))
    assert main(["sweep", str(bad), "--out", str(out), "--dry-run"]) == 2
    assert "unknown key training.lrate" in capsys.readouterr().err and not out.exists()


def test_every_sweep_file_is_listed_in_docs_experiments():
    """docs/experiments.md's table of sweep files names every scenarios/*.toml (a new slice without its row fails)."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "experiments.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((root / "scenarios").glob("*.toml")) if f"`scenarios/{p.name}`" not in text]
    assert not missing, f"add a row to docs/experiments.md for {missing}"
