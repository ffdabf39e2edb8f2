/* backend/dag.h: a final log as the DAG its replay executes. Tokens are
 * counters per (source CPU, destination CPU): the j-th token a CPU sends to
 * another is the one awaited by the j-th PTV slot for it there, and each
 * CPU lane runs its chunks in log order. dag_walk replays that with one
 * virtual processor: it reads the log and hands every chunk to a callback
 * in a topological order (the log's own order when the log is topological,
 * as MaxPar logs are), together with the tokens it consumed and the value
 * each source attached to them. Memory: the chunks read but not yet
 * runnable, and the tokens in flight. */
#ifndef RNR_BACKEND_DAG_H
#define RNR_BACKEND_DAG_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

/* One token consumed: sent by chunk INDEX (its index in its lane) of lane
 * CPU, carrying what that chunk's callback returned. */
typedef struct dag_pred {
    uint32_t cpu;
    uint64_t index;
    uint64_t value[2];
} dag_pred;

typedef struct dag_node {
    const rnr_final_chunk *c;   /* the record; arrays valid during the callback */
    uint64_t log_index;         /* position in the log */
    uint64_t lane_index;        /* index among the chunks of its cpu */
    uint64_t order;             /* position in the walk */
    uint32_t npred;
    const dag_pred *pred;       /* by source cpu ascending, then in token order */
} dag_node;

/* Visits a node; stores in out[2] the value its tokens carry. Returns 0,
 * or -1 to stop the walk (dag_walk then returns -1 with err untouched). */
typedef int (*dag_visit_fn)(void *ctx, const dag_node *n, uint64_t out[2]);

typedef struct dag_result {
    uint64_t nodes;             /* chunks visited */
    uint64_t records;           /* chunks read */
    uint64_t tokens_sent, tokens_consumed;
    uint64_t tokens_unconsumed; /* sent, never awaited (their CPU ended first) */
    uint64_t peak_waiting;      /* chunks read but not yet runnable */
    uint64_t peak_tokens;       /* tokens in flight */
    int stuck;                  /* chunks that can never run (a cycle, or tokens never sent) */
    uint64_t stuck_count;
    uint32_t stuck_cpu, stuck_from;       /* the first stuck chunk's cpu, and a cpu it waits for */
    uint64_t stuck_lane_index, stuck_log_index;
    uint32_t stuck_awaits, stuck_have;    /* tokens it awaits from stuck_from, and sent */
} dag_result;

/* Receives the chunks a pass writes, in order; 0, or -1 to stop it. */
typedef int (*final_emit_fn)(void *ctx, const rnr_final_chunk *c);

/* Walks the final log R (any final kind; Serial and StSerial are one lane).
 * 0 when the log was read to its end (check res->stuck), -1 on a read
 * error (message in err) or when FN stopped the walk. */
int dag_walk(rnr_reader *r, dag_visit_fn fn, void *ctx, dag_result *res, char *err, size_t errlen);

#endif
