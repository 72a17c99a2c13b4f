"""Every failure class ends in one line ``floras: error: …`` and a non-zero exit, with nothing
half-written; keys never reach a results directory; sizes are refused before allocation."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from phy.assignment import key_identifier, simulation_key
from scenarios.config import keys as keys_module
from scenarios.cli.main import main
from scenarios.store import files as store_files

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

pytestmark = pytest.mark.faults  # make faults (docs/reliability.md)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
KEY_HEX = "8f3a5c7e9b1d2f4a6c8e0b2d4f6a8c0e1f2e3d4c5b6a79880123456789abcdef"

SMALL = small_scenario(rounds=3)


def _scenario(tmp_path: Path, text: str = SMALL, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _one_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("floras: warning:")]
    assert len(err) == 1, err
    assert err[0].startswith("floras: error: ") and "Traceback" not in err[0]
    return err[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".floras-tmp", ".tmp")))


def _rows(run_dir: Path) -> list[dict]:
    import csv

    with open(run_dir / "metrics.csv", newline="") as fh:
        return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in csv.DictReader(fh)]


def _contains_key(folder: Path, key: bytes) -> list[str]:
    """Files below ``folder`` holding the key as hex (either case) or as raw bytes."""
    needles = [key.hex().encode(), key.hex().upper().encode(), key]
    return [str(p) for p in folder.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]


# ---------------------------------------------------------------- inputs and output locations
def test_scenario_path_that_is_a_directory(tmp_path, capsys):
    assert main(["train", str(tmp_path), "--out", str(tmp_path / "run")]) == 2
    assert "is a directory; give a TOML file" in _one_line(capsys)
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file, so an unreadable one cannot be made")
def test_unreadable_scenario(tmp_path, capsys):
    path = _scenario(tmp_path)
    path.chmod(0)
    assert main(["train", str(path), "--out", str(tmp_path / "run")]) == 2
    assert "cannot be read: Permission denied" in _one_line(capsys)


def test_output_under_a_file_is_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["train", str(_scenario(tmp_path)), "--out", str(tmp_path / "file" / "run"), "--no-progress"]) == 4
    assert "is not a directory" in _one_line(capsys)
    assert main(["link", "--rounds", "1", "--d", "8", "--json", str(tmp_path / "file" / "x.json")]) == 4
    assert "is not a directory" in _one_line(capsys)
    assert (tmp_path / "file").read_text() == "x"


def test_second_writer_on_a_run_directory_is_refused(tmp_path, capsys):
    run_dir = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from scenarios.store import DirectoryLock; "
                               "DirectoryLock(sys.argv[1]).acquire(); print('locked', flush=True); time.sleep(60)",
                               str(run_dir)], env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc = main(["train", str(_scenario(tmp_path)), "--out", str(run_dir), "--no-progress"])
        assert rc == 3 and f"run directory {run_dir} is in use by PID {holder.pid}" in _one_line(capsys)
        assert sorted(p.name for p in run_dir.iterdir()) == [".lock"]
    finally:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------- full disk, damaged checkpoint, resume
def test_full_disk_mid_run_then_damaged_checkpoint_then_resume(tmp_path, capsys, monkeypatch):
    scenario = _scenario(tmp_path)
    ref = tmp_path / "ref"
    assert main(["train", str(scenario), "--out", str(ref), "--no-progress"]) == 0
    capsys.readouterr()
    real, calls = store_files._write_all, []

    def fills_up(fd, data):  # writes: config.json, metrics header, checkpoint 1, checkpoint 2 (fails)
        calls.append(len(data))
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(store_files, "_write_all", fills_up)
    run = tmp_path / "run"
    assert main(["train", str(scenario), "--out", str(run), "--no-progress"]) == 4
    line = _one_line(capsys)
    assert re.search(r"cannot write .*checkpoint\.npz: No space left on device; free space there", line), line
    monkeypatch.setattr(store_files, "_write_all", real)
    assert _leftovers(run) == [] and not (run / "DONE").exists() and not (run / ".lock").exists()
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.npz", "config.json", "metrics.csv"]

    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for name in ("config.json", "metrics.csv"):
        (damaged / name).write_bytes((run / name).read_bytes())
    (damaged / "checkpoint.npz").write_bytes((run / "checkpoint.npz").read_bytes()[:100])
    assert main(["train", str(scenario), "--out", str(damaged), "--resume", "--no-progress"]) == 4
    assert re.search(r"checkpoint .*checkpoint\.npz is truncated or damaged \(BadZipFile", _one_line(capsys))

    assert main(["train", str(scenario), "--out", str(run), "--resume", "--no-progress"]) == 0
    assert _rows(run) == _rows(ref)  # the resumed run equals the uninterrupted one
    # the memory estimate's d is the d the run found after loading the data
    from scenarios.config import load_scenario
    from scenarios.config.resources import model_dimension

    assert model_dimension(load_scenario(scenario)) == json.loads((ref / "config.json").read_text())["derived"]["d"] == 64 * 16 + 16 + 16 * 10 + 10


def test_full_disk_on_link_json_leaves_no_file(tmp_path, capsys, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_files, "_write_all", full)
    out = tmp_path / "link.json"
    assert main(["link", "--scheme", "ideal", "--rounds", "1", "--d", "8", "--json", str(out)]) == 4
    assert "No space left on device" in _one_line(capsys)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- memory limits
@pytest.mark.parametrize("argv, needle", [
    (["link", "--d", "1000000000", "--rounds", "1"], "K×d client updates (×4) 596 GiB"),  # 4·8·20·1e9 B
    (["link", "--L", "65536", "--rounds", "1", "--d", "10"], "sequence set (walsh-hadamard, L=65536, N=30) 32 GiB"),  # 8·L²
    (["audit", "--threat", "T2", "--L", "65536", "--trials", "4"], "sequence set (walsh-hadamard, L=65536, N=30) 32 GiB"),
    (["audit", "--threat", "T1", "--trials", "10000000000"], "game scores (2 worlds × --trials 10000000000) 149 GiB"),
    (["audit", "--threat", "T2", "--rounds", "100000000"], "--rounds 100000000 T2 round views kept for linking 1.07 TiB"),
])
def test_sizes_over_the_limit_are_refused_with_the_estimate(argv, needle, capsys, monkeypatch):
    monkeypatch.setenv("FLORAS_MEMORY_LIMIT", "1G")
    assert main(argv) == 5
    line = _one_line(capsys)
    assert needle in line and "but the limit is 1 GiB (FLORAS_MEMORY_LIMIT)" in line and "--memory-limit" in line


@pytest.mark.parametrize("override, status, needle", [
    ("phy.L=1099511627776", 5, "sequence set (walsh-hadamard, L=1099511627776, N=8)"),  # 2^40 chips
    ("model.hidden=[100000000]", 5, "K×d updates and estimate"),
    ("model.hidden=[1e8]", 2, "model.hidden must be a list of integers"),
])
def test_training_sizes_are_refused_before_allocating(tmp_path, override, status, needle, capsys):
    rc = main(["train", str(_scenario(tmp_path)), "--out", str(tmp_path / "run"), "--set", override, "--no-progress"])
    assert rc == status and needle in _one_line(capsys)
    assert not (tmp_path / "run").exists()


def test_memory_limit_option_raises_the_limit_knowingly():
    from scenarios.errors import ResourceLimitError
    from scenarios.config.resources import check_memory, link_terms, parse_size

    terms = link_terms(K=20, N=30, L=65536, d=10, sequences="walsh-hadamard", chunk_size=65536)
    assert sum(terms.values()) > 32 * 2**30
    with pytest.raises(ResourceLimitError, match="limit is 1 GiB"):
        check_memory(terms, what="x", option="1G")
    assert check_memory(terms, what="x", option="64G") == sum(terms.values())
    assert parse_size("1.5GB") == 1_500_000_000 and parse_size("512MiB") == 2**29
    with pytest.raises(ValueError, match="memory-limit must be a size"):
        parse_size("lots")


def test_audit_with_every_sweep_K_above_N(capsys):
    assert main(["audit", "--threat", "T2", "--K", "4", "--N", "8", "--L", "8", "--sweep-K", "9", "12"]) == 2
    assert "sweep-K must hold a value ≤ some N" in _one_line(capsys)


# ---------------------------------------------------------------- keys
def test_scenario_key_is_never_written_and_is_identified(tmp_path, capsys):
    key = bytes.fromhex(KEY_HEX)
    scenario = _scenario(tmp_path, SMALL.replace("seed = 3", f'seed = 3\nkey_hex = "{KEY_HEX}"'))
    run = tmp_path / "results" / "run"
    assert main(["train", str(scenario), "--out", str(run), "--no-progress"]) == 0
    assert "floras: warning" not in capsys.readouterr().err  # a user-supplied key: no simulation warning
    assert _contains_key(tmp_path / "results", key) == []
    record = json.loads((run / "config.json").read_text())
    assert record["key"] == {"source": "user-supplied", "origin": "scenario run.key_hex", "id": key_identifier(key)}
    assert record["config"]["run"]["key_hex"] == "<redacted>"
    # the same key from a mode-600 file and from the environment gives the same run
    key_file = tmp_path / "key.hex"
    key_file.write_text(KEY_HEX + "\n")
    key_file.chmod(0o600)
    plain = _scenario(tmp_path, name="plain.toml")
    assert main(["train", str(plain), "--out", str(tmp_path / "results" / "file"), "--key-file", str(key_file), "--no-progress"]) == 0
    os.environ["FLORAS_KEY_HEX"] = KEY_HEX
    try:
        assert main(["train", str(plain), "--out", str(tmp_path / "results" / "env"), "--no-progress"]) == 0
    finally:
        del os.environ["FLORAS_KEY_HEX"]
    assert _rows(tmp_path / "results" / "file") == _rows(tmp_path / "results" / "env") == _rows(run)
    assert _contains_key(tmp_path / "results", key) == []
    # resuming with another key is refused
    assert main(["train", str(plain), "--out", str(run), "--resume", "--no-progress"]) == 2
    assert f"made with another permutation key (key id {key_identifier(key)}" in _one_line(capsys)
    # a key file others may read is refused
    key_file.chmod(0o644)
    assert main(["train", str(plain), "--out", str(tmp_path / "x"), "--key-file", str(key_file)]) == 2
    assert "is accessible by group or others (mode 0644); restrict it with chmod 600" in _one_line(capsys)
    assert not (tmp_path / "x").exists()


def test_sweep_with_a_key_override_writes_no_key(tmp_path):
    from scenarios.experiments.sweep import load_sweep, run_sweep

    _scenario(tmp_path, name="base.toml", text=SMALL.replace("rounds = 3", "rounds = 1"))
    (tmp_path / "k.toml").write_text(f'name = "k"\nbase = "base.toml"\nseeds = [0]\n[overrides]\n"run.key_hex" = "{KEY_HEX}"\n')
    out = tmp_path / "results" / "k"
    outcomes = run_sweep(load_sweep(tmp_path / "k.toml"), out, progress=False, echo=None)
    assert [o.status for o in outcomes] == ["done"]
    assert _contains_key(tmp_path / "results", bytes.fromhex(KEY_HEX)) == []
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["points"][0]["overrides"]["run.key_hex"] == f"<redacted> (key id {key_identifier(bytes.fromhex(KEY_HEX))})"


def test_one_simulation_key_for_every_command_and_one_warning(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("FLORAS_SIMULATION_KEY_WARNED", raising=False)
    monkeypatch.setattr(keys_module, "_warned", False)
    seed = 3
    expected = key_identifier(simulation_key(seed))
    assert main(["train", str(_scenario(tmp_path)), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    assert main(["link", "--scheme", "floras", "--K", "4", "--N", "8", "--L", "8", "--d", "8", "--rounds", "1",
                 "--seed", str(seed), "--json", str(tmp_path / "link.json")]) == 0
    assert main(["audit", "--threat", "T1", "--K", "4", "--N", "8", "--L", "8", "--d", "8", "--trials", "4",
                 "--seed", str(seed), "--json", str(tmp_path / "audit.json")]) == 0
    err = capsys.readouterr().err
    assert err.count("floras: warning:") == 1 and "simulation-only permutation key derived from the seed" in err
    record = json.loads((tmp_path / "run" / "config.json").read_text())["key"]
    assert record == {"source": "derived-from-seed (simulation only)", "origin": "run seed", "id": expected}
    assert f"key id {expected}" in json.loads((tmp_path / "link.json").read_text())["parameters"]["key"]
    assert f"key id {expected}" in json.loads((tmp_path / "audit.json").read_text())["key"]


# ---------------------------------------------------------------- figures from damaged results
def _fake_fig4(root: Path) -> Path:
    from scenarios.experiments.sweep import load_sweep, run_sweep

    def runner(cfg, out_dir, *, resume, progress):
        out_dir = Path(out_dir)
        (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict()}))
        rows = ["round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"]
        rows += [f"{r},1.0,1.0,0.5,0.0,,,inf,{r}" for r in range(1, cfg.run.rounds + 1)]
        (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
        (out_dir / "DONE").write_text("")
        return {}

    sweep = replace(load_sweep(ROOT / "scenarios" / "fig4.toml", quick=True), seeds=(0,))
    run_sweep(sweep, root / "fig4", runner=runner, progress=False, echo=None)
    return root / "fig4"


def test_figures_with_a_finished_run_missing_metrics_or_an_empty_manifest(tmp_path, capsys):
    sweep_dir = _fake_fig4(tmp_path / "results")
    run_dir = next(p for p in sweep_dir.iterdir() if p.is_dir())
    (run_dir / "metrics.csv").unlink()
    assert main(["figures", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "figs")]) == 4
    line = _one_line(capsys)
    assert f"run {run_dir} is marked finished but incomplete" in line and "metrics.csv is missing" in line
    (sweep_dir / "sweep.json").write_text("")
    assert main(["figures", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "figs")]) == 4
    assert re.search(r"sweep manifest .*sweep\.json is empty", _one_line(capsys))
    assert not (tmp_path / "figs").exists() or _leftovers(tmp_path / "figs") == []


def test_unexpected_failures_are_one_line_too(capsys, monkeypatch):
    import scenarios.cli.link as link_cmd

    def boom(args):
        raise RuntimeError("something unforeseen\nwith a second line")

    monkeypatch.setattr(link_cmd, "run", boom)  # register() looks the handler up when the parser is built
    monkeypatch.delenv("FLORAS_DEBUG", raising=False)
    assert main(["link"]) == 1
    assert _one_line(capsys) == ("floras: error: internal error: RuntimeError: something unforeseen with a second line "
                                 "(FLORAS_DEBUG=1 shows the traceback)")


def test_a_streaming_round_is_estimated_at_one_chunk_not_k_by_d():
    """K = 1 000, d = 159 010 (784-200-10 MLP), clip normalization, client_chunk 100: the round holds one chunk of
    updates (2 copies) and 4 running d-vectors, 8·d·(2·100 + 4) bytes, not the K×d term 4·8·K·d (docs/fl.md); with the
    `paper` rule (C_max over all K) the K×d term stays."""
    from scenarios.config import load_scenario
    from scenarios.config.resources import training_terms

    over = {"data.name": "fedprox", "partition.clients": 100_000, "training.clients_per_round": 1000,
            "training.client_chunk": 100, "training.local_steps": 10,
            "training.batch_size": 10, "phy.scheme": "ideal", "phy.normalization": "clip", "phy.clip_norm": 1.0,
            "data.fedprox.features": 784, "model.hidden": [200]}
    base = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "synthetic_quick.toml"
    terms = training_terms(load_scenario(base, over))
    d = 784 * 200 + 200 + 200 * 10 + 10
    assert terms["100×d chunk of updates (×2) and the running sums (×4), float64"] == 8 * d * 204
    assert not any(k.startswith("K×d") for k in terms)
    paper = training_terms(load_scenario(base, {**over, "phy.normalization": "paper", "phy.clip_norm": None}))
    assert paper["K×d updates and estimate (×4, float64)"] == 4 * 8 * 1000 * d
