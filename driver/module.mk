# driver/: component library libdriver.a (see docs/design.md).
driver_SRCS    := $(sort $(wildcard driver/*.c))
driver_HEADERS := $(sort $(wildcard driver/*.h))
$(eval $(call component,driver))
