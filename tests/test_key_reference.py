"""docs/fl.md's scenario key reference is generated from the configuration dataclasses and cannot drift."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from scenarios.config import reference

DOC = Path(__file__).resolve().parents[1] / "docs" / "fl.md"


def _block_keys(text: str, name: str) -> list[str]:
    """First-column keys of the generated block ``name`` of docs/fl.md (read from the file)."""
    m = re.search(r"<!-- generated: KEY-TABLE %s -->\n(.*?)\n<!-- end generated -->" % re.escape(name), text, re.S)
    assert m, f"docs/fl.md has no generated block for {name}"
    return [row.split("|")[1].strip().strip("`") for row in m.group(1).splitlines()[2:]]


def test_docs_fl_is_what_the_generator_writes():
    text = DOC.read_text(encoding="utf-8")
    new, missing = reference.rewrite(text)
    assert not missing, f"docs/fl.md lacks generated blocks {missing}"
    assert new == text, "docs/fl.md is stale: python -m scenarios.config.reference --write docs/fl.md"


def test_every_table_lists_exactly_its_dataclass_fields():
    """Every scenario table and every built-in scheme's sub-table, key by key, in the dataclass order."""
    from phy.schemes import BUILTIN_MODULES, scheme_names, scheme_spec
    from scenarios.config.tables import TABLES

    text = DOC.read_text(encoding="utf-8")
    expected = {}
    for name, cls in TABLES.items():
        expected[name] = []
        for f in dataclasses.fields(cls):
            if name == "phy" and f.name == "params":
                continue
            factory = f.default_factory
            if factory is not dataclasses.MISSING and dataclasses.is_dataclass(factory):  # a sub-table: its own block
                expected[f"{name}.{f.name}"] = [g.name for g in dataclasses.fields(factory)]
            else:
                expected[name].append(f.name)
    for scheme in scheme_names():
        spec = scheme_spec(scheme)
        if spec.params is not None and spec.aggregator.__module__ in BUILTIN_MODULES:
            expected[f"phy.{scheme}"] = [f.name for f in dataclasses.fields(spec.params)]
    assert {"phy.floras", "phy.ddgauss", "phy.sqsgd", "phy.central-gaussian", "data.fedprox"} <= set(expected)
    for name, keys in expected.items():
        assert _block_keys(text, f"[{name}]") == keys, name
    for key in ("validation_fraction", "evaluate_on"):
        assert key in _block_keys(text, "[data]")
    assert {"target_epsilon", "accountant", "calibrate_key"} <= set(_block_keys(text, "[privacy]"))


def test_an_undocumented_field_or_a_stale_entry_is_an_error(monkeypatch):
    docs = dict(reference.KEY_DOCS)
    del docs["data.evaluate_on"]
    monkeypatch.setattr(reference, "KEY_DOCS", docs)
    with pytest.raises(KeyError, match="data.evaluate_on"):
        reference.blocks()
    monkeypatch.setattr(reference, "KEY_DOCS", {**reference.KEY_DOCS, "data.evaluate_on": ("a", "b"),
                                                 "data.removed_key": ("a", "b")})
    with pytest.raises(KeyError, match="data.removed_key"):
        reference.blocks()


def test_check_mode_fails_on_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "fl.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("| `lr` | number | `0.005` |", "| `lr` | number | `0.01` |"))
    assert reference.main(["--check", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert reference.main(["--write", str(stale)]) == 0 and reference.main(["--check", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
