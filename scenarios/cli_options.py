"""Command-line pieces shared by the physical-layer commands ``floras link`` and ``floras audit``.

Only argparse and the standard library are imported here: the commands' heavy imports stay
inside their ``run`` functions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile

__all__ = ["add_geometry_options", "add_key_and_json_options", "resolve_key", "write_json_atomic"]

SIMULATION_KEY_NOTE = "simulation-only, derived from --seed and a public constant (reproducible, NOT secret)"
USER_KEY_NOTE = "user-supplied (not stored)"


def add_geometry_options(p: argparse.ArgumentParser, *, N_help: str, d_default: int, d_help: str) -> None:
    """Add ``--K --N --L --d --snr-db`` (in this order) to ``p``; the commands differ in N's and d's text."""
    p.add_argument("--K", type=int, default=20, help="scheduled clients (≥ 1)")
    p.add_argument("--N", type=int, default=30, help=N_help)
    p.add_argument("--L", type=int, default=32, help="chips per sequence")
    p.add_argument("--d", type=int, default=d_default, help=d_help)
    p.add_argument("--snr-db", type=float, default=20.0, help="SNR = P/sigma^2 in dB (finite)")


def add_key_and_json_options(p: argparse.ArgumentParser, *, json_help: str) -> None:
    """Add ``--key-hex`` and ``--json FILE`` (stored as ``json_path``) to ``p``."""
    p.add_argument("--key-hex", default=None, help="clients' permutation key, ≥ 32 hex digits (default: simulation-only key)")
    p.add_argument("--json", dest="json_path", default=None, metavar="FILE", help=json_help)


def resolve_key(key_hex: str | None, seed: int) -> tuple[bytes, str]:
    """The clients' permutation key and a note on its origin (the key itself is never stored).

    ``key_hex`` (≥ 32 hex digits) if given, else the simulation-only key derived from ``seed``
    and a public constant (:func:`phy.assignment.simulation_key`).
    """
    from phy.assignment import key_from_hex, simulation_key

    if key_hex is not None:
        return key_from_hex(key_hex), USER_KEY_NOTE
    return simulation_key(seed), SIMULATION_KEY_NOTE


def _finite_or_none(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_or_none(v) for v in obj]
    return obj


def write_json_atomic(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``.

    Non-finite floats (NaN, ±∞) are written as ``null``.
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".link-", suffix=".json.tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(_finite_or_none(data), fh, indent=2, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
