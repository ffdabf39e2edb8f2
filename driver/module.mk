# driver/: component library libdriver.a (see DESIGN.md §3).
driver_SRCS    := $(sort $(wildcard driver/*.c))
driver_HEADERS := $(sort $(wildcard driver/*.h))
$(eval $(call component,driver))
