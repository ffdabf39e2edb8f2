# rnr: top-level GNU Makefile. Each folder adds itself through its module.mk.
#
# make            bin/rnr (release build)
# make check      install dependencies, then every test: install check,
#                 a short fuzz of every reader, unit + integration tests
#                 (release), the same under valgrind, the replay engine's
#                 tests under ThreadSanitizer, every test under ASan+UBSan
# make test       unit + integration tests of the current VARIANT only
# make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer
# make tsan       the replay engine's tests under ThreadSanitizer (no data race)
# make valgrind   the unit tests under valgrind (leaks are errors)
# make fuzz       every libFuzzer target for FUZZ_SECONDS each (clang)
# make demo       the main job end to end (see README.md)
# make bench      benchmarks (large inputs; not part of check) and the suite
#                 report bench/REPORT.md (docs/bench.md)
# make sweep      sensitivity sweeps, report in bench/sweep/ (docs/bench.md)
# make mutate     every mutant of tests/mutants.txt on a scratch copy: the tests
#                 must kill each (tools/mutate; not part of check, minutes)
# make install PREFIX=/usr/local
#
# VARIANT=release|asan|tsan|fuzz|debug selects flags; objects go to build/VARIANT.

VARIANT ?= release
BUILD   := build/$(VARIANT)
PREFIX  ?= /usr/local
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 15

CC      ?= cc
ifeq ($(origin CC),default)
CC      := cc
endif
AR      ?= ar
GUEST_CC ?= riscv64-linux-gnu-gcc

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
CSTD    := -std=c11 -D_GNU_SOURCE
# RNR_SIBCALLS: this build turns calls in tail position into jumps (gcc
# does from -O2), which the interpreter's threaded dispatch relies on for
# speed; tests/test_rru_isa.c checks it only where it is promised.
OPT_release := -O2 -g -DRNR_SIBCALLS
OPT_debug   := -O0 -g3
OPT_asan    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
               -fno-sanitize-recover=all
OPT_fuzz    := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
OPT_tsan    := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
ifeq ($(VARIANT),fuzz)
CC      := clang
endif
LDOPT_asan  := -fsanitize=address,undefined
LDOPT_fuzz  := -fsanitize=address,undefined
LDOPT_tsan  := -fsanitize=thread

CFLAGS  ?=
CPPFLAGS += -I. -MMD -MP
ALL_CFLAGS := $(CSTD) $(WARN) $(OPT_$(VARIANT)) -pthread $(CFLAGS)
LDFLAGS ?=
ALL_LDFLAGS := $(LDOPT_$(VARIANT)) -pthread $(LDFLAGS)
LDLIBS  := -lelf -lz -lnettle -lm

ifeq ($(VARIANT),release)
BINDIR  := bin
else
BINDIR  := $(BUILD)/bin
endif
RNR     := $(BINDIR)/rnr

# A stamp that changes when the flags change, so a flag change rebuilds all.
FLAGS_STAMP := $(BUILD)/flags.stamp
FLAGS_NOW   := $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(shell mkdir -p $(BUILD) && { [ -f $(FLAGS_STAMP) ] && [ "$$(cat $(FLAGS_STAMP))" = '$(FLAGS_NOW)' ] || echo '$(FLAGS_NOW)' > $(FLAGS_STAMP); })

.DEFAULT_GOAL := all
.PHONY: all check mutate test asan tsan valgrind valgrind-run fuzz demo demo-run bench bench-run sweep install install-check man clean deps guest
.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDARY:

# Modules append their benchmark targets (bench-NAME) to this.
BENCH_TARGETS :=

# Component libraries, lowest layer last (the link order).
LIBS_ORDER := recorder follower debugger replayer backend driver rru formats
DEPFILES   :=
GENERATED  :=

# $(call component,NAME): static library $(BUILD)/lib/libNAME.a from NAME_SRCS.
define component
$(1)_OBJS := $$(patsubst %.c,$$(BUILD)/obj/%.o,$$($(1)_SRCS))
$(1)_LIB  := $$(BUILD)/lib/lib$(1).a
DEPFILES  += $$($(1)_OBJS:.o=.d)
$$($(1)_LIB): $$($(1)_OBJS)
	@mkdir -p $$(dir $$@)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

include formats/module.mk
include rru/module.mk
include driver/module.mk
include backend/module.mk
include replayer/module.mk
include debugger/module.mk
include follower/module.mk
include recorder/module.mk

# Libraries in link order; a component without sources yet is left out.
ALL_LIBS := $(foreach m,$(LIBS_ORDER),$(if $($(m)_SRCS),$($(m)_LIB)))

include tools/module.mk
include workloads/module.mk
include tests/module.mk

all: $(RNR)

deps:
	@tools/install-deps

# The whole suite: a stage that fails stops the run; each one that passes
# prints its duration on a line "check: STAGE: N s" (the whole run is kept
# under 45 minutes on a 2-core machine).
STAGE = t0=$$(date +%s); $(MAKE) $(1) && echo "check: $(1): $$(($$(date +%s) - t0)) s"
check: deps
	@$(call STAGE,guest)
	@$(call STAGE,VARIANT=release install-check)
	@$(call STAGE,VARIANT=fuzz fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS))
	@$(call STAGE,VARIANT=release test)
	@$(call STAGE,VARIANT=debug valgrind-run)
	@$(call STAGE,VARIANT=tsan tsan-run)
	@$(call STAGE,VARIANT=asan test)

asan:
	$(MAKE) VARIANT=asan test

# The mutants of tests/mutants.txt (docs/development.md); MUTATE_ARGS passes
# options, e.g. MUTATE_ARGS='--only replay-stdout'.
mutate: guest
	tools/mutate $(MUTATE_ARGS)

tsan:
	$(MAKE) VARIANT=tsan tsan-run

# The benchmarks measure wall times: they run one at a time (-j1).
bench: deps
	$(MAKE) guest
	$(MAKE) VARIANT=release all
	$(MAKE) -j1 VARIANT=release bench-run

bench-run: $(RNR) $(BENCH_TARGETS)
	@echo "bench: done ($(words $(BENCH_TARGETS)) benchmarks); the headline of $(BENCH_OUT)/REPORT.md:"
	@sed -n '/^| workload | instructions_M/,/^$$/p' $(BENCH_OUT)/REPORT.md

sweep: deps
	$(MAKE) guest
	$(MAKE) VARIANT=release sweep-run

demo: deps
	$(MAKE) guest
	$(MAKE) VARIANT=release demo-run

demo-run: $(RNR)
	@tools/demo $(abspath $(RNR)) $(abspath build/demo)

valgrind:
	$(MAKE) VARIANT=debug valgrind-run

MANPAGE := $(BUILD)/man/rnr.1
$(MANPAGE): $(RNR) tools/mkman
	@mkdir -p $(dir $@)
	tools/mkman $(RNR) $@

man: $(MANPAGE)

install: $(RNR) $(formats_LIB) $(MANPAGE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/rnr/formats $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(RNR) $(DESTDIR)$(PREFIX)/bin/rnr
	install -m 644 $(formats_LIB) $(DESTDIR)$(PREFIX)/lib/librnrformats.a
	install -m 644 $(formats_HEADERS) $(DESTDIR)$(PREFIX)/include/rnr/formats/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(RNR_VERSION)|g' \
	    formats/rnr-formats.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/rnr-formats.pc
	install -m 644 $(MANPAGE) $(DESTDIR)$(PREFIX)/share/man/man1/rnr.1

# Installs into a scratch prefix and builds a program against the installed
# library through pkg-config, as a user of libformats would.
install-check:
	rm -rf $(BUILD)/install-check
	$(MAKE) install PREFIX=$(abspath $(BUILD)/install-check)
	tools/install-check $(abspath $(BUILD)/install-check)

clean:
	rm -rf build bin $(GENERATED)

-include $(DEPFILES)
