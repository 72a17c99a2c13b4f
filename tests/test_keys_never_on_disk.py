"""Key material is never on disk and never echoed (docs/reliability.md, "Keys").

Every test uses a distinctive key and walks the whole output tree: file *names* and file
*contents*, the key as lower- and upper-case hex and as raw bytes, the ``.lock`` of a run
killed with SIGKILL included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from phy.assignment import key_from_hex
from scenarios.cli.main import main

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

pytestmark = pytest.mark.faults  # make faults (docs/reliability.md)

ROOT = Path(__file__).resolve().parents[1]
KEY_HEX = "c0ffee00deadbeef13572468ace0bdf1feedface0badf00d2468ace013579bdf"
KEY = bytes.fromhex(KEY_HEX)
# a malformed key with a recognisable marker: none of it may reach a message
MARKER = "QUUXZORK"
BAD_KEY = "c0ffee00deadbeef" + MARKER + "13572468ace0bdf1"


def _leaks(root: Path, key: bytes = KEY) -> list[str]:
    """Paths below ``root`` whose name or content holds the key (hex, either case, or bytes)."""
    needles = [key.hex(), key.hex().upper()]
    bad = []
    for p in [root, *root.rglob("*")]:
        if any(n in p.name.lower() or n in p.name for n in needles):
            bad.append(f"name: {p}")
        if p.is_file():
            data = p.read_bytes()
            if key in data or any(n.encode() in data for n in needles):
                bad.append(f"content: {p}")
    return bad


def _scenario(tmp_path: Path, rounds: int = 2, extra: str = "") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(small_scenario(rounds) + extra)
    return path


def _error_line(capsys) -> str:
    err = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("floras: warning:")]
    assert len(err) == 1, err
    assert err[0].startswith("floras: error: ")
    return err[0]


def test_train_with_key_hex_on_the_command_line_writes_no_key(tmp_path, capsys):
    out = tmp_path / "results" / "run"
    assert main(["train", f"--key-hex={KEY_HEX}", str(_scenario(tmp_path)), "--out", str(out), "--no-progress"]) == 0
    assert KEY_HEX not in capsys.readouterr().out
    assert (out / "DONE").exists()
    assert _leaks(tmp_path / "results") == []


def test_lock_of_a_run_killed_with_sigkill_holds_no_key(tmp_path):
    """The ``.lock`` left behind by SIGKILL holds PID, host and time only (not the command line)."""
    out = tmp_path / "results" / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    # `--key-hex=KEY` as argv[2]: the lock used to store argv[:3]
    proc = subprocess.Popen([sys.executable, "-m", "scenarios", "train", f"--key-hex={KEY_HEX}",
                             str(_scenario(tmp_path, rounds=100000)), "--out", str(out), "--no-progress"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lock = out / ".lock"
    try:
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().strip()):
            assert proc.poll() is None, "the run ended before its lock was seen"
            time.sleep(0.05)
        assert lock.exists(), "no lock within 25 s"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    text = lock.read_text()
    pid, host, since = text.split()
    assert pid == str(proc.pid) and host.startswith("host=") and since.startswith("since=")
    assert _leaks(tmp_path / "results") == []


@pytest.mark.parametrize("where", ["grid", "cases", "quick.grid"])
def test_a_sweep_varying_the_key_is_refused_in_one_line(tmp_path, capsys, where):
    _scenario(tmp_path)
    other = "a" * 64
    body = {"grid": f'[grid]\n"run.key_hex" = ["{KEY_HEX}", "{other}"]\n',
            "cases": f'[[cases]]\nlabel = "one"\n"run.key_hex" = "{KEY_HEX}"\n',
            "quick.grid": f'[quick]\n[quick.grid]\n"run.key_hex" = ["{KEY_HEX}", "{other}"]\n'}[where]
    sweep = tmp_path / "k.toml"
    sweep.write_text(f'name = "k"\nbase = "s.toml"\nseeds = [0]\n' + body)
    out = tmp_path / "results"
    argv = ["sweep", str(sweep), "--out", str(out), "--workers", "0", "--no-progress"]
    assert main(argv + (["--quick"] if where == "quick.grid" else [])) == 2
    line = _error_line(capsys)
    assert "must not set run.key_hex" in line and "--key-file or FLORAS_KEY_HEX" in line
    assert KEY_HEX not in line and other not in line
    assert not out.exists()


@pytest.mark.parametrize("source", ["environment", "overrides"])
def test_a_sweep_with_a_fixed_key_writes_no_key(tmp_path, monkeypatch, source):
    """The key from FLORAS_KEY_HEX, or constant in ``[overrides]``: no name or file holds it."""
    _scenario(tmp_path, rounds=1)
    sweep = tmp_path / "e.toml"
    fixed = f'[overrides]\n"run.key_hex" = "{KEY_HEX}"\n' if source == "overrides" else ""
    sweep.write_text('name = "e"\nbase = "s.toml"\nseeds = [0]\n' + fixed + '[grid]\n"phy.snr_db" = [10.0]\n')
    if source == "environment":
        monkeypatch.setenv("FLORAS_KEY_HEX", KEY_HEX)
    out = tmp_path / "results"
    assert main(["sweep", str(sweep), "--out", str(out), "--workers", "0", "--no-progress"]) == 0
    assert (out / "e" / "summary.csv").exists()
    assert _leaks(out) == []


def _bad_messages(tmp_path: Path, capsys, monkeypatch) -> dict[str, str]:
    scenario = _scenario(tmp_path)
    msgs = {}
    with pytest.raises(ValueError) as exc:
        key_from_hex(BAD_KEY)
    msgs["key_from_hex"] = str(exc.value)
    assert main(["train", str(scenario), "--key-hex", BAD_KEY, "--out", str(tmp_path / "a")]) == 2
    msgs["--key-hex"] = _error_line(capsys)
    assert main(["train", str(scenario), "--set", f'run.key_hex="{BAD_KEY}"', "--out", str(tmp_path / "b")]) == 2
    msgs["run.key_hex"] = _error_line(capsys)
    key_file = tmp_path / "bad.hex"
    key_file.write_text(BAD_KEY + "\n")
    key_file.chmod(0o600)
    assert main(["train", str(scenario), "--key-file", str(key_file), "--out", str(tmp_path / "c")]) == 2
    msgs["--key-file"] = _error_line(capsys)
    monkeypatch.setenv("FLORAS_KEY_HEX", BAD_KEY)
    assert main(["train", str(scenario), "--out", str(tmp_path / "d")]) == 2
    msgs["FLORAS_KEY_HEX"] = _error_line(capsys)
    return msgs


def test_a_malformed_key_is_described_never_echoed(tmp_path, capsys, monkeypatch):
    msgs = _bad_messages(tmp_path, capsys, monkeypatch)
    n = len(BAD_KEY)
    for origin, msg in msgs.items():
        for fragment in (MARKER, MARKER.lower(), BAD_KEY[:16], BAD_KEY[-16:]):
            assert fragment not in msg, (origin, msg)
        assert f"got {n} characters, {n - len(MARKER)} hex digits, {len(MARKER)} other" in msg, (origin, msg)
    short = "abcd" * 3
    with pytest.raises(ValueError, match=r"at least 32 hex digits .*got 12 characters, 12 hex digits\)") as exc:
        key_from_hex(short)
    assert short not in str(exc.value)
    for d in "abcd":
        assert not (tmp_path / d).exists()


def test_key_hex_and_key_file_together_are_refused(tmp_path, capsys):
    key_file = tmp_path / "k.hex"
    key_file.write_text(KEY_HEX)
    key_file.chmod(0o600)
    out = tmp_path / "results"
    assert main(["train", str(_scenario(tmp_path)), "--key-hex", KEY_HEX, "--key-file", str(key_file),
                 "--out", str(out)]) == 2
    line = _error_line(capsys)
    assert "--key-hex and --key-file must not both be given" in line and KEY_HEX not in line
    assert not out.exists()


def test_a_failing_sweep_run_writes_no_key_in_its_error_record(tmp_path, monkeypatch):
    """A run that fails writes ``error.json`` (message, traceback); the key is in neither, nor in a config repr."""
    from scenarios.config import load_scenario
    from scenarios.experiments.sweep import load_sweep, run_sweep

    _scenario(tmp_path, rounds=1)
    config = load_scenario(tmp_path / "s.toml", {"run.key_hex": KEY_HEX})
    assert KEY_HEX not in repr(config) and KEY_HEX not in str(config)
    sweep = tmp_path / "f.toml"
    sweep.write_text('name = "f"\nbase = "s.toml"\nseeds = [0]\n')
    monkeypatch.setenv("FLORAS_KEY_HEX", KEY_HEX)

    def runner(config, out_dir, *, resume, progress):
        raise RuntimeError(f"simulated failure of {config!r}")

    out = tmp_path / "results" / "f"
    outcomes = run_sweep(load_sweep(sweep), out, runner=runner, progress=False, echo=None)
    assert [o.status for o in outcomes] == ["failed"]
    assert list(out.rglob("error.json")) and _leaks(tmp_path / "results") == []
