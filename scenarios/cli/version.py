"""The package version, in one place: the installed distribution's metadata (``floras-sim``).

In a source checkout that is not installed, the version is read from ``pyproject.toml`` beside the
packages, so ``pyproject.toml`` stays the only place the version is written.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

DISTRIBUTION = "floras-sim"


def _from_pyproject() -> str:
    import tomllib

    path = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        with path.open("rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0+unknown"


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _from_pyproject()


__version__ = _version()
