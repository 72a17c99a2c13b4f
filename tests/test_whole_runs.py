"""A run is done only if it is whole: damaged finished runs are detected, moved aside and redone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.store import read_manifest, run_status, summarize, verify_run, write_done
from scenarios.experiments.sweep import load_sweep, run_sweep

pytestmark = pytest.mark.faults  # make faults (docs/reliability.md)

SWEEP = 'name = "whole"\nbase = "base.toml"\nseeds = [0, 1]\n'
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"


def _setup(tmp: Path, *, digest: bool):
    (tmp / "base.toml").write_text("[run]\nrounds = 3\n")
    (tmp / "sweep.toml").write_text(SWEEP)
    calls = []

    def loader(base, overrides):
        return {"run.rounds": 3, **overrides}

    def runner(config, out_dir, *, resume, progress):
        out_dir = Path(out_dir)
        calls.append(out_dir.name)
        (out_dir / "config.json").write_text(json.dumps({"config": {"run": {"rounds": 3}}}))
        rows = [HEADER] + [f"{r},1.0,1.0,0.8,0.0,,,inf,{r}" for r in range(1, 4)]
        (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
        if digest:
            write_done(out_dir)
        else:
            (out_dir / "DONE").write_text("")  # as older code wrote it
        return {}

    sweep = load_sweep(tmp / "sweep.toml")
    out = tmp / "out"
    lines: list[str] = []

    def again():
        calls.clear()
        lines.clear()
        return run_sweep(sweep, out, runner=runner, loader=loader, progress=False, echo=lines.append)

    again()
    names = [r["dir"] for p in read_manifest(out)["points"] for r in p["runs"]]
    return out, names, again, calls, lines


def test_garbage_or_cut_metrics_in_a_legacy_finished_run_are_moved_aside_and_redone(tmp_path):
    out, names, again, calls, lines = _setup(tmp_path, digest=False)
    assert all(verify_run(out / n) == [] for n in names)  # legacy DONE (empty) is still accepted
    m0 = out / names[0] / "metrics.csv"
    m0.write_text(m0.read_text()[:-4])  # cut mid-row
    (out / names[1] / "metrics.csv").write_text(HEADER + "\n1,x,y,z,0,,,inf,1\n2,,,,,,,,\n3,%%,,,,,,,\n")
    assert run_status(out, names[0]) == "corrupt" and run_status(out, names[1]) == "corrupt"
    outcomes = again()
    assert sorted(calls) == sorted(f".{n}.partial" for n in names)
    assert sorted(o.status for o in outcomes) == ["done", "done"]
    aside = sorted(p.name for p in out.iterdir() if ".damaged-" in p.name)
    assert len(aside) == 2 and all(any(a.startswith(n + ".damaged-") for a in aside) for n in names)
    assert len([ln for ln in lines if "damaged" in ln]) == 2
    assert [r["seeds_done"] for r in summarize(out)] == [2]


def test_a_digest_in_done_catches_a_changed_value(tmp_path):
    out, names, again, calls, lines = _setup(tmp_path, digest=True)
    done = json.loads((out / names[0] / "DONE").read_text())
    assert done["rows"] == 3 and set(done["sha256"]) == {"config.json", "metrics.csv"}
    m0 = out / names[0] / "metrics.csv"
    m0.write_text(m0.read_text().replace("0.8", "0.9", 1))  # still well-formed: only the digest sees it
    assert any("sha256" in p for p in verify_run(out / names[0]))
    again()
    assert calls == [f".{names[0]}.partial"] and verify_run(out / names[0]) == []


def test_a_run_directory_replaced_by_a_file_or_a_truncated_partial_config_is_isolated(tmp_path):
    out, names, again, calls, lines = _setup(tmp_path, digest=True)
    import shutil

    shutil.rmtree(out / names[0])
    (out / names[0]).write_text("not a run")
    shutil.move(out / names[1], out / f".{names[1]}.partial")
    (out / f".{names[1]}.partial" / "DONE").unlink()
    (out / f".{names[1]}.partial" / "config.json").write_text('{"config": {"run": ')
    outcomes = again()
    assert sorted(o.status for o in outcomes) == ["done", "done"]
    assert all(verify_run(out / n) == [] for n in names)
    assert len([p for p in out.iterdir() if ".damaged-" in p.name]) == 2


def test_junk_manifest_entries_are_a_one_line_error_naming_the_entry(tmp_path):
    import pytest

    from scenarios.errors import StorageError

    out, names, again, calls, lines = _setup(tmp_path, digest=True)
    manifest = json.loads((out / "sweep.json").read_text())
    manifest["points"].append(3)
    (out / "sweep.json").write_text(json.dumps(manifest))
    with pytest.raises(StorageError, match=r"sweep\.json is damaged: points\[1\] is 3, not an object") as info:
        summarize(out)
    assert "\n" not in str(info.value)
    again()  # a rerun rewrites the damaged manifest and keeps the finished runs
    assert calls == [] and [r["seeds_done"] for r in summarize(out)] == [2]


def _finished_dir(path: Path, config: dict) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"config": config}))
    (path / "metrics.csv").write_text(HEADER + "\n" + "".join(f"{r},1.0,1.0,0.8,0.0,,,inf,{r}\n" for r in range(1, 4)))
    write_done(path)
    return path


def test_resume_with_another_configuration_names_every_differing_key(tmp_path):
    import pytest

    from scenarios.runs.run_dir import prepare_out_dir

    cfg = {"run": {"rounds": 3, "seed": 0}, "training": {"lr": 0.1}, "phy": {"snr_db": 10.0}}
    run = _finished_dir(tmp_path / "r", cfg)
    (run / "DONE").unlink()
    other = {"run": {"rounds": 3, "seed": 0}, "training": {"lr": 0.3}, "phy": {"snr_db": 0.0}}
    with pytest.raises(ValueError, match=r"differs at phy\.snr_db \(stored 10\.0, now 0\.0\), training\.lr"):
        prepare_out_dir(run, other, True)


def test_a_checkpoint_beside_a_verified_done_is_stale_and_removed_on_resume(tmp_path):
    from scenarios.runs.run_dir import prepare_out_dir

    cfg = {"run": {"rounds": 3, "seed": 0}}
    run = _finished_dir(tmp_path / "r", cfg)
    (run / "checkpoint.npz").write_bytes(b"stale")
    assert prepare_out_dir(run, cfg, True) == ("done", None)
    assert not (run / "checkpoint.npz").exists()


def test_foreign_directories_in_a_sweep_directory_are_ignored_and_listed_once(tmp_path):
    out, names, again, calls, lines = _setup(tmp_path, digest=True)
    (out / "notarun").mkdir()
    (out / "notarun" / "DONE").write_text("")
    (out / "loop").symlink_to(out)
    again()
    listed = [ln for ln in lines if "foreign entr" in ln]
    assert len(listed) == 1 and "loop, notarun" in listed[0]
    assert calls == [] and (out / "notarun" / "DONE").is_file() and (out / "loop").is_symlink()
    assert [r["seeds_done"] for r in summarize(out)] == [2]
