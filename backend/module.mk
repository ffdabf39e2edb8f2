# backend/: component library libbackend.a (see DESIGN.md §3).
backend_SRCS    := $(sort $(wildcard backend/*.c))
backend_HEADERS := $(sort $(wildcard backend/*.h))
$(eval $(call component,backend))
