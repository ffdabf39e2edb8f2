/* replayer/engine.h: the token-passing parallel replay engine. It reads a
 * final log (MaxPar, Stitched, Serial, StSerial) as a stream and hands
 * each chunk to a caller's function on one of W worker threads, as soon
 * as the chunk's lane predecessor has finished and the tokens it awaits
 * have arrived (docs/backend.md §1, docs/replayer.md). How a chunk is
 * executed is the caller's business. */
#ifndef RNR_REPLAYER_ENGINE_H
#define RNR_REPLAYER_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

#define RP_MSG_MAX 1024u            /* room for any message of the engine */
#define RP_WINDOW_DEFAULT 4096u     /* chunks read ahead and not finished */
#define RP_HANDOFF_DEFAULT 4096u    /* instructions: see rp_options.handoff_insns (docs/replayer.md, "Hand-offs") */

/* One chunk of a final log as the engine hands it out. */
typedef struct rp_chunk {
    uint64_t seq;           /* index in the log (0-based) */
    uint32_t cpu;           /* recorded CPU (its lane); 0 for Serial and StSerial */
    uint32_t tid;
    uint64_t cs;            /* instructions */
    uint64_t lane_index;    /* index among its lane's chunks (Serial, StSerial: = seq) */
} rp_chunk;

/* Executes chunk C on worker WORKER (0..workers-1); C is valid during the
 * call. 0 = done; -1 = the replay diverged or failed, with a one-line
 * reason in MSG (MSGLEN bytes): the engine starts no further chunk and
 * returns RP_EXEC_FAILED with that message. Called concurrently. */
typedef int (*rp_exec_fn)(void *ctx, unsigned worker, const rp_chunk *c, char *msg, size_t msglen);

/* What has been done so far (see rp_options.progress). */
typedef struct rp_progress {
    uint64_t read;          /* chunks read from the log */
    uint64_t chunks;        /* chunks executed */
    uint64_t instructions;  /* their instructions */
    double seconds;         /* since the replay started */
} rp_progress;

typedef void (*rp_progress_fn)(void *ctx, const rp_progress *p);

typedef struct rp_options {
    unsigned workers;           /* worker threads, >= 1 (0 = 1); may exceed host cores */
    uint64_t window;            /* chunks held in memory (read, not finished); 0 = RP_WINDOW_DEFAULT */
    uint64_t handoff_insns;     /* while a chunk shorter than this runs, an idle worker takes ready
                                 * chunks only once they hold this many instructions (engine.c,
                                 * handoff_ok); 0 = RP_HANDOFF_DEFAULT, 1 = take every one at once */
    rp_progress_fn progress;    /* NULL, or called on the calling thread every */
    double progress_seconds;    /* ... this many seconds (0 = 0.5) and once at the end */
    void *progress_ctx;
} rp_options;

typedef enum rp_status {
    RP_OK = 0,
    RP_EXEC_FAILED = 1,     /* the exec function returned -1: message is its reason */
    RP_BAD_LOG = 2,         /* not a final log, corrupt or truncated: the reader's message (file, offset) */
    RP_DEADLOCK = 3,        /* chunks that can never run: message names them and the short token counters */
    RP_ERROR = 4,           /* the host refused a thread */
} rp_status;

typedef struct rp_result {
    uint64_t read;              /* chunks read from the log */
    uint64_t chunks;            /* chunks executed */
    uint64_t instructions;      /* their instructions */
    uint64_t tokens;            /* tokens sent */
    uint64_t peak_window;       /* most chunks held at once (<= window) */
    uint64_t slot_pages;        /* pages of window slots allocated (they are recycled) */
    double wall_seconds;
    double busy_seconds_sum;    /* sum over workers of the time not idle (running chunks, taking the next) */
    int status;                 /* rp_status */
    char message[RP_MSG_MAX];   /* empty when status is RP_OK */
} rp_result;

/* Replays the final log at PATH ("-" = stdin) with FN; O may be NULL
 * (defaults). Returns the status, also stored in OUT with the counters. */
int rp_replay_log(const char *path, const rp_options *o, rp_exec_fn fn, void *ctx, rp_result *out);
/* The same on an open reader, which stays the caller's (it is read to the
 * end, or up to where the replay stopped). */
int rp_replay_reader(rnr_reader *r, const rp_options *o, rp_exec_fn fn, void *ctx, rp_result *out);

const char *rp_status_name(int status);     /* "ok", "exec failed", ... */

#endif
