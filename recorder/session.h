/* recorder/session.h: a recording session as a library, the sibling of the
 * replay session (replayer/exec.h): machine and RRU options, the bundle it
 * writes, MaxPar on the fly, the truth oracle and limits; progress and the
 * guest's output through callbacks; run to the end or interrupt. `rnr
 * record` parses options and prints; this does the rest. */
#ifndef RNR_RECORDER_SESSION_H
#define RNR_RECORDER_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/driver.h"

/* What the progress callback is told, about twice a second. */
typedef struct recording_progress {
    uint64_t instructions, chunks, initial_log_bytes;
    double seconds;
    /* With a stream: bytes written to it, final chunks produced for it,
     * the follower's last acknowledgement (chunks replayed; acks = 0: none
     * came, e.g. on a pipe), and whether it was dropped. */
    int streaming, stream_dropped;
    uint64_t stream_bytes, stream_chunks, stream_acked, stream_acks;
} recording_progress;

typedef struct recording_options {
    drv_config cfg;                 /* machine, RRU, files the guest may write; the
                                       session sets the recording fields */
    const char *dir;                /* the bundle to create (new or empty); NULL: the
                                       default place, rnr_bundle_create_next */
    int backend;                    /* MaxPar on the fly, then the other passes */
    int truth;                      /* truth.deps (the soundness oracle) */
    int pack;                       /* copy the program into the bundle */
    const char *initial_stream;     /* also stream the initial log here ("-": stdout) */
    const char *stream;             /* the on-line stream: "HOST:PORT" or "-" (stdout) */
    int stream_format;              /* rec_stream_format (recorder/stream.h) */
    const struct adaptive_policy *stream_policy;   /* adaptive: its policy (outlives the
                                                      recording), else NULL */
    uint64_t stream_buffer;         /* bytes queued for the follower at most; 0 = default */
    int progress_passes;            /* the backend passes show their progress on stderr */
    /* Limits; 0 = none. Reaching one ends the recording as interrupted. */
    uint64_t max_instructions;
    double max_seconds;             /* host wall time */
    uint64_t max_log_bytes;         /* initial.log + input.log + stdout + stderr */
    void (*progress)(void *ctx, const recording_progress *p);
    /* If not NULL: called before the guest's output reaches rnr's stdout or
     * stderr, to clear what progress drew. */
    void (*progress_clear)(void *ctx);
    void *ctx;
} recording_options;

typedef struct recording_result {
    drv_end end;
    int exit_status;                /* the guest's: code, 128 + signal, 124 deadlock */
    const char *status;             /* the bundle's final status (owned by the session) */
    uint64_t instructions, threads, chunks;
    double seconds;
} recording_result;

typedef struct recording recording;

/* Checks the options and loads PROG (ARGV: ARGC strings; ENVP: ENVC) to see
 * that it can run, and only then creates the bundle. NULL with a one-line
 * message in err; then no bundle directory was created or touched. */
recording *recording_open(const recording_options *o, const char *prog, const char *const *argv,
                          size_t argc, const char *const *envp, size_t envc, char *err,
                          size_t errlen);

/* Runs the guest to its end (or an interrupt, or a limit) and finishes the
 * bundle: logs in place, backend passes if asked, final status last.
 * Messages of the run (a deadlock report, a guest crash) go to stderr.
 * 0 with *res filled; -1 with err if the bundle could not be finished
 * (its status then says incomplete). */
int recording_run(recording *r, recording_result *res, char *err, size_t errlen);

/* Asks the running session to stop; the first SIG names the reason.
 * Async-signal safe: a signal handler may call it. Once the guest has
 * ended and the bundle is being finished, a first call prints what is
 * being finished, a second abandons the bundle (status abandoned) and ends
 * the process with 128 + SIG. */
void recording_interrupt(recording *r, int sig);

/* The bundle's directory (the one made in the default place if the
 * options named none); valid until recording_free. */
const char *recording_dir(const recording *r);

/* The stream's state (bytes, lag, dropped); 0, or -1 if not streaming. */
struct rec_stream_lag;
int recording_stream_lag(recording *r, struct rec_stream_lag *out);

void recording_free(recording *r);

#endif
