"""Monte Carlo laws kept on disk between processes (model §5.1, "FLORAS's ε with offsets"): a law drawn once is read
by every later run of the same link instead of being drawn again (2·10⁸ rounds: minutes per process).

A stored law is what the Monte Carlo returned — its exceedance counts at its thresholds — for one request (a JSON
object naming the link and the number of draws; :func:`scenarios.config.floras_timing.timing_law`), computed by one
version of the code. The file's name is the SHA-256 of the request and of the calibration store's code fingerprint
(:func:`scenarios.store.calibrations.code_fingerprint`: the sources of ``privacy``, ``phy``, ``fl`` and
``scenarios/config`` and the numeric libraries' versions), so a change to the code that draws the law gives other
names and the law is drawn again. A file is checked against its request and its thresholds before use.

Where: the directory ``laws`` inside the calibration store's (:func:`scenarios.store.calibrations.cache_dir`; off when
that store is off, as in the test suite). Safety as for calibrations: written to a temporary name in the same
directory and renamed over the final one, so a reader sees a whole file or none; two processes that draw the same law
write the same content. A file that cannot be read or does not match is ignored with one warning and the law is
drawn again; a directory that cannot be written costs the store, never the run. Nothing secret is written: the law
of the loss depends on the public link parameters and fixed Monte Carlo streams, not on the permutation key.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .calibrations import cache_dir as _calibration_dir
from .calibrations import code_fingerprint, hashed_name, stored_text, warn_once

__all__ = ["laws_dir", "load_counts", "save_counts"]

FORMAT = 1


def laws_dir() -> Path | None:
    """The store's directory, or None when it is off (module text)."""
    base = _calibration_dir()
    return None if base is None else base / "laws"


def _request_text(request: dict) -> str:
    return json.dumps(request, sort_keys=True, separators=(",", ":"))


def _name(request: dict) -> str:
    return hashed_name(str(FORMAT), _request_text(request))


def _warn(key: str, text: str) -> None:
    warn_once("law store", key, text)


def load_counts(request: dict, thresholds: np.ndarray) -> np.ndarray | None:
    """The stored exceedance counts of ``request`` at ``thresholds`` (int64), or None: not stored, store off, or a
    file that does not hold them (warned once, then drawn again and overwritten)."""
    where = laws_dir()
    path = None if where is None else where / _name(request)
    text = stored_text(path, lambda key, what: _warn(key, what + "; drawing the law instead"))
    if text is None:
        return None
    try:
        data = json.loads(text)
        if (data.get("format") != FORMAT or data.get("fingerprint") != code_fingerprint()
                or data.get("request") != json.loads(_request_text(request))):
            raise ValueError("it holds another request")
        stored = np.asarray(data["thresholds"], dtype=np.float64)
        counts = np.asarray(data["counts"], dtype=np.int64)
        if stored.shape != np.shape(thresholds) or not np.array_equal(stored, thresholds) or counts.shape != stored.shape:
            raise ValueError("its thresholds are not this law's")
        if np.any(counts < 0) or np.any(np.diff(counts) > 0) or counts[0] > int(request["draws"]):
            raise ValueError("its counts are not exceedance counts of this many draws")
        return counts
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        _warn(f"parse:{path}", f"ignoring {path}: not a stored law of this request ({exc}); drawing it instead")
        return None


def save_counts(request: dict, thresholds: np.ndarray, counts: np.ndarray) -> Path | None:
    """Store the counts of ``request`` atomically (module text); returns the file, or None when the store is off or
    cannot be written (warned once)."""
    where = laws_dir()
    if where is None:
        return None
    record = {"format": FORMAT, "fingerprint": code_fingerprint(), "request": json.loads(_request_text(request)),
              "thresholds": [float(t) for t in thresholds], "counts": [int(c) for c in counts]}
    from scenarios.errors import StorageError

    from .files import atomic_write_text

    try:
        where.mkdir(parents=True, exist_ok=True)
        return atomic_write_text(where / _name(request), json.dumps(record, sort_keys=True))
    except (OSError, StorageError) as exc:
        _warn(f"write:{where}", f"cannot write to {where} ({exc}); laws are not kept between processes")
        return None
