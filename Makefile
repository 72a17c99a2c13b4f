# Developer entry points. Each target installs what it needs into .venv first.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo link test faults bench mutate clean

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

# Link-level comparison of every aggregation scheme (no learning): FLORAS, channel inversion,
# ideal, and the private baselines (clip normalization, unit clip norm, noise multiplier 1).
link: $(STAMP)
	$(BIN)/floras link --scheme floras channel-inversion ideal central-gaussian analog-gaussian ddgauss sqsgd \
		--normalization clip --clip-norm 1 --noise-multiplier 1

# The suite in TEST_PROCESSES pytest processes (pytest-xdist): a single process keeps about 0.75 of a core busy, so
# two take 2 cores (1 204 s → 667 s on a 2-core AVX2 machine, docs/testing.md); TEST_PROCESSES=0 runs it in this process.
TEST_PROCESSES ?= 2

test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(BIN)/python -m pytest -rs -n $(TEST_PROCESSES)

# The fault-injection tests only (pytest marker `faults`; the table in docs/reliability.md): locks,
# atomic writes, damaged runs, keys never on disk, umask, the dask executor's timeouts and dead
# workers, size refusals, leftover temporaries, foreign entries. Also part of `make test`.
faults: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(BIN)/python -m pytest -rs -m faults

# Mutation testing of phy/, privacy/ and fl/training.py (cosmic-ray, a sampled run sized for under an
# hour on 2 cores; docs/testing.md). Not part of `make test`. Report: build/mutation/report.md.
MUTATE_ARGS ?=
mutate: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[mutation]'
	$(BIN)/python tests/mutation/run_mutation.py --out build/mutation $(MUTATE_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/link_throughput.py
	$(BIN)/python benchmarks/privacy_accountant.py
	$(BIN)/python benchmarks/fl_round.py
	$(BIN)/python benchmarks/baselines.py

clean:
	rm -rf $(VENV) build *.egg-info
