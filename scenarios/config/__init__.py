"""Configuration of a run: scenario tables (:mod:`.tables`), the scenario and its checks
(:mod:`.scenario`), loading (:mod:`.loading`), calibration of a target ε (:mod:`.calibration`,
:mod:`.targets`), each scheme's wiring row and accountant (:mod:`.schemes`, :mod:`.builtin_schemes`), the memory estimate
(:mod:`.resources`) and the FLORAS key's source (:mod:`.keys`).

The names below are importable from ``scenarios.config`` directly.
"""

from scenarios.config.loading import load_scenario, scenario_from_dict
from scenarios.config.scenario import ScenarioConfig, apply_overrides, did_you_mean
from scenarios.config.tables import (
    ACCOUNTANTS,
    DATASETS,
    EVALUATION_SETS,
    LEVELS,
    MODELS,
    PARTITIONS,
    PLACEMENTS,
    RELATIONS,
    TABLES,
    DataConfig,
    ModelConfig,
    PartitionConfig,
    PrivacyConfig,
    RunConfig,
    TrainingConfig,
)

__all__ = [
    "DataConfig",
    "PartitionConfig",
    "ModelConfig",
    "TrainingConfig",
    "PrivacyConfig",
    "RunConfig",
    "ScenarioConfig",
    "TABLES",
    "load_scenario",
    "scenario_from_dict",
    "apply_overrides",
    "did_you_mean",
    "ACCOUNTANTS",
    "DATASETS",
    "EVALUATION_SETS",
    "LEVELS",
    "MODELS",
    "PARTITIONS",
    "PLACEMENTS",
    "RELATIONS",
]
