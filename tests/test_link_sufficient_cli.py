"""``floras link --path sufficient``: NMSE and V quantiles like the other paths, no noise trace."""

import json

from scenarios.cli.main import main


def _run(tmp_path, path):
    out = tmp_path / f"{path}.json"
    rc = main(["link", "--scheme", "floras", "--path", path, "--rounds", "60", "--d", "300", "--seed", "4",
               "--json", str(out)])
    assert rc == 0
    return json.loads(out.read_text())["schemes"]["floras"]


def test_link_sufficient_path_json(tmp_path, capsys):
    suff, auto = _run(tmp_path, "sufficient"), _run(tmp_path, "auto")
    assert suff["path"] == "sufficient" and auto["path"] == "fast"  # link summaries trace: auto is fast here
    assert suff["nmse"]["rounds"] == 60 and suff["nmse"]["median"] > 0
    inn = suff["inactive_noise"]
    assert inn["cauchy_scale"] is None and inn["within_round_excess_kurtosis"] is None
    assert inn["v_quantiles"] == auto["inactive_noise"]["v_quantiles"]  # V identical to the fast path's
    assert inn["v_quantiles_expected_levy"] == auto["inactive_noise"]["v_quantiles_expected_levy"]
    assert "path=sufficient" in capsys.readouterr().out


def test_link_sufficient_path_refuses_pn(capsys):
    rc = main(["link", "--rounds", "1", "--path", "sufficient", "--sequences", "pn"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "path must be 'chip' or 'auto'" in err and len(err.splitlines()) == 1
