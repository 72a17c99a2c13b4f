"""The run directory of ``floras train`` (written by :func:`scenarios.runs.run.run_scenario`): the metrics
columns and their cells, what ``config.json`` records beside the scenario (redacted key, versions,
git revision), the summary, and how an existing directory is resumed, refused or reported done.

The training loop lives in :mod:`scenarios.runs.run`; the directory's files are written through
:mod:`scenarios.store`. Layout and column definitions: :mod:`scenarios.runs.run`'s module docstring.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from scenarios.errors import StorageError
from scenarios.config.keys import REDACTED
from scenarios.store import CHECKPOINT, DONE, read_config, read_metric_rows, verify_run

from phy.floras_params import FlorasParams
from phy.tf_runtime import host_allocator
from scenarios.config import ScenarioConfig

__all__ = ["METRICS_HEADER", "SNR_DEFINITION", "TRAIN_LOSS_DEFINITION", "read_metrics"]

METRICS_HEADER = ("round", "train_loss", "test_loss", "test_accuracy", "agg_error", "V", "admitted", "epsilon", "wall_time_s",
                  "channel_uses", "noise_energy", "clipped_error", "weight", "cohort", "worst_class_accuracy")
# the header of runs made before noise_energy, clipped_error and weight were recorded (resumable: no; finished: readable)
METRICS_HEADER_V1 = METRICS_HEADER[:10]
# the header of runs made before worst_class_accuracy was recorded (resumable: their rows get an empty cell)
METRICS_HEADER_V2 = METRICS_HEADER[:14]
SNR_DEFINITION = (
    "SNR := P/sigma^2 (model §5): P the per-symbol average transmit power, sigma^2/L the noise variance per chip "
    "seen after despreading with a unit-norm sequence (despread SNR = L*P/sigma^2)"
)
TRAIN_LOSS_DEFINITION = (
    "mean cross-entropy [nats] of the global model after the round on a fixed subset of the partitioned "
    "training data (training.train_eval_size examples, stream (seed, 'train-eval-subset'))"
)


def format_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return "nan"
        return repr(value)
    return str(value)


def redacted_config(config_dict: dict) -> dict:
    """The scenario as stored: ``run.key_hex`` replaced by ``"<redacted>"``."""
    out = json.loads(json.dumps(config_dict))
    if out.get("run", {}).get("key_hex") is not None:
        out["run"]["key_hex"] = REDACTED
    return out


def git_revision() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def package_versions() -> dict:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for dist in ("floras-sim", "numpy", "scipy", "tensorflow", "keras", "sionna-no-rt", "scikit-learn", "dp-accounting"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    out["tensorflow_onednn"] = _onednn_state()
    out["tensorflow_host_allocator"] = host_allocator()  # phy/tf_runtime.py: results do not depend on it
    return out


def _onednn_state() -> str:
    """Whether TensorFlow runs its oneDNN CPU kernels ("on"/"off"; results differ by float32 rounding)."""
    if "tensorflow" not in sys.modules:
        return "unknown (TensorFlow not imported)"
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return "unknown"
    return "on" if _pywrap_util_port.IsMklEnabled() else "off"


def read_metrics(run_dir: str | os.PathLike) -> list[dict]:
    """Rows of ``metrics.csv`` as dicts of strings (empty cells as "")."""
    return read_metric_rows(run_dir)


def run_summary(rows: list[dict], rounds: int) -> dict:
    def last(key):
        for row in reversed(rows):
            if row.get(key, "") != "":
                return float(row[key])
        return float("nan")

    return {
        "final_test_accuracy": last("test_accuracy"),
        "final_test_loss": last("test_loss"),
        "final_train_loss": last("train_loss"),
        "final_epsilon": last("epsilon"),
        "rounds": rounds,
        "wall_time_s": last("wall_time_s"),
    }


_RECEIVER_DEFAULTS = {key: getattr(FlorasParams, key) for key in ("receiver", "receiver_cap", "noise_estimate")}


def _effective(config_dict: dict) -> dict:
    """The scenario without keys that cannot affect this run (compared when resuming).

    CNN keys of an MLP (and the reverse), synthetic-data keys of a real data set, the split
    fraction of IDX and FedProx data, the ``[data.fedprox]`` sub-table of other data sets,
    ``training.client_chunk`` (memory only), the shard count outside ``shards`` and α outside
    ``dirichlet``; FLORAS's receiver keys and ``training.sampling`` absent from an older record are their defaults.
    """
    out = json.loads(json.dumps(config_dict))
    out.get("run", {}).pop("key_hex", None)  # the key is compared by its identifier
    model, data, part = out.get("model", {}), out.get("data", {}), out.get("partition", {})
    drop = {"mlp": ("channels", "kernel_size"), "cnn": ("hidden",)}.get(model.get("name"), ())
    for key in drop:
        model.pop(key, None)
    if data.get("name") != "synthetic":
        for key in ("synthetic_samples", "synthetic_features", "synthetic_classes"):
            data.pop(key, None)
    if data.get("name") in ("fashion-mnist", "mnist", "fedprox"):
        data.pop("test_fraction", None)
    if data.get("name") != "fedprox":
        data.pop("fedprox", None)
    out.get("training", {}).pop("client_chunk", None)  # memory only: results do not depend on it (fl.training)
    if isinstance(out.get("training"), dict):  # runs made before training.sampling existed sampled without replacement
        out["training"].setdefault("sampling", "without-replacement")
    if part.get("kind") != "shards":
        part.pop("shards_per_client", None)
    if part.get("kind") != "dirichlet":
        part.pop("alpha", None)
    if part.get("placement", "random") == "random":  # runs made before partition.placement placed at random
        part.pop("placement", None)
    floras = out.get("phy", {}).get("floras")
    if isinstance(floras, dict):  # runs made before the receiver rule existed used today's defaults ("plain")
        for key, value in _RECEIVER_DEFAULTS.items():
            floras.setdefault(key, value)
    return out


def _config_mismatch(stored: dict, current: dict, prefix: str = "") -> str | None:
    """Every differing key (``a.b (stored X, now Y)``, comma-separated), or None."""
    found = _config_diffs(stored, current, prefix)
    return ", ".join(found) if found else None


def _config_diffs(stored: dict, current: dict, prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(stored) | set(current)):
        a, b = stored.get(key, "<absent>"), current.get(key, "<absent>")
        if isinstance(a, dict) and isinstance(b, dict):
            out += _config_diffs(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key} (stored {a!r}, now {b!r})")
    return out


def _load_checkpoint(path: Path) -> dict:
    """The arrays of ``checkpoint.npz``; a truncated or damaged file is a one-line StorageError."""
    import zipfile

    try:
        with np.load(path, allow_pickle=False) as z:
            ckpt = {k: z[k] for k in z.files}
        for key in ("w", "next_round", "elapsed", "metrics"):
            ckpt[key]  # noqa: B018 - every field must be present
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, EOFError) as exc:
        raise StorageError(f"checkpoint {path} is truncated or damaged ({type(exc).__name__}: {str(exc) or 'unreadable'}); "
                           f"delete it to restart this run from round 1, or choose another --out") from None
    return ckpt


def prepare_out_dir(out_dir: Path, config_dict: dict, resume: bool, key_id: str | None = None) -> tuple[str, dict | None]:
    """Decide how to start: ("done", None), ("resume", checkpoint) or ("fresh", None)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"out dir {out_dir} exists and is not a directory")
    existing = [p for p in out_dir.iterdir() if p.name != ".lock"] if out_dir.is_dir() else []
    if existing and not resume:
        raise ValueError(f"out dir {out_dir} is not empty; use --resume to continue the run it holds (or choose another --out)")
    if not resume:
        return "fresh", None
    cfg_path = out_dir / "config.json"
    ckpt_path = out_dir / CHECKPOINT
    done = (out_dir / DONE).is_file()
    if cfg_path.is_file():
        record = read_config(out_dir)
        stored = record.get("config", {})
        if not isinstance(stored, dict):
            raise StorageError(f"run configuration {cfg_path} is damaged (its config is not an object); "
                               f"choose another --out, or move {out_dir} aside")
        diff = _config_mismatch(_effective(stored), _effective(config_dict))
        if diff:
            raise ValueError(f"out dir {out_dir} holds a run of a different scenario (differs at {diff}); choose another --out")
        stored_id = (record.get("key") or {}).get("id") if isinstance(record.get("key"), dict) else None
        if key_id is not None and stored_id is not None and stored_id != key_id:
            raise ValueError(f"out dir {out_dir} holds a run made with another permutation key (key id {stored_id}, "
                             f"now {key_id}); choose another --out")
    if done:
        problems = verify_run(out_dir, rounds=config_dict["run"]["rounds"])
        if not problems:
            ckpt_path.unlink(missing_ok=True)  # a checkpoint beside a verified DONE is stale
            return "done", None
        (out_dir / DONE).unlink(missing_ok=True)  # marked finished but incomplete: continue or redo it
    if ckpt_path.is_file():
        return "resume", _load_checkpoint(ckpt_path)
    return "fresh", None


def disk_estimate(config: ScenarioConfig, d: int | None) -> int:
    """Bytes a run writes at most at once: config.json, metrics.csv, and two checkpoints (old + new)."""
    rows = 256 * config.run.rounds
    return 256 * 1024 + 3 * rows + 2 * (8 * (d or 0) + 64 * 1024)
