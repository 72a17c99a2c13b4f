"""Sensitivity of the FLORAS release from the normalization (model §2, §7.2): one function.

Units: the release is ŝ/b = Σ_k s_k/b + e with b = √P the reference amplitude, ‖s_k‖₂ ≤ C.

- ``replace`` (one record, or one client's whole data, replaced): s_k can move anywhere in the
  ball of radius C, so ‖Δ(Σ s_k)‖₂ ≤ 2C and S = 2C/b.
- ``add-remove`` at client level (one client present or absent): S = C/b.
- ``add-remove`` at item level (one record added to or removed from a client's data): the client
  still transmits, its s_k moves within the ball: S = 2C/b.

Both normalizations give ‖s_k‖₂ ≤ C; the clip norm R changes the model-unit scale, not S. The
caveats each normalization carries (model §2) are returned with the number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["NORMALIZATIONS", "RELATIONS", "LEVELS", "Sensitivity", "release_sensitivity"]

NORMALIZATIONS = ("paper", "clip")
RELATIONS = ("replace", "add-remove")
LEVELS = ("client", "item")


@dataclass(frozen=True)
class Sensitivity:
    """S (dimensionless), how it was obtained, and the normalization caveats (model §2, §7.4)."""

    value: float
    C: float
    b: float
    derivation: str
    caveats: tuple[str, ...]


def _positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")
    return float(value)


def release_sensitivity(
    *,
    normalization: str,
    d: int,
    relation: str,
    level: str,
    C: float | None = None,
    power: float = 1.0,
    clip_norm: float | None = None,
) -> Sensitivity:
    """ℓ2 sensitivity S of Σ_k s_k/b under ``relation`` at ``level`` (model §7.2).

    C = None means √(d·P) (every client at full average power, model §2); b = √P.
    S = 2C/b, except client-level add/remove where S = C/b.
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {{{', '.join(NORMALIZATIONS)}}} (got {normalization!r})")
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {{{', '.join(RELATIONS)}}} (got {relation!r})")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {{{', '.join(LEVELS)}}} (got {level!r})")
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d must be an integer ≥ 1 (got {d!r})")
    P = _positive("power", power)
    if C is None:
        C_val, c_how = math.sqrt(d * P), f"C = √(d·P) = √({d}·{P:g}) = {math.sqrt(d * P):.6g} (full average power)"
    else:
        C_val = _positive("C", C)
        c_how = f"C = {C_val:.6g} (configured)"
    if normalization == "clip":
        _positive("clip_norm", clip_norm)
    b = math.sqrt(P)
    if relation == "add-remove" and level == "client":
        S, rule = C_val / b, "S = C/b (one client's s_k present or absent, ‖s_k‖₂ ≤ C)"
    elif relation == "add-remove":
        S, rule = 2.0 * C_val / b, "S = 2C/b (one record added/removed moves that client's s_k within the ball ‖s‖₂ ≤ C)"
    else:
        S, rule = 2.0 * C_val / b, f"S = 2C/b (one {'record' if level == 'item' else 'client'}'s data replaced: s_k moves within the ball ‖s‖₂ ≤ C)"
    derivation = f"{rule}; {c_how}; b = √P = {b:.6g}; S = {S:.6g} (model §7.2)"
    caveats = [
        "μ_k (each client's mean update) travels on the error-free control channel and is released unprotected (model §2)"
    ]
    if normalization == "paper":
        caveats.insert(
            0,
            "paper normalization: C_max = max_k ‖x_k − μ_k·1‖₂ depends on every scheduled client's data; "
            "S holds only if C_max is treated as public (model §2)",
        )
    else:
        caveats.insert(0, f"clip normalization with public clip norm R = {float(clip_norm):.6g}: ‖s_k‖₂ ≤ C by construction")
    return Sensitivity(value=S, C=C_val, b=b, derivation=derivation, caveats=tuple(caveats))
