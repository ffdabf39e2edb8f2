/* tools/rnr.c: the `rnr` command-line front end: dispatches to the
 * subcommands of tools/commands.def and prints their help. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "formats/log.h"
#include "tools/cli.h"

typedef struct command {
    const char *name, *args, *summary, *help;
    int (*main)(int argc, char **argv);
} command;

static const command commands[] = {
#define CMD(name, args, summary) { #name, args, summary, cmd_##name##_help, cmd_##name },
#include "tools/commands.def"
#undef CMD
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rnr COMMAND [ARGS...]\n"
               "Deterministic record and replay of multithreaded RISC-V programs on a\n"
               "simulated multicore with a Record-and-Replay Unit per core.\n\n"
               "Commands:\n");
    int w = 0;   /* the widest arguments: the summaries start in one column */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if ((int)strlen(commands[i].args) > w)
            w = (int)strlen(commands[i].args);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %-*s  %s\n", commands[i].name, w, commands[i].args, commands[i].summary);
    fprintf(f, "\n'rnr COMMAND --help' describes a command. Exit status: 0 ok, 1 verification\n"
               "failed or replay diverged, 2 bad usage or bad input.\n"
               "Options taking a value may be written -j 2 or -j2, --format F or --format=F;\n"
               "'--' ends the options (run and record also end them at PROG: what follows\n"
               "is the guest's); format names are read in any case (MaxPar, stserial).\n");
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rnr %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'rnr %s --help'.\n", cmd);
    return RNR_EXIT_USAGE;
}

int cli_bad_input(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rnr %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return RNR_EXIT_USAGE;
}

int cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                  uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *s == '-' || *end || errno || v < min || v > max) {
        cli_usage(cmd, "%s wants a number from %llu to %llu, not '%s'", opt,
                  (unsigned long long)min, (unsigned long long)max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_bytes(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                    uint64_t *out)
{
    size_t len = strlen(s);
    unsigned shift = 0;
    char digits[32];
    if (len > 0 && len < sizeof digits) {
        const char *at = strchr("KMG", s[len - 1]);
        if (at && *at) {
            shift = 10 * (unsigned)(at - "KMG" + 1);
            len--;
        }
    }
    if (len == 0 || len >= sizeof digits || strspn(s, "0123456789") != len) {
        cli_usage(cmd, "%s wants a number of bytes, with K, M or G if you like, not '%s'", opt, s);
        return -1;
    }
    memcpy(digits, s, len);
    digits[len] = 0;
    uint64_t n;
    if (cli_parse_u64(cmd, opt, digits, 0, max >> shift, &n) < 0)
        return -1;
    if ((n << shift) < min) {
        cli_usage(cmd, "%s wants at least %llu bytes, not '%s'", opt, (unsigned long long)min, s);
        return -1;
    }
    *out = n << shift;
    return 0;
}

/* One line for an unknown command, naming the closest one if any is
 * close: at most 2 edits, and fewer than half its length (a swap of
 * neighbours is one edit: 'rnu' is close to 'run', 'xyz' is not). */
static int unknown_command(const char *who, const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        size_t d = cli_edit_distance(name, commands[i].name);
        if (d < best_d) {
            best_d = d;
            best = commands[i].name;
        }
    }
    if (best && best_d <= 2 && 2 * best_d < strlen(best))
        fprintf(stderr, "%s: unknown command '%s' (did you mean '%s'?)\n", who, name, best);
    else
        fprintf(stderr, "%s: unknown command '%s' (the commands: rnr --help)\n", who, name);
    return RNR_EXIT_USAGE;
}

/* True if ARGV asks for help before any "--" (after which arguments belong
 * to the guest program). */
static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RNR_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    fputs(commands[i].help, stdout);
                    return RNR_EXIT_OK;
                }
            return unknown_command("rnr help", argv[2]);
        }
        usage(stdout);
        return RNR_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("rnr %s\n", RNR_VERSION);
        return RNR_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) != 0)
            continue;
        /* run and record read --help themselves: only before PROG, whose
         * arguments are the guest's. */
        int own_help = strcmp(name, "run") == 0 || strcmp(name, "record") == 0;
        if (!own_help && wants_help(argc - 1, argv + 1)) {
            fputs(commands[i].help, stdout);
            return RNR_EXIT_OK;
        }
        char prefix[64];
        snprintf(prefix, sizeof prefix, "rnr %s", name);
        rnr_set_msg_prefix(prefix);
        int rc = commands[i].main(argc - 1, argv + 1);
        cli_normalize_free();
        return rc;
    }
    return unknown_command("rnr", name);
}
