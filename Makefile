# Developer entry points. Each target installs what it needs into .venv first.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo link test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on the embedded digits data: the source's Fig. 4 and Fig. 5 (quick variants),
# then every figure from the stored results. Rerunning resumes; finished runs are kept.
demo: $(STAMP)
	$(BIN)/floras sweep scenarios/fig4.toml scenarios/fig5.toml --quick --out results/demo
	$(BIN)/floras figures --results results/demo --out results/demo/figures

# Link-level comparison of the three aggregation schemes (no learning).
link: $(STAMP)
	$(BIN)/floras link --scheme floras channel-inversion ideal

test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(BIN)/python -m pytest -rs

bench: $(STAMP)
	$(BIN)/python benchmarks/link_throughput.py
	$(BIN)/python benchmarks/privacy_accountant.py
	$(BIN)/python benchmarks/fl_round.py

clean:
	rm -rf $(VENV) build *.egg-info
