"""Scenario files: typed configuration of one federated-learning run, validated in one place.

A scenario is a TOML file with the tables ``[data]``, ``[partition]``, ``[model]``,
``[training]``, ``[phy]``, ``[privacy]`` and ``[run]`` (every table and key optional; the
defaults are the dataclass defaults below and ``docs/fl.md`` lists them all). Loading is two
steps, both here:

1. :func:`build_scenario` (called by :func:`scenarios.config.loading.scenario_from_dict`) turns the mapping into dataclasses; an unknown table or key is
   an error naming the dotted key (``unknown key training.lr_decay``);
2. :meth:`ScenarioConfig.validate` checks every value and raises :class:`ValueError` naming
   the dotted key and the allowed range — before any data is loaded or any training starts.

Overrides (``{"phy.snr_db": 0, "training.lr": 0.001, "run.seed": 2}``) are applied to the
mapping before step 1, so they are checked exactly like values in the file.
"""


from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields

from phy.config import PhyConfig
from scenarios.config.placement import validate_placement
from scenarios.config.population import build_fedprox, validate_population
from scenarios.config.prifedsync import build_prifedsync, prifedsync_accountant, validate_training_mode
from scenarios.config.schemes import check_wiring, scheme_accountant, wiring, wirings
from scenarios.config.tables import (
    ACCOUNTANTS,
    DATASETS,
    EVALUATION_SETS,
    LEVELS,
    MODELS,
    PARTITIONS,
    PLACEMENTS,
    RELATIONS,
    SAMPLINGS,
    TABLES,
    DataConfig,
    ModelConfig,
    PartitionConfig,
    PrivacyConfig,
    RunConfig,
    TrainingConfig,
    check_choice,
    did_you_mean,
    check_int,
    check_num,
    fail,
    parse_target,
)

__all__ = ["ScenarioConfig", "apply_overrides", "build_scenario", "check_table", "did_you_mean"]


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
            value = getattr(self, name)
            table = value.to_dict() if name == "phy" else asdict(value)  # [phy]: shared keys and sub-tables
            out[name] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in table.items()}
        return out

    def validate(self) -> "ScenarioConfig":
        """Check every value; raise ValueError naming the dotted key and the allowed range.

        Checks that need the data (examples per client vs. batch size, CNN on non-image
        data) are repeated with the data's sizes by :func:`scenarios.runs.run.run_scenario` before
        training starts.
        """
        d, p, m, t, pr, r = self.data, self.partition, self.model, self.training, self.privacy, self.run
        check_choice("data.name", d.name, DATASETS)
        if d.dir is not None and (not isinstance(d.dir, str) or not d.dir):
            fail("data.dir", "a non-empty directory path", d.dir)
        check_num("data.test_fraction", d.test_fraction, low=0.0, high=1.0)
        check_int("data.synthetic_samples", d.synthetic_samples, 2)
        check_int("data.synthetic_features", d.synthetic_features, 1)
        check_int("data.synthetic_classes", d.synthetic_classes, 2)
        check_num("data.validation_fraction", d.validation_fraction, low=0.0, high=1.0, low_open=False)
        check_choice("data.evaluate_on", d.evaluate_on, EVALUATION_SETS)
        if d.evaluate_on == "validation" and d.validation_fraction == 0.0:
            fail("data.validation_fraction", "> 0 when data.evaluate_on = 'validation'", d.validation_fraction)
        validate_population(self)

        check_choice("partition.kind", p.kind, PARTITIONS)
        check_int("partition.clients", p.clients, 1)
        check_int("partition.shards_per_client", p.shards_per_client, 1)
        check_num("partition.alpha", p.alpha, low=0.0)
        check_choice("partition.placement", p.placement, PLACEMENTS)

        check_choice("model.name", m.name, MODELS)
        for key, seq in (("hidden", m.hidden), ("channels", m.channels)):
            if not isinstance(seq, tuple) or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in seq):
                fail(f"model.{key}", "a list of integers ≥ 1", list(seq) if isinstance(seq, tuple) else seq)
        if m.name == "cnn" and not m.channels:
            fail("model.channels", "a non-empty list for model.name = 'cnn'", list(m.channels))
        check_int("model.kernel_size", m.kernel_size, 1)

        check_int("training.clients_per_round", t.clients_per_round, 1, p.clients)
        check_num("training.lr", t.lr, low=0.0)
        check_int("training.batch_size", t.batch_size, 1)
        if (t.local_epochs is None) == (t.local_steps is None):
            got = "both" if t.local_epochs is not None else "neither"
            raise ValueError(f"training.local_epochs and training.local_steps: exactly one must be set (got {got})")
        if t.local_epochs is not None:
            check_int("training.local_epochs", t.local_epochs, 1)
        else:
            check_int("training.local_steps", t.local_steps, 1)
        check_int("training.eval_every", t.eval_every, 1)
        check_int("training.train_eval_size", t.train_eval_size, 1)
        if t.client_chunk is not None:
            check_int("training.client_chunk", t.client_chunk, 1)
        check_num("training.server_momentum", t.server_momentum, low=0.0, high=1.0, low_open=False, high_open=True)
        if t.mode == "prifedsync" and t.server_momentum != 0.0:
            raise ValueError("training.server_momentum must be 0 with training.mode = 'prifedsync' (its server averages "
                             "the clients' models; momentum is a FedAvg option)")
        validate_training_mode(self)
        check_choice("training.sampling", t.sampling, SAMPLINGS)
        if t.sampling == "poisson":
            check_poisson(self)

        try:
            self.phy.validate(K=t.clients_per_round)
        except ValueError as exc:
            msg = f"phy.{exc}"
            keys = [f"phy.{c.key} must be set" for c in wiring(self.phy.scheme).calibrated.values()] \
                if self.phy.scheme in {w.scheme for w in wirings()} else []
            if any(msg.startswith(k) for k in keys):
                msg += ("; or set privacy.target_epsilon (with privacy.delta) to have it calibrated, or find it "
                        f"with `floras calibrate --scheme {self.phy.scheme} --target-epsilon E ...`")
            raise ValueError(msg) from None
        validate_placement(self)

        check_num("privacy.delta", pr.delta, low=0.0, high=1.0)
        check_choice("privacy.level", pr.level, LEVELS)
        check_choice("privacy.relation", pr.relation, RELATIONS)
        check_choice("privacy.accountant", pr.accountant, ACCOUNTANTS)
        row = check_wiring(self.phy.scheme)  # a scheme registered in phy only is an error here
        if pr.calibrate_key is not None:
            check_choice(f"privacy.calibrate_key (for scheme {self.phy.scheme!r})", pr.calibrate_key,
                         tuple(row.calibrated) or ("(none: the scheme has no calibrated key)",))
        parse_target(pr.target_epsilon)
        if pr.calibrated is not None and not isinstance(pr.calibrated, dict):
            fail("privacy.calibrated", "a table written by the calibration (or absent)", pr.calibrated)

        check_int("run.rounds", r.rounds, 1)
        check_int("run.seed", r.seed, 0, 2**63 - 1)
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
        check_int("run.checkpoint_every", r.checkpoint_every, 1)
        # The accountant's own checks (e.g. relation vs. sampling), before any data is loaded;
        # d and D are not known yet, so placeholders that pass their range checks are used (and an accountant
        # built on a simulated law makes its checks only: its law at d = 1 would be discarded)
        from .schemes import accountant_checks_only

        with accountant_checks_only():
            self.privacy_accountant(d=1, D=t.batch_size)
        return self

    def privacy_accountant(self, *, d: int, D: int):
        """The run's accountant from the scheme's wiring row (:func:`scenarios.config.schemes.scheme_accountant`),
        or None for a scheme without privacy noise (ε = ∞); PriFedSync's record-level accountant for
        ``training.mode = "prifedsync"``. Errors name ``privacy.*``."""
        if self.training.mode == "prifedsync":
            return prifedsync_accountant(self, D=D)
        return scheme_accountant(self, d=d, D=D)


def check_poisson(config: ScenarioConfig) -> None:
    """``training.sampling = "poisson"`` (model §1): a FedAvg run of a scheme whose rounds take any cohort size
    (:func:`phy.cohort.poisson_refusal`) under add/remove neighbours (the Poisson amplification bounds)."""
    from phy.cohort import poisson_refusal

    t, pr = config.training, config.privacy
    if t.mode != "fedavg":
        raise ValueError(f"training.sampling = 'poisson' needs training.mode = 'fedavg' (got {t.mode!r}: PriFedSync "
                         "samples K of M without replacement and its record-level accountant assumes it); use "
                         "training.sampling = 'without-replacement'")
    why = poisson_refusal(config.phy)
    if why is not None:
        raise ValueError(why)
    if pr.relation != "add-remove":
        raise ValueError(f"privacy.relation must be 'add-remove' with training.sampling = 'poisson' (got "
                         f"{pr.relation!r}): Poisson sampling's amplification is derived for adding or removing one "
                         "client; set privacy.relation = 'add-remove' or use training.sampling = 'without-replacement'")


#: keys of earlier scenario files and their new names
RENAMED = {"privacy.floras_parameter": "privacy.calibrate_key"}


def check_table(name: str, table) -> dict:
    if name not in TABLES:
        raise ValueError(f"unknown table [{name}]{did_you_mean(name, TABLES)} (allowed: {', '.join(TABLES)})")
    if not isinstance(table, dict):
        raise ValueError(f"{name} must be a table of keys (got {table!r})")
    if name == "phy":  # shared keys and per-scheme sub-tables: phy.config.PhyConfig.from_dict checks them
        return table
    known = {f.name for f in fields(TABLES[name])}
    for key in table:
        if f"{name}.{key}" in RENAMED:
            raise ValueError(f"{name}.{key} is now {RENAMED[name + '.' + key]} (it names any scheme's calibrated key)")
        if key not in known:
            raise ValueError(f"unknown key {name}.{key}{did_you_mean(key, known, name + '.')} "
                             f"(allowed in [{name}]: {', '.join(sorted(known))})")
    return table



def apply_overrides(data: dict, overrides: dict | None) -> dict:
    """Return a copy of ``data`` with dotted-key ``overrides`` set (unknown keys are errors)."""
    out = copy.deepcopy(data)
    for dotted, value in (overrides or {}).items():
        parts = str(dotted).split(".")
        if len(parts) == 3 and parts[:2] == ["data", "fedprox"] and parts[2]:  # the population's sub-table
            sub = out.setdefault("data", {}).setdefault("fedprox", {})
            if not isinstance(sub, dict):
                raise ValueError(f"override {dotted}: data.fedprox is not a sub-table (got {sub!r})")
            sub[parts[2]] = value
            continue
        if len(parts) == 3 and parts[:2] == ["training", "prifedsync"] and parts[2]:  # PriFedSync's sub-table
            sub = out.setdefault("training", {}).setdefault("prifedsync", {})
            if not isinstance(sub, dict):
                raise ValueError(f"override {dotted}: training.prifedsync is not a sub-table (got {sub!r})")
            sub[parts[2]] = value
            continue
        if len(parts) == 3 and parts[0] == "phy" and all(parts):  # a scheme's sub-table: phy.<scheme>.<key>
            sub = out.setdefault("phy", {}).setdefault(parts[1], {})
            if not isinstance(sub, dict):
                raise ValueError(f"override {dotted}: phy.{parts[1]} is not a sub-table (got {sub!r})")
            sub[parts[2]] = value
            continue
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"override key must be 'table.key', 'phy.<scheme>.key' or 'data.fedprox.key' (got {dotted!r})")
        table, key = parts
        if table == "phy":  # a moved key is named with its new place; values are checked with the whole table
            if key not in {f.name for f in fields(PhyConfig)} - {"params"}:
                PhyConfig.from_dict({key: value})  # raises: unknown (with a suggestion) or moved to a sub-table
            out.setdefault("phy", {})[key] = value
            continue
        if table not in TABLES:
            raise ValueError(f"unknown key {dotted} (unknown table [{table}]{did_you_mean(table, TABLES)}; "
                             f"allowed: {', '.join(TABLES)})")
        known = {f.name for f in fields(TABLES[table])}
        if dotted in RENAMED:
            raise ValueError(f"{dotted} is now {RENAMED[dotted]} (it names any scheme's calibrated key)")
        if key not in known:
            raise ValueError(f"unknown key {dotted}{did_you_mean(key, known, table + '.')} "
                             f"(allowed in [{table}]: {', '.join(sorted(known))})")
        out.setdefault(table, {})[key] = value
    return out



def build_scenario(data: dict, overrides: dict | None = None) -> ScenarioConfig:
    """Step 1: the mapping (with dotted ``overrides`` applied) as a :class:`ScenarioConfig`, not yet validated."""
    if not isinstance(data, dict):
        raise ValueError(f"scenario must be a mapping of tables (got {type(data).__name__})")
    data = apply_overrides(data, overrides)
    tables = {name: check_table(name, table) for name, table in data.items()}
    kwargs = {}
    for name, cls in TABLES.items():
        table = dict(tables.get(name, {}))
        if name == "phy":
            kwargs[name] = PhyConfig.from_dict(table, where="phy")
            continue
        for key in ("hidden", "channels"):
            if key in table and isinstance(table[key], list):
                table[key] = tuple(table[key])
        if name == "data" and "fedprox" in table:
            table["fedprox"] = build_fedprox(table["fedprox"])
        if name == "training" and "prifedsync" in table:
            table["prifedsync"] = build_prifedsync(table["prifedsync"])
        if name == "training" and table.get("local_steps") is not None and "local_epochs" not in table:
            table["local_epochs"] = None
        kwargs[name] = cls(**table)
    return ScenarioConfig(**kwargs)
