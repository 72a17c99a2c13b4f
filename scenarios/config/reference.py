"""The scenario key reference of ``docs/fl.md``, generated from the configuration dataclasses.

Every table of a scenario (:data:`scenarios.config.tables.TABLES`) and every built-in scheme's
sub-table ``[phy.<scheme>]`` (:data:`phy.schemes.BUILTIN_MODULES`) is listed key by key: type and
default from the dataclass field, allowed values and meaning (with units) from :data:`KEY_DOCS`
below. A dataclass field without an entry, or an entry without a field, is an error, so the
reference cannot drift from the code; ``tests/test_key_reference.py`` checks that ``docs/fl.md``
holds exactly what this module generates.

    python -m scenarios.config.reference --write docs/fl.md   # rewrite the generated blocks
    python -m scenarios.config.reference --check docs/fl.md   # exit 1 if they differ

In ``docs/fl.md`` each table's block sits between ``<!-- generated: KEY-TABLE [name] -->`` and
``<!-- end generated -->``; the text around the blocks is written by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
from pathlib import Path

__all__ = ["KEY_DOCS", "table_names", "fields_of", "render_table", "render_subtable_summary", "blocks", "rewrite", "main"]

#: "table.key" → (allowed values, meaning with units; model § where it applies)
KEY_DOCS: dict[str, tuple[str, str]] = {
    # [data]
    "data.name": ("`fashion-mnist`, `mnist`, `digits`, `synthetic`", "data set"),
    "data.dir": ("directory", "where the IDX files are (searched first; relative to the working directory)"),
    "data.test_fraction": ("(0, 1)", "test share of `digits` (stratified, seeded) and `synthetic`"),
    "data.synthetic_samples": ("≥ 2", "training examples of `synthetic`"),
    "data.synthetic_features": ("≥ 1", "feature dimension of `synthetic`"),
    "data.synthetic_classes": ("≥ 2", "classes of `synthetic`"),
    "data.validation_fraction": ("[0, 1)", "share of the training set held out as a stratified validation split "
                                           "(used by `floras tune`; 0: none)"),
    "data.evaluate_on": ("`test`, `validation`", "set behind `test_loss` / `test_accuracy` (`validation` needs "
                                                "`validation_fraction` > 0)"),
    # [partition]
    "partition.kind": ("`iid`, `shards`, `dirichlet`", "how the training set is split"),
    "partition.clients": ("≥ 1", "M, number of clients"),
    "partition.shards_per_client": ("≥ 1", "`shards`: label shards per client ([model §8](model.md#sec-8): 2)"),
    "partition.alpha": ("> 0", "`dirichlet`: concentration α"),
    # [model]
    "model.name": ("`mlp`, `cnn`", "architecture"),
    "model.hidden": ("list of ≥ 1", "MLP hidden widths (784-200-10: d = 159 010)"),
    "model.channels": ("non-empty list of ≥ 1", "CNN: Conv2D(c, k×k, same, ReLU) + MaxPool 2×2 per entry, then Dense"),
    "model.kernel_size": ("≥ 1", "CNN kernel size k (default CNN on 28×28: d = 9 098)"),
    # [training]
    "training.clients_per_round": ("1 … M", "K, sampled uniformly without replacement each round"),
    "training.lr": ("> 0", "η, plain SGD"),
    "training.batch_size": ("1 … D", "B, examples per local step"),
    "training.local_epochs": ("≥ 1", "E local epochs (the source's experiments)"),
    "training.local_steps": ("≥ 1", "E local steps instead (set `local_steps` and leave `local_epochs` out)"),
    "training.eval_every": ("≥ 1", "evaluate the global model every this many rounds (and always in the last)"),
    "training.train_eval_size": ("≥ 1", "examples of the fixed training subset behind `train_loss`"),
    # [phy], shared by every scheme
    "phy.scheme": ("`floras`, `channel-inversion`, `ideal`, `central-gaussian`, `analog-gaussian`, `ddgauss`, `sqsgd`",
                   "the aggregation scheme (a registered scheme, `phy/schemes.py`)"),
    "phy.L": ("≥ 1", "chips per aggregated symbol (FLORAS: sequence length; Walsh–Hadamard needs a power of two)"),
    "phy.snr_db": ("finite", "SNR = P/σ² [dB] ([model §5](model.md#sec-5))"),
    "phy.normalization": ("`paper`, `clip`", "update normalization ([model §2](model.md#sec-2)); the private "
                                             "baselines and sqSGD need `clip`"),
    "phy.C": ("> 0", "norm bound of s_k [√W]; none = √(d·P)"),
    "phy.clip_norm": ("> 0", "R of the clip rule [model units]; required for `clip`"),
    "phy.power": ("> 0", "P, per-symbol average transmit power [W]; reference amplitude b = √P"),
    "phy.g_th": ("> 0", "truncation threshold on \\|h_k\\|² of channel inversion and the schemes on its uplink"),
    "phy.rho_rule": ("`threshold`, `min-admitted`", "ρ = g_th, or the smallest admitted \\|h_k\\|² "
                                                    "([model §6.2](model.md#sec-6-2))"),
    "phy.resource": ("`equal`, `source-literal`", "equal-resource convention ([model §5](model.md#sec-5))"),
    "phy.chunk_size": ("≥ 1", "entries of the d data slots processed at once (memory only; results unchanged)"),
    # [privacy]
    "privacy.delta": ("(0, 1)", "δ of the ε column"),
    "privacy.level": ("`client`, `item`", "unit of privacy"),
    "privacy.relation": ("`replace`, `add-remove`", "neighbouring relation"),
    "privacy.accountant": ("`rdp`, `rdp-generic`, `pld`, `gdp`", "accountant of the ε column (docs/privacy.md)"),
    "privacy.target_epsilon": ("> 0 or `\"inf\"`", "calibrate the scheme's noise key to this ε at `delta` after "
                                                  "`run.rounds` ([model §10](model.md#sec-10)); none: the key is given"),
    "privacy.calibrate_key": ("a calibrated key of the scheme", "the key a `target_epsilon` calibrates when the scheme "
                                                                "has several (FLORAS: `C` at fixed N, or `N` at fixed C)"),
    "privacy.calibrated": ("written by the calibration", "record of the resolved target (value, achieved ε); "
                                                         "not set by hand"),
    # [run]
    "run.rounds": ("≥ 1", "T (`--rounds`)"),
    "run.seed": ("0 … 2⁶³−1", "master seed of every stream (`--seed`)"),
    "run.key_hex": ("≥ 32 hex digits", "FLORAS clients' shared key ([model §4](model.md#sec-4)); never written to disk"),
    "run.checkpoint_every": ("≥ 1", "rounds between checkpoints"),
    # [phy.floras]
    "phy.floras.N": ("≥ K (orthonormal sets: ≤ L)", "size of the sequence set; γ = N − K inactive sequences "
                                                   "([model §4](model.md#sec-4))"),
    "phy.floras.sequences": ("`walsh-hadamard`, `random-orthonormal`, `pn`", "sequence family (`pn` is not orthogonal: "
                                                                            "biased estimate, reported)"),
    "phy.floras.csit": ("`none`, `phase`", "effective gain Re(h_k) or \\|h_k\\| (phase pre-rotation)"),
    "phy.floras.path": ("`auto`, `fast`, `chip`, `sufficient`", "implementation; `auto` takes the sufficient-statistic "
                                                               "path of [model §6.1](model.md#sec-6-1) in learning runs"),
    "phy.floras.receiver": ("`plain`, `inverse-variance`, `capped`", "server weight w of the round's estimate "
                                                                     "([model §6.4](model.md#sec-6-4)); `plain`: w = 1"),
    "phy.floras.receiver_cap": ("> 0", "w_max of `capped`"),
    "phy.floras.noise_estimate": ("`pilots`, `energy`", "V̂ from the pilot outputs, or ‖ŝ‖²/(b²d)"),
    # [phy.central-gaussian], [phy.analog-gaussian]
    "phy.central-gaussian.noise_multiplier": ("≥ 0, required", "z: total noise std z·S, S = 2C (`replace`) or C "
                                                               "(`add-remove`) ([model §9.1](model.md#sec-9-1))"),
    "phy.analog-gaussian.noise_multiplier": ("≥ 0, required", "z: total noise std z·S, S = 2C (`replace`) or C "
                                                              "(`add-remove`) ([model §9.1](model.md#sec-9-1))"),
    # [phy.ddgauss]
    "phy.ddgauss.bits": ("2 … 48", "B bits per coordinate (modulus 2^B) ([model §9.2](model.md#sec-9-2))"),
    "phy.ddgauss.grid": ("> 0", "rounding grid γ [model units]; none = from the bit budget"),
    "phy.ddgauss.local_std": ("≥ 0", "each client's discrete-Gaussian noise std σ [model units]"),
    "phy.ddgauss.beta": ("(0, 1)", "conditional-rounding failure bound β (default e^{−1/2})"),
    "phy.ddgauss.k_stddevs": ("> 0", "standard deviations of the modular sum kept inside the modulus"),
    # [phy.sqsgd]
    "phy.sqsgd.levels": ("≥ 2", "K_q quantization levels ([model §9.3](model.md#sec-9-3))"),
    "phy.sqsgd.ratio": ("(0, 1]", "subsampling ratio r (d̃ = ⌊r·d⌋ ≥ 1)"),
    "phy.sqsgd.epsilon0": ("> 0", "per-round LDP budget ε₀"),
    "phy.sqsgd.kappa": ("integer in [−n, n − 1]", "cap κ (n the padded rotation length); none = the κ maximizing m"),
    "phy.sqsgd.estimator": ("`unbiased`, `sparse`", "server estimator (`unbiased`: scaled by d/d̃; `sparse`: the source's)"),
    "phy.sqsgd.norm_bound": ("`fixed`, `adaptive`", "U = C, or the adaptive bound from each client's ScalarDP norm report ([docs/sqsgd.md](sqsgd.md))"),
    "phy.sqsgd.epsilon_s": ("> 0", "ScalarDP budget of the norm report per round (adaptive bound only; added to ε₀ by the accountant)"),
    "phy.sqsgd.norm_levels": ("integer ≥ 1", "k, steps of [0, C] of the ScalarDP report; floor of the bound C/k"),
    "phy.sqsgd.accumulation": ("true, false", "local accumulation with momentum correction (needs `estimator = \"sparse\"` and client ids)"),
    "phy.sqsgd.momentum": ("[0, 1)", "β of the accumulation's momentum correction"),
    "phy.sqsgd.mechanism": ("`privquant`, `pm`", "the client's privatizer: sqSGD's PrivQuant, or the piecewise mechanism baseline"),
}

#: fields of a table dataclass that are not keys of the file (the sub-tables of [phy])
NOT_KEYS = {"phy": {"params"}}


def table_names() -> list[str]:
    """Every documented table: the scenario tables, then ``phy.<scheme>`` of each built-in scheme with keys."""
    from phy.schemes import BUILTIN_MODULES, scheme_names, scheme_spec
    from scenarios.config.tables import TABLES

    names = list(TABLES)
    for scheme in scheme_names():
        spec = scheme_spec(scheme)
        if spec.params is not None and spec.aggregator.__module__ in BUILTIN_MODULES:
            names.append(f"phy.{scheme}")
    return names


def _dataclass_of(table: str):
    from phy.schemes import scheme_spec
    from scenarios.config.tables import TABLES

    if table in TABLES:
        return TABLES[table]
    return scheme_spec(table.split(".", 1)[1]).params


def fields_of(table: str) -> list[dataclasses.Field]:
    skip = NOT_KEYS.get(table, set())
    return [f for f in dataclasses.fields(_dataclass_of(table)) if f.name not in skip]


_TYPES = {"int": "integer", "float": "number", "str": "string", "bool": "boolean", "dict": "table",
          "tuple[int, ...]": "list of integers"}


def _type(annotation: str) -> str:
    parts = [p.strip() for p in str(annotation).split("|")]
    names = [_TYPES.get(p, p) for p in parts if p != "None"]
    return " or ".join(names) + (" or none" if "None" in parts else "")


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = field.default_factory()  # type: ignore[misc]
    else:
        return "required"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, float):  # "20.0", "1e-05"; a long expansion rounded to 6 digits
        if not math.isfinite(value):
            return f'`"{value}"`'
        return f"`{value!r}`" if len(repr(value)) <= 8 else f"`{value:.6g}`"
    if isinstance(value, (tuple, list)):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    return f"`{value}`"


def _doc(table: str, key: str) -> tuple[str, str]:
    dotted = f"{table}.{key}"
    if dotted not in KEY_DOCS:
        raise KeyError(f"scenarios/config/reference.py: KEY_DOCS has no entry for {dotted} (a field of "
                       f"{_dataclass_of(table).__name__}); add its allowed values and meaning")
    return KEY_DOCS[dotted]


def check_docs() -> None:
    """Every field documented, every entry a field (:class:`KeyError` naming the first mismatch)."""
    known = {f"{t}.{f.name}" for t in table_names() for f in fields_of(t)}
    for t in table_names():
        for f in fields_of(t):
            _doc(t, f.name)
    stale = sorted(set(KEY_DOCS) - known)
    if stale:
        raise KeyError(f"scenarios/config/reference.py: KEY_DOCS documents {', '.join(stale)}, which no dataclass has")


def render_table(table: str) -> str:
    """The Markdown table of ``[table]``: key, type, default, allowed, meaning."""
    lines = ["| key | type | default | allowed | meaning |", "| --- | --- | --- | --- | --- |"]
    for f in fields_of(table):
        allowed, meaning = _doc(table, f.name)
        lines.append(f"| `{f.name}` | {_type(f.type)} | {_default(f)} | {allowed} | {meaning} |")
    return "\n".join(lines)


def render_subtable_summary() -> str:
    """One row per built-in scheme sub-table: its keys with their defaults (details in the tables below)."""
    lines = ["| sub-table | keys (default) |", "| --- | --- |"]
    for table in table_names():
        if table.startswith("phy."):
            keys = ", ".join(f"`{f.name}` ({_default(f).strip('`')})" for f in fields_of(table))
            lines.append(f"| `[{table}]` | {keys} |")
    return "\n".join(lines)


SUMMARY = "phy sub-tables"


def blocks() -> dict[str, str]:
    """Block name → generated Markdown: one per table, and the sub-table summary."""
    check_docs()
    out = {f"[{t}]": render_table(t) for t in table_names()}
    out[SUMMARY] = render_subtable_summary()
    return out


_BLOCK = re.compile(r"(<!-- generated: KEY-TABLE (?P<name>[^>]+?) -->\n)(?P<body>.*?)(\n<!-- end generated -->)", re.S)


def rewrite(text: str) -> tuple[str, list[str]]:
    """(``text`` with every generated block replaced, the names of the blocks it lacks)."""
    generated = blocks()
    seen = set()

    def repl(m):
        name = m.group("name")
        if name not in generated:
            raise KeyError(f"docs/fl.md has a generated block {name!r} that no table has (tables: {', '.join(generated)})")
        seen.add(name)
        return m.group(1) + generated[name] + m.group(4)

    new = _BLOCK.sub(repl, text)
    return new, [n for n in generated if n not in seen]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scenarios.config.reference", description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", type=Path, help="rewrite the generated blocks of FILE (docs/fl.md)")
    mode.add_argument("--check", metavar="FILE", type=Path, help="exit 1 if FILE's generated blocks are stale")
    args = p.parse_args(argv)
    path = args.write or args.check
    text = path.read_text(encoding="utf-8")
    new, missing = rewrite(text)
    if missing:
        print(f"{path}: no generated block for {', '.join(missing)} (add '<!-- generated: KEY-TABLE NAME -->' "
              "... '<!-- end generated -->')", file=sys.stderr)
        return 1
    if args.check:
        if new != text:
            print(f"{path}: the key reference is stale; run python -m scenarios.config.reference --write {path}",
                  file=sys.stderr)
            return 1
        return 0
    if new != text:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
