/* backend/verify.h: the checker. It proves that a final log enforces every
 * dependence of the initial log under the token-counter semantics and is
 * acyclic (docs/backend.md, "verify"):
 *   - a dependence of chunk A (cpu p) recorded at time t to cpu q binds A to
 *     the first chunk X of q with TS > t; none: discarded legitimately;
 *   - a thread's consecutive chunks on two cpus (ordered by TS) are ordered;
 *   - for Serial and StSerial, consecutive chunks of one cpu are ordered too
 *     (MaxPar and Stitched keep each cpu's lane by construction);
 *   - optionally, every ground-truth dependence (backend/truth.h).
 * Final chunks map back to the initial log by instruction counts: per CPU
 * lane for MaxPar and Stitched, per thread for Serial and StSerial. MaxPar
 * and Stitched DAGs are checked with vector clocks over the lanes.
 * Streaming: each check reads the initial log (and the truth) beside the
 * final log and holds only a window of them (verify.c says which). */
#ifndef RNR_BACKEND_VERIFY_H
#define RNR_BACKEND_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "backend/truth.h"
#include "formats/log.h"

typedef struct verify_ctx verify_ctx;

/* The initial log at PATH, or in the LEN bytes at DATA (not copied: they
 * must outlive the context; NAME names them in messages). Reads it once
 * (constant memory): NULL with err on a read error or a log that breaks
 * its own invariants. Each check reads it again. */
verify_ctx *verify_open(const char *path, char *err, size_t errlen);
verify_ctx *verify_open_mem(const void *data, size_t len, const char *name, char *err, size_t errlen);
void verify_free(verify_ctx *v);

/* The MSP the checks use as their window: the log's, or 0 (the whole log
 * is held) when the log does not keep bounded silence or has no MSP. */
uint64_t verify_window_msp(const verify_ctx *v);

/* Ground-truth dependences to check: a copy of T (memory), or the file at
 * PATH, read as the checks go when it is in destination-time order (as
 * rnr writes it; otherwise held in memory, sorted). -1 with err on another
 * cpu count or a file that does not parse. Dependences that do not fit
 * the initial log (instructions beyond a lane or thread, a tid that
 * differs from the chunk's) make the check return -1, naming the file. */
int verify_add_truth(verify_ctx *v, const truth_set *t, char *err, size_t errlen);
int verify_set_truth_file(verify_ctx *v, const char *path, char *err, size_t errlen);

typedef struct verify_report {
    int ok;                        /* every check passed */
    uint64_t dependences;          /* recorded dependences enforced (checked) */
    uint64_t discarded;            /* destination cpu never dumped a later chunk */
    uint64_t order;                /* thread-order (and cpu-order) requirements checked */
    uint64_t truth;                /* ground-truth dependences checked */
    uint64_t violations;
    uint64_t final_chunks, tokens, tokens_unconsumed;
    /* The window's high-water marks: initial chunks held (read and not
     * settled, or settled and still needed), requirements known and not
     * checked, dependences waiting for their destination chunk. */
    uint64_t peak_chunks, peak_requirements, peak_pending;
    char message[640];             /* the first problem, when !ok */
} verify_report;

/* Reports the chunks checked on P (a pass_progress, backend/passes.h) from
 * now on; NULL: none. */
struct pass_progress;
void verify_set_progress(verify_ctx *v, struct pass_progress *p);

/* Checks the final log R. 0 when R was read (see report->ok), -1 with err
 * when R, the initial log or the truth cannot be read or do not fit. */
int verify_final(verify_ctx *v, rnr_reader *r, verify_report *rep, char *err, size_t errlen);

/* Checks the initial log's own dependence DAG (its edges and cpu lanes)
 * against the ground truth: whether the recorder missed a dependence.
 * 0 (see report->ok), or -1 with err as verify_final. */
int verify_initial(verify_ctx *v, verify_report *rep, char *err, size_t errlen);

#endif
