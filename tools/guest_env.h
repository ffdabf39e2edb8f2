/* tools/guest_env.h: the guest's environment options `rnr run` and `rnr
 * record` share (--env NAME=VALUE, --unset NAME, --env-clear), and the
 * environment they make: rnr's own, or an empty one, with the changes
 * applied in command-line order. */
#ifndef RNR_TOOLS_GUEST_ENV_H
#define RNR_TOOLS_GUEST_ENV_H

#include <stddef.h>

typedef struct guest_env {
    int clear;            /* --env-clear */
    const char **ops;     /* NAME=VALUE (--env) or NAME (--unset), in order */
    size_t nops;
    char **v;             /* the built environment (owned strings) */
    size_t n, cap;
} guest_env;

/* The help text of these options, for the commands' own help strings. */
#define GUEST_ENV_HELP                                                              \
    "  --env NAME=VALUE   set NAME in the guest's environment (repeatable)\n"       \
    "  --unset NAME       remove NAME from the guest's environment (repeatable)\n"  \
    "  --env-clear        start the guest's environment empty\n"

/* Room for up to ARGC changes. */
void guest_env_init(guest_env *e, int argc);
void guest_env_free(guest_env *e);
/* If argv[*i] is one of these options, consumes it (and its value: *i
 * moves) and returns 1; 0 if it is not one; -1 after a usage message. */
int guest_env_parse(guest_env *e, const char *cmd, int argc, char **argv, int *i);
/* Builds the environment from rnr's (unless --env-clear) and the changes;
 * its strings are e->v[0 .. e->n). */
void guest_env_build(guest_env *e);

#endif
