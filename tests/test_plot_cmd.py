"""`floras plot DIR --by KEY`: one line per group, PNG and PDF written, from stored runs only."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from scenarios.cli.main import main  # noqa: E402
from scenarios.cli.plot import plot_by  # noqa: E402
from scenarios.experiments.sweep import load_sweep, run_sweep  # noqa: E402

from test_sweep import FakeRunner, _write, fake_loader  # noqa: E402  (tests/test_sweep.py)


@pytest.fixture
def sweep_dir(tmp_path):
    sweep = load_sweep(_write(tmp_path), quick=True)  # 2 schemes × 2 cases, seed 3
    out = tmp_path / "results" / "demo"
    run_sweep(sweep, out, runner=FakeRunner(), loader=fake_loader, progress=False, echo=None)
    return out


def test_plot_by_scheme_draws_one_line_per_group(sweep_dir):
    result = plot_by(sweep_dir, by="phy.scheme")
    assert sorted(result["groups"]) == ["channel-inversion", "floras"]
    assert result["lines"] == len(result["groups"]) == 2
    for path in result["paths"]:
        assert path.is_file() and path.stat().st_size > 0 and path.parent == sweep_dir.parent / "figures"
    assert {p.suffix for p in result["paths"]} == {".png", ".pdf", ".txt"}
    by_case = plot_by(sweep_dir, by="data.partition", y="test_loss", out_dir=sweep_dir.parent / "other")
    assert by_case["lines"] == 2 and by_case["paths"][0].is_file()


def test_plot_cli_and_errors(sweep_dir, tmp_path, capsys):
    assert main(["plot", str(sweep_dir), "--by", "phy.scheme", "--out", str(tmp_path / "fig"), "--stem", "acc"]) == 0
    assert (tmp_path / "fig" / "acc.png").is_file() and (tmp_path / "fig" / "acc.pdf").is_file()
    assert "2 group(s) by phy.scheme" in capsys.readouterr().out
    one_run = next(p for p in sweep_dir.iterdir() if (p / "DONE").is_file())
    assert plot_by(one_run, by="phy.scheme", out_dir=tmp_path / "one")["lines"] == 1
    assert plot_by(sweep_dir.parent, by="phy.scheme", out_dir=tmp_path / "all")["lines"] == 2
    assert main(["plot", str(sweep_dir), "--by", "phy.nope"]) == 2
    assert "phy.nope" in capsys.readouterr().err
    assert main(["plot", str(sweep_dir), "--by", "phy.scheme", "--y", "acc"]) == 2
    assert "not a metrics.csv column" in capsys.readouterr().err


def test_plot_paper_style_and_loss_median(sweep_dir, tmp_path):
    """--style paper: 300 dpi, one column (3.5 in) wide, no title in
    the image but a caption file; a loss column is the median over runs on a log axis, and says so."""
    from PIL import Image

    result = plot_by(sweep_dir, by="phy.scheme", y="test_loss", style="paper", out_dir=tmp_path / "p")
    png, pdf, caption = result["paths"]
    assert result["center"] == "median"
    image = Image.open(png)
    assert round(image.info["dpi"][0]) == 300
    assert image.size[0] <= 300 * (3.5 + 0.2)  # the legend found a free spot inside the axes
    text = caption.read_text()
    assert "median over runs (log axis" in text and "bands: min–max over runs" in text
    screen = plot_by(sweep_dir, by="phy.scheme", out_dir=tmp_path / "s")
    assert screen["center"] == "mean" and "lines: mean over runs" in screen["paths"][2].read_text()


def test_plot_caption_without_bands_for_one_run(sweep_dir, tmp_path):
    one_run = next(p for p in sweep_dir.iterdir() if (p / "DONE").is_file())
    result = plot_by(one_run, by="phy.scheme", out_dir=tmp_path / "one")
    assert "no bands" in result["paths"][2].read_text() and "min–max" not in result["paths"][2].read_text()
