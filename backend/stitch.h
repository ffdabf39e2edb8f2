/* backend/stitch.h: backend pass 2, MaxPar -> Stitched: consecutive chunks
 * of one thread on one CPU lane merge into a stitched chunk as long as
 * Lamport scalar clocks prove no cycle can form; tokens are regrouped so
 * that a stitched chunk sends at most one token per CPU and the edges of
 * a CPU pair never cross. */
#ifndef RNR_BACKEND_STITCH_H
#define RNR_BACKEND_STITCH_H

#include <stddef.h>
#include <stdint.h>

#include "backend/dag.h"

typedef struct stitch_stats {
    uint64_t chunks_in, chunks_out;
    uint64_t tokens_out;
    uint64_t ended_thread;     /* a stitched chunk ended: next chunk of another thread */
    uint64_t ended_clock;      /* ... a predecessor's clock could close a cycle */
    uint64_t ended_window;     /* ... it began `window` chunks of the walk ago */
    uint64_t ended_size;       /* ... the size would overflow */
    uint64_t ended_phase;      /* ... a phase boundary, or a MaxPar phase (adaptive) */
} stitch_stats;

#define STITCH_WINDOW_DEFAULT 4096u

typedef struct stitcher stitcher;

/* A pass over a log of CPUS lanes. A stitched chunk ends at the latest
 * WINDOW chunks of the walk after its first chunk (which bounds the pass's
 * memory and lets a quiet lane's last stitched chunk reach the log). */
stitcher *stitch_new(uint32_t cpus, uint64_t window, final_emit_fn emit, void *ctx);
void stitch_free(stitcher *s);
/* Makes the pass write an adaptive log (backend/adaptive.h): phase i covers
 * the chunks whose walk position in instructions (the instructions of the
 * chunks visited before them) is at least START[i] and below START[i + 1];
 * FORMAT[i] is RNR_PHASE_MAXPAR (no chunk joins another) or
 * RNR_PHASE_STITCHED (chunks join as in pass 2, never across a phase
 * boundary). START is ascending from 0. The records that begin a phase
 * carry its format in `phase`. The arrays are copied; call before the walk. */
void stitch_set_phases(stitcher *s, const uint64_t *start, const uint32_t *format, size_t n);
/* The same, the phases given while the walk runs (a recorder deciding them
 * on-line): before each chunk the pass asks FN for phase i = the number it
 * has (1 and *START, *FORMAT if phase i is decided, else 0) until it says
 * 0. FN must have decided phase 0 before the first chunk, and every phase
 * that starts at or before a chunk's walk position before that chunk. */
typedef int (*stitch_phase_fn)(void *ctx, size_t i, uint64_t *start, uint32_t *format);
void stitch_set_phase_source(stitcher *s, stitch_phase_fn fn, void *ctx);
/* The dag_walk callback (ctx = the stitcher). */
int stitch_visit(void *ctx, const dag_node *n, uint64_t out[2]);
/* End of the walk: emits the open stitched chunks. 0 or -1 (emit failed). */
int stitch_finish(stitcher *s);
const stitch_stats *stitch_get_stats(const stitcher *s);

#endif
