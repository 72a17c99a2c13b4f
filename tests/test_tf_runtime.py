"""TensorFlow runs on its BFC host allocator wherever the simulator starts it, and results do not depend on it
(phy/tf_runtime.py, docs/fl.md "Wall time").

TensorFlow reads ``TF_CPU_ALLOCATOR_USE_BFC`` once, at its first host allocation, so each case runs in a fresh
process. The allocator in use is observable: only the BFC allocator keeps statistics
(``tf.config.experimental.get_memory_info("CPU:0")``; TensorFlow's default allocator raises ValueError).
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import {module}
from phy.tf_runtime import host_allocator
assert host_allocator().startswith("unknown")
import tensorflow as tf
x = tf.ones([256, 256])
try:
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"] >= x.numpy().nbytes
except ValueError:
    peak = None
print(host_allocator(), peak)
"""

TRAIN = """
import hashlib
import json
import numpy as np
from fl.data import load_dataset
from fl.models import build_model_spec
from fl.training import VectorizedTrainer
ds = load_dataset("digits", seed=0)
x = ds.x_train[:240].reshape(6, 40, *ds.x_train.shape[1:])
y = ds.y_train[:240].reshape(6, 40)
spec = build_model_spec("mlp", input_shape=ds.x_train.shape[1:], num_classes=10, hidden=(32,))
trainer = VectorizedTrainer(spec, client_x=x, client_y=y, batch_size=5, lr=0.1, local_steps=4, seed=0, client_chunk=4)
h = hashlib.sha256()
for chunk in trainer.train_chunks(spec.init(0), np.arange(6), 0):
    h.update(chunk.updates.tobytes())
    h.update(chunk.local_loss.tobytes())
print(h.hexdigest())
"""


def _env(**env) -> dict:
    """This process's environment without the allocator variable (which importing the simulator here has set)."""
    base = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}
    return {**base, "TF_CPP_MIN_LOG_LEVEL": "3", **env}


def _run(code: str, **env) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=_env(**env), cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("onednn", ["0", "1"])
@pytest.mark.parametrize("module", ["fl.training", "scenarios.runs.sharding"])
def test_importing_the_simulator_before_tensorflow_selects_the_bfc_allocator(module, onednn):
    # fl: the trainer's package; scenarios.runs.sharding: what a dask worker imports to train a chunk
    assert _run(PROBE.format(module=module), TF_ENABLE_ONEDNN_OPTS=onednn) == "bfc True"  # and the run records say so (host_allocator)


@pytest.mark.parametrize("onednn, expected", [("0", "default None"), ("1", "onednn True")])
def test_a_user_setting_of_the_allocator_is_kept(onednn, expected):
    # TensorFlow's default host allocator is malloc's without oneDNN and oneDNN's own (BFC for large blocks, with
    # statistics) with it, whatever the CPU: oneDNN is forced either way here, as CI machines differ in its default
    assert _run(PROBE.format(module="phy"), TF_CPU_ALLOCATOR_USE_BFC="0", TF_ENABLE_ONEDNN_OPTS=onednn) == expected


def test_trained_updates_do_not_depend_on_the_allocator():
    digests = {flag: _run(TRAIN, TF_CPU_ALLOCATOR_USE_BFC=flag) for flag in ("0", "1")}
    assert digests["0"] == digests["1"]
    assert len(digests["1"]) == len(hashlib.sha256().hexdigest())


def test_a_run_started_from_the_command_line_records_the_bfc_allocator(tmp_path):
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "scenarios", "train", "scenarios/examples/digits_quick.toml", "--rounds",
                          "1", "--no-progress", "--out", str(out)], env=_env(), cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    versions = json.loads((out / "config.json").read_text())["versions"]
    assert versions["tensorflow_host_allocator"] == "bfc"
