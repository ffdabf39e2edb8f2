/* backend/oracle.h: the two upper bounds on replay parallelism that the
 * exact dependences of a recorded execution (truth.deps) give, beside a
 * format's own parallelism (rnr stats on a bundle with truth):
 *   - chunk bound: the initial log's chunks with only the true edges (and
 *     each CPU's and each thread's order): what signatures, clusters,
 *     eviction and tokens cost;
 *   - instruction bound: each CPU's instructions cut exactly at the ends of
 *     the true dependences (and where threads migrate): what chunking costs.
 * Parallelism = all instructions / the longest weighted path. Computed on
 * the whole graph, or streamed with a window of chunks (the same numbers,
 * or the window is given up). */
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
    /* The stream's memory (oracle_compute_window): the most chunks held at
     * once, the most edges held in them, the positions kept for
     * dependences that reach back past the window (sources and cut
     * points), and the passes over the files (1, or 2 with such
     * positions). window_given_up: the window did not hold and the bounds
     * come from the whole graph (oracle_compute_file); why says what broke. */
    uint64_t peak_chunks, peak_edges, far_positions;
    uint32_t passes;
    int window_given_up;
    const char *why;
} oracle_bounds;

/* The window `rnr stats` gives the stream, in chunks, and its flags. */
#define ORACLE_WINDOW 4096
/* Flag: past the window, hold every chunk within the log's MSP of the
 * latest TS read (bounded silence: all chunks up to a TS have been read
 * once a chunk MSP later has). The window then holds at least the chunks
 * of one MSP, however small they are: memory still independent of the
 * log's length, and no chunk is dropped before its predecessors. */
#define ORACLE_HOLD_MSP 1u

/* Reads the initial log and the truth file whole (memory: their chunks,
 * dependences and cut points). 0, or -1 with err (a file's problem, or
 * dependences that do not fit the log). */
int oracle_compute(const char *initial_log, const char *truth_path, oracle_bounds *out, char *err,
                   size_t errlen);

/* The same bounds with the files streamed, holding at most WINDOW chunks
 * (0: no limit; with ORACLE_HOLD_MSP in FLAGS, also those within one MSP
 * of the latest TS read) and the positions of the dependences that reach back past
 * them (as many as there are: each such position stands for at least one
 * dependence that oracle_compute would hold). 0 with exactly
 * oracle_compute's bounds; 1 when the window does not hold (a dependence
 * into a chunk already dropped, one against the log's order; out->why says
 * which; the bounds are then unusable); -1 with err (a file's problem).
 * Reads the files once, or twice when dependences reach back. */
int oracle_compute_window(const char *initial_log, const char *truth_path, uint64_t window,
                          unsigned flags, oracle_bounds *out, char *err, size_t errlen);

/* oracle_compute_window, and oracle_compute when the window is given up
 * (out->window_given_up). 0, or -1 with err as oracle_compute. */
int oracle_compute_file(const char *initial_log, const char *truth_path, uint64_t window,
                        unsigned flags, oracle_bounds *out, char *err, size_t errlen);

#endif
