# Two commands on a fresh machine: `make run` (the bot) and `make test` (the tests).
# Each creates .venv and installs what it needs first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-packages lint bench install clean messages

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# Without a token bot.py prints how to get one and exits with 78 (NO_TOKEN in bot.py): that is
# the answer to `make run`, not a failure of it, so make stops quietly; any other status fails.
run: $(STAMP)
	@$(BIN)/python bot.py || [ $$? -eq 78 ]

# The tests drive real PostgreSQL, Chromium and haproxy: scripts/test-packages.sh installs the
# Debian packages that are missing (as root or with password-less sudo) and does nothing when
# all are there; elsewhere it names them and stops. CI runs this same step through `make test`.
# Three pytest-xdist workers, a test file each at a time: most tests wait on sockets and child
# processes, so three share two cores well. The chaos test (a cluster at full speed for four
# minutes, with its floor of moves and answers) then runs alone, on a machine as quiet as it
# was measured on. About 12 minutes in all instead of 18.
test: $(STAMP) test-packages
	$(BIN)/python -m pytest -q -n 3 --dist loadfile --ignore=tests/test_chaos.py
	$(BIN)/python -m pytest -q tests/test_chaos.py

test-packages:
	@bash scripts/test-packages.sh

# Style (ruff), the rooms' import rules (import-linter, [tool.importlinter] in pyproject.toml),
# then types: the engine and the tournaments strictly, pictures, storage and the chat layer with mypy's defaults.
# Two graphs (importlinter-typed.toml counts type-only imports), built afresh each time: with
# grimp's cache, a run after switching files once read an old graph; both take 0.2 s to build.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache pyproject.toml importlinter-typed.toml
	$(BIN)/mypy --strict krendzu tournaments
	$(BIN)/mypy render storage chat engines

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/render.py
	$(BIN)/python benchmarks/storage.py
	$(BIN)/python benchmarks/ai.py
	$(BIN)/python benchmarks/bot.py
	$(BIN)/python benchmarks/abuse.py
	$(BIN)/python benchmarks/engines.py
	$(BIN)/python benchmarks/cluster.py
	$(BIN)/python benchmarks/tournaments.py
	$(BIN)/python benchmarks/metrics_cost.py
	$(BIN)/python benchmarks/bot_api_calls.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Refresh the translation template and catalogs after changing texts in chat/ (Babel).
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _ -k n_:1,2 -k InputError -c Translators: --no-location --sort-output -o chat/locales/krendzu.pot .
	$(BIN)/pybabel update -i chat/locales/krendzu.pot -d chat/locales -D krendzu --no-fuzzy-matching --ignore-obsolete
