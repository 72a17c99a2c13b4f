"""Terminal output levels of ``floras train``, ``sweep`` and ``calibrate``.

Without ``--verbose`` the terminal gets one short privacy line (ε, δ, threat model, accountant
and the file holding the full assumptions); with ``--verbose`` the full assumption text as
well. The files (``config.json``, ``summary.csv``, ``--json``) always keep everything.
"""

from __future__ import annotations

import math
from pathlib import Path

#: no terminal line of train / sweep / calibrate is longer than this without ``--verbose``
MAX_LINE = 200


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (ending in "…" when cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _eps(value) -> str:
    if value is None:
        return "?"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "∞" if math.isinf(v) else f"{v:.4g}"


def privacy_line(*, epsilon, delta, threat_model, accountant, where: str | Path | None = None,
                 where_what: str = "full assumptions") -> str:
    """``privacy: ε = 3.1 at δ = 1e-05, threat model …, accountant …; full assumptions: PATH``."""
    if epsilon is not None and _eps(epsilon) == "∞" and not threat_model:
        head = "privacy: ε = ∞ (no privacy noise)"
    else:
        name = str(accountant or "?").split(":", 1)[0]  # "rdp: Rényi DP with …" → "rdp"
        head = (f"privacy: ε = {_eps(epsilon)} at δ = {float(delta):g}, threat model {shorten(str(threat_model or '?').split(': ', 1)[0], 40)}, "
                f"accountant {shorten(name, 30)}")
    if where is None:
        return shorten(head, MAX_LINE)
    tail = f"; {where_what}: {where}"
    if len(head) + len(tail) > MAX_LINE:
        tail = f"; see {where}"
    return shorten(head + tail, MAX_LINE)


def run_privacy_line(record: dict, run_dir: str | Path) -> str:
    """The privacy line of a finished run from its ``config.json`` record."""
    rep = record.get("privacy_report") if isinstance(record.get("privacy_report"), dict) else {}
    config = record.get("config") if isinstance(record.get("config"), dict) else {}
    delta = rep.get("delta", (config.get("privacy") or {}).get("delta", math.nan))
    return privacy_line(epsilon=rep.get("epsilon"), delta=delta, threat_model=rep.get("threat_model"),
                        accountant=rep.get("accountant"), where=Path(run_dir) / "config.json")


def terse_summary(text: str, *, where: str | Path, privacy: str = "") -> str:
    """A sweep summary (:func:`scenarios.store.format_summary`) without its ε-assumption block,
    which is replaced by one line pointing at ``where`` (the sweep's summary.csv); other lines
    longer than :data:`MAX_LINE` are cut."""
    out: list[str] = []
    in_block = False
    for line in text.split("\n"):
        if line.startswith("ε assumptions"):
            in_block = True
            if privacy:
                out.append(shorten(f"privacy: ε in the table above, {privacy}", MAX_LINE))
            out.append(shorten(f"full assumptions: {where} (epsilon_assumptions, epsilon_warnings) and each run's "
                               "config.json; --verbose prints them", MAX_LINE))
            continue
        if in_block and line.startswith("  "):
            continue
        in_block = False
        out.append(shorten(line, MAX_LINE) if len(line) > MAX_LINE else line)
    return "\n".join(out)
