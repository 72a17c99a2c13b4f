"""floras train with the private baselines (SPEC §9): runs, channel uses column, validation before work."""

import csv
import math
from pathlib import Path

import pytest

from scenarios.config import load_scenario
from scenarios.run import run_scenario

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "scenarios" / "examples" / "digits_quick.toml"
CLIP = {"phy.normalization": "clip", "phy.clip_norm": 1.0, "run.rounds": 3}
SCHEMES = {
    "central-gaussian": {"phy.noise_multiplier": 0.05},
    "analog-gaussian": {"phy.noise_multiplier": 0.05},
    "ddgauss": {"phy.dd_local_std": 0.02, "phy.dd_bits": 16},
}


def _rows(run_dir):
    with open(Path(run_dir) / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_each_baseline_trains_on_digits_and_records_channel_uses(scheme, tmp_path):
    cfg = load_scenario(QUICK, {"phy.scheme": scheme, **CLIP, **SCHEMES[scheme]})
    summary = run_scenario(cfg, tmp_path / scheme, progress=False)
    rows = _rows(tmp_path / scheme)
    assert len(rows) == 3 and math.isfinite(summary["final_test_accuracy"])
    d = 64 * 64 + 64 + 64 * 10 + 10  # the quick scenario's 64-64-10 MLP
    uses = [int(r["channel_uses"]) for r in rows]
    if scheme == "ddgauss":
        assert all(u > 0 for u in uses) and len(set(uses)) > 1  # Σ⌈bits/r_k⌉ follows the fading
    else:
        assert uses == [d * 16] * 3  # d·L, equal resource, L = 16


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_paper_normalization_is_refused_before_any_work(scheme):
    with pytest.raises(ValueError, match=r"phy\.normalization must be 'clip'.*public clip norm"):
        load_scenario(QUICK, {"phy.scheme": scheme, **SCHEMES[scheme]})


def test_missing_noise_multiplier_names_the_key():
    with pytest.raises(ValueError, match=r"phy\.noise_multiplier must be set"):
        load_scenario(QUICK, {"phy.scheme": "central-gaussian", **CLIP})
