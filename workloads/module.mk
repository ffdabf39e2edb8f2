# workloads/: guest programs, static riscv64 Linux binaries built with the
# cross compiler into build/guest/NAME (one .c file each).
GUEST_DIR    := build/guest
GUEST_CFLAGS := -O2 -g -static -pthread -Wall -Wextra -Werror -std=gnu11
guest_SRCS   := $(sort $(wildcard workloads/*.c))
GUEST_BINS   := $(patsubst workloads/%.c,$(GUEST_DIR)/%,$(guest_SRCS))

guest: $(GUEST_BINS)

$(GUEST_DIR)/%: workloads/%.c
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $@ $< -lm
