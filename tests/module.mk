# tests/: one Check suite per module (tests/test_NAME.c defines
# `Suite *NAME_suite(void)`), collected into one runner; libFuzzer targets
# in tests/fuzz/fuzz_NAME.c, with seed corpora in tests/fuzz/corpus/NAME/.

TEST_SRCS   := $(sort $(wildcard tests/test_*.c))
TEST_NAMES  := $(patsubst tests/test_%.c,%,$(TEST_SRCS))
TESTLIB_SRCS := tests/check_main.c tests/testutil.c
TEST_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRCS) $(TESTLIB_SRCS))
TEST_BIN    := $(BUILD)/tests/rnr-tests
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)
# Unicorn: the instruction-level oracle of tests/test_rru_lockstep.c.
CHECK_LIBS  += -lunicorn
SUITES_H    := $(BUILD)/gen/suites.h
DEPFILES    += $(TEST_OBJS:.o=.d)

# The suite list is rewritten only when the set of test files changes.
$(shell mkdir -p $(BUILD)/gen && { printf 'SUITE(%s)\n' $(TEST_NAMES) > $(SUITES_H).tmp; \
    cmp -s $(SUITES_H).tmp $(SUITES_H) || mv $(SUITES_H).tmp $(SUITES_H); rm -f $(SUITES_H).tmp; })

$(BUILD)/obj/tests/check_main.o: CPPFLAGS += -I$(BUILD)/gen

$(TEST_BIN): $(TEST_OBJS) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_OBJS) $(ALL_LIBS) $(LDLIBS) $(CHECK_LIBS)

# Environment the tests read: where the front end, the guest binaries and the
# test data are. CK_TIMEOUT_MULTIPLIER stretches Check's per-case timeouts
# under the sanitizers.
TEST_ENV := RNR_BIN=$(abspath $(RNR)) RNR_GUEST_DIR=$(abspath $(GUEST_DIR)) \
            RNR_TEST_DATA=$(abspath tests/data) RNR_FUZZ_CORPUS=$(abspath tests/fuzz/corpus)
TIMEOUT_MULT_release := 1
TIMEOUT_MULT_debug   := 2
TIMEOUT_MULT_asan    := 4
TIMEOUT_MULT_tsan    := 6

test: $(TEST_BIN) $(RNR)
	$(TEST_ENV) CK_TIMEOUT_MULTIPLIER=$(TIMEOUT_MULT_$(VARIANT)) $(TEST_BIN)

# The check of `make bench` / `make sweep`'s machinery (docs/bench.md): tiny
# job lists through tools/bench-job and tools/bench-report, in the release
# build's `make test` only (it measures nothing; the sanitizers add nothing).
.PHONY: bench-selftest
bench-selftest: $(RNR) $(GUEST_BINS)
	tests/bench-selftest $(abspath $(RNR)) $(abspath $(GUEST_DIR))
ifeq ($(VARIANT),release)
test: bench-selftest
endif

# The suites with threads of their own, under ThreadSanitizer (VARIANT=tsan):
# the first report of a data race (or a lock-order inversion) fails the case.
TSAN_SUITES := replay_engine replay
.PHONY: tsan-run
tsan-run: $(TEST_BIN) $(RNR)
	$(TEST_ENV) CK_TIMEOUT_MULTIPLIER=$(TIMEOUT_MULT_tsan) \
	    TSAN_OPTIONS='halt_on_error=1 abort_on_error=1 second_deadlock_stack=1' $(TEST_BIN) $(TSAN_SUITES)

# valgrind on the test binary, then on the front end itself. The binary runs
# the suites whose cases call the libraries in-process (the rnr processes a
# case starts run natively); the suites that work through rnr commands are
# left to tests/valgrind-cli, which runs every command under valgrind once
# on a small recording and on bad inputs.
VALGRIND_SKIP   := adaptive_cli backend_cli cli gdb newuser online options record replay run stats suite
VALGRIND_SUITES := $(filter-out $(VALGRIND_SKIP),$(TEST_NAMES))
valgrind-run: $(TEST_BIN) $(RNR) $(GUEST_BINS)
	$(TEST_ENV) CK_FORK=no RNR_VALGRIND=1 valgrind -q --leak-check=full \
	    --errors-for-leak-kinds=definite,indirect --error-exitcode=1 $(TEST_BIN) $(VALGRIND_SUITES)
	tests/valgrind-cli $(abspath $(RNR)) $(abspath $(GUEST_DIR))

# Fuzzing (VARIANT=fuzz, clang): each target links the components it needs.
FUZZ_SRCS  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $< $(ALL_LIBS) $(LDLIBS)

ifeq ($(VARIANT),fuzz)
# Runs every target for FUZZ_SECONDS on a scratch copy of its seed corpus;
# a crash leaves its input in build/fuzz/crashes/ and fails the target.
fuzz: $(FUZZ_BINS)
	@set -e; for b in $(FUZZ_BINS); do n=$${b##*/fuzz_}; \
	  work=$(BUILD)/fuzz/work/$$n; rm -rf $$work; mkdir -p $$work $(BUILD)/fuzz/crashes; \
	  if [ -d tests/fuzz/corpus/$$n ]; then cp tests/fuzz/corpus/$$n/* $$work/ 2>/dev/null || true; fi; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
	  $$b -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crashes/$$n- \
	      -max_len=65536 $$work 2>$(BUILD)/fuzz/$$n.log || { tail -40 $(BUILD)/fuzz/$$n.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units|stat::peak_rss' $(BUILD)/fuzz/$$n.log | sed "s/^/  $$n /"; \
	done
else
fuzz:
	$(MAKE) VARIANT=fuzz fuzz
endif

# Benchmark programs: tests/bench/bench_NAME.c -> $(BUILD)/bench/bench_NAME,
# run by `make bench` through the bench-NAME targets of each module.
BENCH_SRCS := $(sort $(wildcard tests/bench/bench_*.c))
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
DEPFILES   += $(patsubst %.c,$(BUILD)/obj/%.d,$(BENCH_SRCS))

$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(ALL_LIBS) $(LDLIBS)

BENCH_TARGETS += bench-formats
.PHONY: bench-formats
bench-formats: $(BUILD)/bench/bench_formats
	$(BUILD)/bench/bench_formats $(BUILD)/bench/formats.log

# The gdb server's speed and the checkpoints' memory (tools/bench-debug,
# docs/debugging.md).
BENCH_TARGETS += bench-debug
.PHONY: bench-debug
bench-debug: $(RNR) $(GUEST_BINS)
	tools/bench-debug $(abspath $(RNR)) $(abspath $(GUEST_DIR)) $(BUILD)/bench
