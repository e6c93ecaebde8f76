# Two commands for a reader:  `make book`  and  `make test`.
# Both create the virtual environment .venv on first use (only python3 >= 3.11 is needed).
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

.PHONY: book student portable grade answer-key test test-all test-fast test-html test-min lint lint-fix lab lab-student lab-reset pdf slides bench data clean env

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

# The student edition: every exercise, no solutions, lab skeletons (scripts/make_student.py);
# HTML in _build/student/html, notebooks to hand out in _build/student/notebooks (their
# references to other chapters and their numbers as the HTML book of `make book` gives them).
# Run `make book` first: the student build executes nothing, it reuses the executed
# chapters in _build/jupyter_execute and the {eval} texts book/_ext/book_evals.py recorded.
student: $(VENV)/.installed
	$(BIN)/python scripts/make_student.py --out _build/student -- $(JBFLAGS)

# Chapters for plain Jupyter front ends (Colab, VS Code, GitHub's preview), instructor and
# student editions, in _build/portable/{instructor,student}/ (scripts/make_portable.py):
# {eval} values, MyST blocks as plain Markdown, references as links to the HTML book.
# Run `make book` first: nothing is executed, the book build's outputs are reused.
portable: $(VENV)/.installed
	$(BIN)/python scripts/make_portable.py --out _build/portable

# Grade submitted student notebooks (scripts/grade_labs.py): each runs in a fresh kernel,
# at most GRADE_TIMEOUT seconds; lab verdicts and points per student land in _build/grades/
# (grades.csv, grades.md, grades.html). One folder per student, e.g.
#   make grade SUBMISSIONS="submissions/*/*.ipynb"
SUBMISSIONS ?=
GRADE_TIMEOUT ?= 600
grade: $(VENV)/.installed
	@test -n "$(SUBMISSIONS)" || { echo 'usage: make grade SUBMISSIONS="submissions/*/*.ipynb"'; exit 2; }
	$(BIN)/python scripts/grade_labs.py --timeout $(GRADE_TIMEOUT) --out _build/grades $(SUBMISSIONS)

# The answer key: every exercise with its solution and every lab's reference solution,
# one printable page, _build/answer_key/answer_key.html (from the HTML: `make book` first).
answer-key: $(VENV)/.installed
	$(BIN)/python scripts/answer_key.py --html _build/html --out _build/answer_key

# Tests run in TEST_WORKERS processes (pytest-xdist; one per core of a 2-core machine):
# the notebooks are single-threaded, so two at a time halve the wall time. Each test file
# goes to one process (--dist loadgroup, groups set in tests/conftest.py), so a file's
# shared fixtures are built once, except the chapter runs, which are shared out one by one.
# `make test` executes every chapter once, as a test: tests/book/test_notebooks.py runs
# each, copied out of the repository, in a plain kernel with the package installed from
# its wheel, and checks that every {eval} name is a string. `make test-all` adds nbmake's
# run of every chapter in place (in the repository, editable lib): twice the notebook time.
TEST_WORKERS ?= 2
test: $(VENV)/.installed
	$(BIN)/python -m pytest tests -m "not html" --durations=12 \
		-n $(TEST_WORKERS) --dist loadgroup

test-all: $(VENV)/.installed
	$(BIN)/python -m pytest tests book --nbmake --nbmake-timeout=240 -m "not html" --durations=12 \
		-n $(TEST_WORKERS) --dist loadgroup

test-fast: $(VENV)/.installed
	$(BIN)/python -m pytest tests -m "not slow and not html"

# ruff (pinned in requirements.txt) on the Python code, with pyproject.toml's settings
# (book/ruff.toml's 88 columns in book/_ext); tests/book/test_format.py runs the same
# checks, and those of the notebooks' code cells. `make lint-fix` rewrites what it can.
LINT_PATHS = lib tests scripts bench book/_ext
lint: $(VENV)/.installed
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/ruff check $(LINT_PATHS)

lint-fix: $(VENV)/.installed
	$(BIN)/ruff format $(LINT_PATHS)
	$(BIN)/ruff check --fix $(LINT_PATHS)

# The browser test over every page of the built book (run `make book` first): needs
# Debian's chromium and chromium-driver (apt-get install chromium chromium-driver);
# with BOOK_SCREENSHOTS=1, screenshots of every page land in _build/screenshots/. Both files: test_html_figures.py
# checks the figure zoom, the print and the search snippets.
test-html: $(VENV)/.installed
	$(BIN)/python -m pytest tests/book/test_html.py tests/book/test_html_figures.py \
		tests/book/test_answer_key.py tests/book/test_book_css.py -m html --durations=12

# Lecture slides for each session of the syllabus (book/syllabus.md), reveal.js decks in
# _build/html/slides/ made from the built chapters (run `make book` first; seconds, nothing
# executed, reveal.js vendored in slides/vendor/, MathJax from the book's _static).
slides: $(VENV)/.installed
	$(BIN)/python scripts/make_slides.py --html _build/html

# The whole book as one PDF (_build/book.pdf), printed by the same headless chromium
# from the built HTML (run `make book` first).
pdf: $(VENV)/.installed
	$(BIN)/python scripts/book_pdf.py --html _build/html --out _build/book.pdf

# Read and run the notebooks in JupyterLab with jupyterlab-myst (blocks, macros and the
# {eval} numbers render): installs requirements-lab.txt into .venv on first use.
# JupyterLab works on a copy of book/ in _build/lab (made once; `make lab-reset` starts it
# over): opening a notebook rewrites its metadata and running it stores outputs, which must
# not land in the committed chapters. --allow-root only where make runs as root (containers).
# This is the instructor edition: Run All opens every solution. It says so before JupyterLab
# starts, and points students (also those studying alone) to `make lab-student`.
LABDIR ?= _build/lab
lab: $(VENV)/.lab-installed
	mkdir -p $(LABDIR) && cp -Rn book/. $(LABDIR)/
	$(BIN)/python scripts/sync_notebooks.py --lab $(LABDIR)
	@echo "make lab: this is the INSTRUCTOR edition: every exercise has its solution, and Run All opens them."
	@echo "make lab: students (also when studying alone) use 'make lab-student': no solutions, lab skeletons."
	$(BIN)/jupyter lab --ServerApp.root_dir=$(LABDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

# The same on the student edition's notebooks (no solutions: Run All opens no answers):
# scripts/make_student.py writes them to _build/student/notebooks (rewritten on every
# run), JupyterLab works on a copy in _build/lab-student made once, so a student's work
# survives the next `make lab-student` (rm -rf _build/lab-student starts it over);
# sync_notebooks.py --lab writes the kernel's metadata, so that opening one leaves it clean.
LABSTUDENTDIR ?= _build/lab-student
lab-student: $(VENV)/.lab-installed
	$(BIN)/python scripts/make_student.py --out _build/student --no-build
	mkdir -p $(LABSTUDENTDIR) && cp -Rn _build/student/notebooks/. $(LABSTUDENTDIR)/
	$(BIN)/python scripts/sync_notebooks.py --lab $(LABSTUDENTDIR)
	@echo "make lab-student: the STUDENT edition (no solutions, lab skeletons), in $(LABSTUDENTDIR)."
	$(BIN)/jupyter lab --ServerApp.root_dir=$(LABSTUDENTDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

lab-reset:
	rm -rf $(LABDIR)

# binder/overrides.json: JupyterLab renders every cell at once (lazily rendered markdown
# cells get no {eval} numbers from jupyterlab-myst on Run All); Binder copies it in postBuild.
$(VENV)/.lab-installed: $(VENV)/.installed requirements-lab.txt binder/overrides.json
	$(BIN)/python -m pip install --quiet -r requirements-lab.txt
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

# The declared dependency floors (pyproject.toml) are real: a fresh venv with exactly
# requirements-min.txt, the package installed from a copy of its files (not editable),
# and the fast library tests run from outside the repository (so `lib` is the installed
# one). Needs PyPI (the old versions are downloaded); 4 minutes on a busy 2-core machine.
# The tests run without the caller's PYTHONPATH, which could put the repository's lib first.
MINVENV ?= $(or $(TMPDIR),/tmp)/icl-book-venv-min
test-min:
	rm -rf $(MINVENV) && $(PYTHON) -m venv $(MINVENV)
	$(MINVENV)/bin/python -m pip install --quiet --upgrade pip
	$(MINVENV)/bin/python -m pip install --quiet -r requirements-min.txt
	mkdir -p $(MINVENV)/src && cp -r pyproject.toml README.md LICENSE lib $(MINVENV)/src/
	$(MINVENV)/bin/python -m pip install --quiet $(MINVENV)/src
	$(MINVENV)/bin/python -m pip list 2>/dev/null | grep -iE "^(numpy|scipy|matplotlib|ipywidgets) "
	cd $(MINVENV) && env -u PYTHONPATH bin/python -c "import lib; assert 'site-packages' in lib.__file__"
	cd $(MINVENV) && env -u PYTHONPATH bin/python -m pytest $(CURDIR)/tests -m "not slow and not html" \
		-p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

bench: $(VENV)/.installed
	$(BIN)/python bench/bench_solvers.py --threads 1 --markdown --out lib/data/bench_solvers.md
	$(BIN)/python bench/bench_theory.py --markdown > lib/data/bench_theory.md
	$(BIN)/python bench/bench_scaleout.py --markdown --out lib/data/bench_scaleout.md
	$(BIN)/python bench/bench_training.py --markdown --out lib/data/bench_training.md

# Large-d simulation tables lib/data/finite_size_*.csv/.json, one Dask task per row on a
# local cluster of one worker per core (DATA_FLAGS="--scheduler tcp://host:8786" for an
# existing cluster). Hours of computing (the h2 rows at d = 300/400 alone take 2-3
# hours on a quiet 2-core machine); resumes where an interrupted run stopped. See lib/data/README.md.
DATA_FLAGS ?=
# The chapter-7 training sweeps lib/data/training_*.csv/.json (scripts/make_training.py,
# the same pipeline; about 60-90 CPU-minutes) follow.
data: $(VENV)/.installed
	$(BIN)/python scripts/make_finite_size.py $(DATA_FLAGS)
	$(BIN)/python scripts/make_training.py $(DATA_FLAGS)

clean:
	rm -rf _build
