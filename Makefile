# rnnsearch — build, test, demo.  `make`, `make check`, `make demo`.
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CXX ?= c++
BUILD := build
PKGS := openblas libutf8proc sentencepiece zlib libmicrohttpd yaml-0.1
TEST_PKGS := check

# Recursive (=) so that pkg-config runs after `deps` may have installed packages.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))
TEST_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS))
TEST_LIBS = $(shell pkg-config --libs $(TEST_PKGS))

WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter
CFLAGS ?= -O2 -g
# -fPIC: the same objects make the static and the shared library (and the program).
PIC := -fPIC -fno-semantic-interposition
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) $(PKG_CFLAGS) $(PIC) -I src -MMD -MP
# C++ (src/text/spm.cc, the SentencePiece wrapper) gets the same flags, sanitizers included, less the C-only ones.
C_ONLY_FLAGS := -std=% -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
  -Wbad-function-cast -Wdeclaration-after-statement -Wnested-externs -Wimplicit-function-declaration \
  -Wimplicit-int -Wjump-misses-init -Wc++-compat
ALL_CXXFLAGS = -std=c++17 $(WARN) $(filter-out $(C_ONLY_FLAGS),$(CFLAGS) $(EXTRA_CFLAGS)) $(CXXFLAGS) $(PKG_CFLAGS) $(PIC) -I src -MMD -MP
LDLIBS_ALL = $(PKG_LIBS) $(ONEDNN_LIBS) -lm -pthread $(EXTRA_LDFLAGS)

# MPI (data-parallel training across processes, src/train/dist.c): `make MPI=1`, or on
# by itself when Open MPI's pkg-config file is present; `make MPI=0` leaves it out.
ifeq ($(origin MPI),undefined)
MPI := $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1)
endif
ifeq ($(MPI),1)
PKGS += ompi-c
ALL_CFLAGS += -DRS_WITH_MPI
endif

# oneDNN (the faster GEMM road, src/accel/gemm_road.c): on by itself when its
# header is found (Debian's libdnnl-dev, which ships no pkg-config file);
# `make ONEDNN=0` leaves it out, and OpenBLAS computes every product.
ifeq ($(origin ONEDNN),undefined)
ONEDNN := $(shell printf '\043include <oneapi/dnnl/dnnl.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
endif
ONEDNN_LIBS :=
ifeq ($(ONEDNN),1)
ALL_CFLAGS += -DRS_WITH_ONEDNN
ONEDNN_LIBS := -ldnnl -lgomp
endif

# The command layer (main.c, cmd_*.c) prints and exits; the library never does.
# cli/ is the commands' option and configuration framework (and training's
# log), below them so that tests link it.
# src/ holds one folder per layer, lowest first; a file includes only its own
# layer and those below it (scripts/check-layers.sh, run by make check).
LAYERS := common text model data nn accel search eval api train serve cli cmd
PROG_SRCS := $(wildcard src/cmd/*.c)
# A layer may keep a room of files in a folder of its own (src/cli/config/).
LIB_SRCS := $(foreach l,$(filter-out cmd,$(LAYERS)),$(wildcard src/$(l)/*.c src/$(l)/*/*.c))
LIB_CXX_SRCS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.cc))
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/src/%.o) $(LIB_CXX_SRCS:src/%.cc=$(BUILD)/src/%.o) $(BUILD)/gen/serve_page.o
PROG_OBJS := $(PROG_SRCS:src/%.c=$(BUILD)/src/%.o)
# tests/LAYER/test_ROOM.c: the suites, by the layer of src/ they test (cmd/:
# the program's); tests/support/: what they share; tests/runner.c runs them.
TEST_SRCS := $(wildcard tests/*/test_*.c)
TEST_HELPERS := $(wildcard tests/support/*.c)
# Tests link the library (cli/ included), not the commands.
TEST_OBJS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%.o) $(TEST_HELPERS:tests/%.c=$(BUILD)/tests/%.o) \
  $(BUILD)/tests/runner.o
LIB := $(BUILD)/librnnsearch.a
DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all nn-check check check-cores check-variant check-multihost check-asan check-browser check-format check-readme format fuzz demo install clean deps \
  install-lib uninstall-lib check-lib check-python check-asan-lib check-repro

# `make` builds what `make install` installs: the program here; the shared
# library, manual pages and completions join `all` below, where their names
# are defined (a prerequisite is expanded when its line is read).
all: rnnsearch

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@sh scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/src/%.o: src/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/src/%.o: src/%.cc | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

# The page of `serve` as a NUL-terminated C array (od and sed: no tool beyond POSIX).
$(BUILD)/gen/serve_page.c: src/serve/serve_page.html Makefile
	@mkdir -p $(dir $@)
	@{ echo '#include "serve/serve_page.h"'; echo 'const unsigned char rs_serve_page[] = {'; \
	  od -An -v -tx1 $< | sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; echo 'const unsigned long rs_serve_page_len = sizeof rs_serve_page - 1;'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c | $(DEPS_STAMP)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The shared library: librnnsearch.so.MAJOR.MINOR.PATCH (the version of
# src/api/rnnsearch.h), soname librnnsearch.so.MAJOR; it exports the public
# API only (src/api/librnnsearch.map), so it holds the layers up to api/:
# training and serving (and MPI, libmicrohttpd) stay the program's, and so
# does the reader of configuration files (common/settings.c with libyaml, and
# text/settings_file.c), which only the command line uses, as does cli/.
SO_LAYERS := $(filter-out train serve cli cmd,$(LAYERS))
SO_OBJS := $(filter-out $(BUILD)/src/common/settings.o $(BUILD)/src/text/settings_file.o,$(filter $(SO_LAYERS:%=$(BUILD)/src/%/%),$(LIB_OBJS)))
SO_PKGS := openblas libutf8proc sentencepiece zlib
LIB_VERSION := $(shell sed -n 's/^\#define RNNSEARCH_VERSION "\(.*\)"/\1/p' src/api/rnnsearch.h)
LIB_MAJOR := $(firstword $(subst ., ,$(LIB_VERSION)))
SONAME := librnnsearch.so.$(LIB_MAJOR)
SO := $(BUILD)/librnnsearch.so.$(LIB_VERSION)

all: $(SO) $(LIB)

$(SO): $(SO_OBJS) src/api/librnnsearch.map
	$(CXX) $(ALL_CXXFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/api/librnnsearch.map \
	  -Wl,--as-needed -o $@ $(SO_OBJS) $(shell pkg-config --libs $(SO_PKGS)) $(ONEDNN_LIBS) -lm -pthread $(EXTRA_LDFLAGS)
	ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/librnnsearch.so

# The examples see the public header only (src/api/rnnsearch.h, no -I src)
# and link the shared library, as a program built against an install would.
EXAMPLE_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -I src/api
EXAMPLES := translate align
$(BUILD)/examples/%: examples/%.c src/api/rnnsearch.h $(SO)
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< -L$(BUILD) -lrnnsearch -Wl,-rpath,$(CURDIR)/$(BUILD) $(EXTRA_LDFLAGS)

rnnsearch: $(PROG_OBJS) $(LIB)
	$(CXX) $(ALL_CXXFLAGS) -o $@ $(PROG_OBJS) $(LIB) $(LDLIBS_ALL)

# The test runner gathers every `Suite *name_suite(void)` defined in tests/*/test_*.c.
# Made on every build (a suite file removed changes no prerequisite's time),
# and replaced only when the list changed, so the runner is not rebuilt for nothing.
$(BUILD)/tests/suites.h: $(TEST_SRCS) FORCE | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@sed -n 's/^Suite \*\([a-z0-9_]*_suite\)(void)$$/X(\1)/p' $(TEST_SRCS) > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD)/tests/%.o: tests/%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -I tests/support -I $(BUILD)/tests -c $< -o $@

$(BUILD)/tests/runner.o: $(BUILD)/tests/suites.h

$(BUILD)/run_tests: $(TEST_OBJS) $(LIB)
	$(CXX) $(ALL_CXXFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(TEST_LIBS) $(LDLIBS_ALL)

FORCE:
.PHONY: FORCE

# Instructions per product of the int8 and float decoder-step products under
# callgrind (dev/int8-count.sh runs it; needs valgrind's callgrind.h).
$(BUILD)/int8-count: dev/int8-count.c $(LIB)
	$(CC) $(ALL_CFLAGS) -c $< -o $@.o
	$(CXX) $(ALL_CXXFLAGS) -o $@ $@.o $(LIB) $(LDLIBS_ALL)

# The GEMM roads one product at a time on a step's shapes (docs/performance.md,
# "GEMM roads"; needs oneDNN).
$(BUILD)/bench-gemm-roads: dev/bench-gemm-roads.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS_ALL)

# What OpenBLAS's packing of a product's weights costs a decoder step, and
# what their transposed copies save (docs/performance.md).
$(BUILD)/bench-pack: dev/bench-pack.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDLIBS_ALL)

# Warnings are errors here. Tests find the shared data at ../shared unless told.
check:
	@sh scripts/check-layers.sh $(LAYERS)
	@$(PYTHON) scripts/check-links.py
	@$(MAKE) --no-print-directory EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" rnnsearch $(BUILD)/run_tests \
	  $(EXAMPLES:%=$(BUILD)/examples/%)
	RNNSEARCH=./rnnsearch OPENBLAS_NUM_THREADS=1 $(BUILD)/run_tests
	EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" MAKE="$(MAKE)" PYTHON="$(PYTHON)" OPENBLAS_NUM_THREADS=1 \
	  sh tests/cmd/install-test.sh
	@$(MAKE) --no-print-directory EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" check-lib check-python

# Issue 42's eight reproductions (tests/cmd/repro-issue42.sh: a small model of
# 30 steps, a second or two); not part of `make check`.
check-repro: rnnsearch $(SO)
	RNNSEARCH=./rnnsearch RNNSEARCH_LIBRARY=$(CURDIR)/$(SO) PYTHON="$(PYTHON)" sh tests/cmd/repro-issue42.sh

# The suites under each OpenBLAS kernel family our users' processors pick
# (OPENBLAS_CORETYPE: Haswell, SkylakeX, Cooperlake, Zen, Sandybridge,
# Prescott; those this processor cannot run are left out, saying so), on
# OpenBLAS's road, then on oneDNN's (where built with it) limited to AVX-512
# and to AVX2: scripts/check-cores.sh.
check-cores:
	@$(MAKE) --no-print-directory EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" rnnsearch $(BUILD)/run_tests \
	  $(EXAMPLES:%=$(BUILD)/examples/%) $(SO)
	EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" MAKE="$(MAKE)" sh scripts/check-cores.sh $(CORES)

# The whole of `make check` as on processors this one is not: under
# shared/blas-variant (docs/guarantees.md, "Bits and rounding"), which splits
# every sgemm and sgemv and sums the parts in an order chosen by the call's
# shapes and a seed, once per seed of VARIANT_SEEDS, each with other random
# directions for the gradient checks, on OpenBLAS's road (the one it
# intercepts; RNNSEARCH_GEMM=openblas). RNNSEARCH_SHARED (default ../shared)
# says where shared/ is; without it the target is skipped, saying so (an
# error under RNNSEARCH_NO_SKIPS=1). About three times `make check`.
VARIANT_SEEDS ?= 1 2 3
check-variant:
	@variant="$${RNNSEARCH_SHARED:-../shared}/blas-variant/run.sh"; \
	if [ ! -f "$$variant" ]; then \
	  echo "check-variant: skipped: $$variant not found (set RNNSEARCH_SHARED)"; \
	  [ "$$RNNSEARCH_NO_SKIPS" != 1 ] || exit 1; exit 0; \
	fi; \
	for seed in $(VARIANT_SEEDS); do \
	  echo "check-variant: BLAS_VARIANT_SEED=$$seed, RNNSEARCH_GRADCHECK_SEED=$$seed"; \
	  RNNSEARCH_GEMM=openblas RNNSEARCH_GRADCHECK_SEED=$$seed sh "$$variant" --seed $$seed $(MAKE) --no-print-directory check || \
	    { echo "check-variant: failed with seed $$seed"; exit 1; }; \
	done; echo "check-variant: passed with seeds $(VARIANT_SEEDS)"

# Training across hosts emulated by network namespaces joined by a bridge (a
# private subnet that exists only inside them): the model one process trains,
# a rank per host, a resume on another number of hosts, a host killed, a link
# down, a slow host (docs/scaling.md, "Across hosts"). Needs root and
# `ip netns`; skips, saying why, without them. About a minute.
check-multihost:
	@$(MAKE) --no-print-directory EXTRA_CFLAGS="-Werror $(EXTRA_CFLAGS)" rnnsearch
	RNNSEARCH=./rnnsearch bash scripts/multihost.sh

# The library as its users see it, against a dates model trained for one
# epoch (a few seconds): the examples agree with the program
# (scripts/check-lib.sh); tests/cmd/install-test.sh builds one against the
# installed library.
CHECK_MODEL := $(BUILD)/check/dates
$(CHECK_MODEL)/best.ckpt: rnnsearch corpora/dates/train.tsv corpora/dates/dev.tsv
	rm -rf $(CHECK_MODEL) && mkdir -p $(dir $(CHECK_MODEL))
	OPENBLAS_NUM_THREADS=1 ./rnnsearch train --train corpora/dates/train.tsv --dev corpora/dates/dev.tsv \
	  --out $(CHECK_MODEL) --epochs 1 --threads 1 --quiet > $(CHECK_MODEL).log 2>&1 || \
	  { cat $(CHECK_MODEL).log; exit 1; }

check-lib: $(CHECK_MODEL)/best.ckpt $(EXAMPLES:%=$(BUILD)/examples/%)
	OPENBLAS_NUM_THREADS=1 sh scripts/check-lib.sh $(BUILD) $(CHECK_MODEL)

# The Python package's tests (python/tests, pytest) against the build's
# library and program. Without pytest or NumPy they are skipped, saying so,
# unless RNNSEARCH_NO_SKIPS=1 (CI), where that fails.
check-python: $(CHECK_MODEL)/best.ckpt $(SO)
	@if $(PYTHON) -c 'import pytest, numpy' 2>/dev/null; then \
	  RNNSEARCH_LIBRARY=$(CURDIR)/$(SO) RNNSEARCH=$(CURDIR)/rnnsearch RNNSEARCH_TEST_MODEL=$(CURDIR)/$(CHECK_MODEL) \
	  OPENBLAS_NUM_THREADS=1 PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; \
	elif [ "$$RNNSEARCH_NO_SKIPS" = 1 ]; then \
	  echo "check-python: $(PYTHON) lacks pytest or numpy (RNNSEARCH_NO_SKIPS=1: failing)"; exit 1; \
	else \
	  echo "check-python: skipped: $(PYTHON) lacks pytest or numpy (Debian: apt-get install python3-pytest python3-numpy)"; \
	fi

# The C style of .clang-format: `make format` applies it to the sources and
# tests, `make check-format` fails on any file that does not follow it.
FORMAT_FILES = $(shell git ls-files 'src/*.c' 'src/*.h' 'src/*.cc' 'tests/*.c' 'tests/*.h' 'examples/*.c' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)
check-format:
	@echo "clang-format --dry-run --Werror (the sources and tests)"
	@clang-format --dry-run --Werror $(FORMAT_FILES)

# The network and its gradient checks alone, with a C compiler, OpenBLAS and
# Check (no `make deps`, no other library): nn/, what it uses below it
# (errors, the RNG, the clock, batches, the model's tables and its
# vocabulary, whose files, read through text/ with zlib and utf8proc, are
# vocab_file.c's and not needed), and the suites of its layers. Its own
# objects, in $(BUILD)/nn-check: the flags are not the program's.
NN_DIR := $(BUILD)/nn-check
NN_SRCS := src/common/error.c src/common/rng.c src/common/clock.c src/data/batch.c \
  src/model/config.c src/model/params.c src/model/vocab.c src/model/model.c $(wildcard src/nn/*.c)
NN_TESTS := tests/nn/test_gru.c tests/nn/test_attention.c tests/nn/test_readout.c tests/nn/test_network.c \
  tests/nn/test_linalg.c tests/nn/test_vecmath.c tests/nn/test_optimizer.c tests/nn/test_workspace.c \
  tests/support/gradcheck.c tests/support/tinymodel.c tests/support/testskip.c tests/support/testlimit.c \
  tests/runner.c
NN_OBJS := $(NN_SRCS:%.c=$(NN_DIR)/%.o) $(NN_TESTS:%.c=$(NN_DIR)/%.o)
NN_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -DRS_NN_CHECK $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) \
  $(shell pkg-config --cflags openblas check) -pthread -I src -I tests/support -I $(NN_DIR) -MMD -MP

$(NN_DIR)/suites.h: $(filter tests/nn/test_%.c,$(NN_TESTS))
	@mkdir -p $(dir $@)
	@sed -n 's/^Suite \*\([a-z0-9_]*_suite\)(void)$$/X(\1)/p' $^ > $@

$(NN_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(NN_CFLAGS) -c $< -o $@

$(NN_DIR)/tests/runner.o: $(NN_DIR)/suites.h

$(NN_DIR)/run_tests: $(NN_OBJS)
	$(CC) -o $@ $^ $(shell pkg-config --libs openblas check) -lm -pthread $(EXTRA_LDFLAGS)

nn-check: $(NN_DIR)/run_tests
	OPENBLAS_NUM_THREADS=1 $(NN_DIR)/run_tests

-include $(NN_OBJS:.o=.d)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build tree.
check-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan \
	  EXTRA_CFLAGS="-Werror -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" build-asan/run_tests $(EXAMPLES:%=build-asan/examples/%)
	RNNSEARCH=./rnnsearch OPENBLAS_NUM_THREADS=1 CK_FORK=no ASAN_OPTIONS=detect_leaks=1 build-asan/run_tests
	@$(MAKE) --no-print-directory check-asan-lib

# The examples, and the library under the Python tests, with the sanitizers:
# Python is not built with them, so their runtime is preloaded (and leak
# checking, which would report the interpreter's own, is off there).
ASAN_RUNTIME = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)
check-asan-lib: $(CHECK_MODEL)/best.ckpt
	OPENBLAS_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1 sh scripts/check-lib.sh build-asan $(CHECK_MODEL)
	@if $(PYTHON) -c 'import pytest, numpy' 2>/dev/null; then \
	  LD_PRELOAD="$(ASAN_RUNTIME)" ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 \
	  RNNSEARCH_LIBRARY=$(CURDIR)/build-asan/librnnsearch.so.$(LIB_VERSION) RNNSEARCH=$(CURDIR)/rnnsearch \
	  RNNSEARCH_TEST_MODEL=$(CURDIR)/$(CHECK_MODEL) OPENBLAS_NUM_THREADS=1 PYTHONPATH=$(CURDIR)/python \
	  $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; \
	elif [ "$$RNNSEARCH_NO_SKIPS" = 1 ]; then \
	  echo "check-asan-lib: $(PYTHON) lacks pytest or numpy (RNNSEARCH_NO_SKIPS=1: failing)"; exit 1; \
	fi

# The explorer page of `serve` in headless Chromium (needs chromium and `npm ci` in tests/browser).
check-browser: rnnsearch
	RNNSEARCH=$(CURDIR)/rnnsearch OPENBLAS_NUM_THREADS=1 node tests/browser/serve-page.test.mjs

# libFuzzer on the checkpoint, safetensors and configuration file readers (tests/fuzz/), each for
# FUZZ_SECONDS, under ASan and UBSan, from the seeds in tests/fuzz/corpus/ (new
# inputs go to build-fuzz/corpus-*). Skipped, saying so, without clang's libFuzzer.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS := checkpoint safetensors settings
fuzz:
	@mkdir -p build-fuzz
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	  clang -x c -fsanitize=fuzzer -o build-fuzz/probe - >/dev/null 2>&1; then \
	  echo "make fuzz: skipped: clang with libFuzzer not found (Debian: apt-get install clang)"; \
	else \
	  $(MAKE) --no-print-directory BUILD=build-fuzz CC=clang CXX=clang++ \
	    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    EXTRA_LDFLAGS="-fsanitize=fuzzer,address,undefined" $(FUZZ_TARGETS:%=build-fuzz/fuzz_%) && \
	  for t in $(FUZZ_TARGETS); do \
	    mkdir -p build-fuzz/corpus-$$t && \
	    echo "make fuzz: $$t for $(FUZZ_SECONDS) s" && \
	    build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	      -artifact_prefix=build-fuzz/$$t- build-fuzz/corpus-$$t tests/fuzz/corpus/$$t || exit 1; \
	  done; \
	fi

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(LIB)
	$(CC) $(ALL_CFLAGS) -c $< -o $@.o
	$(CXX) $(ALL_CXXFLAGS) -o $@ $@.o $(LIB) $(LDLIBS_ALL)

demo: rnnsearch
	sh scripts/demo.sh

# The README's quick start, run as written in a fresh clone of HEAD.
check-readme:
	sh scripts/check-readme.sh

# make install: the program, its manual pages (rnnsearch(1) and one per
# command, made by help2man from --help), bash and zsh completions (drawn from
# --help too) and the docs; make uninstall removes exactly these. Nothing of
# the checkout is needed at run time (the page of serve is compiled in).
BINDIR = $(PREFIX)/bin
MAN1DIR = $(PREFIX)/share/man/man1
BASHCOMPDIR = $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(PREFIX)/share/zsh/site-functions
DOCDIR = $(PREFIX)/share/doc/rnnsearch
DOC_FILES := $(wildcard docs/*)
MAN_STAMP := $(BUILD)/man/.stamp
COMPLETIONS := $(BUILD)/completion/rnnsearch $(BUILD)/completion/_rnnsearch

.PHONY: man completion uninstall install-bin install-man install-completion install-doc

man: $(MAN_STAMP)
$(MAN_STAMP): rnnsearch scripts/gen-man.sh scripts/help-commands.sh
	@rm -rf $(BUILD)/man
	sh scripts/gen-man.sh ./rnnsearch $(BUILD)/man/man1
	@touch $@

completion: $(COMPLETIONS)
$(BUILD)/completion/rnnsearch: rnnsearch scripts/gen-completions.sh scripts/help-commands.sh
	@mkdir -p $(dir $@)
	sh scripts/gen-completions.sh ./rnnsearch bash > $@.tmp && mv $@.tmp $@
$(BUILD)/completion/_rnnsearch: rnnsearch scripts/gen-completions.sh scripts/help-commands.sh
	@mkdir -p $(dir $@)
	sh scripts/gen-completions.sh ./rnnsearch zsh > $@.tmp && mv $@.tmp $@

all: $(MAN_STAMP) $(COMPLETIONS)

install: install-bin install-man install-completion install-doc install-lib

install-bin: rnnsearch
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 rnnsearch $(DESTDIR)$(BINDIR)/rnnsearch

install-man: $(MAN_STAMP)
	install -d $(DESTDIR)$(MAN1DIR)
	install -m 644 $(BUILD)/man/man1/*.1 $(DESTDIR)$(MAN1DIR)

install-completion: $(COMPLETIONS)
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 $(BUILD)/completion/rnnsearch $(DESTDIR)$(BASHCOMPDIR)/rnnsearch
	install -m 644 $(BUILD)/completion/_rnnsearch $(DESTDIR)$(ZSHCOMPDIR)/_rnnsearch

install-doc:
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/docs

# The manual pages are rnnsearch.1 and rnnsearch-COMMAND.1 (the names
# gen-man.sh gives): removed by name, so that uninstalling needs no build.
uninstall: uninstall-lib
	rm -f $(DESTDIR)$(BINDIR)/rnnsearch
	rm -f $(DESTDIR)$(MAN1DIR)/rnnsearch.1 $(DESTDIR)$(MAN1DIR)/rnnsearch-*.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/rnnsearch $(DESTDIR)$(ZSHCOMPDIR)/_rnnsearch
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(DOC_FILES:docs/%=$(DESTDIR)$(DOCDIR)/docs/%)
	rmdir $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# The library: header, shared (with its soname and development links) and
# static libraries, rnnsearch.pc, and the Python package (which finds the
# library by the path make install writes into its _paths.py). The package
# goes where PYTHON imports from for PREFIX (scripts/python-site.py): the
# user site for PREFIX=~/.local, /usr/local/lib/python3.X/dist-packages for
# Debian's /usr/local, else PREFIX/lib/python3.X/site-packages (PYTHONPATH).
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# Debian's python3 (with NumPy, pytest, matplotlib) when present.
PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
PYTHONDIR ?= $(shell $(PYTHON) scripts/python-site.py '$(PREFIX)' 2>/dev/null || echo '$(LIBDIR)/python3/site-packages')
PY_FILES := $(wildcard python/rnnsearch/*.py)
LIB_INSTALLED := $(INCLUDEDIR)/rnnsearch.h $(LIBDIR)/librnnsearch.so.$(LIB_VERSION) \
  $(LIBDIR)/$(SONAME) $(LIBDIR)/librnnsearch.so $(LIBDIR)/librnnsearch.a $(PKGCONFIGDIR)/rnnsearch.pc \
  $(PY_FILES:python/%=$(PYTHONDIR)/%) $(PYTHONDIR)/rnnsearch/_paths.py

install-lib: $(SO) $(LIB)
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PYTHONDIR)/rnnsearch
	install -m 644 src/api/rnnsearch.h $(DESTDIR)$(INCLUDEDIR)/rnnsearch.h
	install -m 755 $(SO) $(DESTDIR)$(LIBDIR)/
	ln -sf librnnsearch.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/librnnsearch.so
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/librnnsearch.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  -e 's|@VERSION@|$(LIB_VERSION)|' src/api/rnnsearch.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/rnnsearch.pc
	install -m 644 $(PY_FILES) $(DESTDIR)$(PYTHONDIR)/rnnsearch/
	printf 'LIBDIR = "%s"\nLIBRARY = "%s"\n' '$(LIBDIR)' '$(LIBDIR)/$(SONAME)' > $(DESTDIR)$(PYTHONDIR)/rnnsearch/_paths.py
	@$(PYTHON) scripts/python-site.py --note '$(PYTHONDIR)' 2>/dev/null || \
	  echo 'The Python package rnnsearch is in $(PYTHONDIR)/rnnsearch (set PYTHONPATH=$(PYTHONDIR) unless $(PYTHON) reads it).'

uninstall-lib:
	rm -f $(LIB_INSTALLED:%=$(DESTDIR)%)
	rm -rf $(DESTDIR)$(PYTHONDIR)/rnnsearch/__pycache__
	rmdir $(DESTDIR)$(PYTHONDIR)/rnnsearch 2>/dev/null || true

clean:
	rm -rf $(BUILD) build-asan build-fuzz rnnsearch

# Objects and programs depend on the flags they were built with, through a
# stamp named by a checksum of the compilers, flags and libraries: `make check`
# (-Werror) after `make` or `make demo` compiles everything again, and so does
# turning MPI on or off, or any other EXTRA_CFLAGS, CFLAGS or CC.
FLAGS_SUM := $(shell printf '%s' '$(strip $(CC) $(ALL_CFLAGS) | $(CXX) $(ALL_CXXFLAGS) | $(LDLIBS_ALL))' | cksum | cut -d' ' -f1)
FLAGS_STAMP := $(BUILD)/.flags-$(FLAGS_SUM)
$(FLAGS_STAMP):
	@mkdir -p $(BUILD) && rm -f $(BUILD)/.flags-* $(BUILD)/.mpi-* && touch $@
$(LIB_OBJS) $(PROG_OBJS) $(TEST_OBJS) rnnsearch $(BUILD)/run_tests: $(FLAGS_STAMP)

-include $(LIB_OBJS:.o=.d) $(PROG_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
