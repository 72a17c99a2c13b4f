"""Every command module of ``floras`` is imported; one that fails to import is an error, never a dropped command."""

from __future__ import annotations

import importlib
import sys

import pytest

from scenarios.cli import main as cli_main  # the entry point ``scenarios.cli:main``
from scenarios.cli.main import COMMAND_MODULES, build_parser

MAIN_MODULE = importlib.import_module("scenarios.cli.main")  # the module (``scenarios.cli.main`` the attribute is the function)


def test_every_command_module_registers():
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # noqa: SLF001 - argparse keeps them here
    assert len(choices) == len(COMMAND_MODULES)


@pytest.mark.parametrize("source", [None, "import floras_dependency_that_is_not_installed\n", "raise ImportError('broken')\n"])
def test_a_command_module_that_fails_to_import_is_an_error(tmp_path, monkeypatch, capsys, source):
    name = "floras_broken_command"
    if source is not None:
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(MAIN_MODULE, "COMMAND_MODULES", (*COMMAND_MODULES, name))
    with pytest.raises(ImportError, match=name):
        build_parser()
    assert cli_main(["--help"]) == 1  # the one error path: one line naming the module, no traceback
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0] and err[0].startswith("floras: error:")


def test_building_the_command_line_imports_no_heavy_library():
    """`floras --help`, `--version` and every command's --help stay fast: building the parser imports neither
    numpy, scipy, TensorFlow, Sionna, matplotlib nor dask (a scheme or mechanism is looked up when a command runs)."""
    import subprocess

    code = ("import sys; from scenarios.cli.main import build_parser; build_parser(); "
            "print(','.join(m for m in ('numpy', 'scipy', 'tensorflow', 'sionna', 'matplotlib', 'dask') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"building the parser imported {out}"
