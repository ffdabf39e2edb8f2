# tools/: the `rnr` front end. Subcommands are rows of tools/commands.def.
tools_SRCS := $(sort $(wildcard tools/*.c))
tools_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(tools_SRCS))
DEPFILES   += $(tools_OBJS:.o=.d)
RNR_VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

$(BUILD)/obj/tools/rnr.o: CPPFLAGS += -DRNR_VERSION='"$(RNR_VERSION)"'

$(RNR): $(tools_OBJS) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(tools_OBJS) $(ALL_LIBS) $(LDLIBS)

# `make bench`: recording slowdown, log sizes, parallelism and replay time
# per format (tools/bench-record-replay).
BENCH_TARGETS += bench-record-replay
.PHONY: bench-record-replay
bench-record-replay: $(RNR) $(GUEST_BINS)
	tools/bench-record-replay $(abspath $(RNR)) $(abspath $(GUEST_DIR))

# `make bench`: memory high-water and time of every step at 1x, 4x and 16x
# the length of a recording (tools/bench-memory; 16x >= 10^9 instructions).
BENCH_TARGETS += bench-memory
.PHONY: bench-memory
bench-memory: $(RNR) $(GUEST_BINS)
	tools/bench-memory $(abspath $(RNR)) $(abspath $(GUEST_DIR)) $(BENCH_MEMORY_BASE)
