# backend/: component library libbackend.a (see DESIGN.md §3).
backend_SRCS    := $(sort $(wildcard backend/*.c))
backend_HEADERS := $(sort $(wildcard backend/*.h))
$(eval $(call component,backend))

# The backend benchmark (`make bench`): tests/bench/bench_backend.c, run on
# the release build; its large inputs go to $(BUILD)/bench/backend.
BENCH_BACKEND := $(BUILD)/bench/bench_backend
DEPFILES += $(BUILD)/obj/tests/bench/bench_backend.d

$(BENCH_BACKEND): $(BUILD)/obj/tests/bench/bench_backend.o $(backend_LIB) $(rru_LIB) $(formats_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(backend_LIB) $(rru_LIB) $(formats_LIB) $(LDLIBS)

.PHONY: bench-backend
bench-backend: $(BENCH_BACKEND) $(RNR)
	$(BENCH_BACKEND) $(abspath $(RNR)) $(BUILD)/bench/backend $(BENCH_ARGS)

ifeq ($(origin BENCH_TARGETS),undefined)
bench: bench-backend
else
BENCH_TARGETS += bench-backend
endif
