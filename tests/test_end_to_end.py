"""The whole ``--quick`` set end to end, as CI runs it (issue: sweeps and figures).

Every sweep file under ``scenarios/`` runs its quick variant for real on the digits data set
(training, FLORAS / channel inversion over the simulated uplink, the ε column), on a dask
local cluster of two workers; then ``floras figures`` regenerates every figure from the stored
results alone, together with the audit figures and the privacy curves.
"""

import json
from pathlib import Path

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
    assert main(["privacy", "curves", "--out", str(results / "privacy")]) == 0
    capsys.readouterr()
    figs = tmp_path / "figures"
    assert main(["figures", "--results", str(results), "--out", str(figs)]) == 0
    for stem in ("fig4_floras_vs_channel_inversion", "fig5_privacy_cost", "snr_sweep_accuracy",
                 "privacy_utility", "audit_epsilon", "audit_roc", "privacy_eps_vs_gamma",
                 "privacy_eps_vs_rounds"):
        for suffix in (".png", ".pdf"):
            assert (figs / f"{stem}{suffix}").stat().st_size > 5_000, stem + suffix
    assert (figs / "summary_tables.md").is_file()
