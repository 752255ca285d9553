# The two commands of the README. Each sets up .venv first (torch's CPU build before anything else,
# so that pip never resolves torch to the multi-GB CUDA build), then does its job.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
STORAGE ?= results

.PHONY: demo test test-fast setup lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

## The main job: a real local study (a Ray Tune grid of 9 trials, 27 to 54 models: 3 to 6 seeds each) and its report.
demo: $(STAMP)
	$(VENV)/bin/study run demo --storage $(STORAGE) --report

## The tests: fast unit tests and the slow ones that start a real local Ray, two at a time (pytest-xdist: each
## module's slow tests stay on one worker, tests/conftest.py), each worker on one torch and one polars thread (two
## workers on two cores: more threads only fight; Ray's trial workers take one thread per CPU of theirs anyway).
## tests/test_report_browser.py needs headless Chromium: Debian's package, installed here when missing.
## Bytecode is written (PYTHONDONTWRITEBYTECODE unset, where a machine sets it): without it every `study` subprocess
## and Ray worker compiles the project again, and every worker rewrites the tests' asserts again (collection 19 s ->
## 12.5 s a worker once they are cached).
TEST_ENV := PYTHONDONTWRITEBYTECODE= OMP_NUM_THREADS=1 POLARS_MAX_THREADS=1
test: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	$(TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadgroup --durations=15

## The fast loop (under 3 minutes on 2 cores): every test but the slow ones (Ray, Chromium, subprocesses, long
## simulations: the `slow` marker in pyproject.toml), two workers of one torch and one polars thread each (measured
## 2 min 57 s with 1,489 tests at e2de03b, 3 min 22 s with 1,436 at 3f07a22).
test-fast: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -n 2 -m "not slow"

## Lint: ruff, then mypy (strict on every package: core/, study/, search_spaces/, trainables/, analysis/; [tool.mypy] in
## pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) results .pytest_cache
