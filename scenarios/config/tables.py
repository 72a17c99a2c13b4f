"""The tables of a scenario (``[data]`` … ``[run]``), their allowed values, and the value checks.

The dataclass defaults are the scenario defaults (``docs/fl.md`` lists them all); the checks
(:func:`check_int`, :func:`check_num`, :func:`check_choice`) raise :class:`ValueError` naming the
dotted key and the allowed range, and are used by :meth:`scenarios.config.scenario.ScenarioConfig.validate`.
"""

from __future__ import annotations

import dataclasses

import math
from dataclasses import dataclass, field

from phy.config import PhyConfig

DATASETS = ("fashion-mnist", "mnist", "digits", "synthetic", "fedprox")
PARTITIONS = ("iid", "shards", "dirichlet")
PLACEMENTS = ("random", "by-distance")  # partition.placement (fl.partition, model §8)
MODELS = ("mlp", "cnn")
LEVELS = ("client", "item")
RELATIONS = ("replace", "add-remove")
EVALUATION_SETS = ("test", "validation")
ACCOUNTANTS = ("rdp", "rdp-generic", "rdp-revealed", "pld", "gdp", "fdp", "tightest")


@dataclass(frozen=True)
class FedProxDataConfig:
    """``[data.fedprox]``: FedProx Synthetic(α, β) (:mod:`fl.fedprox_synthetic`, model §11); the reference's
    size law and α = β = 1, 784 features, 10 classes. Checked by :mod:`scenarios.config.population`."""

    alpha: float = 1.0
    beta: float = 1.0
    features: int = 784
    classes: int = 10
    size_mu: float = 4.0
    size_sigma: float = 2.0
    min_size: int = 50
    max_size: int = 1000
    test_clients: int = 100
    test_per_client: int = 50
    shared_model: bool = False


@dataclass(frozen=True)
class DataConfig:
    """``[data]``: which data set (model §8); ``[data.fedprox]``: the FedProx population's parameters."""

    name: str = "digits"
    dir: str | None = None
    test_fraction: float = 0.25
    synthetic_samples: int = 2000
    synthetic_features: int = 20
    synthetic_classes: int = 4
    validation_fraction: float = 0.0
    evaluate_on: str = "test"
    fedprox: FedProxDataConfig = field(default_factory=FedProxDataConfig)


@dataclass(frozen=True)
class PartitionConfig:
    """``[partition]``: M clients and how the training set is split (model §1, §8)."""

    kind: str = "iid"
    clients: int = 100
    shards_per_client: int = 2
    alpha: float = 0.5
    placement: str = "random"


@dataclass(frozen=True)
class ModelConfig:
    """``[model]``: architecture by name (see :mod:`fl.models`)."""

    name: str = "mlp"
    hidden: tuple[int, ...] = (200,)
    channels: tuple[int, ...] = (8, 16)
    kernel_size: int = 3


TRAINING_MODES = ("fedavg", "prifedsync")
SAMPLINGS = ("without-replacement", "poisson")  # training.sampling (fl.sampling, model §1)


@dataclass(frozen=True)
class PriFedSyncConfig:
    """``[training.prifedsync]``: PriFedSync's clients (:mod:`fl.prifedsync`, model §9.4): per-example clip
    norm C, noise multiplier σ (noise std σC on the clipped sum), Adam's β₁, β₂, ε̂ and weight decay (the
    base learning rate is ``training.lr``), the personalisation weight λ of the helper model and the test
    examples per client. Checked by :mod:`scenarios.config.prifedsync`."""

    clip_norm: float = 1.0
    noise_multiplier: float = 1.0
    beta1: float = 0.9
    beta2: float = 0.999
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    mix: float = 0.5
    client_test: int = 200


@dataclass(frozen=True)
class TrainingConfig:
    """``[training]``: K clients per round and local SGD (model §1).

    Exactly one of ``local_epochs`` and ``local_steps`` is set; a file that gives
    ``local_steps`` and not ``local_epochs`` gets ``local_epochs = None``.
    """

    clients_per_round: int = 20
    lr: float = 0.005
    batch_size: int = 50
    local_epochs: int | None = 1
    local_steps: int | None = None
    eval_every: int = 1
    train_eval_size: int = 10000
    client_chunk: int | None = None
    server_momentum: float = 0.0
    mode: str = "fedavg"
    prifedsync: PriFedSyncConfig = field(default_factory=PriFedSyncConfig)
    sampling: str = "without-replacement"


@dataclass(frozen=True)
class PrivacyConfig:
    """``[privacy]``: parameters of the ε column (model §7)."""

    delta: float = 1e-5
    level: str = "client"
    relation: str = "replace"
    accountant: str = "rdp"
    target_epsilon: float | str | None = None
    calibrate_key: str | None = None
    calibrated: dict | None = None


@dataclass(frozen=True)
class RunConfig:
    """``[run]``: length, seed, FLORAS key and checkpoint cadence."""

    rounds: int = 200
    seed: int = 0
    key_hex: str | None = field(default=None, repr=False)  # never in a repr (tracebacks, logs, error.json)
    checkpoint_every: int = 1


TABLES = {
    "data": DataConfig,
    "partition": PartitionConfig,
    "model": ModelConfig,
    "training": TrainingConfig,
    "phy": PhyConfig,
    "privacy": PrivacyConfig,
    "run": RunConfig,
}


def fail(key: str, what: str, value) -> None:
    raise ValueError(f"{key} must be {what} (got {value!r})")


def check_int(key: str, value, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        fail(key, f"an integer ≥ {low}" + (f" and ≤ {high}" if high is not None else ""), value)


def check_num(key: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = True, high_open: bool = True) -> None:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "" if low is None else (f"> {low}" if low_open else f"≥ {low}")
        hi = "" if high is None else (f"< {high}" if high_open else f"≤ {high}")
        fail(key, "a finite number " + " and ".join(s for s in (lo, hi) if s), value)


def check_choice(key: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        fail(key, f"one of {{{', '.join(allowed)}}}", value)


def parse_target(value) -> float | None:
    """``privacy.target_epsilon``: None, a finite number > 0, or ∞ (``"inf"`` or a float)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity", "∞"):
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0:
        raise ValueError(f"privacy.target_epsilon must be a number > 0 or \"inf\" (got {value!r})")
    return float(value)


def did_you_mean(word: str, known, prefix: str = "") -> str:
    """`` (did you mean privacy.target_epsilon?)`` for the closest of ``known`` (difflib), or ``""``."""
    import difflib

    known = sorted(str(k) for k in known)
    close = difflib.get_close_matches(str(word), known, n=1, cutoff=0.6)
    if not close:  # e.g. "epsilon" → "target_epsilon": a known key that contains the word
        close = [k for k in known if str(word) and (str(word) in k.split("_") or k.endswith("_" + str(word)))][:1]
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def build_subtable(cls, table, where: str):
    """A nested table (``[data.fedprox]``, ``[training.prifedsync]``) as its dataclass ``cls``: an instance is kept,
    a mapping's unknown keys are named with the allowed ones (and a close match), anything else is refused."""
    if isinstance(table, cls):
        return table
    if not isinstance(table, dict):
        raise ValueError(f"{where} must be a table of keys (got {table!r})")
    known = {f.name for f in dataclasses.fields(cls)}
    for key in table:
        if key not in known:
            raise ValueError(f"unknown key {where}.{key}{did_you_mean(key, known, where + '.')} "
                             f"(allowed in [{where}]: {', '.join(sorted(known))})")
    return cls(**table)

