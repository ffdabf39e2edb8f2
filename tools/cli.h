/* tools/cli.h: what every rnr subcommand shares: exit statuses, messages,
 * the command table. */
#ifndef RNR_TOOLS_CLI_H
#define RNR_TOOLS_CLI_H

#include <stdint.h>

enum {
    RNR_EXIT_OK = 0,
    RNR_EXIT_FAILED = 1,   /* verification failed, replay diverged */
    RNR_EXIT_USAGE = 2,    /* bad usage or bad input */
};

#define CMD(name, args, summary)                      \
    int cmd_##name(int argc, char **argv);            \
    extern const char cmd_##name##_help[];
#include "tools/commands.def"
#undef CMD

/* "s" unless N is 1: "%" PRIu64 " thread%s", n, cli_s(n). */
static inline const char *cli_s(uint64_t n) { return n == 1 ? "" : "s"; }

/* Prints "rnr CMD: message" and a pointer to --help; returns RNR_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "rnr CMD: message" (one line); returns RNR_EXIT_USAGE. For bad
 * input files, the message starts with the file name. */
int cli_bad_input(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a decimal or 0x number in [min, max] for option OPT; -1 on error
 * (after printing a usage message). */
int cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                  uint64_t *out);

/* Parses a byte count with an optional K, M or G suffix (powers of 1024)
 * in [min, max] for option OPT; -1 on error (after a usage message). */
int cli_parse_bytes(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
                    uint64_t *out);

/* --exit-code MODE of run and record: "guest" (0 into *rnr, the default:
 * rnr exits with the guest's status) or "rnr" (1: 0 when rnr succeeded).
 * 0, or -1 after a usage message. */
int cli_exit_code_mode(const char *cmd, const char *mode, int *rnr);

/* cli_normalize: flags. */
enum {
    /* The options end at the first operand (the program of run and record:
     * the arguments after it are the guest's and are never read). */
    CLI_STOP_AT_OPERAND = 1,
};

/* Rewrites the command's argument count and vector (argv[0] its name) so that its own
 * matching sees every option spelled the canonical way: "-xVALUE" becomes
 * "-x" "VALUE" and "--opt=VALUE" becomes "--opt" "VALUE" for the options
 * of VALUED (a NULL-terminated list of the options taking a value). A
 * "--" ends the options; it is kept, and the arguments after it are
 * untouched, as are the values of valued options. The new array lives
 * until cli_normalize_free (rnr's main calls it). */
void cli_normalize(const char *const *valued, int flags, int *argc, char ***argv);
void cli_normalize_free(void);

/* rnr replay --gdb [HOST:]PORT: serves a replay of DIR from its log of
 * KIND to one gdb connection (tools/cmd_debug.c); the exit status. */
int cli_gdb_serve(const char *dir, int kind, const char *program, int quiet, const char *where,
                  uint64_t interval, unsigned keep);
/* --checkpoint-interval N, --checkpoints K of the gdb server (I: at argv[*I]):
 * 1 taken (*I advanced), 0 not one of them, -1 bad usage (reported). */
int cli_checkpoint_opt(const char *cmd, int argc, char **argv, int *i, uint64_t *interval,
                       unsigned *keep);

/* The log kind named NAME in any case ("MaxPar", "stserial"), or -1. */
int cli_log_kind(const char *name);

/* Edits (insertions, deletions, substitutions, swaps of neighbours) from
 * A to B. */
size_t cli_edit_distance(const char *a, const char *b);

#endif
