"""Loading a scenario: a mapping or a TOML file to a validated, resolved :class:`ScenarioConfig`.

The two steps are :func:`scenarios.config.scenario.build_scenario` and
:meth:`ScenarioConfig.validate`; a ``privacy.target_epsilon`` is resolved in between
(:func:`scenarios.config.targets.resolve_privacy_target`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from scenarios.config.scenario import ScenarioConfig, build_scenario

__all__ = ["load_scenario", "scenario_from_dict", "build_scenario_file"]


def scenario_from_dict(data: dict, overrides: dict | None = None, *, resolve: bool = True) -> ScenarioConfig:
    """Build and validate a :class:`ScenarioConfig` from a mapping (e.g. parsed TOML).

    With ``resolve`` a ``privacy.target_epsilon`` is calibrated into the scheme's noise key
    (:func:`scenarios.config.targets.resolve_privacy_target`, model §10).
    """
    config = build_scenario(data, overrides)
    if resolve and config.privacy.target_epsilon is not None:
        from scenarios.config.targets import resolve_privacy_target

        return resolve_privacy_target(config)
    return config.validate()


def load_scenario(path: str | Path, overrides: dict | None = None) -> ScenarioConfig:
    """Read a scenario TOML file, apply dotted ``overrides``, validate, and return it."""
    path = Path(path)
    data = _read_toml(path)
    try:
        return scenario_from_dict(data, overrides)
    except ValueError as exc:  # keeps the subclass (e.g. calibration.InfeasibleTarget) for sweeps to record
        raise type(exc)(f"{path.name}: {exc}") from None


def build_scenario_file(path: str | Path, overrides: dict | None = None) -> ScenarioConfig:
    """The scenario file with ``overrides`` applied, built but neither resolved nor validated (what
    :func:`load_scenario` calibrates: :func:`scenarios.config.targets.calibration_request`)."""
    path = Path(path)
    data = _read_toml(path)
    try:
        return build_scenario(data, overrides)
    except ValueError as exc:
        raise type(exc)(f"{path.name}: {exc}") from None


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"scenario file {path} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"scenario file {path} is a directory; give a TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"scenario file {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"scenario file {path} is not valid TOML: {exc}") from None
    return data
