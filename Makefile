# fabricsim build. `make` builds the library, the CLI and the tests;
# see README.md for the quick start and `make help` for every target.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wshadow -Werror
CFLAGS  ?=
# make MPI=1: the same build with mpicc into build-mpi, whose `sweep` runs
# under mpirun (rank 0 hands out the points and writes the database).
ifeq ($(MPI),1)
CC      := mpicc
BUILD   := build-mpi
ALLCFLAGS_MPI := -DFS_MPI
endif

# -fPIC: the same objects make the static and the shared library
ALLCFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC $(OPT) $(WARN) -Iinclude $(ALLCFLAGS_MPI) $(CFLAGS)
LDLIBS  := -lcjson -lglpk -lsqlite3 -lm
FUZZ_SECONDS ?= 60

LIB_SRC   := $(sort $(wildcard src/base/*.c src/topo/*.c src/route/*.c \
               src/sim/*.c src/scenario/*.c src/report/*.c \
               src/coll/*.c src/work/*.c src/optical/*.c src/ctl/*.c \
               src/sweep/*.c))
CLI_SRC   := $(sort $(wildcard src/cli/*.c))
TEST_SRC  := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libfabricsim.a
SOVER     := 0
SHLIB     := $(BUILD)/libfabricsim.so.$(SOVER)
BIN       := $(BUILD)/fabricsim
TESTBIN   := $(BUILD)/fabricsim-tests
BENCHBIN  := $(BUILD)/fabricsim-bench

.PHONY: all demo test sanitize bench fuzz install api-check clean help deps

all: $(BIN) $(TESTBIN) $(SHLIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libfabricsim.so.$(SOVER) -o $@ $^ $(LDLIBS)

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(TESTBIN): $(TEST_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(TEST_OBJ) $(LIB) $(LDLIBS)

$(BENCHBIN): $(BENCH_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(BENCH_OBJ) $(LIB) $(LDLIBS)

deps:
	@scripts/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	@echo "== fabricsim train examples/gpt-13b.json (13B GPT, 64 GPUs, tp 8 x pp 2 x dp 4, leaf-spine) =="
	@$(BIN) train examples/gpt-13b.json
	@echo
	@echo "== fabricsim sim examples/demo.json (leaf-spine, 2:1 oversubscribed, ECMP vs spray) =="
	@$(BIN) sim examples/demo.json --summary
	@$(BIN) sim examples/demo.json --summary --routing spray
	@echo
	@echo "== fabricsim train examples/gpt-13b-optimized.json (ring all-reduce on a 2:1 leaf-spine: routes re-optimised every 1 ms vs ECMP) =="
	@$(BIN) train examples/gpt-13b-optimized.json

test: $(BIN) $(TESTBIN)
	$(TESTBIN) --cli $(BIN)

# Same tests under AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize:
	@$(MAKE) --no-print-directory BUILD=build-san \
	  OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  test

bench: $(BENCHBIN) $(BIN)
	$(BENCHBIN)
	scripts/bench-sweep.sh

# libFuzzer on the scenario and topology parsers (needs clang).
fuzz:
	@mkdir -p $(BUILD)/fuzz/corpus
	@cp -n examples/*.json tests/data/bad/*.json $(BUILD)/fuzz/corpus/ 2>/dev/null || true
	@for f in tests/data/fuzz-crashes/*.json; do case $$f in */oom-*) ;; \
	  *) cp -n $$f $(BUILD)/fuzz/corpus/ 2>/dev/null || true;; esac; done
	clang -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Iinclude \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $(BUILD)/fuzz/fuzz-scenario fuzz/fuzz_scenario.c $(LIB_SRC) $(LDLIBS)
	$(BUILD)/fuzz/fuzz-scenario -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -timeout=10 -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus

# The CLI, both libraries, the headers and a pkg-config file:
# `pkg-config --cflags --libs fabricsim` (examples/api.c builds with it;
# `make api-check` installs into a scratch prefix and tries).
LIBDIR ?= $(PREFIX)/lib
install: $(BIN) $(LIB) $(SHLIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/fabricsim
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fabricsim
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libfabricsim.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libfabricsim.so.$(SOVER)
	ln -sf libfabricsim.so.$(SOVER) $(DESTDIR)$(LIBDIR)/libfabricsim.so
	install -m 644 include/fabricsim/*.h $(DESTDIR)$(PREFIX)/include/fabricsim/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' scripts/fabricsim.pc.in \
	  > $(DESTDIR)$(LIBDIR)/pkgconfig/fabricsim.pc

api-check:
	@rm -rf $(BUILD)/api-prefix
	@$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/api-prefix >/dev/null
	PKG_CONFIG_PATH=$(CURDIR)/$(BUILD)/api-prefix/lib/pkgconfig sh -c \
	  '$(CC) -std=c11 -Wall -Wextra -Werror -o $(BUILD)/api examples/api.c $$(pkg-config --cflags --libs fabricsim)'
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/api-prefix/lib $(BUILD)/api

clean:
	rm -rf build build-san build-clang build-mpi

help:
	@echo "make demo      install missing packages, build, run the bundled example"
	@echo "make test      build and run the tests"
	@echo "make sanitize  the tests under ASan + UBSan"
	@echo "make bench     benchmarks (print wall time, events/s, peak RSS)"
	@echo "make fuzz      fuzz the parsers for FUZZ_SECONDS (default 60)"
	@echo "make install   install to PREFIX (default /usr/local): CLI, libfabricsim.a/.so, headers, fabricsim.pc"
	@echo "make api-check install into build/api-prefix and build examples/api.c against it"

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)
