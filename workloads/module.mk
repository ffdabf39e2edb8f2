# workloads/: guest programs, static riscv64 Linux binaries built with the
# cross compiler into build/guest/NAME (one .c file each), and the research
# suite, workloads/suite/NAME.c into build/guest/suite/NAME.
GUEST_DIR    := build/guest
GUEST_CFLAGS := -O2 -g -static -pthread -Wall -Wextra -Werror -std=gnu11
guest_SRCS   := $(sort $(wildcard workloads/*.c))
guest_ASM    := $(sort $(wildcard workloads/*.S))
GUEST_BINS   := $(patsubst workloads/%.c,$(GUEST_DIR)/%,$(guest_SRCS)) \
                $(patsubst workloads/%.S,$(GUEST_DIR)/%,$(guest_ASM))
# The research suite (docs/suite.md): workloads/suite/NAME.c -> build/guest/suite/NAME.
suite_SRCS   := $(sort $(wildcard workloads/suite/*.c))
SUITE_BINS   := $(patsubst workloads/suite/%.c,$(GUEST_DIR)/suite/%,$(suite_SRCS))
GUEST_BINS   += $(SUITE_BINS)

guest: $(GUEST_BINS)

$(GUEST_DIR)/%: workloads/%.c
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $@ $< -lm

$(GUEST_DIR)/suite/%: workloads/suite/%.c workloads/suite/suite.h
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $@ $< -lm

# OpenMP (GCC's libgomp, static): its one warning, that libgomp's
# OpenACC profiling calls dlopen, is the linker's and concerns no program
# here.
$(GUEST_DIR)/openmp: GUEST_CFLAGS += -fopenmp

# Hand-written programs without libc: static-pie (ET_DYN, no interpreter).
$(GUEST_DIR)/%: workloads/%.S
	@mkdir -p $(dir $@)
	$(GUEST_CC) -nostdlib -static-pie -Wl,--no-dynamic-linker -o $@ $<

# The tests run the guest programs.
test: $(GUEST_BINS)

# `make bench`: rnr run on 1 and 8 cores beside qemu-riscv64 (tools/bench-run).
BENCH_TARGETS += bench-run-vs-qemu
.PHONY: bench-run-vs-qemu
bench-run-vs-qemu: $(RNR) $(GUEST_BINS)
	tools/bench-run $(abspath $(RNR)) $(abspath $(GUEST_DIR))
