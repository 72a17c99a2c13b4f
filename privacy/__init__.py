"""Privacy accounting for FLORAS under threat model T1 (SPEC §7). Never imports TensorFlow.

Layers: :mod:`privacy.events` (frozen descriptions of mechanisms), :mod:`privacy.rdp` (pure RDP
mathematics: Cauchy bound, exact scalar Cauchy, Gaussian, sampling bounds, conversions),
:mod:`privacy.accountant` (:class:`RdpAccountant`, composition), :mod:`privacy.sensitivity`
(S from the normalization), :mod:`privacy.run` (:class:`FlorasRunAccountant`, reports, planning).
"""

from privacy.accountant import RdpAccountant, event_rdp
from privacy.events import (
    CauchyRound,
    Composed,
    GaussianRound,
    PoissonSampled,
    PrivacyEvent,
    SampledWithoutReplacement,
    SelfComposed,
)
from privacy.rdp import DEFAULT_ORDERS
from privacy.run import FlorasRunAccountant, PlanResult, PrivacyReport, largest_sensitivity, plan_smallest_N
from privacy.sensitivity import Sensitivity, release_sensitivity

__all__ = [
    "CauchyRound",
    "Composed",
    "DEFAULT_ORDERS",
    "FlorasRunAccountant",
    "GaussianRound",
    "PlanResult",
    "PoissonSampled",
    "PrivacyEvent",
    "PrivacyReport",
    "RdpAccountant",
    "SampledWithoutReplacement",
    "SelfComposed",
    "Sensitivity",
    "event_rdp",
    "largest_sensitivity",
    "plan_smallest_N",
    "release_sensitivity",
]
