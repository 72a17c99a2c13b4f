# Developer entry points. Each target installs what it needs into .venv first.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on embedded defaults.
demo: $(STAMP)
	$(BIN)/floras link --scheme floras channel-inversion ideal

test: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/link_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
