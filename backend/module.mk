# backend/: component library libbackend.a (see docs/design.md).
backend_SRCS    := $(sort $(wildcard backend/*.c))
backend_HEADERS := $(sort $(wildcard backend/*.h))
$(eval $(call component,backend))

# The backend benchmark (`make bench`): tests/bench/bench_backend.c (built
# by the bench rule of tests/module.mk), run on the release build; its large
# inputs go to $(BUILD)/bench/backend. BENCH_ARGS=--quick: a small run.
BENCH_TARGETS += bench-backend
.PHONY: bench-backend
bench-backend: $(BUILD)/bench/bench_backend $(RNR)
	$(BUILD)/bench/bench_backend $(abspath $(RNR)) $(BUILD)/bench/backend $(BENCH_ARGS)
