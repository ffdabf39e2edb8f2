# rru/: component library librru.a (see docs/design.md).
rru_SRCS    := $(sort $(wildcard rru/*.c))
rru_HEADERS := $(sort $(wildcard rru/*.h))
$(eval $(call component,rru))

# rru/fastfp.c (and its inline part, used by exec_rvfd.c) is exact only as
# written: no contraction of a*b+c into an fma, no fast-math, sqrt as one
# instruction (no errno call around it).
RRU_FP_OBJS := $(BUILD)/obj/rru/fastfp.o $(BUILD)/obj/rru/exec_rvfd.o
$(RRU_FP_OBJS): ALL_CFLAGS += -ffp-contract=off -fno-fast-math -fno-math-errno
$(RRU_FP_OBJS): rru/module.mk

# The simulator benchmark (tests/bench/bench_rru.c): `make bench` runs it.
.PHONY: bench-rru
BENCH_TARGETS += bench-rru
bench-rru: $(BUILD)/bench/bench_rru
	$(BUILD)/bench/bench_rru $(RRU_BENCH_SCALE)

# tests/rru_qemu/probe.S: a guest program for tests/test_rru_qemu.c, built
# with the cross toolchain into an ELF (run by qemu-riscv64) and its text
# embedded in the test as a C array (run on an rru hart). Both generated.
RRU_OBJCOPY   ?= riscv64-linux-gnu-objcopy
RRU_PROBE_ELF := $(BUILD)/gen/rru_probe.elf
RRU_PROBE_H   := $(BUILD)/gen/rru_probe.h
GENERATED     += $(RRU_PROBE_ELF) $(RRU_PROBE_H)

$(RRU_PROBE_ELF): tests/rru_qemu/probe.S
	@mkdir -p $(dir $@)
	$(GUEST_CC) -nostdlib -static -Wl,-Ttext=0x10000 -Wl,--build-id=none -o $@ $<

$(RRU_PROBE_H): $(RRU_PROBE_ELF)
	$(RRU_OBJCOPY) -O binary -j .text $< $@.bin
	{ echo '/* generated from tests/rru_qemu/probe.S by rru/module.mk: do not edit */'; \
	  printf 'static const char rru_probe_elf[] = "%s";\n' '$(abspath $(RRU_PROBE_ELF))'; \
	  echo 'static const unsigned char rru_probe_text[] = {'; \
	  od -An -v -tx1 $@.bin | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; } > $@.tmp
	rm -f $@.bin
	mv $@.tmp $@

$(BUILD)/obj/tests/test_rru_qemu.o: $(RRU_PROBE_H)
$(BUILD)/obj/tests/test_rru_qemu.o: CPPFLAGS += -I$(BUILD)/gen
