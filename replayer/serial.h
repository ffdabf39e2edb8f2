/* replayer/serial.h: a final log's chunks one at a time, in the log's own
 * order, for a single-threaded replay (the debugger). MaxPar and Stitched
 * logs are written in a topological order of their DAG and Serial logs are
 * one total order, so the log's order is a valid schedule: it is what the
 * engine (replayer/engine.c) runs with one worker. The iterator still
 * counts the tokens and refuses a chunk whose tokens have not all been
 * sent before it (a hand-made log out of order). */
#ifndef RNR_REPLAYER_SERIAL_H
#define RNR_REPLAYER_SERIAL_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"
#include "replayer/engine.h"

typedef struct rp_serial rp_serial;

/* A chunk's predecessor in the log's DAG: chunk LANE_INDEX of CPU's lane
 * (Serial, StSerial: of the one lane, the log's previous chunk). */
typedef struct rp_pred {
    uint32_t cpu;
    uint64_t lane_index;
} rp_pred;

/* Reads R (stays the caller's; read to the end at most). NULL with a
 * message if R is not a final log. Free with rp_serial_free. */
rp_serial *rp_serial_new(rnr_reader *r, char *err, size_t errlen);
void rp_serial_free(rp_serial *s);
/* The next chunk: 1 (in *C), 0 at the end of the log, -1 with a message (a
 * damaged log: RP_BAD_LOG; a chunk before its tokens' senders). */
int rp_serial_next(rp_serial *s, rp_chunk *c, char *err, size_t errlen);

/* The predecessors of the chunk rp_serial_next returned last: the previous
 * chunk of its lane, then the sender of each token it awaits (its PTV
 * entries). At most MAX in OUT; returns how many. */
size_t rp_serial_preds(const rp_serial *s, rp_pred *out, size_t max);

#endif
