# rru/: component library librru.a (see DESIGN.md §3).
rru_SRCS    := $(sort $(wildcard rru/*.c))
rru_HEADERS := $(sort $(wildcard rru/*.h))
$(eval $(call component,rru))
