/* recorder/stream.h: the sending side of the on-line stream
 * (docs/online.md): while the guest runs, the manifest's fixed part, the
 * program, the initial and input logs, the guest's output and a final log
 * produced on the fly go to a follower over TCP or a pipe as the blocks of
 * formats/stream.h. The guest never waits for the follower: bytes queue in
 * a bounded buffer, and a follower that falls further behind than the
 * buffer (or goes away) loses the stream, with a warning; the local bundle
 * is written the same either way. */
#ifndef RNR_RECORDER_STREAM_H
#define RNR_RECORDER_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

/* The final log the stream carries. ADAPTIVE switches between MaxPar and
 * Stitched by phase as a policy (backend/adaptive.h) decides on the fly:
 * phases:FILE, bandwidth (each phase's chunks held until it is over) or
 * lag (the follower's acknowledgements, rec_stream_lag; TCP only). */
typedef enum rec_stream_format {
    REC_STREAM_MAXPAR = 0,
    REC_STREAM_STITCHED = 1,
    REC_STREAM_ADAPTIVE = 2,
} rec_stream_format;

#define REC_STREAM_BUFFER_DEFAULT (64u << 20)   /* bytes queued before the stream is dropped */
#define REC_STREAM_FINISH_SECONDS 10.0          /* the end's wait for a slow follower */

/* What the recording side knows of its follower. */
typedef struct rec_stream_lag {
    uint64_t sent_bytes;        /* written to the connection */
    uint64_t queued_bytes;      /* framed, not written yet */
    uint64_t final_chunks;      /* final-log chunks produced for the stream */
    uint64_t acked_chunks;      /* the follower's last acknowledgement: chunks replayed */
    uint64_t acked_instructions;
    uint64_t acks;              /* acknowledgements received (0 on a pipe: no back channel) */
    int dropped;                /* the stream was given up (see rec_stream_error) */
} rec_stream_lag;

typedef struct rec_stream rec_stream;

/* Connects to WHERE ("HOST:PORT", or "-" for stdout) and queues the
 * header. The final log's header is H with its kind set by FORMAT; POLICY
 * (ADAPTIVE only, else NULL) must outlive the stream. BUFFER: bytes queued
 * at most (0 = default). NULL with one line in err (also for lag on a
 * pipe). */
struct adaptive_policy;
rec_stream *rec_stream_open(const char *where, rec_stream_format format,
                            const struct adaptive_policy *policy, const rnr_log_header *h,
                            uint64_t buffer, char *err, size_t errlen);
/* Queues N bytes of channel TYPE (RNR_ST_MANIFEST ... RNR_ST_STDERR). */
void rec_stream_send(rec_stream *s, uint32_t type, const void *p, size_t n);
/* Queues the exec blocks of a program an execve loaded (SIZE bytes FILE;
 * NULL for one the stream carried before or the stream's program). */
void rec_stream_send_exec(rec_stream *s, const uint8_t sha[32], const void *file, uint64_t size);
/* Queues the empty block that ends channel TYPE (its file is whole). */
void rec_stream_end_channel(rec_stream *s, uint32_t type);
/* Queues what file FD (read from offset 0 on) holds beyond what was sent
 * of it as channel TYPE (INITIAL or INPUT): the session's logs, flushed. */
void rec_stream_tail(rec_stream *s, uint32_t type, const char *path);
/* The file at PATH, whole, as channel TYPE (the program). 0 or -1 with err. */
int rec_stream_send_file(rec_stream *s, uint32_t type, const char *path, char *err,
                         size_t errlen);
/* The next MaxPar chunk; the stream turns it into its format. 0 or -1. */
int rec_stream_put_maxpar(rec_stream *s, const rnr_final_chunk *c);
/* Now and then: the final log's complete blocks out, a progress block,
 * the queue written as far as the connection takes it without waiting,
 * the follower's acknowledgements read. */
void rec_stream_tick(rec_stream *s, uint64_t instructions, uint64_t initial_chunks);
/* The guest has ended: the final log finished, then its rest, the END
 * block with the final MANIFEST text, all written (waiting at most
 * REC_STREAM_FINISH_SECONDS for a slow follower). */
void rec_stream_finish(rec_stream *s, const char *manifest, size_t len);
void rec_stream_lag_get(rec_stream *s, rec_stream_lag *out);
/* Why the stream was dropped, or "". */
const char *rec_stream_error(const rec_stream *s);
void rec_stream_free(rec_stream *s);

#endif
