"""Where the clients' permutation key comes from, and what of it may be stored (model §4).

The key is the clients' secret; the base station, and so anything in a results directory,
must not reveal it. Stored records therefore carry only the key's *source* and its
*identifier* (:func:`phy.assignment.key_identifier`, an HMAC of a fixed label), never the key.

Sources, first match wins:

1. the command line (``--key-file FILE`` or ``--key-hex HEX``);
2. the environment: ``FLORAS_KEY_FILE`` (a file) or ``FLORAS_KEY_HEX`` (hex digits);
3. the scenario's ``run.key_hex``;
4. otherwise the simulation-only key derived from the seed (:func:`phy.assignment.simulation_key`;
   reproducible and NOT secret), with a warning printed once per process.

A key file holds the key as hexadecimal digits (whitespace ignored); it must not be readable
or writable by group or others (``chmod 600``), otherwise it is refused.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

__all__ = [
    "KEY_HEX_ENV", "KEY_FILE_ENV", "USER_SUPPLIED", "SEED_DERIVED", "ResolvedKey", "resolve_key",
    "read_key_file", "warn_simulation_key", "redact_overrides", "REDACTED",
]

KEY_HEX_ENV = "FLORAS_KEY_HEX"
KEY_FILE_ENV = "FLORAS_KEY_FILE"
USER_SUPPLIED = "user-supplied"
SEED_DERIVED = "derived-from-seed (simulation only)"
REDACTED = "<redacted>"
_WARNED_ENV = "FLORAS_SIMULATION_KEY_WARNED"
_warned = False


@dataclass(frozen=True)
class ResolvedKey:
    """A key and what may be said about it. ``key`` never appears in ``repr`` or :meth:`record`."""

    key: bytes = field(repr=False)
    source: str
    origin: str

    @property
    def key_id(self) -> str:
        from phy.assignment import key_identifier

        return key_identifier(self.key)

    @property
    def simulated(self) -> bool:
        return self.source == SEED_DERIVED

    def record(self) -> dict:
        """What a results file stores: ``{"source", "origin", "id"}``."""
        return {"source": self.source, "origin": self.origin, "id": self.key_id}

    def note(self) -> str:
        """One line for reports: source, origin and identifier."""
        text = f"{self.source} ({self.origin}), key id {self.key_id}"
        if self.simulated:
            text += ": reproducible from the seed and a public constant, NOT secret"
        return text


def read_key_file(path: str | os.PathLike) -> bytes:
    """The key in ``path`` (hex digits); refused if group/others may read or write the file."""
    from phy.assignment import describe_key_text, key_from_hex

    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ValueError(f"key file {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"key file {path} must be a regular file")
    if st.st_mode & 0o077:
        raise ValueError(f"key file {path} is accessible by group or others (mode {stat.S_IMODE(st.st_mode):04o}); "
                         f"restrict it with chmod 600")
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"key file {path} cannot be read as hexadecimal text ({getattr(exc, 'strerror', None) or 'not ASCII'})") from None
    try:
        return key_from_hex("".join(text.split()))
    except ValueError:
        raise ValueError(f"key file {path} must hold at least 32 hexadecimal digits (≥ 128 bits), an even number "
                         f"of them ({describe_key_text(''.join(text.split()))})") from None


def _from_hex(text: str, origin: str) -> bytes:
    from phy.assignment import describe_key_text, key_from_hex

    try:
        return key_from_hex(text.strip())
    except ValueError:
        # the message must not echo the (possibly almost right) key: its length and characters only
        raise ValueError(f"{origin} must be at least 32 hex digits (≥ 128 bits), an even number of them "
                         f"({describe_key_text(text.strip())})") from None


def resolve_key(*, seed: int, key_hex: str | None = None, key_file: str | os.PathLike | None = None,
                scenario_key_hex: str | None = None, environ: Mapping[str, str] | None = None) -> ResolvedKey:
    """The key by the precedence in the module docstring (ValueError for a bad source)."""
    from phy.assignment import simulation_key

    env = os.environ if environ is None else environ
    if key_hex is not None and key_file is not None:
        raise ValueError("--key-hex and --key-file must not both be given: choose one key source "
                         "(--key-file keeps the key out of the process list)")
    if key_file is not None:
        return ResolvedKey(read_key_file(key_file), USER_SUPPLIED, "--key-file")
    if key_hex is not None:
        return ResolvedKey(_from_hex(key_hex, "key-hex"), USER_SUPPLIED, "--key-hex")
    if env.get(KEY_FILE_ENV):
        return ResolvedKey(read_key_file(env[KEY_FILE_ENV]), USER_SUPPLIED, f"environment {KEY_FILE_ENV}")
    if env.get(KEY_HEX_ENV):
        return ResolvedKey(_from_hex(env[KEY_HEX_ENV], KEY_HEX_ENV), USER_SUPPLIED, f"environment {KEY_HEX_ENV}")
    if scenario_key_hex is not None:
        return ResolvedKey(_from_hex(scenario_key_hex, "run.key_hex"), USER_SUPPLIED, "scenario run.key_hex")
    return ResolvedKey(simulation_key(int(seed)), SEED_DERIVED, "run seed")


def warn_simulation_key(what: str = "this run") -> None:
    """Print, once per process (and its child workers), that a seed-derived key is in use."""
    global _warned
    if _warned or os.environ.get(_WARNED_ENV):
        return
    _warned = True
    os.environ[_WARNED_ENV] = "1"
    print(f"floras: warning: {what} uses the simulation-only permutation key derived from the seed "
          f"(reproducible, NOT secret); for a secret one: --key-file, {KEY_FILE_ENV}, {KEY_HEX_ENV} or run.key_hex",
          file=sys.stderr)


def redact_overrides(overrides: Mapping) -> dict:
    """``overrides`` with a ``run.key_hex`` value replaced by its key identifier (safe to store)."""
    out = dict(overrides)
    if out.get("run.key_hex") is not None:
        try:
            from phy.assignment import key_identifier

            out["run.key_hex"] = f"{REDACTED} (key id {key_identifier(bytes.fromhex(str(out['run.key_hex'])))})"
        except ValueError:
            out["run.key_hex"] = REDACTED
    return out
