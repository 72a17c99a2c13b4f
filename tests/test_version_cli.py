"""``floras --version`` prints the version that pyproject.toml declares (read here independently)."""

from __future__ import annotations

import contextlib
import io
import tomllib
from pathlib import Path

import pytest

from scenarios.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]["version"]


def test_version_option_prints_the_pyproject_version():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0
    assert out.getvalue().strip() == f"floras {_pyproject_version()}"


def test_package_version_is_the_pyproject_version():
    from scenarios.cli.version import __version__, _from_pyproject

    assert __version__ == _pyproject_version()
    assert _from_pyproject() == _pyproject_version()
