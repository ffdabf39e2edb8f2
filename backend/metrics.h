/* backend/metrics.h: the replay metrics of a final log (docs/backend.md):
 * critical path, replay parallelism, and the simulated replay time of
 * its DAG on W replay CPUs, computed as the log streams past. */
#ifndef RNR_BACKEND_METRICS_H
#define RNR_BACKEND_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

#define METRICS_MAX_W 16

/* The window `rnr stats` gives the simulations (metrics_compute_file). */
#define METRICS_WINDOW 65536

typedef struct dag_metrics {
    uint64_t chunks, instructions, tokens;
    uint64_t critical_path;          /* instructions on the longest path */
    double parallelism;              /* instructions / critical path */
    uint64_t token_latency;          /* cycles a token takes, in the simulation */
    uint32_t nw;
    uint32_t workers[METRICS_MAX_W]; /* W = 1, 2, 4, ..., and the recorded cpu count,
                                      * or the list given to metrics_compute_on */
    uint64_t makespan[METRICS_MAX_W];/* cycles to replay on W CPUs at 1 IPC (the
                                      * instruction-count model) */
    /* The recorded timing: a chunk lasts its recorded duration (the log's,
     * docs/formats.md); only when the log carries durations (recorded = 1,
     * version 4 on), else 0. */
    int recorded;
    uint64_t critical_path_recorded; /* recorded cycles on the longest such path */
    uint64_t makespan_recorded[METRICS_MAX_W]; /* cycles to replay on W CPUs, recorded timing */
    /* Memory: the most chunks held at once (read and not yet finished in
     * every simulation, or still needed by a chunk to come), the walk's
     * most tokens in flight, and whether a window was given up (the log
     * was then read again without one). */
    uint64_t peak_chunks, peak_tokens;
    int window_given_up;
} dag_metrics;

/* Computes the metrics of the final log R, reading it once. Simulated
 * replay: any idle replay CPU takes the runnable chunk that has been
 * runnable longest (ties: walk order); a chunk is runnable when its CPU's
 * previous chunk has finished and every token it awaits has arrived,
 * TOKEN_LATENCY cycles after its sender finished; a chunk lasts its
 * instructions (makespan) and, in simulations of their own, its recorded
 * duration (makespan_recorded). Exact; memory: the
 * chunks each simulation cannot decide yet (docs/backend.md, "Metrics":
 * bounded while every CPU keeps dumping chunks, the whole log when one
 * stays idle). 0, or -1 with err (read error, or a log that cannot be
 * replayed). */
int metrics_compute(rnr_reader *r, uint64_t token_latency, dag_metrics *m, char *err, size_t errlen);

/* The same with a WINDOW (0: none): a simulation that holds more than
 * WINDOW undecided chunks runs ahead of what it can prove. 0 with the
 * exact metrics; 1 if a chunk read later shows that running ahead could
 * have changed a schedule (the metrics are then unusable: read the log
 * again without a window); -1 with err. */
int metrics_compute_window(rnr_reader *r, uint64_t token_latency, uint64_t window, dag_metrics *m,
                           char *err, size_t errlen);

/* metrics_compute with the simulated replay on the NW (1..METRICS_MAX_W)
 * replay CPU counts W[i] (each >= 1; more than the recorded CPUs is allowed
 * and runs like the recorded count, since a lane is sequential) instead of
 * the default list (NW = 0). */
int metrics_compute_on(rnr_reader *r, uint64_t token_latency, const uint32_t *w, uint32_t nw,
                       dag_metrics *m, char *err, size_t errlen);

/* Opens PATH and computes with WINDOW on the replay CPU counts W (NW = 0:
 * the default list), reading it again without a window when the first
 * reading gives up (m->window_given_up). 0, or -1 with err. */
int metrics_compute_file(const char *path, uint64_t token_latency, uint64_t window, const uint32_t *w,
                         uint32_t nw, dag_metrics *m, char *err, size_t errlen);

#endif
