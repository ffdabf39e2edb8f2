# follower/: component library libfollower.a, the on-line follower
# (docs/online.md): receives a recording's stream and replays it as it
# arrives, over replayer/ and formats/.
follower_SRCS    := $(sort $(wildcard follower/*.c))
follower_HEADERS := $(sort $(wildcard follower/*.h))
$(eval $(call component,follower))
