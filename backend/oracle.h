/* backend/oracle.h: the two upper bounds on replay parallelism that the
 * exact dependences of a recorded execution (truth.deps) give, beside a
 * format's own parallelism (rnr stats on a bundle with truth):
 *   - chunk bound: the initial log's chunks with only the true edges (and
 *     each CPU's and each thread's order): what signatures, clusters,
 *     eviction and tokens cost;
 *   - instruction bound: each CPU's instructions cut exactly at the ends of
 *     the true dependences (and where threads migrate): what chunking costs.
 * Parallelism = all instructions / the longest weighted path. */
#ifndef RNR_BACKEND_ORACLE_H
#define RNR_BACKEND_ORACLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct oracle_bounds {
    uint64_t instructions, chunks, deps;
    uint64_t chunk_critical_path;
    double chunk_parallelism;
    uint64_t segments;              /* nodes of the instruction-level graph */
    uint64_t insn_critical_path;
    double insn_parallelism;
} oracle_bounds;

/* Reads the initial log and the truth file whole (memory: their chunks,
 * dependences and cut points). 0, or -1 with err (a file's problem, or
 * dependences that do not fit the log). */
int oracle_compute(const char *initial_log, const char *truth_path, oracle_bounds *out, char *err,
                   size_t errlen);

#endif
