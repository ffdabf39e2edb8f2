/* debugger/server.h: a gdb remote-protocol server on a replay. The replay
 * runs serially in a process of its own, forked by dbg_serve (one hart, the
 * final log's chunks in the log's order: replayer/serial.h), instruction by
 * instruction while breakpoints, watchpoints or a step need it and chunk by
 * chunk otherwise; checkpoints are forked copies of that process, and going
 * back restores one (docs/debugging.md, "How it works").
 * gdb sees every guest thread, their registers and memory; writes are
 * refused (they would change what was recorded). At the end of the log the
 * replay's checks run and their verdict is reported. docs/debugging.md. */
#ifndef RNR_DEBUGGER_SERVER_H
#define RNR_DEBUGGER_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct dbg dbg;

/* Automatic checkpoints: every DBG_INTERVAL_DEFAULT instructions, at most
 * DBG_KEEP_DEFAULT kept (docs/debugging.md has the measurements). */
#define DBG_INTERVAL_DEFAULT 5000000u
#define DBG_KEEP_DEFAULT 64u
#define DBG_KEEP_MAX 500u

typedef struct dbg_options {
    const char *dir;            /* the bundle */
    uint32_t kind;              /* its final log to replay (RNR_LOG_*) */
    const char *program;        /* NULL: the bundle's copy */
    FILE *out;                  /* the guest's stdout as recorded; NULL: none */
    const char *name;           /* for messages: "rnr replay" */
    uint64_t checkpoint_interval; /* instructions between automatic checkpoints; 0: none */
    unsigned checkpoints;       /* automatic checkpoints kept at most (older ones thinned) */
} dbg_options;

/* Opens the replay: NULL with one line in err (exit status 2). */
dbg *dbg_open(const dbg_options *o, char *err, size_t errlen);
void dbg_free(dbg *d);
/* The program file gdb should load. */
const char *dbg_program(const dbg *d);

/* Accepts one connection on LISTEN_FD (then closed) and serves it until gdb
 * detaches, kills or disconnects: the replay's processes serve it, the
 * caller's waits for them (a subreaper while it does; it must not be
 * multithreaded). While it waits for the connection, a
 * WATCH process (> 0) that ends stops the wait. Returns 0 (the replay was
 * verified at its end, or left unfinished), 1 (it diverged or failed its
 * final checks; the message went to gdb and stderr) or 2 (no connection:
 * message in err). */
int dbg_serve(dbg *d, int listen_fd, pid_t watch, char *err, size_t errlen);

#endif
