"""Privacy accounting for FLORAS under threat model T1 (model §7). Never imports TensorFlow.

Layers: :mod:`privacy.events` (frozen descriptions of mechanisms), :mod:`privacy.rdp` (pure RDP
mathematics: Cauchy bound, exact scalar Cauchy, Gaussian, sampling bounds, conversions),
:mod:`privacy.accountant` (:class:`RdpAccountant`, composition), :mod:`privacy.sensitivity`
(S from the normalization), :mod:`privacy.run` (:class:`FlorasRunAccountant`),
:mod:`privacy.run_accountant` (:class:`RunAccountant`, any registered mechanism of :mod:`privacy.mechanisms`), :mod:`privacy.engines`
(accountants rdp, rdp-generic, pld, gdp), :mod:`privacy.sampled_gaussian`, :mod:`privacy.floras_tight`
(model §9.5), :mod:`privacy.pld`, :mod:`privacy.gdp`, :mod:`privacy.ddgauss`,
:mod:`privacy.randomized_response`, :mod:`privacy.calibration`, :mod:`privacy.planning`,
:mod:`privacy.report` and :mod:`privacy.link` (link-level ε at finite SNR).
"""

from privacy.accountant import RdpAccountant, event_rdp
from privacy.calibration import calibrate, smallest_noise_multiplier
from privacy.engines import ACCOUNTANTS
from privacy.events import (
    CauchyRound,
    Composed,
    DDGaussRound,
    GaussianRound,
    RandomizedResponseRound,
    PoissonSampled,
    PrivacyEvent,
    SampledWithoutReplacement,
    SelfComposed,
)
from privacy.rdp import DEFAULT_ORDERS
from privacy.planning import PlanResult, largest_sensitivity, plan_smallest_N
from privacy.report import PrivacyReport
from privacy.run import FlorasRunAccountant
from privacy.mechanisms import mechanism, mechanism_names, register_mechanism
from privacy.run_accountant import RunAccountant
from privacy.sensitivity import Sensitivity, release_sensitivity

__all__ = [
    "ACCOUNTANTS",
    "DDGaussRound",
    "RandomizedResponseRound",
    "RunAccountant",
    "mechanism",
    "mechanism_names",
    "register_mechanism",
    "calibrate",
    "smallest_noise_multiplier",
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
