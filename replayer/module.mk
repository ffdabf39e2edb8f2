# replayer/: component library libreplayer.a (see docs/design.md).
replayer_SRCS    := $(sort $(wildcard replayer/*.c))
replayer_HEADERS := $(sort $(wildcard replayer/*.h))
$(eval $(call component,replayer))

# The engine's benchmark (`make bench`): tests/bench/bench_replay_engine.c
# replays a synthetic 8-CPU recording with a spinning exec function on 1, 2
# and 8 workers; its bundle goes to $(BUILD)/bench/replay-engine.
# BENCH_ARGS=--quick: a small run.
BENCH_TARGETS += bench-replay-engine
.PHONY: bench-replay-engine
bench-replay-engine: $(BUILD)/bench/bench_replay_engine $(RNR)
	$(BUILD)/bench/bench_replay_engine $(abspath $(RNR)) $(BUILD)/bench/replay-engine $(BENCH_ARGS)
