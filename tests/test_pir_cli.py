"""``floras pir``: JSON costs, --verify, one-line errors."""

import json
import time

import pytest

from scenarios.cli.main import main


def test_costs_json_to_stdout(capsys):
    assert main(["pir", "--r", "10", "3", "--s", "1000", "--N", "2", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["r"]: row for row in data["rows"]}
    assert round(rows[10]["pir"]["total"]) == 24018 and rows[10]["naive"]["total"] == 30000
    assert rows[3]["pir"]["total"] == 9756 and rows[3]["naive"]["total"] == 9000
    assert rows[3]["difference"]["symbols_naive_minus_pir"] == -756
    assert data["parameters"]["q"] == 2**31 - 1
    cu = rows[10]["pir"]["channel_uses"]["total"] / (rows[10]["pir"]["total"] * rows[10]["symbol_bits"])
    assert cu == pytest.approx(rows[10]["channel_uses_per_bit"])


def test_table_and_verify(tmp_path, capsys):
    out = tmp_path / "pir.json"
    assert main(["pir", "--r", "2", "--s", "4", "--N", "2", "--verify", "--iterations", "5", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "recovered exactly: True" in printed and "DEPENDS on d" in printed
    v = json.loads(out.read_text())["verify"]
    assert v["mds"]["counted_equals_formula"] and v["shared"]["counted_equals_formula"]
    assert {c["component"]: c["passed"] for c in v["exhaustive"]["checks"]} == {
        "queries": True, "uploads (mds)": False, "uploads (shared)": True, "uploads (mds), uniform update": False,
        "two consecutive uploads": False}


@pytest.mark.parametrize("argv,match", [
    (["--r", "0", "--s", "4", "--N", "2"], "r must be"),
    (["--r", "2", "--s", "4", "--N", "1"], "N must be"),
    (["--r", "2", "--s", "0", "--N", "2"], "s must be"),
    (["--r", "2", "--s", "10", "--N", "2", "--field-bits", "3"], "field too small"),
    (["--r", "2", "--s", "6", "--N", "2", "--verify"], "subpacketization"),
    (["--r", "2", "--s", "4", "--N", "2", "--snr-db", "inf"], "snr-db"),
])
def test_errors_are_one_line(argv, match, capsys):
    assert main(["pir", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("floras: error:") and match in err and err.count("\n") == 1


@pytest.mark.faults
def test_a_grid_whose_table_exceeds_the_memory_is_refused_before_any_work(capsys, tmp_path):
    out = tmp_path / "pir.json"
    big = [str(v) for v in range(2, 102)]  # 100 × 100 × 100 × 100 rows: ~400 GB of table
    t0 = time.perf_counter()
    rc = main(["pir", "--r", *big, "--s", *big, "--N", *big, "--snr-db", *big, "--json", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 5 and len(err) == 1 and "cost table (100000000 rows" in err[0] and "--memory-limit" in err[0]
    assert time.perf_counter() - t0 < 5 and not out.exists()
    rc = main(["pir", "--r", "1", "2", "--s", "4", "--N", "2", "--memory-limit", "1K"])
    err = capsys.readouterr().err.strip()
    assert rc == 5 and "but the limit is 1 KiB (--memory-limit)" in err
    assert main(["pir", "--r", "2", "--s", "4", "--N", "2", "--memory-limit", "1G"]) == 0


@pytest.mark.faults
def test_a_subpacketization_too_large_to_print_is_named_not_an_integer_conversion_error(capsys):
    rc = main(["pir", "--r", "1000", "--s", "1000", "--N", "100000000", "--verify", "--memory-limit", "100000T"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "N^r = 100000000^1000 > s" in err and "digits" not in err
