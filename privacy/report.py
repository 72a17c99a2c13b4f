"""Privacy reports (model §7.4) and the shared input checks of the run accountants.

:class:`PrivacyReport` is what every run accountant returns: ε with every assumption (threat
model, neighbouring relation, sensitivity and how obtained, sampling, normalization caveats, δ,
order α, accountant), whether the figure is an approximation (GDP's central-limit formulas), and
for FLORAS the link-level figure next to the idealised one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SAMPLINGS", "THREAT_MODEL_T1", "ACCOUNTANT_NAME", "CONVERSION_TEXT", "PrivacyReport"]

SAMPLINGS = ("without-replacement", "poisson")
THREAT_MODEL_T1 = (
    "T1 (output observer): the adversary sees only the server's per-round estimates ŝ_t / the global "
    "models; this bound says nothing about T2 (a base station that keeps the raw received signals, model §7.1)"
)
ACCOUNTANT_NAME = "rdp"
CONVERSION_TEXT = {
    "standard": "standard conversion ε = RDP(α) + ln(1/δ)/(α−1) (Mironov 2017, arXiv:1702.07476, Prop. 3)",
    "tight": (
        "tight conversion ε = RDP(α) + ln(1−1/α) − (ln δ + ln α)/(α−1) (Canonne–Kamath–Steinke 2020, "
        "arXiv:2004.00010, Prop. 12; Balle et al. 2020, arXiv:1905.09982, Thm 21)"
    ),
}


def _fmt(x: float) -> str:
    return "∞" if x == math.inf else f"{x:.6g}"


@dataclass(frozen=True)
class PrivacyReport:
    """ε after some rounds, with every assumption of model §7.4.

    Attributes
    ----------
    epsilon : float (math.inf allowed)
    delta : float
    best_order : float or None
        The Rényi order α where ε was attained (None when ε = ∞ or ε = 0 at no cost).
    sensitivity : float
        S, dimensionless (ℓ2 sensitivity of Σ_k s_k/b).
    threat_model : str
        "T1".
    assumptions : list[str]
        Every assumption, one sentence each (threat model, relation, S and how, sampling,
        normalization caveats, δ, α, accountant, conversion).
    warnings : list[str]
        Grid-edge and divergence warnings.
    """

    epsilon: float
    delta: float
    best_order: float | None
    sensitivity: float
    threat_model: str
    assumptions: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    rounds: int = 0
    conversion: str = "tight"
    relation: str = "replace"
    level: str = "client"
    gamma: float = 0.0
    accountant: str = ACCOUNTANT_NAME
    approximate: bool = False
    epsilon_link: float | None = None
    link: dict | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict; ε = ∞ is the string "inf"."""
        return {
            "epsilon": "inf" if self.epsilon == math.inf else float(self.epsilon),
            "delta": float(self.delta),
            "best_order": None if self.best_order is None else float(self.best_order),
            "sensitivity": float(self.sensitivity),
            "threat_model": self.threat_model,
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "rounds": int(self.rounds),
            "conversion": self.conversion,
            "relation": self.relation,
            "level": self.level,
            "gamma": float(self.gamma),
            "accountant": self.accountant,
            "approximate": bool(self.approximate),
            "epsilon_link": None if self.epsilon_link is None else ("inf" if self.epsilon_link == math.inf else float(self.epsilon_link)),
            **({"link": self.link} if self.link is not None else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def __str__(self) -> str:
        alpha = "—" if self.best_order is None else f"{self.best_order:.6g}"
        lines = [
            f"ε = {_fmt(self.epsilon)} at δ = {self.delta:g} after {self.rounds} round(s) "
            f"({self.level}-level, {self.relation}, threat model {self.threat_model}, best order α = {alpha})"
            + (" [APPROXIMATE: central-limit theorem, not a guaranteed bound]" if self.approximate else ""),
        ]
        if self.epsilon_link is not None:
            lines.append(f"ε_link = {_fmt(self.epsilon_link)} at δ = {self.delta:g}: the simulated link at finite SNR "
                         "(active-client factors truncated, see the link assumptions)")
        lines.append("assumptions:")
        lines += [f"  - {a}" for a in self.assumptions]
        if self.warnings:
            lines.append("warnings:")
            lines += [f"  ! {w}" for w in self.warnings]
        return "\n".join(lines)


def _int_at_least(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low} (got {value!r})")
    return int(value)


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {{{', '.join(allowed)}}} (got {value!r})")




int_at_least = _int_at_least
choice = _choice
fmt = _fmt
