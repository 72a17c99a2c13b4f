"""Scenario files, run directories, resume, learning check (floras train)."""

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fl.federated import FederatedAveraging, NonFiniteModelError
from scenarios.cli.main import main
from scenarios.config import ScenarioConfig, load_scenario, scenario_from_dict
from scenarios.runs.run import METRICS_HEADER, run_scenario

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

ROOT = Path(__file__).resolve().parents[1]

SMALL = small_scenario(rounds=4)


def _scenario(tmp_path, text=SMALL, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _rows(run_dir):
    with open(Path(run_dir) / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _without_time(rows):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in rows]


# ---------------------------------------------------------------- configuration
def test_defaults_and_round_trip(tmp_path):
    cfg = load_scenario(_scenario(tmp_path))
    assert cfg.training.local_epochs == 1 and cfg.training.local_steps is None
    assert cfg.privacy.delta == 1e-5 and cfg.phy.scheme == "floras"
    again = scenario_from_dict(cfg.to_dict())
    assert again == cfg
    assert isinstance(ScenarioConfig().validate(), ScenarioConfig)
    steps = load_scenario(_scenario(tmp_path), {"training.local_steps": 3})
    assert (steps.training.local_epochs, steps.training.local_steps) == (None, 3)
    assert scenario_from_dict(steps.to_dict()) == steps


@pytest.mark.parametrize(
    "text, overrides, message",
    [
        ("[training]\nlr_decay = 0.5\n", None, r"unknown key training\.lr_decay"),
        ("[optimizer]\nlr = 0.5\n", None, r"unknown table \[optimizer\]"),
        ("[phy]\nsnr = 3\n", None, r"unknown key phy\.snr "),
        ("", {"training.lrr": 1.0}, r"unknown key training\.lrr"),
        ("", {"trainer.lr": 1.0}, r"unknown key trainer\.lr"),
        ("[training]\nlr = -1.0\n", None, r"training\.lr must be a finite number > 0"),
        ("[training]\nlocal_epochs = 1\nlocal_steps = 3\n", None, r"training\.local_epochs and training\.local_steps"),
        ("[training]\nclients_per_round = 30\n[partition]\nclients = 20\n", None, r"training\.clients_per_round must be an integer ≥ 1 and ≤ 20"),
        ("[partition]\nkind = \"pathological\"\n", None, r"partition\.kind must be one of"),
        ("[phy.floras]\nN = 10\n", {"training.clients_per_round": 20}, r"phy\.floras\.N must be an integer ≥ 20"),
        ("[privacy]\nrelation = \"add-remove\"\n", None, r"privacy: relation must be 'replace'"),
        ("[run]\nkey_hex = \"abcd\"\n", None, r"run\.key_hex must be a hexadecimal string"),
        ("[model]\nhidden = [0]\n", None, r"model\.hidden must be a list of integers"),
    ],
)
def test_bad_scenarios_name_the_key(tmp_path, text, overrides, message):
    with pytest.raises(ValueError, match=message):
        load_scenario(_scenario(tmp_path, text), overrides)


def test_overrides_are_applied_before_validation(tmp_path):
    cfg = load_scenario(_scenario(tmp_path), {"phy.snr_db": 0, "training.lr": 0.001, "run.seed": 2})
    assert (cfg.phy.snr_db, cfg.training.lr, cfg.run.seed) == (0, 0.001, 2)


def test_cli_rejects_bad_scenario_before_any_work(tmp_path, capsys):
    bad = _scenario(tmp_path, SMALL.replace("lr = 0.1", "lr = 0.1\nmomentum = 0.9"))
    out = tmp_path / "out"
    assert main(["train", str(bad), "--out", str(out)]) == 2
    assert "unknown key training.momentum" in capsys.readouterr().err
    assert not out.exists()


def test_example_scenario_is_valid():
    cfg = load_scenario(ROOT / "scenarios" / "examples" / "digits_quick.toml")
    assert (cfg.partition.clients, cfg.training.clients_per_round, cfg.phy.scheme) == (50, 10, "floras")


# ---------------------------------------------------------------- runs
def test_digits_ideal_run_learns_and_writes_the_run_directory(tmp_path):
    # A real learning check (seeded): 10 rounds of FedAvg, K = 10 of M = 50, on the digits.
    cfg = load_scenario(ROOT / "scenarios" / "examples" / "digits_quick.toml", {"phy.scheme": "ideal", "run.rounds": 10})
    out = tmp_path / "run"
    summary = run_scenario(cfg, out, progress=False)
    assert summary["final_test_accuracy"] >= 0.85
    assert sorted(p.name for p in out.iterdir()) == ["DONE", "class_accuracy.csv", "config.json", "metrics.csv"]
    assert (out / "metrics.csv").read_text().splitlines()[0] == ",".join(METRICS_HEADER)
    assert METRICS_HEADER == ("round", "train_loss", "test_loss", "test_accuracy", "agg_error", "V", "admitted",
                              "epsilon", "wall_time_s", "channel_uses", "noise_energy", "clipped_error", "weight",
                              "cohort", "worst_class_accuracy")
    rows = _rows(out)
    assert [int(r["round"]) for r in rows] == list(range(1, 11))
    assert all(r["V"] == "" and r["admitted"] == "" and r["epsilon"] == "inf" for r in rows)
    assert all(r["cohort"] == "10" for r in rows)  # K = 10 exactly: sampling without replacement (the default)
    assert float(rows[-1]["test_accuracy"]) == summary["final_test_accuracy"]
    assert float(rows[-1]["train_loss"]) < float(rows[0]["train_loss"])
    # each label's accuracy, weighted by the test set's label counts, is the accuracy; its minimum the worst label's
    import numpy as np

    from fl.data import load_dataset
    from scenarios.store import read_class_accuracy

    y_test = load_dataset("digits", seed=cfg.run.seed, test_fraction=cfg.data.test_fraction).y_test
    counts = np.bincount(y_test, minlength=10)
    by_label = read_class_accuracy(out)
    assert by_label["round"].tolist() == list(range(1, 11)) and by_label["accuracy"].shape == (10, 10)
    np.testing.assert_allclose(by_label["accuracy"] @ counts / counts.sum(), [float(r["test_accuracy"]) for r in rows],
                               rtol=1e-12)
    np.testing.assert_array_equal(by_label["accuracy"].min(axis=1), [float(r["worst_class_accuracy"]) for r in rows])
    record = json.loads((out / "config.json").read_text())
    for key in ("config", "seed", "versions", "git_revision", "snr_definition", "epsilon_assumptions", "derived"):
        assert key in record
    assert record["derived"]["d"] == 64 * 64 + 64 + 64 * 10 + 10
    assert record["config"]["phy"]["scheme"] == "ideal"
    with pytest.raises(ValueError, match="use --resume"):
        run_scenario(cfg, out, progress=False)
    # resuming a finished run returns its summary without work
    assert run_scenario(cfg, out, resume=True, progress=False) == summary


def _interrupted_run(cfg, out, monkeypatch, stop_at: int) -> None:
    """Run ``cfg`` into ``out`` and interrupt it (KeyboardInterrupt) as round ``stop_at`` (0-based) starts."""
    real_step = FederatedAveraging.step

    def interrupted(self, w, round_index):
        if round_index == stop_at:
            raise KeyboardInterrupt
        return real_step(self, w, round_index)

    monkeypatch.setattr(FederatedAveraging, "step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_scenario(cfg, out, progress=False)
    monkeypatch.setattr(FederatedAveraging, "step", real_step)


@pytest.mark.parametrize(
    "scheme, checkpoint_every, stop_at, extra",
    [
        ("floras", 1, 2, {}),
        ("floras", 3, 1, {"phy.normalization": "clip", "phy.clip_norm": 0.5}),  # no checkpoint yet: starts over
        ("channel-inversion", 2, 3, {}),
        ("ideal", 2, 3, {"training.server_momentum": 0.9}),  # the server's velocity is checkpointed and restored
    ],
)
def test_resume_equals_an_uninterrupted_run(tmp_path, monkeypatch, scheme, checkpoint_every, stop_at, extra):
    overrides = {"phy.scheme": scheme, "run.checkpoint_every": checkpoint_every, **extra}
    cfg = load_scenario(_scenario(tmp_path), overrides)
    ref = tmp_path / "ref"
    run_scenario(cfg, ref, progress=False)

    out = tmp_path / "out"
    _interrupted_run(cfg, out, monkeypatch, stop_at)
    assert len(_rows(out)) == stop_at and not (out / "DONE").exists()
    assert (out / "checkpoint.npz").exists() == (stop_at >= checkpoint_every)
    with pytest.raises(ValueError, match="use --resume"):
        run_scenario(cfg, out, progress=False)
    with pytest.raises(ValueError, match=r"different scenario \(differs at training\.lr"):
        run_scenario(load_scenario(_scenario(tmp_path), {**overrides, "training.lr": 0.2}), out, resume=True, progress=False)
    run_scenario(cfg, out, resume=True, progress=False)
    assert (out / "DONE").exists()
    got, want = _rows(out), _rows(ref)
    assert _without_time(got) == _without_time(want)
    assert (out / "class_accuracy.csv").read_text() == (ref / "class_accuracy.csv").read_text()  # carried by the checkpoint
    column = {"floras": "V", "channel-inversion": "admitted"}.get(scheme)
    assert column is None or all(r[column] != "" for r in got)
    if scheme == "floras":
        eps = [float(r["epsilon"]) for r in got]
        assert all(b >= a for a, b in zip(eps, eps[1:]))  # ε spent never decreases
        assert "T1" in json.loads((out / "config.json").read_text())["epsilon_assumptions"]


def test_a_run_checkpointed_before_worst_class_accuracy_resumes_with_that_cell_empty(tmp_path, monkeypatch):
    """A checkpoint whose metrics have the 14-column header (before worst_class_accuracy) resumes: its earlier
    rounds get an empty last cell, later rounds a value, and every other cell equals an uninterrupted run's."""
    import io

    import numpy as np

    cfg = load_scenario(_scenario(tmp_path), {"run.checkpoint_every": 1})
    ref = tmp_path / "ref"
    run_scenario(cfg, ref, progress=False)
    out = tmp_path / "out"
    _interrupted_run(cfg, out, monkeypatch, 2)
    ckpt = dict(np.load(out / "checkpoint.npz"))
    lines = str(ckpt["metrics"]).splitlines()
    assert lines[0].endswith(",cohort,worst_class_accuracy")
    ckpt["metrics"] = np.str_("".join(line.rsplit(",", 1)[0] + "\n" for line in lines))  # what an older version wrote
    del ckpt["class_accuracy"]  # nor did it keep the labels' accuracies: only the resumed rounds have them
    buf = io.BytesIO()
    np.savez(buf, **ckpt)
    (out / "checkpoint.npz").write_bytes(buf.getvalue())
    record = json.loads((out / "config.json").read_text())
    del record["metrics"]["worst_class_accuracy"]  # its config.json did not define the column either
    (out / "config.json").write_text(json.dumps(record))
    run_scenario(cfg, out, resume=True, progress=False)
    assert (out / "DONE").exists()
    record = json.loads((out / "config.json").read_text())
    assert "worst_class_accuracy" in record["metrics"]
    assert record["metrics_added_on_resume"]["columns"] == ["worst_class_accuracy"]
    assert record["metrics_added_on_resume"]["first_round"] == 3
    got, want = _rows(out), _rows(ref)
    assert [r["worst_class_accuracy"] for r in got[:2]] == ["", ""]
    assert [r["worst_class_accuracy"] for r in got[2:]] == [r["worst_class_accuracy"] for r in want[2:]] != ["", ""]
    assert all(float(r["worst_class_accuracy"]) <= float(r["test_accuracy"]) for r in want)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("wall_time_s", "worst_class_accuracy")} for r in rows]  # noqa: E731
    assert strip(got) == strip(want)
    from scenarios.store import read_class_accuracy

    assert read_class_accuracy(out)["round"].tolist() == [3.0, 4.0]



def test_a_run_whose_config_predates_the_column_resumes_after_an_earlier_upgrade(tmp_path, monkeypatch):
    """An earlier resume upgraded the checkpoint's metrics to worst_class_accuracy but stopped before config.json
    was rewritten (a version without that step): the next resume defines the column in config.json and records the
    first round whose cell has a value, and the run finishes; a config.json that defines every column is untouched."""
    import numpy as np

    cfg = load_scenario(_scenario(tmp_path), {"run.checkpoint_every": 1})
    out = tmp_path / "out"
    _interrupted_run(cfg, out, monkeypatch, 2)
    ckpt = dict(np.load(out / "checkpoint.npz"))
    rows = list(csv.DictReader(io.StringIO(str(ckpt["metrics"]))))
    valued = [int(r["round"]) for r in rows if r["worst_class_accuracy"]]
    record = json.loads((out / "config.json").read_text())
    del record["metrics"]["worst_class_accuracy"]
    (out / "config.json").write_text(json.dumps(record))
    run_scenario(cfg, out, resume=True, progress=False)
    assert (out / "DONE").exists()
    got = json.loads((out / "config.json").read_text())
    assert got["metrics_added_on_resume"]["columns"] == ["worst_class_accuracy"]
    assert got["metrics_added_on_resume"]["first_round"] == (min(valued) if valued else 3)
    fresh = tmp_path / "fresh"
    run_scenario(cfg, fresh, progress=False)
    assert "metrics_added_on_resume" not in json.loads((fresh / "config.json").read_text())

def test_same_seed_same_metrics_with_one_thread(tmp_path):
    # The same scenario in a fresh process limited to one TensorFlow thread.
    scenario = _scenario(tmp_path)
    run_scenario(load_scenario(scenario, {"run.rounds": 2}), tmp_path / "a", progress=False)
    env = dict(os.environ, TF_NUM_INTRAOP_THREADS="1", TF_NUM_INTEROP_THREADS="1", OMP_NUM_THREADS="1")
    code = (
        "import sys; from pathlib import Path; from scenarios.config import load_scenario; "
        "from scenarios.runs.run import run_scenario; "
        "run_scenario(load_scenario(sys.argv[1], {'run.rounds': 2}), Path(sys.argv[2]), progress=False)"
    )
    subprocess.run([sys.executable, "-c", code, str(scenario), str(tmp_path / "b")], check=True, env=env, cwd=ROOT)
    a, b = _rows(tmp_path / "a"), _rows(tmp_path / "b")
    for ra, rb in zip(a, b, strict=True):
        for key in ("train_loss", "test_loss", "test_accuracy", "V", "epsilon"):
            x, y = float(ra[key]), float(rb[key])
            assert x == y or math.isclose(x, y, rel_tol=1e-5), (key, x, y)


def test_divergence_stops_the_run_and_keeps_results(tmp_path, capsys):
    scenario = _scenario(tmp_path, SMALL.replace("lr = 0.1", "lr = 1e38"))
    out = tmp_path / "out"
    assert main(["train", str(scenario), "--out", str(out), "--no-progress"]) == 1
    assert "round 1: local training" in capsys.readouterr().err
    assert (out / "config.json").exists() and (out / "metrics.csv").exists() and not (out / "DONE").exists()
    with pytest.raises(NonFiniteModelError):
        run_scenario(load_scenario(scenario), tmp_path / "again", progress=False)


def test_cli_set_parses_toml_values_and_bare_words():
    from scenarios.cli.train import parse_override

    assert parse_override("phy.snr_db=0") == ("phy.snr_db", 0)
    assert parse_override("model.hidden=[32, 16]") == ("model.hidden", [32, 16])
    assert parse_override("phy.scheme=channel-inversion") == ("phy.scheme", "channel-inversion")
    assert parse_override('phy.scheme="ideal"') == ("phy.scheme", "ideal")
    with pytest.raises(ValueError, match="TABLE.KEY=VALUE"):
        parse_override("phy.snr_db")


def test_resume_ignores_keys_that_cannot_affect_the_run(tmp_path):
    from scenarios.runs.run_dir import _config_mismatch, _effective

    a = load_scenario(_scenario(tmp_path)).to_dict()
    b = load_scenario(_scenario(tmp_path), {"model.channels": [4], "partition.alpha": 3.0}).to_dict()
    assert _config_mismatch(_effective(a), _effective(b)) is None  # MLP, IID: CNN widths and α are unused
    c = load_scenario(_scenario(tmp_path), {"model.hidden": [8]}).to_dict()
    assert _config_mismatch(_effective(a), _effective(c)).startswith("model.hidden")


def test_server_momentum_follows_its_recursion():  # noqa: D103
    """v_{t+1} = β·v_t + x̂_t/K', w_{t+1} = w_t + v_{t+1} (model §1), from fake clients whose mean update is c_t·1:
    with β = 0.5 and c = (1, 2, 4), v = (1, 2.5, 5.25)·1 and w − w_0 = (1, 3.5, 8.75)·1; β = 0 gives (1, 3, 7)·1."""
    import numpy as np

    from fl.federated import FederatedAveraging

    class Trainer:
        def train(self, w, clients, t):
            return np.full((len(clients), w.size), float(2 ** t)), np.zeros(len(clients))

    class Ideal:
        config = type("C", (), {"scheme": "fake"})()

        def aggregate(self, updates, *, round_index, clients=None):
            from phy.aggregation import AggregationResult
            return AggregationResult(updates.sum(axis=0), updates.shape[0], 0.0, {})

    for beta, want in ((0.5, (1.0, 3.5, 8.75)), (0.0, (1.0, 3.0, 7.0))):
        fedavg = FederatedAveraging(trainer=Trainer(), aggregator=Ideal(), M=10, K=4, seed=0, server_momentum=beta)
        w = np.zeros(3)
        for t, expected in enumerate(want):
            w, _ = fedavg.step(w, t)
            np.testing.assert_allclose(w, expected)
