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
 * and Stitched DAGs are checked with vector clocks over the lanes. */
#ifndef RNR_BACKEND_VERIFY_H
#define RNR_BACKEND_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "backend/truth.h"
#include "formats/log.h"

typedef struct verify_ctx verify_ctx;

/* Reads the initial log R whole (memory: the chunks and dependences).
 * NULL with err on a read error or a log that breaks its own invariants. */
verify_ctx *verify_load(rnr_reader *r, char *err, size_t errlen);
void verify_free(verify_ctx *v);

/* Adds ground-truth dependences to check. -1 with err if they do not fit
 * the initial log (other cpu count, instructions beyond a lane or thread,
 * or a tid that differs from the chunk's). */
int verify_add_truth(verify_ctx *v, const truth_set *t, char *err, size_t errlen);

typedef struct verify_report {
    int ok;                        /* every check passed */
    uint64_t dependences;          /* recorded dependences enforced (checked) */
    uint64_t discarded;            /* destination cpu never dumped a later chunk */
    uint64_t order;                /* thread-order (and cpu-order) requirements checked */
    uint64_t truth;                /* ground-truth dependences checked */
    uint64_t violations;
    uint64_t final_chunks, tokens, tokens_unconsumed;
    char message[640];             /* the first problem, when !ok */
} verify_report;

/* Reports the chunks checked on P (a pass_progress, backend/passes.h) from
 * now on; NULL: none. */
struct pass_progress;
void verify_set_progress(verify_ctx *v, struct pass_progress *p);

/* Checks the final log R. 0 when R was read (see report->ok), -1 with err
 * when R cannot be read. */
int verify_final(verify_ctx *v, rnr_reader *r, verify_report *rep, char *err, size_t errlen);

/* Checks the initial log's own dependence DAG (its edges and cpu lanes)
 * against the ground truth: whether the recorder missed a dependence. */
void verify_initial(verify_ctx *v, verify_report *rep);

#endif
