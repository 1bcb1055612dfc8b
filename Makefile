# fabricsim build. `make` builds the library, the CLI and the tests;
# see README.md for the quick start and `make help` for every target.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wshadow -Werror
CFLAGS  ?=
ALLCFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) -Iinclude $(CFLAGS)
LDLIBS  := -lcjson -lglpk -lm
FUZZ_SECONDS ?= 60

LIB_SRC   := $(sort $(wildcard src/base/*.c src/topo/*.c src/route/*.c \
               src/sim/*.c src/scenario/*.c src/report/*.c \
               src/coll/*.c src/work/*.c src/optical/*.c src/ctl/*.c))
CLI_SRC   := $(sort $(wildcard src/cli/*.c))
TEST_SRC  := $(sort $(wildcard tests/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libfabricsim.a
BIN       := $(BUILD)/fabricsim
TESTBIN   := $(BUILD)/fabricsim-tests
BENCHBIN  := $(BUILD)/fabricsim-bench

.PHONY: all demo test sanitize bench fuzz install clean help deps ns3 ns3-test

all: $(BIN) $(TESTBIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(TESTBIN): $(TEST_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(TEST_OBJ) $(LIB) $(LDLIBS)

$(BENCHBIN): $(BENCH_OBJ) $(LIB)
	$(CC) $(ALLCFLAGS) -o $@ $(BENCH_OBJ) $(LIB) $(LDLIBS)

# The ns-3 validation backend (`fabricsim sim --backend ns3`): a C++17
# program, built only here, when ns-3 (Debian libns3-dev) is installed.
# The libraries are named directly: Debian's ns3 .pc files also list
# libgsl.so, which is only there with libgsl-dev.
CXX       ?= c++
NS3_MODS  := ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control
NS3_LIBS  := -lns3-traffic-control -lns3-applications -lns3-point-to-point -lns3-internet \
             -lns3-bridge -lns3-network -lns3-stats -lns3-core
NS3BIN    := $(BUILD)/fabricsim-ns3

ns3: $(BIN)
	@if ! pkg-config --exists $(NS3_MODS) 2>/dev/null; then \
	  echo "make ns3: ns-3 development files not found (pkg-config $(NS3_MODS))."; \
	  echo "  install them with scripts/install-deps.sh (Debian package libns3-dev), then run make ns3 again."; \
	  exit 1; fi
	@$(MAKE) --no-print-directory $(NS3BIN)

$(NS3BIN): tools/ns3/fabricsim_ns3.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror -o $@ $< $(NS3_LIBS)

# The ns-3 checks: closed forms and agreement with the fluid engine on
# small cases (scripts/ns3-test.sh); needs `make ns3`.
ns3-test: ns3
	scripts/ns3-test.sh $(BIN)

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

install: $(BIN) $(LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/fabricsim
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/fabricsim
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libfabricsim.a
	install -m 644 include/fabricsim/*.h $(DESTDIR)$(PREFIX)/include/fabricsim/

clean:
	rm -rf build build-san build-clang

help:
	@echo "make demo      install missing packages, build, run the bundled example"
	@echo "make test      build and run the tests"
	@echo "make sanitize  the tests under ASan + UBSan"
	@echo "make bench     benchmarks (print wall time, events/s, peak RSS)"
	@echo "make fuzz      fuzz the parsers for FUZZ_SECONDS (default 60)"
	@echo "make install   install to PREFIX (default /usr/local)"
	@echo "make ns3       the ns-3 validation backend build/fabricsim-ns3 (needs libns3-dev)"
	@echo "make ns3-test  its checks (closed form, fluid agreement)"

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)
