"""Scenario files: typed configuration of one federated-learning run, validated in one place.

A scenario is a TOML file with the tables ``[data]``, ``[partition]``, ``[model]``,
``[training]``, ``[phy]``, ``[privacy]`` and ``[run]`` (every table and key optional; the
defaults are the dataclass defaults below and ``docs/fl.md`` lists them all). Loading is two
steps, both here:

1. :func:`scenario_from_dict` turns the mapping into dataclasses; an unknown table or key is
   an error naming the dotted key (``unknown key training.lr_decay``);
2. :meth:`ScenarioConfig.validate` checks every value and raises :class:`ValueError` naming
   the dotted key and the allowed range — before any data is loaded or any training starts.

Overrides (``{"phy.snr_db": 0, "training.lr": 0.001, "run.seed": 2}``) are applied to the
mapping before step 1, so they are checked exactly like values in the file.
"""

from __future__ import annotations

import copy
import math
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from phy.config import PhyConfig
from scenarios.scheme_privacy import BASELINE_THREAT_MODELS, PRIVATE_BASELINES  # noqa: F401  (kept importable from here)

__all__ = [
    "DataConfig",
    "PartitionConfig",
    "ModelConfig",
    "TrainingConfig",
    "PrivacyConfig",
    "RunConfig",
    "ScenarioConfig",
    "TABLES",
    "load_scenario",
    "scenario_from_dict",
    "apply_overrides",
]

DATASETS = ("fashion-mnist", "mnist", "digits", "synthetic")
PARTITIONS = ("iid", "shards", "dirichlet")
MODELS = ("mlp", "cnn")
LEVELS = ("client", "item")
RELATIONS = ("replace", "add-remove")
EVALUATION_SETS = ("test", "validation")
ACCOUNTANTS = ("rdp", "rdp-generic", "pld", "gdp")


@dataclass(frozen=True)
class DataConfig:
    """``[data]``: which data set (model §8)."""

    name: str = "digits"
    dir: str | None = None
    test_fraction: float = 0.25
    synthetic_samples: int = 2000
    synthetic_features: int = 20
    synthetic_classes: int = 4
    validation_fraction: float = 0.0
    evaluate_on: str = "test"


@dataclass(frozen=True)
class PartitionConfig:
    """``[partition]``: M clients and how the training set is split (model §1, §8)."""

    kind: str = "iid"
    clients: int = 100
    shards_per_client: int = 2
    alpha: float = 0.5


@dataclass(frozen=True)
class ModelConfig:
    """``[model]``: architecture by name (see :mod:`fl.models`)."""

    name: str = "mlp"
    hidden: tuple[int, ...] = (200,)
    channels: tuple[int, ...] = (8, 16)
    kernel_size: int = 3


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


@dataclass(frozen=True)
class PrivacyConfig:
    """``[privacy]``: parameters of the ε column (model §7)."""

    delta: float = 1e-5
    level: str = "client"
    relation: str = "replace"
    accountant: str = "rdp"
    target_epsilon: float | str | None = None
    floras_parameter: str = "C"
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


def _fail(key: str, what: str, value) -> None:
    raise ValueError(f"{key} must be {what} (got {value!r})")


def _int(key: str, value, low: int, high: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        _fail(key, f"an integer ≥ {low}" + (f" and ≤ {high}" if high is not None else ""), value)


def _num(key: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = True, high_open: bool = True) -> None:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "" if low is None else (f"> {low}" if low_open else f"≥ {low}")
        hi = "" if high is None else (f"< {high}" if high_open else f"≤ {high}")
        _fail(key, "a finite number " + " and ".join(s for s in (lo, hi) if s), value)


def _choice(key: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        _fail(key, f"one of {{{', '.join(allowed)}}}", value)


@dataclass(frozen=True)
class ScenarioConfig:
    """A complete scenario (every table resolved to its dataclass)."""

    data: DataConfig = field(default_factory=DataConfig)
    partition: PartitionConfig = field(default_factory=PartitionConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    phy: PhyConfig = field(default_factory=PhyConfig)
    privacy: PrivacyConfig = field(default_factory=PrivacyConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def to_dict(self) -> dict:
        """Plain mapping (tuples as lists) that :func:`scenario_from_dict` reads back."""
        out = {}
        for name in TABLES:
            table = asdict(getattr(self, name))
            out[name] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in table.items()}
        return out

    def validate(self) -> "ScenarioConfig":
        """Check every value; raise ValueError naming the dotted key and the allowed range.

        Checks that need the data (examples per client vs. batch size, CNN on non-image
        data) are repeated with the data's sizes by :func:`scenarios.run.run_scenario` before
        training starts.
        """
        d, p, m, t, pr, r = self.data, self.partition, self.model, self.training, self.privacy, self.run
        _choice("data.name", d.name, DATASETS)
        if d.dir is not None and (not isinstance(d.dir, str) or not d.dir):
            _fail("data.dir", "a non-empty directory path", d.dir)
        _num("data.test_fraction", d.test_fraction, low=0.0, high=1.0)
        _int("data.synthetic_samples", d.synthetic_samples, 2)
        _int("data.synthetic_features", d.synthetic_features, 1)
        _int("data.synthetic_classes", d.synthetic_classes, 2)
        _num("data.validation_fraction", d.validation_fraction, low=0.0, high=1.0, low_open=False)
        _choice("data.evaluate_on", d.evaluate_on, EVALUATION_SETS)
        if d.evaluate_on == "validation" and d.validation_fraction == 0.0:
            _fail("data.validation_fraction", "> 0 when data.evaluate_on = 'validation'", d.validation_fraction)

        _choice("partition.kind", p.kind, PARTITIONS)
        _int("partition.clients", p.clients, 1)
        _int("partition.shards_per_client", p.shards_per_client, 1)
        _num("partition.alpha", p.alpha, low=0.0)

        _choice("model.name", m.name, MODELS)
        for key, seq in (("hidden", m.hidden), ("channels", m.channels)):
            if not isinstance(seq, tuple) or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in seq):
                _fail(f"model.{key}", "a list of integers ≥ 1", list(seq) if isinstance(seq, tuple) else seq)
        if m.name == "cnn" and not m.channels:
            _fail("model.channels", "a non-empty list for model.name = 'cnn'", list(m.channels))
        _int("model.kernel_size", m.kernel_size, 1)

        _int("training.clients_per_round", t.clients_per_round, 1, p.clients)
        _num("training.lr", t.lr, low=0.0)
        _int("training.batch_size", t.batch_size, 1)
        if (t.local_epochs is None) == (t.local_steps is None):
            got = "both" if t.local_epochs is not None else "neither"
            raise ValueError(f"training.local_epochs and training.local_steps: exactly one must be set (got {got})")
        if t.local_epochs is not None:
            _int("training.local_epochs", t.local_epochs, 1)
        else:
            _int("training.local_steps", t.local_steps, 1)
        _int("training.eval_every", t.eval_every, 1)
        _int("training.train_eval_size", t.train_eval_size, 1)

        try:
            self.phy.validate(K=t.clients_per_round)
        except ValueError as exc:
            msg = f"phy.{exc}"
            if msg.startswith("phy.noise_multiplier must be set"):
                msg += ("; or set privacy.target_epsilon (with privacy.delta) to have it calibrated, or find it "
                        f"with `floras calibrate --scheme {self.phy.scheme} --target-epsilon E ...`")
            raise ValueError(msg) from None

        _num("privacy.delta", pr.delta, low=0.0, high=1.0)
        _choice("privacy.level", pr.level, LEVELS)
        _choice("privacy.relation", pr.relation, RELATIONS)
        _choice("privacy.accountant", pr.accountant, ACCOUNTANTS)
        _choice("privacy.floras_parameter", pr.floras_parameter, ("C", "N"))
        from .calibration import parse_target

        parse_target(pr.target_epsilon)
        if pr.calibrated is not None and not isinstance(pr.calibrated, dict):
            _fail("privacy.calibrated", "a table written by the calibration (or absent)", pr.calibrated)

        _int("run.rounds", r.rounds, 1)
        _int("run.seed", r.seed, 0, 2**63 - 1)
        if r.key_hex is not None:
            try:
                key = bytes.fromhex(r.key_hex) if isinstance(r.key_hex, str) else None
            except ValueError:
                key = None
            if key is None or len(key) < 16:
                from phy.assignment import describe_key_text

                # never echoed (an almost-right key is almost the key): its length and characters only
                raise ValueError("run.key_hex must be a hexadecimal string of at least 32 digits (≥ 128 bits), "
                                 f"an even number of them ({describe_key_text(r.key_hex)})")
        _int("run.checkpoint_every", r.checkpoint_every, 1)
        if self.phy.scheme in ("floras", "sqsgd", *PRIVATE_BASELINES):
            # The accountant's own checks (e.g. relation vs. sampling), before any data is loaded;
            # d and D are not known yet, so placeholders that pass their range checks are used.
            self.privacy_accountant(d=1, D=t.batch_size)
        return self

    def privacy_accountant(self, *, d: int, D: int):
        """The run's accountant (:func:`scenarios.scheme_privacy.scheme_accountant`): FLORAS's
        :class:`privacy.FlorasRunAccountant` (model §7), each private baseline's and sqSGD's
        :class:`privacy.SchemeRunAccountant` (model §9). Errors name ``privacy.*``."""
        from scenarios.scheme_privacy import scheme_accountant

        return scheme_accountant(self, d=d, D=D)


def did_you_mean(word: str, known, prefix: str = "") -> str:
    """`` (did you mean privacy.target_epsilon?)`` for the closest of ``known`` (difflib), or ``""``."""
    import difflib

    known = sorted(str(k) for k in known)
    close = difflib.get_close_matches(str(word), known, n=1, cutoff=0.6)
    if not close:  # e.g. "epsilon" → "target_epsilon": a known key that contains the word
        close = [k for k in known if str(word) and (str(word) in k.split("_") or k.endswith("_" + str(word)))][:1]
    return f" (did you mean {prefix}{close[0]}?)" if close else ""


def _check_table(name: str, table) -> dict:
    if name not in TABLES:
        raise ValueError(f"unknown table [{name}]{did_you_mean(name, TABLES)} (allowed: {', '.join(TABLES)})")
    if not isinstance(table, dict):
        raise ValueError(f"{name} must be a table of keys (got {table!r})")
    known = {f.name for f in fields(TABLES[name])}
    for key in table:
        if key not in known:
            raise ValueError(f"unknown key {name}.{key}{did_you_mean(key, known, name + '.')} "
                             f"(allowed in [{name}]: {', '.join(sorted(known))})")
    return table


def apply_overrides(data: dict, overrides: dict | None) -> dict:
    """Return a copy of ``data`` with dotted-key ``overrides`` set (unknown keys are errors)."""
    out = copy.deepcopy(data)
    for dotted, value in (overrides or {}).items():
        parts = str(dotted).split(".")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"override key must be 'table.key' (got {dotted!r})")
        table, key = parts
        if table not in TABLES:
            raise ValueError(f"unknown key {dotted} (unknown table [{table}]{did_you_mean(table, TABLES)}; "
                             f"allowed: {', '.join(TABLES)})")
        known = {f.name for f in fields(TABLES[table])}
        if key not in known:
            raise ValueError(f"unknown key {dotted}{did_you_mean(key, known, table + '.')} "
                             f"(allowed in [{table}]: {', '.join(sorted(known))})")
        out.setdefault(table, {})[key] = value
    return out


def scenario_from_dict(data: dict, overrides: dict | None = None, *, resolve: bool = True) -> ScenarioConfig:
    """Build and validate a :class:`ScenarioConfig` from a mapping (e.g. parsed TOML).

    With ``resolve`` a ``privacy.target_epsilon`` is calibrated into the scheme's noise key
    (:func:`scenarios.calibration.resolve_privacy_target`, model §10).
    """
    if not isinstance(data, dict):
        raise ValueError(f"scenario must be a mapping of tables (got {type(data).__name__})")
    data = apply_overrides(data, overrides)
    tables = {name: _check_table(name, table) for name, table in data.items()}
    kwargs = {}
    for name, cls in TABLES.items():
        table = dict(tables.get(name, {}))
        if name == "phy":
            kwargs[name] = PhyConfig.from_dict(table, where="phy")
            continue
        for key in ("hidden", "channels"):
            if key in table and isinstance(table[key], list):
                table[key] = tuple(table[key])
        if name == "training" and table.get("local_steps") is not None and "local_epochs" not in table:
            table["local_epochs"] = None
        kwargs[name] = cls(**table)
    config = ScenarioConfig(**kwargs)
    if resolve and config.privacy.target_epsilon is not None:
        from .calibration import resolve_privacy_target

        return resolve_privacy_target(config)
    return config.validate()


def load_scenario(path: str | Path, overrides: dict | None = None) -> ScenarioConfig:
    """Read a scenario TOML file, apply dotted ``overrides``, validate, and return it."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"scenario file {path} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"scenario file {path} is a directory; give a TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"scenario file {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"scenario file {path} is not valid TOML: {exc}") from None
    try:
        return scenario_from_dict(data, overrides)
    except ValueError as exc:  # keeps the subclass (e.g. calibration.InfeasibleTarget) for sweeps to record
        raise type(exc)(f"{path.name}: {exc}") from None
