/* backend/serial.c: backend pass 3 (MaxPar -> Serial, Stitched ->
 * StSerial). The walk order is a topological order of the DAG, which keeps
 * every recorded CPU's chunks in order and every token's sender before its
 * receiver; consecutive entries of one thread become one. */
#include "rru/alloc.h"
#include "backend/serial.h"

#include <stdio.h>
#include <stdlib.h>

struct serializer {
    final_emit_fn emit;
    void *ctx;
    int have;
    rnr_final_chunk cur;
    serial_stats st;
};

serializer *serial_new(final_emit_fn emit, void *ctx)
{
    serializer *s = xcalloc(1, sizeof *s);
    s->emit = emit;
    s->ctx = ctx;
    return s;
}

void serial_free(serializer *s) { free(s); }
const serial_stats *serial_get_stats(const serializer *s) { return &s->st; }

static int flush(serializer *s)
{
    if (!s->have)
        return 0;
    s->have = 0;
    s->st.entries_out++;
    return s->emit(s->ctx, &s->cur);
}

int serial_visit(void *ctx, const dag_node *n, uint64_t out[2])
{
    serializer *s = ctx;
    s->st.chunks_in++;
    out[0] = out[1] = 0;
    if (s->have && s->cur.tid == n->c->tid && s->cur.cs <= (UINT64_MAX >> 1) - n->c->cs) {
        s->cur.cs += n->c->cs;
        s->cur.dur = n->c->dur > UINT64_MAX - s->cur.dur ? UINT64_MAX : s->cur.dur + n->c->dur;
        s->st.merged++;
        return 0;
    }
    if (flush(s) < 0)
        return -1;
    s->have = 1;
    s->cur = (rnr_final_chunk){ .tid = n->c->tid, .cs = n->c->cs, .dur = n->c->dur };
    return 0;
}

int serial_finish(serializer *s) { return flush(s); }
