"""Calibrations kept on disk between commands (model §10): ``floras tune`` then ``floras matched`` calibrate once.

A calibration is a pure function of its request (the scenario less the keys that cannot change ε, and the target ε;
:mod:`scenarios.config.targets`) and of the code that computes it. Each answer — a :class:`Calibration` with its
assumption lines, or the :class:`InfeasibleTarget` that says the target cannot be met — is written to one JSON file
whose name is the SHA-256 of the request and of a fingerprint of that code: the sources of ``privacy``, ``phy``,
``fl`` and ``scenarios/config``, and the versions of Python, numpy, scipy and dp-accounting. Any change to them
gives other names, so a stored answer is never read by code that could compute another (old files are simply not
read again; delete the directory to reclaim them). A calibration that crashed its workers is not stored.

Where: ``FLORAS_CALIBRATION_CACHE`` (a directory; ``off`` turns the store off), else
``$XDG_CACHE_HOME/floras-sim/calibrations``, else ``~/.cache/floras-sim/calibrations``. The test suite runs with it
off (tests/conftest.py) so that no test reads an answer another process stored.

Safety: a file is written to a temporary name in the same directory and renamed over the final one, so a reader sees
a whole file or none; two processes that store the same request write the same content. A file that cannot be read,
parsed or matched to its request (truncated, edited, another format) is ignored with one warning and recomputed;
a directory that cannot be written costs the store, never the run (one warning). Nothing secret is written: a
calibration holds the scheme's public noise parameter and its ε.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "code_fingerprint", "load", "save", "ENV"]

ENV = "FLORAS_CALIBRATION_CACHE"
FORMAT = 1
_PACKAGES = ("privacy", "phy", "fl", "scenarios/config")
_warned: set[tuple[str, str]] = set()


def cache_dir() -> Path | None:
    """The store's directory, or None when it is off (module text)."""
    value = os.environ.get(ENV)
    if value is not None:
        value = value.strip()
        if value.lower() in ("", "off", "0", "no", "false"):
            return None
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "floras-sim" / "calibrations"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over the calibration code's sources (path and bytes of every ``.py`` file of ``_PACKAGES``, in sorted
    order) and the numeric libraries' versions."""
    from importlib import metadata

    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    versions = [sys.version.split()[0]]
    for dist in ("numpy", "scipy", "dp-accounting"):
        try:
            versions.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist}=absent")
    h.update("|".join(versions).encode())
    return h.hexdigest()


def stored_text(path: Path | None, warn) -> str | None:
    """The text of a store's file, or None: no store (``path`` None), no file, or unreadable (``warn(key, what)``)."""
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        warn(f"read:{path}", f"cannot read {path} ({exc})")
        return None


def hashed_name(fmt: str, *parts: str) -> str:
    """``<SHA-256 of the store's format, the code fingerprint and the parts>.json``: a store's file name."""
    h = hashlib.sha256()
    for part in (fmt, code_fingerprint(), *parts):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest() + ".json"


def warn_once(store: str, key: str, text: str) -> None:
    """``<store>: text`` on standard error, once per process and key."""
    if (store, key) not in _warned:
        _warned.add((store, key))
        print(f"{store}: {text}", file=sys.stderr, flush=True)


def _name(request: tuple[str, float]) -> str:
    return hashed_name(str(FORMAT), request[0], repr(float(request[1])))


def _warn(key: str, text: str) -> None:
    warn_once("calibration store", key, text)


def _answer_to_json(answer) -> dict:
    from scenarios.config.calibration import Calibration, InfeasibleTarget

    if isinstance(answer, Calibration):
        return {"kind": "calibration", **answer.to_dict()}
    if isinstance(answer, InfeasibleTarget):
        return {"kind": "infeasible", "message": str(answer)}
    raise TypeError(f"only a Calibration or an InfeasibleTarget is stored (got {type(answer).__name__})")


def _answer_from_json(data: dict):
    from scenarios.config.calibration import Calibration, InfeasibleTarget

    def num(x):
        return float("inf") if x == "inf" else x

    if data["kind"] == "infeasible":
        return InfeasibleTarget(str(data["message"]))
    if data["kind"] != "calibration":
        raise ValueError(f"unknown kind {data['kind']!r}")
    fields = ("scheme", "parameter", "value", "target_epsilon", "achieved_epsilon", "accountant", "threat_model",
              "delta", "rounds")
    return Calibration(**{k: num(data[k]) for k in fields}, noise_multiplier=num(data.get("noise_multiplier")),
                       assumptions=tuple(str(a) for a in data.get("assumptions", ())))


def load(request: tuple[str, float]):
    """The stored answer to ``request`` (a Calibration or an InfeasibleTarget), or None: not stored, store off, or a
    file that does not hold this request's answer (warned once, then recomputed and overwritten)."""
    where = cache_dir()
    path = None if where is None else where / _name(request)
    text = stored_text(path, lambda key, what: _warn(key, what + "; calibrating instead"))
    if text is None:
        return None
    try:
        data = json.loads(text)
        if (data.get("format") != FORMAT or data.get("fingerprint") != code_fingerprint()
                or data.get("request") != [request[0], float(request[1])]):
            raise ValueError("it holds another request")
        return _answer_from_json(data["answer"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        _warn(f"parse:{path}", f"ignoring {path}: not a stored calibration of this request ({exc}); calibrating "
                               "instead")
        return None


def save(request: tuple[str, float], answer) -> Path | None:
    """Store ``answer`` for ``request`` atomically (module text); returns the file, or None when the store is off or
    cannot be written (warned once)."""
    where = cache_dir()
    if where is None:
        return None
    record = {"format": FORMAT, "fingerprint": code_fingerprint(), "request": [request[0], float(request[1])],
              "answer": _answer_to_json(answer)}
    path, tmp = where / _name(request), None
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=where, prefix=".tmp-", suffix=".json", delete=False,
                                         encoding="utf-8") as fh:
            json.dump(record, fh, sort_keys=True)
            tmp = fh.name
        os.replace(tmp, path)
    except OSError as exc:
        _warn(f"write:{where}", f"cannot write to {where} ({exc}); calibrations are not kept between commands")
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return None
    return path
