/* replayer/input.h: a recording's input log split per thread: each
 * thread's records in its program order (system calls with their memory
 * bytes, CSR reads, SC failures) and, apart, its chunk checks. Streamed:
 * a thread's records are read when it needs them, and what other threads
 * will need waits in their queues; safe for concurrent workers. */
#ifndef RNR_REPLAYER_INPUT_H
#define RNR_REPLAYER_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

typedef struct rp_input rp_input;

/* Opens the input log at PATH (checked whole first: a damaged or
 * truncated log is refused, a replay needs all of it). NULL with
 * "PATH: ..." in err. */
rp_input *rp_input_load(const char *path, char *err, size_t errlen);
/* The input log of a recording still being made: OPEN makes each cursor
 * (a stream of the log from its start whose reads wait for bytes to come).
 * Not checked whole first: a log that ends early fails the replay where
 * a record is missing. NULL with "NAME: ..." in err. */
rp_input *rp_input_open_io(rnr_io *(*open)(void *ctx), void *ctx, const char *name, char *err,
                           size_t errlen);
void rp_input_free(rp_input *in);
const rnr_log_header *rp_input_header(const rp_input *in);

/* The START record (AT_RANDOM bytes and their address), or NULL. */
const rnr_input_record *rp_input_start(const rp_input *in);

/* The next record of TID that is not a CHECK: 1 with *out, 0 if none. */
int rp_input_peek(rp_input *in, uint32_t tid, rnr_input_record *out);
void rp_input_take(rp_input *in, uint32_t tid);
/* The most records held in queues at once (memory). */
uint64_t rp_input_peak(const rp_input *in);

/* The recorded check of TID at INSTRET: checks before it are passed over;
 * 1 with *pc and *hash if one is at exactly INSTRET, else 0 (also when it
 * lies further ahead in the file than a bounded look-ahead). */
int rp_input_check(rp_input *in, uint32_t tid, uint64_t instret, uint64_t *pc, uint64_t *hash);

#endif
