"""Sweeps that cannot corrupt their results: concurrent sweeps, another sweep's directory,
runs marked finished whose files are incomplete, an unreachable scheduler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scenarios.cli.main import main
from scenarios.store import read_metric_rows, summarize, verify_run
from scenarios.experiments.sweep import load_sweep, run_sweep

pytestmark = pytest.mark.faults  # make faults (docs/reliability.md)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

SWEEP = """
name = "race"
base = "base.toml"
seeds = [0, 1]
[grid]
"phy.snr_db" = [0, 10]
"""

# A second process: the fake runner writes a round every `pause` seconds and says when it has started.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from scenarios.errors import BusyError
    from scenarios.experiments.sweep import load_sweep, run_sweep

    sweep_file, out, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
    HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"

    def loader(base, overrides):
        return {"run.rounds": 5, **overrides}

    def runner(config, out_dir, *, resume, progress):
        out_dir = Path(out_dir)
        print("started", flush=True)
        (out_dir / "config.json").write_text(json.dumps({"config": {"run": {"rounds": 5}}}))
        with (out_dir / "metrics.csv").open("w") as fh:
            fh.write(HEADER + "\\n")
            for r in range(1, 6):
                time.sleep(pause)
                fh.write(f"{r},1.0,1.0,{0.5 + 0.01 * config['run.seed']},0.0,,,inf,{r}\\n")
                fh.flush()
        (out_dir / "DONE").write_text("")
        return {}

    try:
        run_sweep(load_sweep(sweep_file), out, runner=runner, loader=loader, progress=False, echo=None)
    except BusyError as exc:
        print(f"busy: {exc}", flush=True)
        sys.exit(3)
    print("finished", flush=True)
""")


def _files(tmp: Path, sweep: str = SWEEP) -> Path:
    (tmp / "base.toml").write_text("[run]\nrounds = 5\n")
    (tmp / "sweep.toml").write_text(sweep)
    return tmp / "sweep.toml"


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_two_sweeps_on_one_results_tree(tmp_path):
    sweep_file, out = _files(tmp_path), tmp_path / "results" / "race"
    first = subprocess.Popen([sys.executable, "-c", SCRIPT, str(sweep_file), str(out), "0.05"], env=ENV,
                             stdout=subprocess.PIPE, text=True)
    assert first.stdout.readline().strip() == "started"  # the first sweep holds the directory now
    second = subprocess.run([sys.executable, "-c", SCRIPT, str(sweep_file), str(out), "0.0"], env=ENV,
                            capture_output=True, text=True, timeout=120)
    assert second.returncode == 3
    assert f"sweep directory {out} is in use by PID {first.pid}" in second.stdout
    assert "started" not in second.stdout  # the refused sweep ran nothing
    rest = first.communicate(timeout=120)[0]
    assert first.returncode == 0 and rest.strip().endswith("finished")
    manifest = json.loads((out / "sweep.json").read_text())
    dirs = [r["dir"] for p in manifest["points"] for r in p["runs"]]
    assert len(dirs) == 4
    for d in dirs:  # every run complete: 5 rows, verified
        assert verify_run(out / d) == [] and len(read_metric_rows(out / d)) == 5
    assert [r["seeds_done"] for r in summarize(out)] == [2, 2]
    assert not list(out.rglob("*.floras-tmp")) and not (out / ".lock").exists()


def _fake(rounds_written=None):
    calls = []

    def loader(base, overrides):
        return {"run.rounds": 3, **overrides}

    def runner(config, out_dir, *, resume, progress):
        out_dir = Path(out_dir)
        calls.append(out_dir.name)
        (out_dir / "config.json").write_text(json.dumps({"config": {"run": {"rounds": 3}}}))
        n = 3 if rounds_written is None else rounds_written
        rows = ["round,test_accuracy"] + [f"{r},0.8" for r in range(1, n + 1)]
        (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
        (out_dir / "DONE").write_text("")
        return {}

    return loader, runner, calls


def test_a_directory_holding_another_sweep_is_refused_untouched(tmp_path):
    loader, runner, _ = _fake()
    out = tmp_path / "out"
    run_sweep(load_sweep(_files(tmp_path)), out, runner=runner, loader=loader, progress=False, echo=None)
    before = _tree(out)
    other = tmp_path / "other"
    other.mkdir()
    _files(other, SWEEP.replace("[0, 10]", "[0, 20]"))  # same name, another grid
    with pytest.raises(ValueError, match=r"holds another sweep \('race' from 'sweep\.toml', 2 grid points × 2 seeds\)"):
        run_sweep(load_sweep(other / "sweep.toml"), out, runner=runner, loader=loader, progress=False, echo=None)
    assert _tree(out) == before


def test_a_sweep_grows_in_place_with_seeds_and_grid_points_and_keeps_every_finished_run(tmp_path):
    """The same sweep file with seeds or grid points added runs only the new runs into the folder of the part already
    done; the finished runs are not rerun or rewritten, the manifest and summary name all of them, and a line says
    what was added."""
    loader, runner, calls = _fake()
    out = tmp_path / "out"
    run_sweep(load_sweep(_files(tmp_path, SWEEP.replace("[0, 1]", "[0]"))), out, runner=runner, loader=loader,
              progress=False, echo=None)
    first = sorted(calls)
    assert len(first) == 2 and [r["seeds_done"] for r in summarize(out)] == [1, 1]
    before = {k: v for k, v in _tree(out).items() if k.split("/")[0] in {n.lstrip(".").removesuffix(".partial")
                                                                         for n in first}}
    calls.clear()
    said: list[str] = []
    grown = load_sweep(_files(tmp_path, SWEEP.replace("[0, 10]", "[0, 10, 20]")))  # seed 1 and a grid point added
    outcomes = run_sweep(grown, out, runner=runner, loader=loader, progress=False, echo=said.append)
    assert sorted(o.status for o in outcomes) == ["done"] * 4 + ["skipped"] * 2
    assert len(calls) == 4 and not set(calls) & set(first)
    assert {k: v for k, v in _tree(out).items() if k in before} == before  # the finished runs untouched
    assert f"sweep directory {out}: extended with seed(s) 1 and 1 grid point(s); its finished runs are kept" in said
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["seeds"] == [0, 1] and len(manifest["points"]) == 3
    assert [r["seeds_done"] for r in summarize(out)] == [2, 2, 2]
    calls.clear()
    said.clear()
    assert {o.status for o in run_sweep(grown, out, runner=runner, loader=loader, progress=False,
                                        echo=said.append)} == {"skipped"}
    assert not calls and not any("extended" in s for s in said)  # the same sweep again: nothing added, nothing said


@pytest.mark.parametrize("change", ["seeds", "point"])
def test_a_sweep_that_would_drop_a_stored_seed_or_grid_point_is_refused_untouched(tmp_path, change):
    """Growing is one way only: a sweep with fewer seeds or grid points than the folder holds would leave finished
    runs outside its manifest, so it is refused before anything is written."""
    loader, runner, calls = _fake()
    out = tmp_path / "out"
    run_sweep(load_sweep(_files(tmp_path)), out, runner=runner, loader=loader, progress=False, echo=None)
    before = _tree(out)
    calls.clear()
    smaller = SWEEP.replace("[0, 1]", "[1]") if change == "seeds" else SWEEP.replace("[0, 10]", "[10]")
    with pytest.raises(ValueError, match=r"holds another sweep \('race' from 'sweep\.toml', 2 grid points × 2 seeds\)"):
        run_sweep(load_sweep(_files(tmp_path, smaller)), out, runner=runner, loader=loader, progress=False, echo=None)
    assert _tree(out) == before and not calls


def test_runs_marked_finished_but_incomplete_are_redone_not_counted(tmp_path):
    loader, runner, calls = _fake()
    out = tmp_path / "out"
    sweep = load_sweep(_files(tmp_path))
    run_sweep(sweep, out, runner=runner, loader=loader, progress=False, echo=None)
    names = sorted(p.name for p in out.iterdir() if p.is_dir())
    rows = (out / names[0] / "metrics.csv").read_text().splitlines()
    (out / names[0] / "metrics.csv").write_text("\n".join(rows[:2]) + "\n")  # 1 of 3 rows, DONE still there
    (out / names[1] / "metrics.csv").unlink()
    assert [r["seeds_done"] for r in summarize(out)] in ([0, 2], [1, 1])  # neither counts as done
    calls.clear()
    outcomes = run_sweep(sweep, out, runner=runner, loader=loader, progress=False, echo=None)
    assert sorted(calls) == sorted(f".{n}.partial" for n in names[:2])
    assert sorted(o.status for o in outcomes) == ["done", "done", "skipped", "skipped"]
    assert [r["seeds_done"] for r in summarize(out)] == [2, 2]


def test_a_runner_that_marks_an_incomplete_run_finished_fails_it(tmp_path):
    loader, runner, _ = _fake(rounds_written=2)
    out = tmp_path / "out"
    outcomes = run_sweep(load_sweep(_files(tmp_path)), out, runner=runner, loader=loader, progress=False, echo=None)
    assert {o.status for o in outcomes} == {"failed"}
    assert "metrics.csv has 2 rows, expected 3" in outcomes[0].error["message"]
    assert not [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]  # nothing marked finished


REAL_BASE = """
[data]
name = "digits"
[partition]
clients = 10
[model]
hidden = [8]
[training]
clients_per_round = 4
batch_size = 10
[phy]
scheme = "floras"
L = 8
[phy.floras]
N = 8
[run]
rounds = 2
"""


def test_cli_sweep_refuses_a_locked_directory_and_an_unreachable_scheduler(tmp_path, capsys):
    (tmp_path / "base.toml").write_text(REAL_BASE)
    (tmp_path / "s.toml").write_text('name = "one"\nbase = "base.toml"\nseeds = [0]\n')
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from scenarios.store import DirectoryLock; "
                               "DirectoryLock(sys.argv[1]).acquire(); print('locked', flush=True); time.sleep(60)",
                               str(tmp_path / "res" / "one")], env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc = main(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "res"), "--workers", "0", "--no-progress"])
        err = capsys.readouterr().err.strip()
        assert rc == 3 and "\n" not in err
        assert err.startswith(f"floras: error: sweep directory {tmp_path / 'res' / 'one'} is in use by PID {holder.pid}")
        assert sorted(p.name for p in (tmp_path / "res" / "one").iterdir()) == [".lock"]
    finally:
        holder.kill()
        holder.wait()
    t0 = time.perf_counter()
    rc = main(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "res2"), "--scheduler", "tcp://127.0.0.1:9",
               "--connect-timeout", "1", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 6 and len(err) == 1 and err[0].startswith("floras: error: cannot reach the dask scheduler at 'tcp://127.0.0.1:9' within 1 s")
    assert time.perf_counter() - t0 < 20
    assert not (tmp_path / "res2").exists()  # the lock's directory is removed again: nothing half-made is left
