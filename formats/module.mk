# formats/: component library libformats.a (see DESIGN.md §3).
formats_SRCS    := $(sort $(wildcard formats/*.c))
formats_HEADERS := $(sort $(wildcard formats/*.h))
$(eval $(call component,formats))
