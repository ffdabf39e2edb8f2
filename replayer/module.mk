# replayer/: component library libreplayer.a (see DESIGN.md §3).
replayer_SRCS    := $(sort $(wildcard replayer/*.c))
replayer_HEADERS := $(sort $(wildcard replayer/*.h))
$(eval $(call component,replayer))
