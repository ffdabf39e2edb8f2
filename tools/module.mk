# tools/: the `rnr` front end. Subcommands are rows of tools/commands.def.
tools_SRCS := $(sort $(wildcard tools/*.c))
tools_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(tools_SRCS))
DEPFILES   += $(tools_OBJS:.o=.d)
RNR_VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

$(BUILD)/obj/tools/rnr.o: CPPFLAGS += -DRNR_VERSION='"$(RNR_VERSION)"'

$(RNR): $(tools_OBJS) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(tools_OBJS) $(ALL_LIBS) $(LDLIBS)

# `make bench`: the suite report (docs/bench.md): one full job per suite
# workload (tools/bench-jobs bench), run one at a time (wall times), merged
# by tools/bench-report into $(BENCH_OUT)/REPORT.md, results/*.csv, plots/.
BENCH_OUT ?= bench
SUITE_BENCH_DIR := $(BUILD)/bench-suite
BENCH_TARGETS += bench-suite
.PHONY: bench-suite sweep-run
bench-suite: $(RNR) $(GUEST_BINS)
	@rm -rf $(SUITE_BENCH_DIR) && mkdir -p $(SUITE_BENCH_DIR)/raw
	tools/bench-jobs bench $(RNR) $(GUEST_DIR) $(SUITE_BENCH_DIR)/raw > $(SUITE_BENCH_DIR)/jobs.txt
	tools/bench-run-jobs $(SUITE_BENCH_DIR)/jobs.txt
	tools/bench-report --jobs $(SUITE_BENCH_DIR)/jobs.txt $(SUITE_BENCH_DIR)/raw $(BENCH_OUT)

# `make sweep`: the sensitivity sweeps (tools/bench-jobs sweep) on
# SWEEP_JOBS job slots with GNU parallel, merged into $(SWEEP_OUT).
SWEEP_OUT  ?= bench/sweep
SWEEP_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SWEEP_DIR  := $(BUILD)/sweep
sweep-run: $(RNR) $(GUEST_BINS)
	@rm -rf $(SWEEP_DIR) && mkdir -p $(SWEEP_DIR)/raw
	tools/bench-jobs sweep $(RNR) $(GUEST_DIR) $(SWEEP_DIR)/raw > $(SWEEP_DIR)/jobs.txt
	tools/bench-run-jobs -j $(SWEEP_JOBS) $(SWEEP_DIR)/jobs.txt
	tools/bench-report --jobs $(SWEEP_DIR)/jobs.txt $(SWEEP_DIR)/raw $(SWEEP_OUT)

# `make bench`: memory high-water and time of every step at 1x, 4x and 16x
# the length of a recording (tools/bench-memory; 16x >= 10^9 instructions).
BENCH_TARGETS += bench-memory
.PHONY: bench-memory
bench-memory: $(RNR) $(GUEST_BINS)
	tools/bench-memory $(abspath $(RNR)) $(abspath $(GUEST_DIR)) $(BENCH_MEMORY_BASE)

# `make bench`: peak memory of record and replay on 1 and 2 workers for a
# guest that writes OUTPUT_MEMORY_MIB MiB to stdout (tools/bench-output-memory).
OUTPUT_MEMORY_MIB ?= 1 100
BENCH_TARGETS += bench-output-memory
.PHONY: bench-output-memory
bench-output-memory: $(RNR) $(GUEST_BINS)
	tools/bench-output-memory $(abspath $(RNR)) $(abspath $(GUEST_DIR)) $(OUTPUT_MEMORY_MIB)

# `make bench`: the recording slowdown in host CPU seconds, run and record
# alternated (tools/bench-slowdown; SLOWDOWN_REPS pairs per program).
SLOWDOWN_REPS ?= 3
BENCH_TARGETS += bench-slowdown
.PHONY: bench-slowdown
bench-slowdown: $(RNR) $(GUEST_BINS)
	REPS=$(SLOWDOWN_REPS) SUITE_SIZE=$(BENCH_SIZE) tools/bench-slowdown $(abspath $(RNR)) $(abspath $(GUEST_DIR))

# `make bench`: the on-line follower on loopback, MaxPar and Stitched on 1
# and 2 workers (tools/bench-online; docs/online.md has the table).
BENCH_TARGETS += bench-online
.PHONY: bench-online
bench-online: $(RNR) $(GUEST_BINS)
	SUITE_SIZE=$(or $(ONLINE_SIZE),small) tools/bench-online $(abspath $(RNR)) $(abspath $(GUEST_DIR))
