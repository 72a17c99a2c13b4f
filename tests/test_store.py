"""The results store: atomic writes, directory locks, verified runs, concurrent writers, full disks.

Concurrency is tested with real second processes (a lock is per open file, so threads of one
process would not show it); a full disk is simulated by making the store's one low-level write
raise ENOSPC.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scenarios.errors import BusyError, StorageError
from scenarios.store import (
    DirectoryLock,
    atomic_write_json,
    atomic_write_text,
    check_output_location,
    read_manifest,
    run_status,
    summarize,
    verify_run,
)
from scenarios.store import files as store_files

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".floras-tmp", ".tmp")))


# ---------------------------------------------------------------- atomic writes
def test_atomic_write_replaces_whole_files_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.json"
    atomic_write_json(target, {"x": 1})
    atomic_write_json(target, {"x": 2, "y": [1, 2]})
    assert json.loads(target.read_text()) == {"x": 2, "y": [1, 2]}
    assert _leftovers(tmp_path) == []


def test_full_disk_keeps_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "summary.csv"
    atomic_write_text(target, "old complete content\n")

    def full(fd, data):
        os.write(fd, data[: len(data) // 2])  # part of it reached the disk, then the disk was full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_files, "_write_all", full)
    with pytest.raises(StorageError, match=r"cannot write .*summary\.csv: No space left on device; free space"):
        atomic_write_text(target, "new content that does not fit\n" * 100)
    assert target.read_text() == "old complete content\n"
    assert _leftovers(tmp_path) == []


def test_output_location_checks(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match="exists and is not a directory"):
        check_output_location(tmp_path / "file", what="run directory")
    with pytest.raises(StorageError, match="is not a directory"):
        check_output_location(tmp_path / "file" / "sub", what="run directory")
    with pytest.raises(StorageError, match="is a directory; give a file name"):
        check_output_location(tmp_path, kind="file", what="--json")
    with pytest.raises(StorageError, match=r"needs about 1 PiB but .* has .* free"):
        check_output_location(tmp_path / "new" / "deeper", need_bytes=2**50 + 2**40)
    check_output_location(tmp_path / "new" / "deeper", need_bytes=1)
    assert not (tmp_path / "new").exists()  # a check creates nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to any directory, so an unwritable one cannot be made")
def test_unwritable_output_location(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(StorageError, match="is not writable"):
            check_output_location(ro / "run")
    finally:
        ro.chmod(0o700)


# ---------------------------------------------------------------- locks
HOLDER = textwrap.dedent("""
    import sys, time
    from scenarios.store import DirectoryLock
    lock = DirectoryLock(sys.argv[1]).acquire()
    print("locked", flush=True)
    time.sleep(120)
""")


def _hold(directory: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory)], env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_second_writer_is_refused_with_the_owner_pid_and_a_stale_lock_is_taken_over(tmp_path):
    run_dir = tmp_path / "run"
    proc = _hold(run_dir)
    try:
        before = sorted(p.name for p in run_dir.iterdir())
        with pytest.raises(BusyError, match=rf"run {run_dir} is in use by PID {proc.pid}"):
            DirectoryLock(run_dir, what="run").acquire()
        assert sorted(p.name for p in run_dir.iterdir()) == before  # nothing touched
    finally:
        proc.send_signal(signal.SIGKILL)  # the holder dies without releasing: its lock file stays
        proc.wait()
    assert (run_dir / ".lock").is_file()
    with DirectoryLock(run_dir) as lock:  # the kernel dropped the flock with the process
        assert lock.held and (run_dir / ".lock").read_text().startswith(f"{os.getpid()} ")
    assert not (run_dir / ".lock").exists()


def test_lock_removes_only_a_directory_it_created_and_left_empty(tmp_path):
    with pytest.raises(RuntimeError):
        with DirectoryLock(tmp_path / "fresh"):
            raise RuntimeError("setup failed")
    assert not (tmp_path / "fresh").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(RuntimeError):
        with DirectoryLock(tmp_path / "kept"):
            raise RuntimeError("setup failed")
    assert (tmp_path / "kept").is_dir()


# ---------------------------------------------------------------- verified runs
HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s"


def _run_dir(path: Path, rows: int, rounds: int = 4, done: bool = True) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"config": {"run": {"rounds": rounds}}}))
    lines = [HEADER] + [f"{r},1.0,1.0,0.5,0.0,,,inf,0.1" for r in range(1, rows + 1)]
    (path / "metrics.csv").write_text("\n".join(lines) + "\n")
    if done:
        (path / "DONE").write_text("")
    return path


def test_verify_run_finds_truncated_missing_and_damaged_files(tmp_path):
    assert verify_run(_run_dir(tmp_path / "ok", 4)) == []
    assert verify_run(_run_dir(tmp_path / "short", 2)) == ["metrics.csv has 2 rows, expected 4"]
    bad = _run_dir(tmp_path / "nometrics", 4)
    (bad / "metrics.csv").unlink()
    assert any("metrics.csv is missing" in p for p in verify_run(bad))
    dmg = _run_dir(tmp_path / "badjson", 4)
    (dmg / "config.json").write_text('{"config": {"run": ')
    assert any("not valid JSON" in p for p in verify_run(dmg))
    assert verify_run(_run_dir(tmp_path / "notdone", 4, done=False)) == ["DONE marker missing"]
    assert run_status(tmp_path, "short") == "corrupt" and run_status(tmp_path, "ok") == "done"


def test_empty_manifest_is_a_one_line_storage_error(tmp_path):
    (tmp_path / "sweep.json").write_text("")
    with pytest.raises(StorageError, match=r"sweep manifest .*sweep\.json is empty"):
        read_manifest(tmp_path)
    (tmp_path / "sweep.json").write_text('{"name": "x", "poi')
    with pytest.raises(StorageError, match="not valid JSON"):
        summarize(tmp_path)


def test_store_imports_neither_tensorflow_nor_dask_and_figures_do_not_import_the_sweep():
    code = ("import sys, scenarios.store, figures.common, figures.tables, figures.fig5, figures.audit_roc; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'tensorflow', 'dask', 'distributed', 'scenarios.experiments.sweep'}),"
            " 'scenarios.experiments.sweep' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] False"
    for path in (ROOT / "figures").glob("*.py"):
        assert "scenarios.experiments.sweep" not in path.read_text(), path


TMPFS_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from scenarios.errors import StorageError
    from scenarios.store import atomic_write_text

    target = Path(sys.argv[1]) / "summary.csv"
    atomic_write_text(target, "old complete content\\n")
    try:
        atomic_write_text(target, "x" * (256 * 1024))  # larger than the whole file system
    except StorageError as exc:
        print(exc)
    print(repr(target.read_text()), sorted(p.name for p in target.parent.iterdir()))
""")


def _can_mount_tmpfs() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=16k none /mnt"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs root and a private mount namespace (unshare -m) for a tiny tmpfs")
def test_real_full_disk_on_a_tiny_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "w.py"
    script.write_text(TMPFS_SCRIPT)
    out = subprocess.run(["unshare", "-m", "sh", "-c", f'mount -t tmpfs -o size=64k none "{mnt}" && '
                          f'"{sys.executable}" "{script}" "{mnt}"'], env=ENV, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == f"cannot write {mnt}/summary.csv: No space left on device; free space there (finished files are kept; nothing half-written was left)"
    assert lines[1] == "'old complete content\\n' ['summary.csv']"
