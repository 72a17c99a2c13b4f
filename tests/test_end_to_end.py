"""The whole ``--quick`` set end to end, as CI runs it (issue: sweeps and figures).

Every sweep file under ``scenarios/`` runs its quick variant for real on the digits data set
(training, FLORAS / channel inversion over the simulated uplink, the ε column), on a dask
local cluster of two workers; then ``floras figures`` regenerates every figure from the stored
results alone, together with the audit figures and the privacy curves.
"""

import json
from pathlib import Path

import pytest

from scenarios.cli.main import main
from scenarios.experiments.sweep import read_manifest, summarize

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ("fig4", "fig5", "snr_sweep", "privacy_sweep", "fig4_conventions")


def _row(rows, **match):
    found = [r for r in rows if all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, [{k: r.get(k) for k in match} for r in rows])
    return found[0]


def test_quick_set_and_every_figure(tmp_path, capsys):
    results = tmp_path / "results"
    files = [str(ROOT / "scenarios" / f"{name}.toml") for name in SWEEPS]
    assert main(["sweep", *files, "--quick", "--workers", "2", "--out", str(results), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert " 0 failed" in text

    for name in SWEEPS:
        manifest = read_manifest(results / name)
        rows = summarize(results / name)
        assert rows and all(r["seeds_failed"] == 0 and r["seeds_unfinished"] == 0 for r in rows), name
        for point in manifest["points"]:
            for run in point["runs"]:
                run_dir = results / name / run["dir"]
                assert (run_dir / "DONE").is_file()
                config = json.loads((run_dir / "config.json").read_text())
                assert "SNR" in config["snr_definition"] and config["privacy_report"]

    # The pipeline learns: on digits (10 classes, chance 10 %) noise-robust configurations reach
    # far above chance within the quick rounds; a broken update path stays near 10 %.
    fig4 = summarize(results / "fig4")
    ci_iid = _row(fig4, label="iid", **{"phy.scheme": "channel-inversion", "phy.snr_db": 15.0})
    assert ci_iid["final_test_accuracy_mean"] > 0.6
    fig5 = summarize(results / "fig5")
    gamma0 = [r for r in fig5 if r.get("phy.floras.N") == 20 and r["label"] == "iid"]
    assert gamma0 and gamma0[0]["final_test_accuracy_mean"] > 0.6
    # ε: infinite without privacy noise (γ = 0), finite and decreasing in γ where the privacy
    # sweep makes it finite (L = 1024, γ up to hundreds).
    assert gamma0[0]["epsilon_mean"] == float("inf")
    priv = summarize(results / "privacy_sweep")
    by_n: dict[int, set[float]] = {}
    for r in priv:
        if r["epsilon_mean"] < float("inf"):
            by_n.setdefault(r["phy.floras.N"], set()).add(r["epsilon_mean"])
    assert all(len(v) == 1 for v in by_n.values())  # ε does not depend on the SNR
    finite = sorted((n, v.pop()) for n, v in by_n.items())
    assert len(finite) >= 2 and all(a[1] > b[1] for a, b in zip(finite, finite[1:]))

    # Audit and privacy-curve results beside the sweeps, then every figure from storage.
    audit = results / "audit"
    audit.mkdir()
    assert main(["audit", "--threat", "T2", "--trials", "200", "--rounds", "20",
                 "--sweep-snr-db", "0", "20", "--json", str(audit / "t2.json")]) == 0
    assert main(["audit", "--threat", "T1", "--trials", "200", "--json", str(audit / "t1.json")]) == 0
    assert main(["audit", "--threat", "T2", "--trials", "4", "--rounds", "6", "--sweep-rx-antennas", "1", "2",
                 "--json", str(audit / "t2_link.json")]) == 0
    assert main(["privacy", "curves", "--out", str(results / "privacy")]) == 0
    capsys.readouterr()
    figs = tmp_path / "figures"
    assert main(["figures", "--results", str(results), "--out", str(figs)]) == 0
    for stem in ("fig4_floras_vs_channel_inversion", "fig5_privacy_cost", "snr_sweep_accuracy",
                 "privacy_utility", "audit_epsilon", "audit_roc", "audit_linking", "privacy_eps_vs_gamma",
                 "privacy_eps_vs_rounds"):
        for suffix in (".png", ".pdf"):
            assert (figs / f"{stem}{suffix}").stat().st_size > 5_000, stem + suffix
    assert (figs / "summary_tables.md").is_file()


CELL_SWEEPS = ("cell", "cell_antennas")


def test_quick_cell_sweeps_and_their_figures(tmp_path, capsys):
    """`floras matched scenarios/cell.toml scenarios/cell_antennas.toml --quick` trains for real in a UMi cell
    (model §5.1, §5.2), records the drop in every run, learns, and `floras figures` draws the drop and the
    accuracy against R and N_r from the stored results alone."""
    import math

    import numpy as np

    from phy.randomness import stream

    root, figs = tmp_path / "results", tmp_path / "figures"
    files = [str(ROOT / "scenarios" / f"{name}.toml") for name in CELL_SWEEPS]
    assert main(["matched", *files, "--quick", "--workers", "0", "--out", str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out

    # Every case of the file runs in the quick variant, FLORAS (capped receiver) included: its ε in a cell is the
    # idealised release of model §7.2, unchanged by the drop, so every point is feasible and ran.
    record = json.loads((root / "cell" / "matched.json").read_text())
    assert {p["label"] for p in record["points"]} == {"floras-none-capped", "channel-inversion",
                                                      "channel-inversion-pathloss-inversion", "analog-gaussian"}
    assert all(p["status"] == "feasible" for p in record["points"])
    r0 = 10.0  # phy.cell_min_distance default (raw configuration)
    for name in CELL_SWEEPS:
        manifest = read_manifest(root / name)
        for point in manifest["points"]:
            for run in point["runs"]:
                run_dir = root / name / run["dir"]
                assert (run_dir / "DONE").is_file()
                cfg = json.loads((run_dir / "config.json").read_text())
                phy = cfg["config"]["phy"]
                cell = cfg["aggregator"]["cell"]  # the drop's description, recorded with the run
                R = float(point["overrides"].get("phy.cell_radius", 250.0))
                assert cell["pathloss"] == "umi" and cell["cell_radius_m"] == R and cell["redrop"] is False
                assert cell["snr_reference"] == "median-distance" and cell["power_control"] == phy["power_control"]
                assert cell["reference_distance_m"] == pytest.approx(math.sqrt((R * R + r0 * r0) / 2))  # model §5.1
                assert "median distance" in cfg["aggregator"]["snr_definition"]

    # They learn: digits, 10 classes (chance 10 %; 450 test images, so chance has a standard deviation of 1.4
    # points and 20 % is 7 of them above it). Channel inversion (no privacy noise) reaches > 60 %, analog
    # Gaussian and FLORAS at ε = 8 (30 rounds) > 20 %; both analog baselines admit most of the K = 20 clients per
    # round (metric `admitted`).
    for name in CELL_SWEEPS:
        rows = summarize(root / name)
        assert len(rows) == len(read_manifest(root / name)["points"])
        for r in rows:
            assert r["seeds_failed"] == 0 and r["seeds_unfinished"] == 0
            floor = 0.6 if r["label"].startswith("channel-inversion") else 0.2
            assert r["final_test_accuracy_mean"] > floor, (name, r["point"], r["final_test_accuracy_mean"])

    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for stem in ("cell_drop", "cell_accuracy_vs_radius", "cell_accuracy_vs_antennas"):
        for suffix in (".png", ".pdf"):
            assert (figs / f"{stem}{suffix}").stat().st_size > 5_000, stem + suffix
    # The table's cell is the run's last test accuracy, read here from metrics.csv.
    table = (figs / "cell_accuracy_vs_radius.table.md").read_text()
    (run_dir,) = sorted((root / "cell").glob("analog-gaussian_cell-radius-1000_seed0_*"))
    lines = (run_dir / "metrics.csv").read_text().strip().splitlines()
    acc = 100 * float(lines[-1].split(",")[lines[0].split(",").index("test_accuracy")])
    row = next(line for line in table.splitlines() if line.startswith("| analog Gaussian"))
    assert row.split(" | ")[-1].startswith(f"{acc:.1f} [{acc:.1f}, {acc:.1f}]")

    # The analog scheme's threat model changes with N_r (model §5.2): the table says so per point.
    antennas = (figs / "cell_accuracy_vs_antennas.table.md").read_text()
    assert "rx_antennas = 4: T1 only (output observer of the released aggregate" in antennas
    assert "a base station with 4 receive antennas that keeps every antenna's signal" in antennas
    assert "ε_T2 ≤ " in antennas

    # The drop drawn is model §5.1's: client c at d_c = √(r₀² + u_c(R² − r₀²)), θ_c = 2π v_c, (u, v) the first
    # two draws of the keyed stream (seed, "cell-drop", c), for every client identity 0..M−1.
    from figures.cell_drop import client_drop

    drop = client_drop(json.loads((run_dir / "config.json").read_text()))
    assert drop["M"] == 100 and drop["x"].shape == (100,)
    u, v = np.array([stream(0, "cell-drop", c).random(3)[:2] for c in range(100)]).T
    d = np.sqrt(r0**2 + u * (1000.0**2 - r0**2))
    np.testing.assert_allclose(drop["x"], d * np.cos(2 * np.pi * v), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(drop["y"], d * np.sin(2 * np.pi * v), rtol=1e-12, atol=1e-9)


def test_quick_cell_sweeps_at_low_snr_against_the_exponent_and_the_threshold(tmp_path, capsys):
    """`floras matched scenarios/cell_snr.toml scenarios/cell_noniid_snr.toml scenarios/cell_exponent.toml --quick`
    (model §5.1): the three TR 38.901
    scenarios at 0 dB referred to the median distance train for real; every run records its own scenario and reference
    distance, and `floras figures` draws accuracy per scenario (a categorical axis) with the table in the standard's
    order. The non-IID sweep's no-cell point runs without a cell (every client at 0 dB), and its figure, under its
    own stem, puts that reference first. The exponent sweep's runs carry their own log-distance n (the drop's gains
    then follow β_eff = (d_ref/d)ⁿ·10^(X/10), X ~ N(0, 8²) dB, checked against the drawn drop), and its figures
    are drawn. The truncation sweep's cases are what their labels say, and without a cell channel inversion admits
    K·e^(−g_th) clients per round on average (model §6.2, Rayleigh |h|² ~ Exp(1))."""
    import math

    root, figs = tmp_path / "results", tmp_path / "figures"
    assert main(["matched", *(str(ROOT / "scenarios" / f"{name}.toml") for name in ("cell_snr", "cell_noniid_snr",
                                                                                    "cell_exponent", "cell_truncation")),
                 "--quick", "--workers", "0", "--out", str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    manifest = read_manifest(root / "cell_snr")
    seen = set()
    for point in manifest["points"]:
        for run in point["runs"]:
            cfg = json.loads((root / "cell_snr" / run["dir"] / "config.json").read_text())
            cell = cfg["aggregator"]["cell"]
            assert cell["pathloss"] == point["overrides"]["phy.pathloss"] == cfg["config"]["phy"]["pathloss"]
            assert cell["reference_distance_m"] == pytest.approx(math.sqrt((500.0**2 + 10.0**2) / 2))  # model §5.1
            assert cfg["config"]["phy"]["snr_db"] == 0.0
            seen.add(cell["pathloss"])
    assert seen == {"umi", "uma", "rma"}
    for r in summarize(root / "cell_snr"):
        assert r["seeds_failed"] == 0 and r["seeds_unfinished"] == 0
        floor = 0.6 if r["label"].startswith("channel-inversion") else 0.2  # chance 10 %, 450 test images
        assert r["final_test_accuracy_mean"] > floor, (r["point"], r["final_test_accuracy_mean"])
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for suffix in (".png", ".pdf"):
        assert (figs / f"cell_snr_accuracy_vs_scenario{suffix}").stat().st_size > 5_000
    table = (figs / "cell_snr_accuracy_vs_scenario.table.md").read_text()
    assert "| pathloss = umi | pathloss = uma | pathloss = rma |" in table
    row = next(line for line in table.splitlines() if line.startswith("| channel inversion"))
    import re

    admitted = [float(a) for a in re.findall(r"\(([0-9.]+) of 20 admitted\)", row)]  # mean of K = 20, per scenario
    assert len(admitted) == 3 and all(10.0 < a <= 20.0 for a in admitted), row
    assert "SNR 0.0 dB referred to the median-distance" in (figs / "cell_snr_accuracy_vs_scenario.caption.txt").read_text()

    # the non-IID sweep: shards everywhere; a 1000 m UMi cell, and no cell at all for pathloss = none
    for point in read_manifest(root / "cell_noniid_snr")["points"]:
        for run in point["runs"]:
            cfg = json.loads((root / "cell_noniid_snr" / run["dir"] / "config.json").read_text())
            assert cfg["config"]["partition"]["kind"] == "shards" and cfg["config"]["phy"]["snr_db"] == 0.0
            cell = cfg["aggregator"].get("cell")
            if point["overrides"]["phy.pathloss"] == "none":
                assert cell is None, cell
            else:
                assert cell["pathloss"] == "umi"
                assert cell["reference_distance_m"] == pytest.approx(math.sqrt((1000.0**2 + 10.0**2) / 2))
    table = (figs / "cell_noniid_snr_accuracy_vs_scenario.table.md").read_text()
    assert "| pathloss = none | pathloss = umi |" in table
    assert "no cell: every client at the reference SNR" in (
        figs / "cell_noniid_snr_accuracy_vs_scenario.caption.txt").read_text()
    assert "partition shards" in (figs / "cell_noniid_snr_accuracy_vs_scenario.caption.txt").read_text()

    # the exponent sweep: each run its own n; the drop figure's gains are the log-distance law at that n
    import numpy as np

    from figures.cell_drop import client_drop

    shadows = []
    for point in read_manifest(root / "cell_exponent")["points"]:
        for run in point["runs"]:
            rec = json.loads((root / "cell_exponent" / run["dir"] / "config.json").read_text())
            n = point["overrides"]["phy.pathloss_exponent"]
            assert rec["config"]["phy"]["pathloss_exponent"] == n and rec["config"]["phy"]["pathloss"] == "log-distance"
            d_ref = math.sqrt((500.0**2 + 10.0**2) / 2)
            assert rec["aggregator"]["cell"]["reference_distance_m"] == pytest.approx(d_ref)
            drop = client_drop(rec)
            dist = np.hypot(drop["x"], drop["y"])
            shadow_db = drop["beta_eff_db"] - 10.0 * n * np.log10(d_ref / dist)   # what is left must be X
            shadows.append(shadow_db)
    for a in shadows[1:]:   # one drop per seed: the same shadowing at every n and case
        np.testing.assert_allclose(a, shadows[0], atol=1e-9)
    x = shadows[0]   # M = 100 draws of N(0, 8²): sample mean within 4 standard errors, sd within 25 %
    assert abs(x.mean()) < 4 * 8.0 / math.sqrt(x.size) and 6.0 < x.std(ddof=1) < 10.0, (x.mean(), x.std(ddof=1))
    assert "| pathloss_exponent = 2 | pathloss_exponent = 4 |" in (figs / "cell_exponent_accuracy.table.md").read_text()
    assert "with log-normal shadowing" in (figs / "cell_exponent_drop.caption.txt").read_text()
    for stem in ("cell_exponent_accuracy", "cell_exponent_drop"):
        assert (figs / f"{stem}.png").stat().st_size > 5_000

    # the truncation sweep: labels say partition and cell; no cell admits Binomial(K, e^(−g_th)) per round
    import csv

    for point in read_manifest(root / "cell_truncation")["points"]:
        kind, where = point["label"].split("-")[-2:]
        for run in point["runs"]:
            rec = json.loads((root / "cell_truncation" / run["dir"] / "config.json").read_text())
            assert rec["config"]["partition"]["kind"] == kind
            assert rec["config"]["phy"]["pathloss"] == ("none" if where == "nocell" else "umi")
            g_th = rec["config"]["phy"]["g_th"]
            assert g_th == point["overrides"]["phy.g_th"] == 1.0
            with open(root / "cell_truncation" / run["dir"] / "metrics.csv", newline="") as f:
                admitted = np.array([float(row["admitted"]) for row in csv.DictReader(f)])
            if where == "nocell":
                p, K = math.exp(-g_th), 20
                sd = math.sqrt(K * p * (1 - p) / admitted.size)   # standard error of the mean over rounds
                assert abs(admitted.mean() - K * p) < 4 * sd, (admitted.mean(), K * p, sd)
    table = (figs / "cell_truncation_accuracy.table.md").read_text()
    assert "channel inversion, non-IID (shards), UMi cell" in table and "| g_th = 1 |" in table


def test_quick_label_placement_sweep_ties_labels_to_distance_and_nothing_else(tmp_path, capsys):
    """`floras matched scenarios/cell_placement.toml scenarios/cell_placement_rings.toml --quick` (model §5.1, §8):
    with labels placed by distance the
    clients' mean labels, read in the order of the distances of the documented drop (d_c = √(r₀² + u_c(R² − r₀²)),
    u_c the first draw of stream (seed, "cell-drop", c)), never decrease, while the random placement's do; the
    drop, sampling and fading are untouched, so each case's admitted clients are identical round by round under
    both placements; the least accurate label is never above the mean; `floras figures` draws the figure and the
    table with the heard share of every label."""
    import csv

    import numpy as np

    from phy.randomness import stream

    root, figs = tmp_path / "results", tmp_path / "figures"
    sweeps = ("cell_placement", "cell_placement_rings")  # two shards per client, and one (labels in rings)
    assert main(["matched", *(str(ROOT / "scenarios" / f"{name}.toml") for name in sweeps), "--quick", "--workers", "0",
                 "--out", str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    admitted: dict = {}
    for sweep, point in ((name, p) for name in sweeps for p in read_manifest(root / name)["points"]):
        placement = point["overrides"]["partition.placement"]
        for run in point["runs"]:
            rec = json.loads((root / sweep / run["dir"] / "config.json").read_text())
            assert rec["config"]["partition"]["placement"] == placement
            hist = np.array(rec["derived"]["partition"]["histograms"], dtype=float)
            M, R, r0 = hist.shape[0], rec["config"]["phy"]["cell_radius"], rec["config"]["phy"]["cell_min_distance"]
            u = np.array([stream(rec["seed"], "cell-drop", c).random(3)[0] for c in range(M)])
            mean_label = (hist @ np.arange(hist.shape[1]) / hist.sum(axis=1))[np.argsort(np.sqrt(r0**2 + u * (R**2 - r0**2)))]
            assert np.all(np.diff(mean_label) >= -1e-12) == (placement == "by-distance"), placement
            with open(root / sweep / run["dir"] / "metrics.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            admitted.setdefault((sweep, point["label"]), {})[placement] = [r["admitted"] for r in rows]
            for r in rows:
                assert float(r["worst_class_accuracy"]) <= float(r["test_accuracy"]) + 1e-12
    for label, by in admitted.items():
        assert by["random"] == by["by-distance"], label
    assert any(a != "" for a in admitted[("cell_placement", "channel-inversion-gth1")]["random"])
    assert len(admitted) == 6
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    table = (figs / "cell_placement_accuracy.table.md").read_text()
    assert table.count("| by-distance |") == 5 and "heard share" in table and "1 (no truncation)" in table  # 4 cases, 1 cost row
    assert (figs / "cell_placement_accuracy.png").stat().st_size > 5_000
    rings = (figs / "cell_placement_rings_accuracy.table.md").read_text()
    assert rings.count("| by-distance |") == 3 and "3 least heard labels" in rings and "| — |" not in rings  # per label
    assert "| random | 10 |" in rings and "| by-distance | 10 |" in rings  # the cost of g_th = 1 for each of 10 labels


def test_quick_channel_aging_sweep_and_its_figure(tmp_path, capsys):
    """`floras matched scenarios/cell_aging.toml --quick` (model §5.1): channel inversion with block 0's CSIT over
    coherence blocks of the exact Clarke law, and FLORAS with a pilot per block, train for real; the runs record
    the blocks, and `floras figures` draws accuracy against the Doppler cycles and the pilot blocks."""
    import math

    root, figs = tmp_path / "results", tmp_path / "figures"
    assert main(["matched", str(ROOT / "scenarios" / "cell_aging.toml"), "--quick", "--workers", "0", "--out",
                 str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    d = 64 * 64 + 64 + 64 * 10 + 10  # the digits MLP 64-64-10 (scenarios/base/digits_mlp.toml): 4 810
    for point in read_manifest(root / "cell_aging")["points"]:
        for run in point["runs"]:
            cfg = json.loads((root / "cell_aging" / run["dir"] / "config.json").read_text())
            assert cfg["derived"]["d"] == d
            n_c = point["overrides"].get("phy.coherence_symbols")
            if point["overrides"]["phy.scheme"] == "floras":
                # a pilot per block: B = ⌈d/(n_c − 1)⌉ blocks, one when n_c − 1 ≥ d (model §5.1)
                expected = 1 if n_c is None or n_c - 1 >= d else math.ceil(d / (n_c - 1))
                assert cfg["privacy_report"]["link"]["blocks"] == expected
            elif n_c is not None:
                assert cfg["aggregator"]["fading"]["fading_correlation"] == "jakes-exact"
            if point["overrides"].get("phy.inversion_csit") == "per-block":
                # admission per block: the metric is the entry-weighted mean K′_m, not the K = 20 contributors
                lines = (root / "cell_aging" / run["dir"] / "metrics.csv").read_text().split()
                col = lines[0].split(",").index("admitted")
                admitted = [float(line.split(",")[col]) for line in lines[1:]]
                assert all(0 < a <= 20 for a in admitted) and min(admitted) < 20
    # Channel inversion (ε = ∞) learns at every speed of the quick variant (> 60 %, chance 10 %); FLORAS at ε = 8
    # with 30 rounds > 15 % (a 450-image test set: chance ± 1.4 points).
    for r in summarize(root / "cell_aging"):
        assert r["seeds_failed"] == 0 and r["seeds_unfinished"] == 0
        floor = 0.6 if r["label"].startswith("channel-inversion") else 0.15
        assert r["final_test_accuracy_mean"] > floor, (r["label"], r["final_test_accuracy_mean"])
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for suffix in (".png", ".pdf"):
        assert (figs / f"cell_aging_accuracy{suffix}").stat().st_size > 5_000
    table = (figs / "cell_aging_accuracy.table.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| channel-inversion-aging-3kmh "))
    assert "| 1.01e-05 | " in row and f"| {1.01e-5 * d:.3g} | " in row


def _quick_points(name: str, root, capsys) -> list[tuple[dict, dict]]:
    """`floras matched scenarios/<name>.toml --quick` into ``root`` (nothing failed): (manifest point, its one run's
    [phy] configuration) per grid point."""
    assert main(["matched", str(ROOT / "scenarios" / f"{name}.toml"), "--quick", "--workers", "0", "--out", str(root),
                 "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    out = []
    for point in read_manifest(root / name)["points"]:
        (run,) = point["runs"]
        out.append((point, json.loads((root / name / run["dir"] / "config.json").read_text())["config"]["phy"]))
    return out


def test_quick_csi_sweep_trains_channel_inversion_with_estimation_error(tmp_path, capsys):
    """`floras matched scenarios/cell_csi.toml --quick` (model §5.1): channel inversion inverting estimated channels
    trains for real; σ_e² is recorded; at σ_e² = 0.1 the link's error floor (≈ 0.18 of the signal, docs/cell.md)
    costs accuracy against perfect CSI, and `floras figures` draws it with the one-pilot reference 1/(L·SNR)."""
    root, figs = tmp_path / "results", tmp_path / "figures"
    for point, phy in _quick_points("cell_csi", root, capsys):
        assert phy["csi_error"] == point["grid"]["phy.csi_error"]
    acc = {r["point"]: r["final_test_accuracy_mean"] for r in summarize(root / "cell_csi")}
    assert all(a > 0.6 for a in acc.values()), acc  # learns at every σ_e² (digits: chance 10 %)
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for suffix in (".png", ".pdf"):
        assert (figs / f"cell_csi_accuracy{suffix}").stat().st_size > 5_000
    rows = (figs / "cell_csi_accuracy.table.md").read_text().splitlines()[4:]
    assert [r.split("|")[4].strip() for r in rows] == ["0", "0.01", "0.1"]
    assert all(r.split("|")[3].strip() == "1" for r in rows)  # N_r
    # 1/(L·SNR) at L = 32 and 20 dB: 1/3200 = 3.125·10⁻⁴, printed to 3 significant digits (a factor L or 2 is caught)
    assert all(abs(float(r.split("|")[5]) - 1 / 3200) < 1e-6 for r in rows)


def test_quick_csi_sweep_with_four_antennas_in_a_cell(tmp_path, capsys):
    """`floras matched scenarios/cell_csi_antennas.toml --quick` (model §5.1, "Several receive antennas"): channel
    inversion at N_r = 4 in the UMi cell, every antenna estimated and the combiner the estimates', trains for real at
    every σ_e²; the runs record N_r and σ_e², and the figure's table has one row per σ_e² at N_r = 4."""
    root, figs = tmp_path / "results", tmp_path / "figures"
    for point, phy in _quick_points("cell_csi_antennas", root, capsys):
        assert (phy["rx_antennas"], phy["csi_error"]) == (4, point["grid"]["phy.csi_error"])
    acc = {r["point"]: r["final_test_accuracy_mean"] for r in summarize(root / "cell_csi_antennas")}
    assert len(acc) == 3 and all(a > 0.6 for a in acc.values()), acc
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    rows = (figs / "cell_csi_antennas_accuracy.table.md").read_text().splitlines()[4:]
    assert [(r.split("|")[3].strip(), r.split("|")[4].strip()) for r in rows] == [("4", "0"), ("4", "0.01"), ("4", "0.1")]


def test_quick_timing_sweep_trains_channel_inversion_with_offsets(tmp_path, capsys):
    """`floras matched scenarios/cell_timing.toml --quick` (model §5.1): channel inversion, FLORAS (N = K, ε = ∞,
    chip path) and analog Gaussian (ε = 8) with chip-timing offsets train for real; the offsets are recorded; with one channel use per symbol
    τ_max = 0.99 costs channel inversion accuracy (the link's intersymbol interference is 0.65 of the signal, 2τ²/3,
    docs/cell.md), with L = 32 chips it does not; FLORAS's link, whose despread outputs mix the clients through the
    sequences' one-chip partial correlations (median link NMSE 0.04 → 13 at τ_max = 0 → 0.99, K = N = 20, L = 32,
    20 dB, docs/cell.md), does not learn at τ_max = 0.99."""
    root = tmp_path / "results"
    assert main(["matched", str(ROOT / "scenarios" / "cell_timing.toml"), "--quick", "--workers", "0", "--out",
                 str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    acc = {}
    for point in read_manifest(root / "cell_timing")["points"]:
        (run,) = point["runs"]
        cfg = json.loads((root / "cell_timing" / run["dir"] / "config.json").read_text())
        assert cfg["config"]["phy"]["timing_offset"] == point["grid"]["phy.timing_offset"]
        if cfg["config"]["phy"]["scheme"] == "floras":  # ε = ∞ calibrates N = K: no inactive sequence
            assert cfg["config"]["phy"]["floras"]["N"] == cfg["config"]["training"]["clients_per_round"]
    for r in summarize(root / "cell_timing"):
        acc[(r["label"], r["point"])] = r["final_test_accuracy_mean"]
    by_case = {}
    for (label, point), a in acc.items():
        by_case.setdefault(label, []).append(a)
    assert all(a > 0.6 for a in by_case["channel-inversion"])  # L = 32: no measurable loss (digits: chance 10 %)
    # source-literal: the offset point is below the synchronous one by more than the 450-image test set's noise
    synchronous, late = (acc[k] for k in sorted(k for k in acc if k[0] == "channel-inversion-source-literal"))
    assert synchronous - late > 0.05, (synchronous, late)
    f_sync, f_late = (acc[k] for k in sorted(k for k in acc if k[0] == "floras-none"))
    assert f_sync > 0.6 and f_late < 0.3, (f_sync, f_late)
    # `floras figures` draws accuracy against τ_max; its table states the link's ISI over the signal, 2τ²/(3L_eff²)
    figs = tmp_path / "figures"
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for suffix in (".png", ".pdf"):
        assert (figs / f"cell_timing_accuracy{suffix}").stat().st_size > 5_000
    rows = {tuple(c.strip() for c in line.split("|")[2:5]): line
            for line in (figs / "cell_timing_accuracy.table.md").read_text().splitlines()[4:]}
    assert set(rows) == {("channel-inversion", "32", "0"), ("channel-inversion", "32", "0.99"),
                         ("channel-inversion", "1", "0"), ("channel-inversion", "1", "0.99"),
                         ("floras", "32", "0"), ("floras", "32", "0.99"),
                         ("analog-gaussian", "32", "0"), ("analog-gaussian", "32", "0.99")}
    # analog Gaussian keeps its calibrated noise, hence its ε, with offsets (the clients' inflation, model §5.1)
    eps = {k: float(rows[("analog-gaussian", "32", k)].split("|")[7]) for k in ("0", "0.99")}
    assert eps["0"] == pytest.approx(8.0, rel=1e-3) and eps["0.99"] == pytest.approx(eps["0"], rel=1e-9)
    assert "| 0.000638 |" in rows[("channel-inversion", "32", "0.99")]
    assert "| 0.653 |" in rows[("channel-inversion", "1", "0.99")]
    assert "| 0 |" in rows[("channel-inversion", "1", "0")] and "| — |" in rows[("floras", "32", "0.99")]


def test_quick_tdl_sweep_trains_over_ofdm_subcarriers(tmp_path, capsys):
    """`floras matched scenarios/cell_tdl.toml --quick` (model §5.1): channel inversion and analog Gaussian over the
    subcarriers of a TDL-A channel train for real; per-subcarrier CSIT learns where one subcarrier's CSIT over the
    band (at 300 ns the link's error exceeds the signal, docs/cell.md) does not, unless the channel has line of sight
    (TDL-D: the specular tap, κ = 7.9, is the same on every subcarrier, so Re(h_m/h_0) stays near 1); `floras figures`
    draws it with the profile, the subcarrier count ⌈d/n_c⌉ and the band computed from the raw d, n_c and Δf."""
    root, figs = tmp_path / "results", tmp_path / "figures"
    assert main(["matched", str(ROOT / "scenarios" / "cell_tdl.toml"), "--quick", "--workers", "0", "--out",
                 str(root), "--no-progress"]) == 0
    assert ", 0 failed" in capsys.readouterr().out
    acc = {r["label"]: r["final_test_accuracy_mean"] for r in summarize(root / "cell_tdl")}
    assert acc["channel-inversion"] > 0.6 and acc["channel-inversion-per-subcarrier-300ns"] > 0.6, acc
    assert acc["channel-inversion-stale-300ns"] < acc["channel-inversion-per-subcarrier-300ns"] - 0.1, acc
    assert acc["channel-inversion-stale-300ns-tdl-d"] > acc["channel-inversion-stale-300ns"] + 0.1, acc
    assert acc["channel-inversion-stale-300ns-tdl-d"] > 0.6, acc
    assert acc["channel-inversion-per-block-300ns-120kmh"] > 0.6, acc  # per-block CSIT inverts every time block too
    # one pilot per subcarrier at the update's start: enough at 3 km/h (J₀ ≥ 0.94 over the 9 time blocks), not at
    # 30 km/h (J₀ falls to −0.40: later blocks arrive with inverted sign)
    slow, fast = acc["channel-inversion-per-subcarrier-stale-300ns-3kmh"], acc["channel-inversion-per-subcarrier-stale-300ns-30kmh"]
    assert slow > 0.6 and fast < slow - 0.1, acc
    # a line of sight keeps one CSIT across the band but not across time once its specular tap rotates (f_S = 0.7·f_D:
    # 0.35 rad over the update at 3 km/h, 3.5 rad at 30 km/h; quick: 0.91 and 0.10)
    los_slow, los_fast = acc["channel-inversion-stale-300ns-3kmh-tdl-d"], acc["channel-inversion-stale-300ns-30kmh-tdl-d"]
    assert los_slow > 0.6 and los_fast < los_slow - 0.1, acc
    # a pilot per subcarrier removes the band's term, not the turn in time (quick: 0.10 at 30 km/h)
    assert acc["channel-inversion-per-subcarrier-stale-300ns-30kmh-tdl-d"] < los_slow - 0.1, acc
    # FLORAS with a pilot per subcarrier: one weight per round follows the mean of the pilots' V̂, which the
    # subcarriers whose inactive sequences faded deep dominate; weighing each subcarrier on its own V̂_m recovers most
    # of the one-block accuracy (quick: 17.3 and 31.8 against 33.1 %)
    flat, pooled = acc["floras-none-capped-generic"], acc["floras-none-capped-generic-per-subcarrier-300ns"]
    block = acc["floras-none-capped-generic-per-subcarrier-300ns-block"]
    assert block > pooled + 0.05 and block > flat - 0.05, acc
    # over TDL-D (line of sight) FLORAS weighted per subcarrier learns too: the same ε, ε_link under the Rician law
    assert acc["floras-none-capped-per-subcarrier-300ns-block-tdl-d"] > 0.15, acc
    # with Doppler (30 km/h) and a pilot per block of 29 symbols (172 pilots here) FLORAS still learns (quick: 24.9 %)
    assert acc["floras-none-capped-per-block-300ns-30kmh-block"] > 0.15, acc
    assert acc["floras-none-capped-per-block-300ns-block"] > 0.15, acc  # the same blocks without Doppler (quick: 23.6 %)
    assert main(["figures", "--results", str(root), "--out", str(figs)]) == 0
    for suffix in (".png", ".pdf"):
        assert (figs / f"cell_tdl_accuracy{suffix}").stat().st_size > 5_000
    caption = (figs / "cell_tdl_accuracy.caption.txt").read_text()
    assert "SNR 20.0 dB" in caption and "{" not in caption  # every placeholder formatted
    assert "accountant 'rdp' ('rdp-generic' for floras-none-capped-generic, " in caption  # each case's own accountant
    table = (figs / "cell_tdl_accuracy.table.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| channel-inversion-stale-300ns "))
    d = 64 * 64 + 64 + 64 * 10 + 10  # the digits MLP (64-64-10): 4 810 parameters
    B = -(-d // 261)
    assert f"| 300 | {B} | {B * 240e3 / 1e6:.3g} |" in row  # the quick variant's 240 kHz spacing
    assert "| TDL-A | one block |" not in table and "| channel-inversion | channel-inversion | flat | one block |" in table
    assert "| channel-inversion-stale-300ns | channel-inversion | TDL-A | stale |" in table
    assert "| channel-inversion-stale-1000ns-tdl-d | channel-inversion | TDL-D | stale | 1000 |" in table
    assert "| channel-inversion-per-subcarrier-stale-300ns-30kmh | channel-inversion | TDL-A | per-subcarrier | 300 |" in table
    fl_row = next(line for line in table.splitlines() if line.startswith("| floras-none-capped-generic-per-subcarrier-300ns-block "))
    assert "| floras-none-capped-per-subcarrier-300ns-block-tdl-d | floras | TDL-D |" in table
    assert f"| pilot per block, weight per block | 300 | {-(-d // 260)} |" in fl_row  # a reference slot per subcarrier
    # with 9 time blocks of 29 symbols: ⌈d/28⌉ = 172 pilot blocks, 9 to a subcarrier, so 20 subcarriers (not 172)
    dop_row = next(line for line in table.splitlines() if line.startswith("| floras-none-capped-per-block-300ns-30kmh-block "))
    n_sub = -(-(-(-d // 28)) // 9)
    assert n_sub == 20 and f"| 300 | {n_sub} | {n_sub * 240e3 / 1e6:.3g} | 9 × 29, 0.00347 |" in dop_row
