# Two commands for a reader:  `make book`  and  `make test`.
# Both create the virtual environment .venv on first use (only python3 >= 3.10 is needed).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# -W: warnings are errors; -n: nitpicky cross-references; --keep-going: report them all.
# A failing notebook cell only warns in a plain build, so -W is what makes it fail.
JBFLAGS ?= -W -n --keep-going
# One BLAS thread: the chapters do many small solves, for which a second thread on a
# busy 2-core machine costs up to 10x (measured); on a quiet machine the loss is ~20%.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: book test test-fast bench data clean env

env: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

book: $(VENV)/.installed
	$(BIN)/jupyter-book build . $(JBFLAGS)
	@echo
	@echo "The book is at: file://$(CURDIR)/_build/html/index.html"

test: $(VENV)/.installed
	$(BIN)/python -m pytest tests book --nbmake --nbmake-timeout=600

test-fast: $(VENV)/.installed
	$(BIN)/python -m pytest tests -m "not slow"

bench: $(VENV)/.installed
	mkdir -p bench/results
	$(BIN)/python bench/bench_solvers.py --threads 1 --markdown --out bench/results/solvers.md
	$(BIN)/python bench/bench_theory.py --markdown > bench/results/theory.md

# Large-d simulation tables lib/data/finite_size_*.csv/.json (about 2-3 hours on 2 cores;
# resumes where an interrupted run stopped). See lib/data/README.md.
data: $(VENV)/.installed
	$(BIN)/python scripts/make_finite_size.py

clean:
	rm -rf _build
