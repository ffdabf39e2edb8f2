/* tools/cli_opts.c: the option spellings every rnr command accepts, read
 * once before a command's own matching (cli_normalize), the format names
 * in any case, and the closest command to a mistyped one. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formats/log.h"
#include "rru/alloc.h"
#include "tools/cli.h"

/* The argv cli_normalize made (freed by cli_normalize_free). */
static char **normalized;

static const char *valued_match(const char *const *valued, const char *a, size_t len)
{
    for (size_t k = 0; valued[k]; k++)
        if (strlen(valued[k]) == len && strncmp(valued[k], a, len) == 0)
            return valued[k];
    return NULL;
}

void cli_normalize(const char *const *valued, int flags, int *argc, char ***argv)
{
    int n = *argc;
    char **in = *argv;
    /* Each argument becomes at most two. */
    char **out = xcalloc(2 * (size_t)n + 1, sizeof *out);
    int m = 0, i = 0, options = 1;
    if (n > 0)
        out[m++] = in[i++];
    for (; i < n; i++) {
        char *a = in[i];
        if (!options || a[0] != '-' || a[1] == '\0') {
            out[m++] = a;
            if (options && (flags & CLI_STOP_AT_OPERAND))
                options = 0;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            out[m++] = a;
            options = 0;
            continue;
        }
        const char *name = NULL;
        char *value = NULL;
        if (a[1] == '-') {
            char *eq = strchr(a, '=');
            if (eq && (name = valued_match(valued, a, (size_t)(eq - a))))
                value = eq + 1;
        } else if (a[2] != '\0' && (name = valued_match(valued, a, 2))) {
            value = a + 2;
        }
        if (name) {
            out[m++] = (char *)name;
            out[m++] = value;
        } else {
            out[m++] = a;
            /* A valued option's value is never an option or the operand
             * that ends the options. */
            if (valued_match(valued, a, strlen(a)) && i + 1 < n)
                out[m++] = in[++i];
        }
    }
    out[m] = NULL;
    free(normalized);
    normalized = out;
    *argc = m;
    *argv = out;
}

void cli_normalize_free(void)
{
    free(normalized);
    normalized = NULL;
}

int cli_log_kind(const char *name)
{
    for (int k = 1; k <= RNR_LOG_KIND_MAX; k++)
        if (strcasecmp(name, rnr_log_kind_name((uint32_t)k)) == 0)
            return k;
    return -1;
}

size_t cli_edit_distance(const char *a, const char *b)
{
    /* Optimal string alignment: insertions, deletions, substitutions and
     * two neighbours swapped ("replya" is one edit from "replay"). */
    size_t la = strlen(a), lb = strlen(b), w = lb + 1;
    size_t *d = xcalloc((la + 1) * w, sizeof *d);
    for (size_t i = 0; i <= la; i++)
        d[i * w] = i;
    for (size_t j = 0; j <= lb; j++)
        d[j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);
            if (d[(i - 1) * w + j] + 1 < best)
                best = d[(i - 1) * w + j] + 1;
            if (d[i * w + j - 1] + 1 < best)
                best = d[i * w + j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[(i - 2) * w + j - 2] + 1 < best)
                best = d[(i - 2) * w + j - 2] + 1;
            d[i * w + j] = best;
        }
    size_t r = d[la * w + lb];
    free(d);
    return r;
}

int cli_exit_code_mode(const char *cmd, const char *mode, int *rnr)
{
    if (strcasecmp(mode, "guest") == 0 || strcasecmp(mode, "rnr") == 0) {
        *rnr = strcasecmp(mode, "rnr") == 0;
        return 0;
    }
    cli_usage(cmd, "--exit-code: '%s' is not guest or rnr", mode);
    return -1;
}
