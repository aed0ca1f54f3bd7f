# `make train`, `make test` and `make demo` set everything up on a fresh machine (Python >= 3.10).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install train test demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,web,dev,examples,ray,rllib]"
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n 2

# Re-runnable: a finished run prints its final table (exit 0); an interrupted one resumes.
train: $(STAMP)
	$(VENV)/bin/satellites train --config az_quick --out runs/az_quick \
		$(if $(wildcard runs/az_quick/checkpoint.pt),--resume)

demo: $(STAMP)
	$(VENV)/bin/satellites demo --seed 0 --gif game.gif

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/agent_speed.py
	$(PY) benchmarks/batched_engine.py

clean:
	rm -rf $(VENV) build *.egg-info
