/* replayer/engine.h: the token-passing engine of a parallel replay. It
 * streams a final log (MaxPar, Stitched, Serial, StSerial) and hands its
 * chunks to W worker threads: any idle worker takes any chunk whose
 * predecessor on its recorded CPU is done and whose awaited tokens have
 * all arrived; when a chunk is done its tokens are sent. How a chunk is
 * executed is the caller's (rp_exec_fn). docs/replayer.md states the
 * semantics and why it is race-free. */
#ifndef RNR_REPLAYER_ENGINE_H
#define RNR_REPLAYER_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

/* One chunk as the engine hands it out. */
typedef struct rp_chunk {
    uint64_t seq;              /* its index in the log */
    uint32_t cpu;              /* its recorded CPU (lane); 0 in Serial logs */
    uint32_t tid;
    uint64_t cs;               /* instructions */
    uint64_t lane_index;       /* its index among its lane's chunks */
} rp_chunk;

/* Executes C on worker W (0..workers-1). 0; or -1 with a message: the
 * replay diverged, the engine stops every worker as soon as it can. */
typedef int (*rp_exec_fn)(void *ctx, unsigned w, const rp_chunk *c, char *msg, size_t msglen);

enum {
    RP_OK = 0,
    RP_FAILED = 1,             /* a chunk's execution failed (its message) */
    RP_BAD_LOG = 2,            /* the log is not a final log, or damaged */
    RP_DEADLOCK = 3,           /* tokens that can never all arrive */
};

typedef struct rp_result {
    int status;                /* RP_* */
    uint64_t chunks, instructions;
    double wall_seconds;       /* from the first chunk to the last */
    double busy_seconds;       /* summed over workers: time inside rp_exec_fn */
    uint64_t peak_window;      /* most chunks held at once */
    char message[2048];
} rp_result;

/* Replays LOG (a reader positioned after the header; the engine reads it
 * to the end but does not close it) on WORKERS threads (>= 1; any number,
 * also above the host's cores: waiting workers block). At most WINDOW
 * chunks are held at once (0 = 65536): MaxPar and Stitched logs are
 * written in a topological order, so a window never stalls a valid log.
 * PROGRESS, if not NULL, is called now and then (under the engine's lock:
 * keep it short) with PCTX and the chunks and instructions done. Fills *out; returns out->status. */
int rp_replay(rnr_reader *log, unsigned workers, uint64_t window, rp_exec_fn fn, void *ctx,
              void (*progress)(void *pctx, uint64_t chunks, uint64_t instructions), void *pctx,
              rp_result *out);

#endif
