/* backend/maxpar.h: backend pass 1, initial log -> MaxPar log (the
 * reference's MaxPar algorithm: proxies, waiting lists, binary-searched
 * destinations, periodic Trim, MSP-based "old enough", the Early Token
 * Vector, the C0/C1 merge), with token safety: per pair of CPUs the kept
 * edges never cross, one chunk sends at most one token to a CPU, and
 * edges implied by another edge of the same pair are dropped. Streaming:
 * memory is bounded by the chunks whose TS lies within 2 MSP of the newest
 * TS read (docs/backend.md). */
#ifndef RNR_BACKEND_MAXPAR_H
#define RNR_BACKEND_MAXPAR_H

#include <stddef.h>
#include <stdint.h>

#include "formats/log.h"

typedef struct maxpar maxpar;

typedef struct maxpar_stats {
    uint64_t chunks_in;        /* initial chunks read */
    uint64_t chunks_out;       /* MaxPar chunks written */
    uint64_t merged;           /* C1 merged into C0 */
    uint64_t dependences;      /* SV entries read */
    uint64_t tokens;           /* STV bits written */
    uint64_t early_tokens;     /* of those, sent before the destination chunk was dumped */
    uint64_t early_unclaimed;  /* of those, never awaited: their cpu dumped no later chunk */
    uint64_t dropped_later;    /* edges implied by a later chunk's edge to the same CPU at an
                                  earlier or equal time (would cross or duplicate) */
    uint64_t dropped_same;     /* edges implied by a later chunk's edge to the same destination */
    uint64_t discarded;        /* destination CPU never dumped a later chunk */
    uint64_t trims;
    uint64_t peak_open;        /* high-water mark of open chunks */
    uint64_t peak_edges;       /* high-water mark of waiting-list entries */
    uint64_t peak_bytes;       /* high-water mark of the pass's own heap */
} maxpar_stats;

/* Receives each MaxPar chunk in output order; returns 0, or -1 to stop the
 * pass (the message is the caller's). */
typedef int (*maxpar_emit_fn)(void *ctx, const rnr_final_chunk *c);

/* A pass for CPUS cpus and the log's MSP (0 = unknown: nothing is written
 * before the end). Aborts when out of memory. */
maxpar *maxpar_new(uint32_t cpus, uint64_t msp, maxpar_emit_fn emit, void *ctx);
void maxpar_free(maxpar *m);

/* Feeds the next chunk of the initial log. 0, or -1 if the input breaks an
 * invariant the pass relies on (message in maxpar_error) or emit failed. */
int maxpar_add(maxpar *m, const rnr_initial_chunk *c);
/* End of input: dependences still unresolved are discarded, every chunk
 * is written. 0 or -1. */
int maxpar_finish(maxpar *m);
const char *maxpar_error(const maxpar *m);
const maxpar_stats *maxpar_get_stats(const maxpar *m);
/* Chunks currently open (read, not yet written). */
uint64_t maxpar_open_chunks(const maxpar *m);

#endif
