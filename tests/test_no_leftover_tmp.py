"""A failure between writing a temporary file and renaming it leaves no temporary behind, and the
previous version of the target untouched: ``floras calibrate --json``, the store's atomic writer
(every other result file), and the benchmark's JSON writer."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from scenarios.errors import StorageError
from scenarios.store import atomic_write_json

pytestmark = pytest.mark.faults
ROOT = Path(__file__).resolve().parents[1]


def _refuse_rename(monkeypatch):
    def fail(src, dst, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    monkeypatch.setattr(Path, "replace", lambda self, target: fail(self, target))


def test_calibrate_json_failing_at_the_rename_removes_its_temporary(tmp_path, monkeypatch, capsys):
    from scenarios.cli.calibrate import _emit  # the writer of `floras calibrate --json FILE`

    target = tmp_path / "cal.json"
    target.write_text('{"old": true}\n')
    _refuse_rename(monkeypatch)
    with pytest.raises(StorageError, match=f"cannot write {target}: No space left on device"):
        _emit(str(target), {"feasible": True, "value": float("inf")})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json"]
    assert json.loads(target.read_text()) == {"old": True}
    monkeypatch.undo()
    _emit(str(target), {"feasible": True, "value": float("inf")})
    assert target.read_text() == '{\n  "feasible": true,\n  "value": Infinity\n}\n'  # the format it always had
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json"]


@pytest.mark.parametrize("failure", [OSError(5, "Input/output error"), KeyboardInterrupt()])
def test_the_store_writer_removes_its_temporary_on_any_failure_before_the_rename(tmp_path, monkeypatch, failure):
    target = tmp_path / "sweep.json"
    atomic_write_json(target, {"v": 1})

    def fail(src, dst):
        raise failure

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises((StorageError, KeyboardInterrupt)):
        atomic_write_json(target, {"v": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.json"]
    assert json.loads(target.read_text()) == {"v": 1}


def test_the_benchmark_json_writer_removes_its_temporary(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("fl_round_bench", ROOT / "benchmarks" / "fl_round.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    target = tmp_path / "bench.json"
    _refuse_rename(monkeypatch)
    with pytest.raises(OSError):
        bench._write_json(str(target), {"models": []})
    assert list(tmp_path.iterdir()) == []
