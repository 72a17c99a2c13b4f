"""The package layout, checked from the source alone (``ast``; no module is imported).

* no import circle among the modules of ``scenarios/`` (module-level and function-level imports,
  relative imports resolved; an import of ``a.b.c`` is an edge to ``a.b.c``, or to ``a.b`` when
  ``c`` is a name in it);
* no private name (leading underscore) imported from another module in ``scenarios/`` and ``figures/``;
* ``figures/`` imports from ``scenarios`` only ``scenarios.store`` (and its modules);
* no module in ``scenarios/`` longer than :data:`MAX_LINES` lines;
* ``privacy/`` never imports TensorFlow.

Each failure names the offending module (and line).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 300
LONG_MODULES_ALLOWED: dict[str, str] = {}  # module → why it is still long (none today)


def modules(package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (path, is a package ``__init__``) for every ``.py`` under ``package/``."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def imports(name: str, path: Path, is_package: bool) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) of every import statement, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out += [(module, alias.name, node.lineno) for alias in node.names]
    return out


def import_graph(mods: dict[str, tuple[Path, bool]]) -> dict[str, dict[str, int]]:
    """module → {module it imports (among ``mods``): first line}."""
    graph: dict[str, dict[str, int]] = {}
    for name, (path, is_package) in mods.items():
        edges: dict[str, int] = {}
        for module, imported, line in imports(name, path, is_package):
            target = f"{module}.{imported}" if imported and f"{module}.{imported}" in mods else module
            if target in mods and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


SCENARIOS = modules("scenarios")
FIGURES = modules("figures")


def test_no_import_circle_in_scenarios():
    graph = import_graph(SCENARIOS)
    problems = []
    for component in cycles(graph):
        members = set(component)
        edges = [f"{a} → {b} (line {line})" for a in component for b, line in sorted(graph[a].items()) if b in members]
        problems.append(f"import circle among {', '.join(component)}: {'; '.join(edges)}")
    assert not problems, "\n".join(problems)


def test_no_private_name_imported_from_another_module():
    problems = []
    for mods in (SCENARIOS, FIGURES):
        for name, (path, is_package) in mods.items():
            for module, imported, line in imports(name, path, is_package):
                if not module.startswith(("scenarios", "figures")) or imported is None:
                    continue
                if imported.startswith("_") and not (imported.startswith("__") and imported.endswith("__")):
                    problems.append(f"{name} (line {line}) imports the private name {imported} from {module}")
    assert not problems, "\n".join(problems)


def test_figures_import_only_the_store_from_scenarios():
    problems = []
    for name, (path, is_package) in FIGURES.items():
        for module, imported, line in imports(name, path, is_package):
            target = f"{module}.{imported}" if module == "scenarios" and imported else module
            if target.split(".")[0] == "scenarios" and not (target == "scenarios.store" or target.startswith("scenarios.store.")):
                problems.append(f"{name} (line {line}) imports {target}; figures read results only through scenarios.store")
    assert not problems, "\n".join(problems)


def test_no_long_module_in_scenarios():
    problems = []
    for name, (path, _) in SCENARIOS.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and name not in LONG_MODULES_ALLOWED:
            problems.append(f"{name} ({path.relative_to(ROOT)}) has {lines} lines (at most {MAX_LINES})")
    assert not problems, "\n".join(problems)


def test_privacy_imports_neither_tensorflow_nor_phy():
    """privacy takes numbers (and generators), not blocks: no TensorFlow, nothing of the physical layer."""
    problems = []
    for name, (path, is_package) in modules("privacy").items():
        for module, imported, line in imports(name, path, is_package):
            if module.split(".")[0] in ("tensorflow", "phy"):
                problems.append(f"{name} (line {line}) imports {module}")
    assert not problems, "\n".join(problems)


def test_the_checks_see_circles_and_relative_imports(tmp_path):
    """The graph and the checks above on a made-up layout: a circle is found, and a function-level
    relative import resolves to its module (with the private name it imports)."""
    graph = {"p.a": {"p.b": 1}, "p.b": {"p.c": 3}, "p.c": {"p.a": 7}, "p.d": {"p.a": 2}}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    path = tmp_path / "m.py"
    path.write_text("import os\n\n\ndef f():\n    from ..b import _hidden\n    from . import c\n")
    assert imports("p.sub.m", path, False) == [("os", None, 1), ("p.b", "_hidden", 5), ("p.sub", "c", 6)]
