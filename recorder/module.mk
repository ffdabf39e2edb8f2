# recorder/: component library librecorder.a, the recording session
# (docs/design.md): beside replayer/, over driver/, backend/ and formats/.
recorder_SRCS    := $(sort $(wildcard recorder/*.c))
recorder_HEADERS := $(sort $(wildcard recorder/*.h))
$(eval $(call component,recorder))
