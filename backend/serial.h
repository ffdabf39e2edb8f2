/* backend/serial.h: backend pass 3, MaxPar -> Serial and Stitched ->
 * StSerial: a topological order of the DAG (dag_walk's), entries {TID, CS},
 * consecutive entries of one thread merged. */
#ifndef RNR_BACKEND_SERIAL_H
#define RNR_BACKEND_SERIAL_H

#include <stdint.h>

#include "backend/dag.h"

typedef struct serializer serializer;

typedef struct serial_stats {
    uint64_t chunks_in, entries_out, merged;
} serial_stats;

serializer *serial_new(final_emit_fn emit, void *ctx);
void serial_free(serializer *s);
/* The dag_walk callback (ctx = the serializer). */
int serial_visit(void *ctx, const dag_node *n, uint64_t out[2]);
/* Emits the last entry. 0 or -1. */
int serial_finish(serializer *s);
const serial_stats *serial_get_stats(const serializer *s);

#endif
