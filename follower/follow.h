/* follower/follow.h: the on-line follower (docs/online.md): receives the
 * stream of `rnr record --stream` (formats/stream.h) and replays it as it
 * arrives on W workers, checking each chunk's recorded check as it goes
 * and, once the recording's final manifest has come, everything `rnr
 * replay` checks. It acknowledges the chunks it has replayed on the back
 * channel and can keep what it received as a bundle. */
#ifndef RNR_FOLLOWER_FOLLOW_H
#define RNR_FOLLOWER_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FOLLOW_TIMEOUT_DEFAULT 10.0   /* seconds without a byte from the primary */

/* How far behind the primary the follower is. */
typedef struct follow_lag {
    uint64_t chunks, instructions;                  /* replayed */
    uint64_t primary_chunks, primary_instructions;  /* produced, recorded (last progress block) */
    uint64_t bytes;                                 /* received */
    double bytes_per_second;                        /* over the last second or so */
    double seconds;
} follow_lag;

typedef struct follow_options {
    unsigned workers;          /* replay workers (>= 1; capped at the recorded CPUs) */
    const char *dir;           /* keep the received bundle here (new or empty); NULL: none */
    FILE *out;                 /* the guest's stdout as replayed; NULL: none */
    double timeout;            /* seconds of silence that end the stream (0: default) */
    /* Called about twice a second on the receiving thread; may be NULL. */
    void (*lag)(void *ctx, const follow_lag *l);
    void *ctx;
} follow_options;

typedef struct follow_result {
    int status;                /* 0 verified; 1 diverged, or the stream ended early; 2 bad stream */
    char message[4096];        /* why, when status != 0 */
    char format[16];           /* the final log's kind ("maxpar") */
    const char *bundle_status; /* of the -o bundle: complete, interrupted: ..., incomplete: ... */
    char bundle_status_text[512];
    unsigned workers;
    uint64_t chunks, instructions, bytes;
    double seconds;            /* from the first byte to the verdict */
    double primary_seconds;    /* the recording's wall-seconds (0 if the end never came) */
    uint64_t lag_samples, lag_sum, lag_max;   /* chunks behind, sampled every 0.1 s */
} follow_result;

/* Listens on SPEC ("[HOST:]PORT", HOST default 127.0.0.1, PORT 0: a free
 * one); the address bound into BOUND. The descriptor, or -1 with err. */
int follow_listen(const char *spec, char *bound, size_t boundlen, char *err, size_t errlen);
/* Waits for one primary and stops listening (a second one is refused).
 * The connection, or -1 with err. */
int follow_accept(int listen_fd, char *err, size_t errlen);

/* Follows the stream on FD (a connection: SOCKET = 1, with the back
 * channel; else a pipe or file) named NAME in messages, to its end.
 * Returns res->status. */
int follow_run(int fd, int socket, const char *name, const follow_options *o, follow_result *res);

#endif
