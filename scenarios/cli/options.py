"""Command-line pieces shared by the physical-layer commands ``floras link`` and ``floras audit``.

Only argparse and the standard library are imported here: the commands' heavy imports stay
inside their ``run`` functions.
"""

from __future__ import annotations

import argparse
import json
import sys

__all__ = [
    "add_geometry_options", "add_key_and_json_options", "add_memory_option", "resolve_key",
    "check_json_path", "write_json_atomic", "add_dask_options", "check_dask_options",
    "check_run_count", "check_distinct_names", "MAX_RUNS",
]

MAX_RUNS = 10_000  # runs one sweep command starts without --max-runs


def add_geometry_options(p: argparse.ArgumentParser, *, N_help: str, d_default: int, d_help: str,
                         several_snr: bool = False) -> None:
    """Add ``--K --N --L --d --snr-db`` (in this order) to ``p``; the commands differ in N's and d's text.

    With ``several_snr``, ``--snr-db`` takes one or more values (a list, default [20.0])."""
    p.add_argument("--K", type=int, default=20, help="scheduled clients (≥ 1)")
    p.add_argument("--N", type=int, default=30, help=N_help)
    p.add_argument("--L", type=int, default=32, help="chips per sequence")
    p.add_argument("--d", type=int, default=d_default, help=d_help)
    if several_snr:
        p.add_argument("--snr-db", type=float, nargs="+", default=[20.0], metavar="SNR_DB",
                       help="SNR = P/sigma^2 in dB (finite); several values: one study per SNR")
    else:
        p.add_argument("--snr-db", type=float, default=20.0, help="SNR = P/sigma^2 in dB (finite)")


def add_key_options(p: argparse.ArgumentParser) -> None:
    """Add ``--key-hex`` and ``--key-file`` (sources of the clients' permutation key; see scenarios.config.keys)."""
    p.add_argument("--key-hex", default=None,
                   help="clients' permutation key, ≥ 32 hex digits (visible to other users in the process list: "
                        "prefer --key-file or FLORAS_KEY_HEX)")
    p.add_argument("--key-file", default=None, metavar="FILE",
                   help="file holding the key as hex digits, mode 600 (default: FLORAS_KEY_FILE, FLORAS_KEY_HEX, "
                        "else a simulation-only key derived from the seed)")


def add_memory_option(p: argparse.ArgumentParser) -> None:
    """Add ``--memory-limit SIZE`` (default: FLORAS_MEMORY_LIMIT, else the available memory)."""
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="refuse work whose memory estimate exceeds SIZE (e.g. 64G; default: FLORAS_MEMORY_LIMIT, "
                        "else the machine's available memory); raising it above the available memory is at your risk")


def add_dask_options(p: argparse.ArgumentParser) -> None:
    """Add ``--connect-timeout``, ``--no-workers-timeout`` and ``--max-runs`` (``floras sweep``, ``floras matched``)."""
    p.add_argument("--connect-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="how long to wait for --scheduler to answer (default 5)")
    p.add_argument("--no-workers-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="stop the sweep (finished runs kept) when the cluster has had no worker this long (default 120)")
    p.add_argument("--max-runs", type=int, default=MAX_RUNS, metavar="N",
                   help=f"refuse a command whose sweeps hold more than N runs in all (default {MAX_RUNS})")


def check_dask_options(args) -> None:
    """The timeouts are finite numbers of seconds > 0 and ``--max-runs`` ≥ 1 (before any work)."""
    import math

    for name in ("connect_timeout", "no_workers_timeout"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name.replace('_', '-')} must be a finite number of seconds > 0 (got {value})")
    if args.max_runs < 1:
        raise ValueError(f"--max-runs must be an integer ≥ 1 (got {args.max_runs})")


def check_run_count(counts: dict, max_runs: int) -> None:
    """Refuse, before anything starts, sweeps whose runs (``{sweep name: runs}``) exceed ``max_runs`` in all."""
    total = sum(counts.values())
    if total > max_runs:
        parts = ", ".join(f"{name} {n}" for name, n in counts.items())
        raise ValueError(f"these sweeps hold {total} runs ({parts}), more than --max-runs {max_runs}: shrink the grid "
                         f"or seeds, split the sweep, or pass --max-runs {total} to run them all")


def check_distinct_names(sweeps) -> None:
    """Refuse two sweep files with one ``name``: both would write into ``<out>/<name>``."""
    seen: dict = {}
    for s in sweeps:
        if s.name in seen:
            raise ValueError(f"sweep files {seen[s.name]} and {s.path} both have name = {s.name!r}, so both would write "
                             f"into <out>/{s.name}: give one of them another name, or run them with different --out")
        seen[s.name] = s.path


def add_key_and_json_options(p: argparse.ArgumentParser, *, json_help: str) -> None:
    """Add the key options, ``--memory-limit`` and ``--json FILE`` (stored as ``json_path``; ``-`` is stdout)."""
    add_key_options(p)
    add_memory_option(p)
    p.add_argument("--json", dest="json_path", default=None, metavar="FILE", help=json_help + " ('-': standard output)")


def resolve_key(key_hex: str | None, seed: int, *, key_file: str | None = None, warn: bool = True):
    """The clients' permutation key (:class:`scenarios.config.keys.ResolvedKey`); the key itself is never stored.

    Command line, then environment, then the simulation-only key derived from ``seed``
    (:func:`phy.assignment.simulation_key`, the one derivation every command uses), with a
    warning printed once.
    """
    from scenarios.config.keys import resolve_key as _resolve
    from scenarios.config.keys import warn_simulation_key

    key = _resolve(seed=seed, key_hex=key_hex, key_file=key_file)
    if key.simulated and warn:
        warn_simulation_key("this command")
    return key


def check_json_path(path: str | None) -> None:
    """Before the work: the ``--json`` file's folder exists or can be made, is writable, has space."""
    if path is None or path == "-":
        return
    from scenarios.store import check_output_location

    check_output_location(path, need_bytes=4 * 2**20, kind="file", what="--json")


def write_json_atomic(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` through the store's atomic writer (``-``: standard output).

    Non-finite floats (NaN, ±∞) are written as ``null``.
    """
    from pathlib import Path

    from scenarios.store import atomic_write_json, json_safe, storage_error

    if path == "-":
        json.dump(json_safe(data), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return
    folder = Path(path).absolute().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, "create", folder) from None
    atomic_write_json(path, data, strict=True)


def parse_override(text: str) -> tuple[str, object]:
    """``"phy.snr_db=0"`` → ``("phy.snr_db", 0)``; the value is read as a TOML value (bare words as strings)."""
    import tomllib

    if "=" not in text:
        raise ValueError(f"--set must be TABLE.KEY=VALUE (got {text!r})")
    key, raw = (s.strip() for s in text.split("=", 1))
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def add_phy_set_option(p: argparse.ArgumentParser) -> None:
    """``--set phy.KEY=VALUE`` (repeatable): any [phy] key, a scheme's own as ``phy.<scheme>.KEY``."""
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="phy.KEY=VALUE",
                   help="any [phy] key, a scheme's own as phy.<scheme>.KEY (value parsed as TOML); repeatable")


def put_phy_key(table: dict, key: str, value) -> None:
    """Set ``key`` (``"L"`` or ``"<scheme>.<key>"``, relative to [phy]) in the [phy] mapping ``table``."""
    head, _, tail = key.partition(".")
    if tail:
        table.setdefault(head, {})[tail] = value
    else:
        table[head] = value


def set_phy_keys(table: dict, texts) -> dict:
    """``table`` (a [phy] mapping) with each ``--set`` text put in place: ``phy.KEY`` or ``phy.<scheme>.KEY``."""
    for text in texts:
        dotted, value = parse_override(text)
        parts = dotted.split(".")
        if parts[0] != "phy" or len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"--set must name a [phy] key, phy.KEY or phy.<scheme>.KEY (got {dotted!r})")
        put_phy_key(table, dotted[len("phy."):], value)
    return table


def make_executor(args, workers: int, threads: int):
    """A command's executor: ``--scheduler``'s cluster (it must answer within ``--connect-timeout``), this process
    (``--workers 0``) or a local cluster of ``workers`` processes, which inherit ``threads`` as their thread
    limits (set before TensorFlow starts in them: no oversubscription; the receivers' row pass follows them too)."""
    import os

    from scenarios.experiments.sweep import DaskExecutor, InProcessExecutor

    if args.scheduler is not None:
        return DaskExecutor.connect(args.scheduler, timeout=args.connect_timeout,
                                    no_workers_timeout=args.no_workers_timeout)
    if workers == 0:
        return InProcessExecutor()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
        os.environ[var] = str(threads)
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    return DaskExecutor.local(workers, no_workers_timeout=args.no_workers_timeout)


def write_json(path: str | None, payload: dict) -> None:
    """``payload`` as indented JSON to ``path`` (atomically; parents created), to stdout for ``"-"``, nowhere for None."""
    if path is None:
        return
    import json
    import sys
    from pathlib import Path

    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    from scenarios.store import atomic_write_text, storage_error

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, "create", path.parent) from None
    atomic_write_text(path, text)
