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

from scenarios.config.key_docs import KEY_DOCS  # every key's allowed values and meaning

__all__ = ["KEY_DOCS", "table_names", "fields_of", "render_table", "render_subtable_summary", "blocks", "rewrite", "main"]


#: fields of a table dataclass that are not keys of the file (the sub-tables of [phy])
NOT_KEYS = {"phy": {"params"}}


def table_names() -> list[str]:
    """Every documented table: the scenario tables, then ``phy.<scheme>`` of each built-in scheme with keys."""
    from phy.schemes import BUILTIN_MODULES, scheme_names, scheme_spec
    from scenarios.config.tables import TABLES

    names = []
    for table in TABLES:
        names.append(table)
        names += [f"{table}.{f.name}" for f in _subtables(TABLES[table])]
    for scheme in scheme_names():
        spec = scheme_spec(scheme)
        if spec.params is not None and spec.aggregator.__module__ in BUILTIN_MODULES:
            names.append(f"phy.{scheme}")
    return names


def _subtables(cls) -> list[dataclasses.Field]:
    """The fields of ``cls`` that are sub-tables themselves (a dataclass default, e.g. ``[data.fedprox]``)."""
    return [f for f in dataclasses.fields(cls)
            if f.default_factory is not dataclasses.MISSING and dataclasses.is_dataclass(f.default_factory)]


def _dataclass_of(table: str):
    from phy.schemes import scheme_spec
    from scenarios.config.tables import TABLES

    if table in TABLES:
        return TABLES[table]
    parent, _, name = table.partition(".")
    if parent in TABLES:
        for f in _subtables(TABLES[parent]):
            if f.name == name:
                return f.default_factory
    return scheme_spec(name).params


def fields_of(table: str) -> list[dataclasses.Field]:
    skip = NOT_KEYS.get(table, set())
    cls = _dataclass_of(table)
    nested = {f.name for f in _subtables(cls)}
    return [f for f in dataclasses.fields(cls) if f.name not in skip and f.name not in nested]


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
