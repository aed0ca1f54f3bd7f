# `make train`, `make test` and `make demo` set everything up on a fresh machine (Python >= 3.10).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install train test docs ladder demo bench clean

install: $(STAMP)

# The distribution was named `satellites` before `satellites-env`: a .venv made then holds it,
# and two distributions of one package would share its files (the `satellites` script), so
# the old one goes first.
$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip uninstall --quiet --yes satellites 2>/dev/null || true
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,web,dev,examples,ray,rllib,openspiel,minari]"
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -n 2 --durations=20

# Re-runnable: a finished run prints its final table (exit 0); an interrupted one resumes.
train: $(STAMP)
	$(VENV)/bin/satellites train --config az_quick --out runs/az_quick \
		$(if $(wildcard runs/az_quick/checkpoint.pt),--resume)

# The documentation site (MkDocs, Material) into site/; `make test` builds it too, strictly.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

# The shipped rating scale: every pair of these agents, 20 games each, into ladders/scale.db
# (only missing games are played, so an interrupted build continues).
LADDER_AGENTS := random greedy mcts:50 mcts:200 mcts:1000 checkpoint:pretrained az:pretrained:32
ladder: $(STAMP)
	$(VENV)/bin/satellites ladder add $(LADDER_AGENTS) --db ladders/scale.db
	$(VENV)/bin/satellites ladder run --games-per-pair 20 --workers 2 --db ladders/scale.db

demo: $(STAMP)
	$(VENV)/bin/satellites demo --seed 0 --gif game.gif

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/agent_speed.py
	$(PY) benchmarks/batched_engine.py

clean:
	rm -rf $(VENV) build site *.egg-info
