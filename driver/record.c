/* driver/record.c: the recorder: one rru_unit per core, attached through
 * the machine's hooks, fed in simulation order on a virtual clock,
 * programmed at context switches and system calls (the kernel-driver shim
 * of the reference text), drained under bounded silence into the chunk
 * sink, and a CHECK record (pc, register hash) in the input log where a
 * chunk ends. docs/recorder.md has the long form of the arguments below.
 *
 * Virtual time. The machine runs one core at a time, each for a slice that
 * may run ahead of the others' clocks, so events reach the recorder in
 * simulation (host) order, which is the real order of the execution but not
 * the order of the cores' clocks. The RRUs need calls in nondecreasing time
 * with every snoop seen before the snooped unit's later events. The
 * recorder therefore stamps each event with vt = max(vt, the core's clock):
 * nondecreasing by construction, within a slice of the clocks, and exactly
 * consistent with the order in which the accesses really happened. Two
 * more rules keep the initial log's timestamp semantics ("the destination
 * of a dependence recorded at t is the first chunk of its CPU with TS > t"):
 *   - after a bus transaction (all its snoops at bus_vt), vt moves past
 *     bus_vt, so the requester's chunk holding the access ends with
 *     TS > bus_vt;
 *   - after a serialization at t, vt moves to t + 2 (the unit's contract:
 *     a thread switched out at t resumes no earlier than t + 2).
 *
 * Instruction counts. A unit learns of retired instructions lazily: before
 * any call for core k the recorder retires the instructions k ran since it
 * last reported (rru_machine_retired is exact even inside an instruction),
 * so a chunk that a snoop cuts holds everything k executed before the
 * conflicting transaction. A chunk that reaches its size limit between two
 * reports is split by the unit at the exact count (it gets no check: the
 * registers of that point are gone), but such a split never ends a cluster
 * (deferred_cluster_end): the filter would be flushed too late, after the
 * core ran on with the old one, and lines it touched in between would be
 * missing from the new cluster's signatures. A full cluster ends at the
 * next instruction boundary the recorder sees (settle).
 *
 * Filters. The machine reports a line to `access` once per filter epoch;
 * whenever a unit ends a cluster, the core's filter is flushed, so every
 * line the next cluster touches reaches its signatures. */
#include "driver/record.h"

#include <stdlib.h>
#include <string.h>

#include "driver/internal.h"
#include "rru/alloc.h"

/* A drained chunk waiting to be written in time order. */
typedef struct drained {
    rnr_initial_chunk c;
    uint64_t start;
    size_t sv_at;              /* its SV entries in rec.sv */
} drained;

struct rec {
    drv_proc *p;
    rru_machine *m;
    unsigned n;
    rru_unit *u[RRU_MAX_CORES];
    const uint64_t *summary[2][RRU_MAX_CORES];   /* rru_snoop_summary for reads, writes */
    uint64_t reported[RRU_MAX_CORES];    /* retired instructions the unit has seen */
    uint64_t room[RRU_MAX_CORES];        /* rru_report_room, kept by after() */
    uint64_t ends_seen[RRU_MAX_CORES];   /* rru_cluster_ends at the last flush */
    uint64_t chunks_seen[RRU_MAX_CORES];
    uint64_t msp, period, next_tick;
    uint64_t vt;
    int bus_open;                        /* snoops of a transaction delivered, access not yet */
    uint64_t bus_vt;
    int mid_core;                        /* the core inside an instruction (hook), -1 = none */
    int no_check;                        /* the chunk that ends now gets no CHECK */
    uint64_t pre_ecall_pc;               /* nonzero: the chunk ends before the ECALL there */
    drained *dq;                         /* drain scratch */
    size_t ndq, capdq;
    uint64_t *dts;                       /* dq[i].c.ts, for the merge */
    uint32_t *order;                     /* the merge's result: indices into dq */
    size_t run_end[RRU_MAX_CORES];       /* unit k's chunks: dq[run_end[k - 1] .. run_end[k]) */
    rnr_sv_entry *sv;
    size_t nsv, capsv;
    int failed;
    rec_stats st;
};

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ---- time and instruction counts ---- */

static void catch_up(rec *r, uint64_t t);

static uint64_t advance(rec *r, uint64_t t)
{
    if (r->bus_open) {
        r->bus_open = 0;
        r->vt = max64(r->vt, r->bus_vt + 1);
    }
    if (t >= r->next_tick + r->period)
        catch_up(r, t);
    r->vt = max64(r->vt, t);
    return r->vt;
}

/* Retires on core K's unit the instructions up to TARGET (absolute count). */
static void retire_to(rec *r, unsigned k, uint64_t target)
{
    if (target > r->reported[k]) {
        rru_retire(r->u[k], r->vt, target - r->reported[k]);
        r->reported[k] = target;
    }
}

static void sync_core(rec *r, unsigned k) { retire_to(r, k, rru_machine_retired(r->m, k)); }

static void emit_check(rec *r, unsigned k)
{
    drv_proc *p = r->p;
    thread *t = p->core_thread[k];
    if (!t || r->no_check || (int)k == r->mid_core || !p->in)
        return;
    const rru_ctx *c = rru_hart_ctx(rru_machine_hart(r->m, k));
    uint64_t pc = c->pc, instret = c->instret;
    if (r->pre_ecall_pc) {
        pc = r->pre_ecall_pc;
        instret--;
    }
    /* Sparse checks: only once the thread ran check_every instructions
     * since its previous check (instret only grows, so this is a
     * difference of counts of one thread). */
    if (instret - t->check_instret < p->cfg.check_every)
        return;
    t->check_instret = instret;
    if (inlog_check(p->in, t->tid, instret, pc, rru_ctx_hash(c)) < 0)
        proc_fail(p, "input log: %s", inlog_error(p->in));
    r->st.checks++;
}

/* Arms core K's event at the next tick. (Only a time: the machine stops a
 * core for time at block boundaries, which leaves the schedule as it is;
 * the size limit is applied by the unit when it is told of the
 * instructions, and such a chunk gets no check.) */
static void arm(rec *r, unsigned k) { rru_machine_set_event(r->m, k, UINT64_MAX, r->next_tick); }

/* After any call on core K's unit: a cluster that ended flushes the
 * filter; a chunk that ended at the core's present point gets its check. */
static void after(rec *r, unsigned k)
{
    rru_unit *u = r->u[k];
    r->room[k] = rru_report_room(u);
    uint64_t ends = rru_cluster_ends(u);
    if (ends != r->ends_seen[k]) {
        r->ends_seen[k] = ends;
        rru_machine_flush_filter(r->m, k);
    }
    uint64_t chunks = rru_unit_counters(u)->chunks;
    if (chunks != r->chunks_seen[k]) {
        /* Only a chunk that ended exactly here (the current one is empty)
         * has the core's present registers at its end. */
        if (rru_chunk_room(u) == r->p->cfg.rru.chunk_max)
            emit_check(r, k);
        r->chunks_seen[k] = chunks;
    }
    arm(r, k);
}

/* At an instruction boundary of core K: a cluster that became full while
 * instructions were reported after the fact ends here, where the filter
 * flush is in time (deferred_cluster_end). */
static void settle(rec *r, unsigned k)
{
    if (rru_cluster_full(r->u[k])) {
        rru_terminate(r->u[k], r->vt, RNR_END_SIZE);
        after(r, k);
    }
}

/* ---- draining ---- */

static void collect(void *ctx, const rnr_initial_chunk *c, uint64_t start)
{
    rec *r = ctx;
    if (r->ndq == r->capdq) {
        r->capdq = r->capdq ? 2 * r->capdq : 256;
        r->dq = xrealloc(r->dq, r->capdq * sizeof *r->dq);
        r->dts = xrealloc(r->dts, r->capdq * sizeof *r->dts);
        r->order = xrealloc(r->order, r->capdq * sizeof *r->order);
    }
    if (r->nsv + c->nsv > r->capsv) {
        r->capsv = max64(2 * r->capsv, r->nsv + c->nsv + 256);
        r->sv = xrealloc(r->sv, r->capsv * sizeof *r->sv);
    }
    drained *d = &r->dq[r->ndq];
    d->c = *c;
    d->start = start;
    r->dts[r->ndq++] = c->ts;
    d->sv_at = r->nsv;
    if (c->nsv)
        memcpy(r->sv + r->nsv, c->sv, c->nsv * sizeof *c->sv);
    r->nsv += c->nsv;
}

int rec_merge_runs(const uint64_t *ts, const size_t *run_end, unsigned nruns, uint32_t *order)
{
    size_t head[RRU_MAX_CORES], out = 0;
    if (nruns > RRU_MAX_CORES)
        return -1;
    for (unsigned k = 0; k < nruns; k++) {
        head[k] = k ? run_end[k - 1] : 0;
        for (size_t i = head[k] + 1; i < run_end[k]; i++)
            if (ts[i] < ts[i - 1])
                return -1;
    }
    /* Only the runs that hold chunks take part (a drain often finds one or
     * two units with chunks among eight), in increasing run order. */
    unsigned live[RRU_MAX_CORES], nlive = 0;
    for (unsigned k = 0; k < nruns; k++)
        if (head[k] < run_end[k])
            live[nlive++] = k;
    /* Each step takes the smallest head; a tie goes to the lower run, which
     * holds the lower indices: the result is the stable sort by TS. A run
     * left alone is copied as it is. */
    while (nlive > 1) {
        unsigned bi = 0;
        for (unsigned i = 1; i < nlive; i++)
            if (ts[head[live[i]]] < ts[head[live[bi]]])
                bi = i;
        unsigned best = live[bi];
        order[out++] = (uint32_t)head[best]++;
        if (head[best] == run_end[best]) {
            memmove(live + bi, live + bi + 1, (nlive - bi - 1) * sizeof *live);
            nlive--;
        }
    }
    if (nlive == 1)
        for (unsigned k = live[0]; head[k] < run_end[k];)
            order[out++] = (uint32_t)head[k]++;
    return 0;
}

/* Every final chunk of every unit goes to the sink, in TS order, ties in
 * unit order: per CPU the TS never decreases, so merging the units' runs
 * is the stable sort by TS. */
static void drain(rec *r)
{
    drv_proc *p = r->p;
    r->ndq = r->nsv = 0;
    for (unsigned k = 0; k < r->n; k++) {
        rru_drain(r->u[k], UINT32_MAX, collect, r);
        r->run_end[k] = r->ndq;
    }
    if (!r->ndq)
        return;
    if (rec_merge_runs(r->dts, r->run_end, r->n, r->order) < 0) {
        r->failed = 1;
        proc_fail(p, "recording: a unit drained chunks out of time order (internal error)");
        return;
    }
    r->st.drains++;
    for (size_t i = 0; i < r->ndq && !r->failed; i++) {
        drained *d = &r->dq[r->order[i]];
        d->c.sv = r->sv + d->sv_at;
        uint64_t delay = r->vt - d->start;
        if (delay > r->st.max_drain_delay)
            r->st.max_drain_delay = delay;
        if (delay > r->msp)
            r->st.silence_violations++;
        if (p->cfg.chunk && p->cfg.chunk(p->cfg.chunk_ctx, &d->c) != 0) {
            r->failed = 1;
            proc_fail(p, "recording: the initial log could not be written");
        }
        r->st.chunks++;
    }
}

/* Every unit ticks at vt, and what is final drains. Each core is at an
 * instruction boundary (the one inside an instruction, mid_core, is
 * counted up to the instruction before: a boundary too). */
static void tick_all(rec *r)
{
    for (unsigned k = 0; k < r->n; k++) {
        sync_core(r, k);
        settle(r, k);
        rru_tick(r->u[k], r->vt);
        after(r, k);
    }
    drain(r);
}

/* Time passed: a tick when vt reached the next one. */
static void maybe_tick(rec *r)
{
    if (r->vt < r->next_tick)
        return;
    tick_all(r);
    r->next_tick = (r->vt / r->period + 1) * r->period;
    for (unsigned k = 0; k < r->n; k++)
        arm(r, k);
    if (r->p->cfg.tick)
        r->p->cfg.tick(r->p->cfg.tick_ctx);
}

/* Time jumps to T (every core was idle, or a thread was woken late): the
 * units must still tick every MSP/16 cycles on the way (their ages and
 * evictions count on it, or a window evicted at T would carry dependences
 * far past its chunks: bounded silence). Nothing runs in between, so after
 * a few MSPs of ticks nothing is left to age and the rest is skipped. */
static void catch_up(rec *r, uint64_t t)
{
    for (int i = 0; i < 80 && r->next_tick < t; i++) {
        r->vt = max64(r->vt, r->next_tick);
        tick_all(r);
        r->next_tick += r->period;
    }
    if (r->next_tick < t)
        r->next_tick = (t / r->period + 1) * r->period;
}

/* ---- machine hooks ---- */

/* A report the fast path could not take: time must tick, a chunk ends. */
static void __attribute__((noinline))
access_slow(rec *r, unsigned core, uint64_t line, int write, uint64_t time, uint64_t target, int insn)
{
    r->mid_core = insn ? (int)core : -1;
    uint64_t now = advance(r, time);
    retire_to(r, core, target);
    rru_access(r->u[core], now, line, write, 0);
    after(r, core);
    r->mid_core = -1;
}

static void hook_access(void *ctx, unsigned core, uint64_t line, int write, uint64_t time,
                        uint64_t retired)
{
    rec *r = ctx;
    int insn = r->p->sys_core != (int)core;
    uint64_t target = retired + (insn ? 1 : 0);
    /* Most reports neither tick nor end a chunk: then the unit only counts
     * and inserts, and `after` has nothing to do (no chunk or cluster
     * ended; the event stays armed at next_tick). */
    uint64_t from = r->reported[core], room = r->room[core];
    uint64_t n = target > from ? target - from : 0;
    if (room && n <= room && time < r->next_tick + r->period) {
        if (r->bus_open) {   /* advance(), without the catch-up it cannot need */
            r->bus_open = 0;
            r->vt = max64(r->vt, r->bus_vt + 1);
        }
        r->vt = max64(r->vt, time);
        r->reported[core] = max64(from, target);
        r->room[core] = room - n;
        rru_report(r->u[core], line, write, n);
        return;
    }
    access_slow(r, core, line, write, time, target, insn);
}

/* A bus transaction: the snoops of every other unit, at one vt. */
static void hook_bus(void *ctx, const rru_bus *b)
{
    rec *r = ctx;
    r->mid_core = b->requester;
    r->bus_vt = advance(r, b->time);
    r->mid_core = -1;
    r->bus_open = 1;
    const uint32_t bit = rru_summary_bit(b->line);
    uint64_t h = 0;   /* rru_line_hash, once a unit has to be asked */
    int hashed = 0;
    const uint64_t *const *sum = r->summary[b->exclusive ? 1 : 0];
    for (unsigned k = 0; k < r->n; k++) {
        /* Most snoops hit nothing: then the unit's bookkeeping can wait for
         * its next event (rru_snoop_hits says why nothing is lost). The
         * unit's summary answers most of them without a call. */
        if (k == b->requester || (sum[k] && !((sum[k][bit >> 6] >> (bit & 63)) & 1)))
            continue;
        if (!hashed) {
            h = rru_line_hash(b->line);
            hashed = 1;
        }
        if (!rru_snoop_hits(r->u[k], b->requester, b->line, h, b->exclusive))
            continue;
        sync_core(r, k);
        settle(r, k);
        rru_snoop(r->u[k], r->bus_vt, b->requester, b->line, b->exclusive);
        after(r, k);
    }
}

static void hook_event(void *ctx, unsigned core)
{
    rec *r = ctx;
    advance(r, rru_machine_clock(r->m, core));
    sync_core(r, core);
    settle(r, core);
    after(r, core);
    maybe_tick(r);
    if (r->p->cfg.interrupt && *r->p->cfg.interrupt)
        rru_machine_request_stop(r->m, core);
}

static const rru_core_ops rec_ops = {hook_access, NULL, hook_event};

/* The oracle's view of every data access (rru_machine_set_trace). */
static void trace_access(void *ctx, unsigned core, uint64_t addr, unsigned size, int write,
                         uint64_t time)
{
    rec *r = ctx;
    drv_proc *p = r->p;
    thread *t = p->core_thread[core];
    (void)time;
    if (!t)
        return;
    uint64_t in_sys = p->sys_core == (int)core;
    rru_hart *h = rru_machine_hart(r->m, core);
    drv_access a = {core, t->tid, rru_machine_retired(r->m, core) - in_sys,
                    rru_hart_instret(h) - in_sys - t->instret_base, r->vt, addr, size, write};
    p->cfg.access(p->cfg.access_ctx, &a);
}

/* ---- the driver's side ---- */

rec *rec_new(drv_proc *p)
{
    rec *r = xcalloc(1, sizeof *r);
    r->p = p;
    r->m = p->m;
    r->n = rru_machine_cores(p->m);
    rru_config c = p->cfg.rru;
    c.cpus = r->n;
    c.deferred_cluster_end = 1;
    r->msp = c.msp;
    r->period = c.msp / 16 ? c.msp / 16 : 1;
    r->next_tick = r->period;
    r->mid_core = -1;
    for (unsigned k = 0; k < r->n; k++) {
        r->u[k] = rru_unit_new(&c, k);
        r->summary[0][k] = rru_snoop_summary(r->u[k], 0);
        r->summary[1][k] = rru_snoop_summary(r->u[k], 1);
        rru_machine_attach(r->m, k, &rec_ops, r);
        arm(r, k);
    }
    rru_machine_set_bus(r->m, hook_bus, r);
    if (p->cfg.access)
        rru_machine_set_trace(r->m, trace_access, r);
    return r;
}

void rec_free(rec *r)
{
    if (!r)
        return;
    rru_machine_set_bus(r->m, NULL, NULL);
    for (unsigned k = 0; k < r->n; k++) {
        rru_machine_attach(r->m, k, NULL, NULL);
        rru_unit_free(r->u[k]);
    }
    free(r->dq);
    free(r->dts);
    free(r->order);
    free(r->sv);
    free(r);
}

void rec_switch_in(rec *r, unsigned core, uint32_t tid)
{
    advance(r, rru_machine_clock(r->m, core));
    r->reported[core] = rru_machine_retired(r->m, core);
    rru_enable(r->u[core], r->vt, tid);
    after(r, core);
}

void rec_switch_out(rec *r, unsigned core, uint32_t reason)
{
    advance(r, rru_machine_clock(r->m, core));
    sync_core(r, core);
    /* Inside a system call (it blocks, or the thread exits) the registers
     * do not yet hold what replay will have at the chunk's end: no check. */
    r->no_check = r->p->sys_core == (int)core;
    rru_serialize(r->u[core], r->vt, reason);
    after(r, core);
    rru_disable(r->u[core], r->vt);
    after(r, core);
    r->no_check = 0;
    r->vt += 2;
}

void rec_syscall_enter(rec *r, unsigned core, uint64_t ecall_pc, int global)
{
    advance(r, rru_machine_clock(r->m, core));
    retire_to(r, core, rru_machine_retired(r->m, core) - 1);
    r->pre_ecall_pc = ecall_pc;
    rru_terminate(r->u[core], r->vt, RNR_END_SYSCALL);
    after(r, core);
    r->pre_ecall_pc = 0;
    if (global) {
        r->st.global_syscalls++;
        for (unsigned q = 0; q < r->n; q++) {
            if (q == core || !rru_enabled(r->u[q]))
                continue;
            sync_core(r, q);
            rru_serialize(r->u[q], r->vt, RNR_END_SERIALIZE);
            after(r, q);
        }
        r->vt += 2;
    }
    sync_core(r, core);   /* the ECALL opens the call's own chunk */
    after(r, core);
}

void rec_syscall_exit(rec *r, unsigned core, int global)
{
    advance(r, rru_machine_clock(r->m, core));
    sync_core(r, core);
    if (global)
        rru_serialize(r->u[core], r->vt, RNR_END_SERIALIZE);
    else
        rru_terminate(r->u[core], r->vt, RNR_END_SYSCALL);
    after(r, core);
    if (global)
        r->vt += 2;
    maybe_tick(r);
}

int rec_finish(rec *r)
{
    for (unsigned k = 0; k < r->n; k++)
        advance(r, rru_machine_clock(r->m, k));
    for (unsigned k = 0; k < r->n; k++) {
        sync_core(r, k);
        rru_unit_stop(r->u[k], r->vt);
        after(r, k);
    }
    drain(r);
    return r->failed ? -1 : 0;
}

void rec_stats_get(const rec *r, rec_stats *out)
{
    *out = r->st;
    for (unsigned k = 0; k < r->n; k++) {
        const rru_counters *c = rru_unit_counters(r->u[k]);
        out->clusters += c->clusters;
        out->conflicts += c->conflicts;
        out->evictions += c->evictions;
        out->serializations += c->serializations;
        out->sv_entries += c->sv_entries;
    }
}
