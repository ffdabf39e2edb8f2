/* tools/guest_env.c: the guest's environment options of `rnr run` and
 * `rnr record` (tools/guest_env.h). */
#include "tools/guest_env.h"

#include <stdlib.h>
#include <string.h>

#include "rru/alloc.h"
#include "tools/cli.h"

extern char **environ;

void guest_env_init(guest_env *e, int argc)
{
    memset(e, 0, sizeof *e);
    e->ops = xcalloc((size_t)argc + 1, sizeof *e->ops);
}

void guest_env_free(guest_env *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    free(e->ops);
    memset(e, 0, sizeof *e);
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '=' || s[i] == '\0')
            return 0;
    return 1;
}

int guest_env_parse(guest_env *e, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--env-clear") == 0) {
        e->clear = 1;
        return 1;
    }
    if (strcmp(a, "--env") != 0 && strcmp(a, "--unset") != 0)
        return 0;
    if (*i + 1 >= argc) {
        cli_usage(cmd, "option %s needs an argument", a);
        return -1;
    }
    const char *v = argv[++*i];
    if (strcmp(a, "--env") == 0) {
        const char *eq = strchr(v, '=');
        if (!eq || !name_ok(v, (size_t)(eq - v))) {
            cli_usage(cmd, "--env: '%s' is not NAME=VALUE", v);
            return -1;
        }
    } else if (!name_ok(v, strlen(v))) {
        cli_usage(cmd, "--unset: '%s' is not a variable name", v);
        return -1;
    }
    e->ops[e->nops++] = v;
    return 1;
}

static void env_remove(guest_env *e, const char *name, size_t len)
{
    for (size_t i = 0; i < e->n;) {
        if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
            free(e->v[i]);
            memmove(e->v + i, e->v + i + 1, (e->n - i - 1) * sizeof *e->v);
            e->n--;
        } else {
            i++;
        }
    }
}

static void env_add(guest_env *e, const char *s)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 32;
        e->v = xrealloc(e->v, e->cap * sizeof *e->v);
    }
    e->v[e->n++] = xoom(strdup(s));
}

void guest_env_build(guest_env *e)
{
    if (!e->clear)
        for (char **p = environ; *p; p++)
            env_add(e, *p);
    for (size_t k = 0; k < e->nops; k++) {
        const char *op = e->ops[k], *eq = strchr(op, '=');
        env_remove(e, op, eq ? (size_t)(eq - op) : strlen(op));
        /* --env NAME=VALUE has an '='; --unset NAME has none. */
        if (eq)
            env_add(e, op);
    }
}
