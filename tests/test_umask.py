"""Result files honour the process umask (docs/reliability.md, "File modes")."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scenarios.cli.main import main
from scenarios.store.files import atomic_write_bytes, current_umask

from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

pytestmark = pytest.mark.faults  # make faults (docs/reliability.md)


@pytest.fixture
def umask():
    old = os.umask(0o022)
    os.umask(old)

    def set_(mask: int) -> None:
        os.umask(mask)

    yield set_
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}


@pytest.mark.parametrize("mask, expected", [(0o077, 0o600), (0o027, 0o640), (0o022, 0o644)])
def test_atomic_write_gives_0644_less_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert current_umask() == mask
    path = atomic_write_bytes(tmp_path / "f.json", b"{}")
    assert stat.S_IMODE(path.stat().st_mode) == expected


def test_train_and_sweep_under_umask_077_write_nothing_others_can_read(tmp_path, umask):
    (tmp_path / "s.toml").write_text(small_scenario(1))
    (tmp_path / "w.toml").write_text('name = "w"\nbase = "s.toml"\nseeds = [0]\n[grid]\n"phy.snr_db" = [10.0]\n')
    umask(0o077)
    out = tmp_path / "results"
    assert main(["train", str(tmp_path / "s.toml"), "--out", str(out / "run"), "--no-progress"]) == 0
    assert main(["sweep", str(tmp_path / "w.toml"), "--out", str(out), "--workers", "0", "--no-progress"]) == 0
    modes = _modes(out)
    assert {"run/config.json", "run/metrics.csv", "run/DONE", "w/sweep.json", "w/summary.csv"} <= set(modes)
    loose = {name: f"{m:04o}" for name, m in modes.items() if m & 0o077}
    assert loose == {}
    files = {name: m for name, m in modes.items() if (out / name).is_file()}
    assert set(files.values()) == {0o600}
