"""Terminal output levels of ``floras train``, ``sweep`` and ``calibrate``, and the units they print.

Without ``--verbose`` the terminal gets one short privacy line (ε, δ, threat model, accountant
and the file holding the full assumptions); with ``--verbose`` the full assumption text as
well. The files (``config.json``, ``summary.csv``, ``--json``) always keep everything.

Units (docs/fl.md "Units"): accuracy is printed in percent with one decimal (:func:`percent`)
while the files keep the fraction in [0, 1] (``test_accuracy``, ``final_test_accuracy``); ε is
printed with four significant digits (:func:`_eps`: a calibrated 3.9999999977 reads "4").
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


def percent(fraction) -> str:
    """An accuracy fraction in [0, 1] as a percentage with one decimal: 0.91234 → "91.2 %"."""
    try:
        v = float(fraction)
    except (TypeError, ValueError):
        return "?"
    return "—" if math.isnan(v) else f"{100.0 * v:.1f} %"


def process_seconds(fallback_start: float) -> float:
    """Wall seconds since this process started (Linux: the seconds since boot of ``/proc/uptime`` less
    the process's start, field 22 of ``/proc/self/stat``, in clock ticks since boot), else since
    ``fallback_start`` (a ``time.time()`` value)."""
    import os
    import time

    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22 (starttime), after "pid (comm)"
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        elapsed = uptime - ticks / os.sysconf("SC_CLK_TCK")
        if 0.0 <= elapsed < 10 * 86400:
            return max(elapsed, time.time() - fallback_start)
    except (OSError, ValueError, IndexError):
        pass
    return time.time() - fallback_start


def time_line(*, total_s: float, rounds_s: float, setup_s=None, tracing_s=None) -> str:
    """``time: 32.1 s in all = 1.2 s rounds + 2.0 s setup + 0.9 s tracing + 28.0 s start-up and I/O``."""
    parts = [f"{rounds_s:.1f} s rounds"]
    known = rounds_s
    for value, what in ((setup_s, "setup"), (tracing_s, "tf.function tracing")):
        if isinstance(value, (int, float)) and math.isfinite(value):
            parts.append(f"{value:.1f} s {what}")
            known += value
    parts.append(f"{max(0.0, total_s - known):.1f} s start-up and I/O (Python, TensorFlow, data, files)")
    return shorten(f"time: {total_s:.1f} s in all = " + " + ".join(parts), MAX_LINE)


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
    """The privacy line of a finished run from its ``config.json`` record, and where the run sampled its clients a
    second line: ε if the sampled clients are known (``privacy_report.without_amplification``)."""
    rep = record.get("privacy_report") if isinstance(record.get("privacy_report"), dict) else {}
    config = record.get("config") if isinstance(record.get("config"), dict) else {}
    delta = rep.get("delta", (config.get("privacy") or {}).get("delta", math.nan))
    line = privacy_line(epsilon=rep.get("epsilon"), delta=delta, threat_model=rep.get("threat_model"),
                        accountant=rep.get("accountant"), where=Path(run_dir) / "config.json")
    bare = rep.get("without_amplification")
    if isinstance(bare, dict) and bare.get("epsilon_most_sampled") is None:
        why = ("no add/remove guarantee (the sample reveals membership)" if bare.get("participations_max") is None
               else "not computed")
        line += "\n" + shorten(f"privacy if the sampled clients are known (no amplification): {why}, see "
                                "privacy_report.without_amplification", MAX_LINE)
    elif isinstance(bare, dict):  # the same run against an observer that learns who was sampled (model §7.3)
        line += "\n" + shorten(
            f"privacy if the sampled clients are known (no amplification): ε = {_eps(bare.get('epsilon_ex_ante'))} over "
            f"the sampling, {_eps(bare.get('epsilon_most_sampled'))} for this run's most-sampled client "
            f"({bare.get('participations_max')} of {bare.get('rounds')} rounds), {_eps(bare.get('epsilon_every_round'))} "
            "in every round; see privacy_report", MAX_LINE)
    beyond = rep.get("beyond_threat_model")
    if isinstance(beyond, dict) and "epsilon_most_exposed" in beyond:  # the scheme's wiring row names the observer
        line += "\n" + shorten(
            f"privacy against {beyond.get('observer', 'an observer beyond the threat model')}: ε = "
            f"{_eps(beyond.get('epsilon_most_exposed'))} for the most exposed client"
            + (f"; {_eps(beyond.get('epsilon_sampled'))} if it does not learn who was sampled"
               if beyond.get("epsilon_sampled") is not None else "")
            + "; see privacy_report", MAX_LINE)
    return line


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
