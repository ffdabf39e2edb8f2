# debugger/: component library libdebugger.a (see docs/design.md): the gdb
# remote-protocol server on a replay.
debugger_SRCS    := $(sort $(wildcard debugger/*.c))
debugger_HEADERS := $(sort $(wildcard debugger/*.h))
$(eval $(call component,debugger))
