"""benchmarks/gpu_check.sh: syntax, option errors and the CPU branch on a tiny configuration."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"


def test_script_syntax_and_bad_option():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    bad = subprocess.run(["bash", str(SCRIPT), "--frobnicate"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option --frobnicate" in bad.stderr


def test_cpu_branch_runs_the_round_benchmark(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "TF_CPP_MIN_LOG_LEVEL": "2"}
    out = subprocess.run(
        ["bash", str(SCRIPT), "--cpu-only", "--out", str(tmp_path), "--", "--dataset", "digits", "--clients", "10",
         "--per-round", "4", "--reps", "1", "--fit-reps", "0", "--models", "mlp", "--floras-N", "5"],
        capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "CPU branch only" in out.stdout and "== CPU branch" in out.stdout
    res = json.loads((tmp_path / "cpu.json").read_text())
    assert res["gpus"] == [] and res["K"] == 4
    m = res["models"][0]
    assert m["seconds"]["batched"] > 0 and m["floras"]["N5"]["path"] == "sufficient"
    # the compiled per-client peer does the same SGD as the batched trainer (float32 rounding only)
    assert m["compiled_per_client_max_abs_diff"] <= 1e-4 * m["max_abs_update"]
