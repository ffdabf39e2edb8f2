# rru/: component library librru.a (see DESIGN.md §3).
rru_SRCS    := $(sort $(wildcard rru/*.c))
rru_HEADERS := $(sort $(wildcard rru/*.h))
$(eval $(call component,rru))

# The simulator benchmark (tools/bench/rru_bench.c): `make bench` runs it.
RRU_BENCH := $(BUILD)/bench/rru-bench
DEPFILES  += $(BUILD)/obj/tools/bench/rru_bench.d

$(RRU_BENCH): $(BUILD)/obj/tools/bench/rru_bench.o $(rru_LIB) $(formats_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(rru_LIB) $(formats_LIB) $(LDLIBS)

.PHONY: bench-rru
bench: bench-rru
bench-rru: $(RRU_BENCH)
	$(RRU_BENCH) $(RRU_BENCH_SCALE)
