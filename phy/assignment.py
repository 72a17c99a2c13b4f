"""Keyed random-permutation assignment of sequences to clients (model §4; source §V-D).

All scheduled clients share a secret key (≥ 128 bits) that the base station does not know.
In round t every client derives

    seed_t = HMAC-SHA256(key, DOMAIN_TAG ‖ t)          (t as 8 bytes, big-endian)

and from the 256-bit seed_t a uniform permutation π_t of the N sequence indices, using
numpy's counter-based Philox generator keyed by all 256 bits (the first 128 bits as the
Philox key, the last 128 bits as the initial counter) and Fisher–Yates shuffling
(``Generator.permutation``). Client k, given the distinct index ι_k ∈ {0..K−1} by the base
station, uses sequence π_t(ι_k) (0-based column of A). The active set S_t = π_t({0..K−1}) is a
uniformly random K-subset of the N indices, fresh every round, and no two clients collide.

This module is the *client side*. The base-station receiver (:mod:`phy.receiver`) never
receives the key or π_t.

Simulation key: :func:`simulation_key` derives a key from a *public* constant and a seed so
that simulation runs are reproducible. Such a key is not secret (anyone who knows the seed
can recompute it); it exists only so Monte-Carlo results can be rerun. It is the one
derivation from a seed used by every command (train, sweep, link, audit).

Key identifier: :func:`key_identifier` is HMAC-SHA256(key, fixed public label), truncated to
64 bits. Results record it (never the key) so runs made with the same key can be matched;
without the key it reveals nothing about it (HMAC is a PRF).
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np

__all__ = [
    "DOMAIN_TAG",
    "MIN_KEY_BYTES",
    "check_key",
    "key_from_hex",
    "simulation_key",
    "key_identifier",
    "round_seed",
    "round_permutation",
    "KeyedAssignment",
]

DOMAIN_TAG = b"floras-sim/keyed-permutation/v1"
MIN_KEY_BYTES = 16  # 128 bits, model §4
_SIMULATION_KEY_TAG = b"floras-sim/simulation-only-key/v1 (public constant: NOT a secret)"
_KEY_ID_LABEL = b"floras-sim/key-identifier/v1"


def check_key(key: bytes) -> bytes:
    """Validate the shared secret: bytes of length ≥ 16 (128 bits)."""
    if not isinstance(key, (bytes, bytearray)):
        raise ValueError(f"key must be bytes of length ≥ {MIN_KEY_BYTES} (got {type(key).__name__})")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key must be at least {MIN_KEY_BYTES} bytes (128 bits) long (got {len(key)} bytes)")
    return bytes(key)


def describe_key_text(text) -> str:
    """What may be said of a rejected key: its length and character classes, never its characters."""
    if not isinstance(text, str):
        return f"got a {type(text).__name__}, not a string"
    n = len(text)
    hexd = sum(c in "0123456789abcdefABCDEF" for c in text)
    space = sum(c.isspace() for c in text)
    other = n - hexd - space
    parts = [f"{n} character{'s' if n != 1 else ''}", f"{hexd} hex digit{'s' if hexd != 1 else ''}"]
    if space:
        parts.append(f"{space} whitespace")
    if other:
        parts.append(f"{other} other (not 0-9, a-f, A-F)")
    return "got " + ", ".join(parts)


def key_from_hex(text: str) -> bytes:
    """Parse a hexadecimal key (≥ 32 hex digits, i.e. ≥ 16 bytes).

    A rejected key is described by :func:`describe_key_text` (length, character classes) and
    never echoed: an almost-right key is almost the key.
    """
    try:
        key = bytes.fromhex(text)
    except (ValueError, TypeError):
        raise ValueError(f"key-hex must be an even number of hexadecimal digits, at least {2 * MIN_KEY_BYTES} "
                         f"({describe_key_text(text)})") from None
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"key-hex must be at least {2 * MIN_KEY_BYTES} hex digits ({MIN_KEY_BYTES} bytes) "
                         f"({describe_key_text(text)})")
    return key


def simulation_key(seed: int) -> bytes:
    """Reproducible, NOT secret, 32-byte key for simulations: SHA-256(public tag ‖ seed)."""
    return hashlib.sha256(_SIMULATION_KEY_TAG + int(seed).to_bytes(8, "big")).digest()


def key_identifier(key: bytes) -> str:
    """16 hex digits: HMAC-SHA256(key, fixed label)[:8 bytes]. Safe to store; reveals nothing of the key."""
    return hmac.new(check_key(key), _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]


def _check_round(round_index: int) -> int:
    if isinstance(round_index, bool) or not isinstance(round_index, (int, np.integer)) or not 0 <= round_index < 2**64:
        raise ValueError(f"round_index must be an integer in [0, 2**64) (got {round_index!r})")
    return int(round_index)


def round_seed(key: bytes, round_index: int) -> bytes:
    """seed_t = HMAC-SHA256(key, DOMAIN_TAG ‖ t): 32 bytes (model §4)."""
    key = check_key(key)
    t = _check_round(round_index)
    return hmac.new(key, DOMAIN_TAG + t.to_bytes(8, "big"), hashlib.sha256).digest()


def round_permutation(key: bytes, round_index: int, *, N: int) -> np.ndarray:
    """π_t: a uniform permutation of {0..N−1} (int64 [N]) derived from seed_t.

    Philox is keyed with the first 128 bits of seed_t and starts from the counter given by the
    last 128 bits, so every bit of the seed selects the stream.
    """
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"N must be an integer ≥ 1 (got {N!r})")
    seed = round_seed(key, round_index)
    bitgen = np.random.Philox(key=int.from_bytes(seed[:16], "little"), counter=int.from_bytes(seed[16:], "little"))
    return np.random.Generator(bitgen).permutation(int(N))


class KeyedAssignment:
    """The clients' shared assignment state (client side only).

    Parameters
    ----------
    key : bytes, ≥ 16 bytes
        Shared secret of the scheduled clients.
    N : int
        Number of sequences in the set.
    """

    def __init__(self, key: bytes, *, N: int):
        self._key = check_key(key)
        if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
            raise ValueError(f"N must be an integer ≥ 1 (got {N!r})")
        self.N = int(N)

    def permutation(self, round_index: int) -> np.ndarray:
        """π_t as int64 [N]."""
        return round_permutation(self._key, round_index, N=self.N)

    def sequence_index(self, client_index: int, round_index: int) -> int:
        """Column π_t(ι_k) of A used by the client with base-station index ι_k = ``client_index``."""
        if not 0 <= int(client_index) < self.N:
            raise ValueError(f"client_index must be in [0, N = {self.N}) (got {client_index})")
        return int(self.permutation(round_index)[int(client_index)])

    def active_set(self, round_index: int, *, K: int) -> np.ndarray:
        """Sequence indices of clients ι = 0..K−1 (int64 [K], distinct): S_t = π_t({0..K−1})."""
        if not 1 <= int(K) <= self.N:
            raise ValueError(f"K must be in [1, N = {self.N}] (got {K})")
        return self.permutation(round_index)[: int(K)]

    def __repr__(self) -> str:  # never print the key
        return f"KeyedAssignment(N={self.N}, key=<{len(self._key)} bytes hidden>)"
