# Two entry points for a fresh machine: `make run` (serve the assistant) and `make test`.
# Both build the virtual environment from the project's own files first.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

# The STS-B copy beside the project, when there is one, so `benchmark --data stsb-dev` works out of the box.
ifneq ($(wildcard ../shared/data/stsb/sts-dev.tsv),)
export ASSISTANT_DATA_DIR ?= $(abspath ../shared/data/stsb)
endif

# Python keeps the bytecode of what it imports (`__pycache__`, ignored by git) even where the environment says
# PYTHONDONTWRITEBYTECODE=1, as this project's build machines do: there every process compiled torch, transformers
# and gradio again, 23 s for one `embedding-assistant run` against 10 s once the bytecode is kept (2-core AMD EPYC
# 25/17, lscpu flags avx2 fma f16c), and `make test`
# starts a dozen such processes (servers, the console script, Ray workers).
export PYTHONDONTWRITEBYTECODE =

.PHONY: run test test-all venv chromium lint scatter

run: $(VENV)/.installed
	$(PY) -m assistant

# Two workers, each taking whole test files (a file's module fixtures, a Ray cluster or an MCP server, start once):
# on a 2-core AMD EPYC 25/1 (lscpu flags avx2, fma, f16c) the same tests took 8:00 against 9:38 in one worker, since
# one process kept 1.1 of the 2 cores busy on average (user + sys 10:51 in 9:54), waiting on servers, browsers and
# subprocesses. Each test runs slower beside the other worker's (the 20,000-point map 56 s against 23 s).
# The files marked `long` go first, in collection order (`--no-loadscope-reorder`; xdist's own order, most tests
# first, left the files of a few long tests to the end, one worker running them alone): 7:15 from a fresh clone
# against 8:19-10:24. `pytest -n 0` (or a bare `pytest`) runs them in one process.
TEST_WORKERS ?= 2

test: $(VENV)/.installed chromium lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The linter and the type checker (configured in pyproject.toml); a finding fails `make test`.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test-all: $(VENV)/.installed chromium
	$(PY) -m pytest -m ""

venv: $(VENV)/.installed

# torch goes first, from its CPU wheel, with pip (the machines here keep that wheel on disk, where only pip looks);
# constraints.txt keeps anything from replacing it. Then the project itself, editable, with its test extra: the
# pins come from requirements*.txt through pyproject.toml, and the `embedding-assistant` command works from any
# folder. That second step runs on uv, which fetches in parallel what pip fetches one package after another: the
# same packages at the same versions (`pip freeze` alike) in 14 s against pip's 96 s (of which 75 s resolving), with
# cold caches on a 2-core "Intel(R) Xeon(R) Processor" (family 6 model 207; avx512f, amx_bf16); pip does it where uv
# cannot.
# --no-compile: pip would byte-compile every installed module (most are never imported), which took 80 of
# the install's 150 s on a 2-core EPYC; Python compiles what is imported on first use and keeps it (uv does not
# compile either).
UV_VERSION := 0.13.9
$(VENV)/.installed: pyproject.toml requirements.txt requirements-test.txt requirements-ray.txt requirements-openvino.txt \
		constraints.txt
	python3 -m venv $(VENV)
	$(PIP) install -q --no-compile --disable-pip-version-check torch==2.13.0 uv==$(UV_VERSION)
	$(VENV)/bin/uv pip install -q --python $(PY) -e '.[test]' -c constraints.txt \
		|| $(PIP) install -q --no-compile --disable-pip-version-check -e '.[test]' -c constraints.txt
	touch $@

# Debian's chromium for the browser tests (never `playwright install`: it downloads a browser). Without the packages
# it only recommends (a printer dialog, avahi, upower, udev and the systemd upgrade udev pulls in), 26 packages instead
# of 116 (124 MB instead of 140 MB to fetch); fonts-liberation, one of them, is kept so that pages draw in the same fonts.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null; fi; }

# The corpus map's WebGL scatter (regl-scatterplot, pinned in web/scatter/package-lock.json) as one ES module,
# assistant/static/scatter.js. The built file is committed: `make run`, `make test` and CI never need npm.
scatter:
	cd web/scatter && npm ci --no-audit --no-fund && npm run build
