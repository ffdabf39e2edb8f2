# formats/: component library libformats.a (see docs/design.md).
formats_SRCS    := $(sort $(wildcard formats/*.c))
formats_HEADERS := $(filter-out formats/codec.h,$(sort $(wildcard formats/*.h)))
$(eval $(call component,formats))
