/* backend/metrics.h: the replay metrics of a final log (DESIGN.md section
 * 9): critical path, replay parallelism, and the simulated replay time of
 * its DAG on W replay CPUs. */
#ifndef RNR_BACKEND_METRICS_H
#define RNR_BACKEND_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

#define METRICS_MAX_W 16

typedef struct dag_metrics {
    uint64_t chunks, instructions, tokens;
    uint64_t critical_path;          /* instructions on the longest path */
    double parallelism;              /* instructions / critical path */
    uint64_t token_latency;          /* cycles a token takes, in the simulation */
    uint32_t nw;
    uint32_t workers[METRICS_MAX_W]; /* W = 1, 2, 4, ..., and the recorded cpu count,
                                      * or the list given to metrics_compute_on */
    uint64_t makespan[METRICS_MAX_W];/* cycles to replay on W CPUs at 1 IPC */
} dag_metrics;

/* Reads the final log R whole (memory: its DAG) and computes its metrics.
 * Simulated replay: any idle replay CPU takes the runnable chunk that has
 * been runnable longest (ties: walk order); a chunk is runnable when its
 * CPU's previous chunk has finished and every token it awaits has arrived,
 * TOKEN_LATENCY cycles after its sender finished. 0, or -1 with err (read
 * error, or a log that cannot be replayed). */
int metrics_compute(rnr_reader *r, uint64_t token_latency, dag_metrics *m, char *err, size_t errlen);
/* The same with the simulated replay on the NW (1..METRICS_MAX_W) replay CPU
 * counts W[i] (each >= 1; more than the recorded CPUs is allowed and runs
 * like the recorded count, since a lane is sequential) instead of the
 * default list. */
int metrics_compute_on(rnr_reader *r, uint64_t token_latency, const uint32_t *w, uint32_t nw,
                       dag_metrics *m, char *err, size_t errlen);

#endif
