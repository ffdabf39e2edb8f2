/* driver/sched.c: the thread scheduler: a FIFO run queue, threads put on
 * idle cores, a seeded preemption slice per dispatch, blocking with
 * deadlines on the simulated clock, and the deadlock report.
 *
 * Time rule: a thread never runs before the time it became ready (its
 * waker's clock, its deadline, or the clock at which it was preempted):
 * dispatch advances the core's clock to the thread's ready time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/internal.h"

uint64_t proc_rand(drv_proc *p)
{
    uint64_t z = (p->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Room for one more entry in the list *V of N entries (capacity *CAP). */
static int room_for_one(thread ***v, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 16;
    thread **nv = realloc(*v, c * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    *cap = c;
    return 0;
}

thread *sched_new_thread(drv_proc *p, const rru_ctx *ctx)
{
    if (room_for_one(&p->threads, p->nthreads, &p->cap_threads) < 0 ||
        room_for_one(&p->alive, p->nalive, &p->cap_alive) < 0)
        return NULL;
    thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->proc = p->cur;
    t->tid = p->tid_base + (uint32_t)p->nthreads;
    t->vtid = t->tid;
    t->state = THR_RUNNABLE;
    t->core = -1;
    t->last_core = -1;
    t->ctx = *ctx;
    t->instret_base = ctx->instret;
    t->check_instret = ctx->instret;   /* sparse checks count from its start */
    t->deadline = UINT64_MAX;
    t->altstack_flags = LX_SS_DISABLE;
    p->threads[p->nthreads++] = t;
    p->alive[p->nalive++] = t;
    p->live++;
    p->cur->live++;
    return t;
}

static void runq_push(drv_proc *p, thread *t)
{
    t->next = NULL;
    t->prev = p->runq_tail;
    if (p->runq_tail)
        p->runq_tail->next = t;
    else
        p->runq_head = t;
    p->runq_tail = t;
}

static thread *runq_pop(drv_proc *p)
{
    thread *t = p->runq_head;
    if (!t)
        return NULL;
    p->runq_head = t->next;
    if (p->runq_head)
        p->runq_head->prev = NULL;
    else
        p->runq_tail = NULL;
    t->next = t->prev = NULL;
    return t;
}

void sched_arm_timer(drv_proc *p, unsigned core)
{
    uint64_t q = p->cfg.quantum;
    if (q == 0) {
        rru_machine_set_timer(p->m, core, UINT64_MAX);
        return;
    }
    /* A slice drawn uniformly from [q/2, 3q/2): the seed moves preemption
     * points, so different seeds interleave differently. */
    uint64_t slice = q / 2 + proc_rand(p) % (q > 1 ? q : 1);
    rru_machine_set_timer(p->m, core, rru_machine_clock(p->m, core) + (slice ? slice : 1));
}

/* A context switch: the thread on CORE leaves it while the core still
 * holds its registers. A recording ends its chunk and serializes there
 * (docs/design.md, "Invariants"). */
static void switch_out(drv_proc *p, unsigned core, uint32_t reason)
{
    if (p->rec)
        rec_switch_out(p->rec, core, reason);
}

static void dispatch(drv_proc *p, unsigned core, thread *t)
{
    rru_machine_set_mem(p->m, core, t->proc->mem);
    rru_machine_load(p->m, core, &t->ctx);
    rru_machine_advance_clock(p->m, core, t->ready_time);
    p->core_thread[core] = t;
    if (p->rec)
        rec_switch_in(p->rec, core, t->tid);
    t->core = (int)core;
    t->last_core = (int)core;
    t->state = THR_RUNNING;
    p->switches++;
    sched_arm_timer(p, core);
}

void sched_fill_idle(drv_proc *p)
{
    while (p->runq_head) {
        thread *t = p->runq_head;
        int core = -1;
        if (t->last_core >= 0 && rru_machine_is_idle(p->m, (unsigned)t->last_core))
            core = t->last_core;
        for (unsigned c = 0; core < 0 && c < p->ncores; c++)
            if (rru_machine_is_idle(p->m, c))
                core = (int)c;
        if (core < 0)
            return;
        dispatch(p, (unsigned)core, runq_pop(p));
    }
}

void sched_make_ready(drv_proc *p, thread *t, uint64_t when)
{
    if (when > t->ready_time)
        t->ready_time = when;
    t->state = THR_RUNNABLE;
    runq_push(p, t);
    sched_fill_idle(p);
}

/* Core CORE lost its thread: the next runnable thread takes it, or it idles. */
static void core_freed(drv_proc *p, unsigned core)
{
    p->core_thread[core] = NULL;
    thread *next = runq_pop(p);
    if (next)
        dispatch(p, core, next);
    else
        rru_machine_set_idle(p->m, core);
}

void sched_release_core(drv_proc *p, thread *t)
{
    unsigned core = (unsigned)t->core;
    switch_out(p, core, RNR_END_SWITCH);
    rru_machine_save(p->m, core, &t->ctx);
    t->ready_time = rru_machine_clock(p->m, core);
    t->core = -1;
    core_freed(p, core);
}

void sched_preempt(drv_proc *p, unsigned core)
{
    thread *t = p->core_thread[core];
    if (!p->runq_head) {
        sched_arm_timer(p, core);
        rru_machine_resume(p->m, core);
        return;
    }
    switch_out(p, core, RNR_END_SWITCH);
    rru_machine_save(p->m, core, &t->ctx);
    t->ready_time = rru_machine_clock(p->m, core);
    t->core = -1;
    t->state = THR_RUNNABLE;
    runq_push(p, t);
    core_freed(p, core);
}

void sched_block(drv_proc *p, thread *t, thr_wait wait, uint64_t deadline)
{
    t->wait = wait;
    t->deadline = deadline;
    t->state = THR_BLOCKED;
    sched_release_core(p, t);
}

void sched_wake(drv_proc *p, thread *t, int64_t result, uint64_t when)
{
    if (t->wait == WAIT_FUTEX)
        futex_dequeue(p, t);
    t->wait = WAIT_NONE;
    t->deadline = UINT64_MAX;
    t->ctx.x[10] = (uint64_t)result;
    syscall_log_result(p, t, t->block_nr, result);
    sched_make_ready(p, t, when);
}

void sched_restart(drv_proc *p, thread *t, uint64_t when)
{
    t->wait = WAIT_NONE;
    t->deadline = UINT64_MAX;
    t->ctx.pc -= 4;      /* ecall has no compressed form */
    syscall_log_result(p, t, t->block_nr, -LX_ERESTARTSYS);
    sched_make_ready(p, t, when);
}

void sched_exit_thread(drv_proc *p, thread *t)
{
    if (t->state == THR_RUNNING) {
        unsigned core = (unsigned)t->core;
        switch_out(p, core, RNR_END_EXIT);
        rru_machine_save(p->m, core, &t->ctx);   /* its final instruction count */
        t->core = -1;
        t->state = THR_DEAD;
        core_freed(p, core);
    } else {
        if (t->wait == WAIT_FUTEX)
            futex_dequeue(p, t);
        t->state = THR_DEAD;
    }
    sched_thread_died(p, t);
}

void sched_kill_thread(drv_proc *p, thread *t)
{
    if (t->state == THR_RUNNABLE) {
        thread_unlink(&p->runq_head, &p->runq_tail, t);
        t->state = THR_DEAD;
        sched_thread_died(p, t);
        return;
    }
    /* Running (its core's chunk ends, the core takes the next runnable
     * thread) or blocked (a futex waiter leaves its queue; the others wait
     * on no list: their wakers look for blocked threads). */
    sched_exit_thread(p, t);
    t->wait = WAIT_NONE;
    t->deadline = UINT64_MAX;
}

void sched_thread_died(drv_proc *p, thread *t)
{
    p->live--;
    t->proc->live--;
    /* The dead leave the alive list once they are half of it (order kept):
     * scans of it cost the live threads, not every thread ever made. */
    if (p->nalive > 2 * p->live + 16) {
        size_t n = 0;
        for (size_t i = 0; i < p->nalive; i++)
            if (p->alive[i]->state != THR_DEAD)
                p->alive[n++] = p->alive[i];
        p->nalive = n;
    }
}

uint64_t sched_next_deadline(const drv_proc *p)
{
    uint64_t w = sched_next_wake(p);
    for (size_t i = 0; i < p->nprocs; i++)
        if (!p->procs[i]->ended && p->procs[i]->itimer_at < w)
            w = p->procs[i]->itimer_at;
    return w;
}

uint64_t sched_next_wake(const drv_proc *p)
{
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < p->nalive; i++) {
        const thread *t = p->alive[i];
        if (t->state == THR_BLOCKED && t->deadline < best)
            best = t->deadline;
    }
    return best;
}

void sched_expire(drv_proc *p, uint64_t now)
{
    for (size_t i = 0; i < p->nprocs; i++) {
        process *pr = p->procs[i];
        if (pr->ended || pr->itimer_at > now)
            continue;
        /* The interval timers first (by process creation order); a
         * periodic one is re-armed at its next multiple of the interval
         * after NOW (expiries in between are overruns: one signal). */
        uint64_t at = pr->itimer_at, every = pr->itimer_every;
        pr->itimer_at = every ? at + ((now - at) / every + 1) * every : UINT64_MAX;
        p->cur = pr;
        signal_timer(p);
        if (p->done)
            return;
    }
    /* Creation order among equal deadlines: deterministic. */
    for (;;) {
        thread *first = NULL;
        for (size_t i = 0; i < p->nalive; i++) {
            thread *t = p->alive[i];
            if (t->state == THR_BLOCKED && t->deadline <= now &&
                (!first || t->deadline < first->deadline))
                first = t;
        }
        if (!first)
            return;
        if (first->wait == WAIT_POLL)   /* the call runs again and sees its deadline passed */
            sched_restart(p, first, first->deadline);
        else
            sched_wake(p, first, first->wait == WAIT_FUTEX ? -LX_ETIMEDOUT : 0, first->deadline);
    }
}

rru_ctx *sched_ctx(drv_proc *p, thread *t)
{
    return t->state == THR_RUNNING ? rru_hart_ctx(rru_machine_hart(p->m, (unsigned)t->core)) : &t->ctx;
}

uint64_t sched_now(const drv_proc *p, const thread *t)
{
    return t->state == THR_RUNNING ? rru_machine_clock(p->m, (unsigned)t->core) : t->ready_time;
}

char *sched_deadlock_report(const drv_proc *p)
{
    size_t cap = 256 + p->nthreads * 288, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len += (size_t)snprintf(s + len, cap - len,
                            "deadlock: all %zu live threads are blocked forever\n", p->live);
    for (size_t i = 0; i < p->nthreads && len < cap; i++) {
        const thread *t = p->threads[i];
        if (t->state != THR_BLOCKED)
            continue;
        drv_syscall_info info = drv_syscall_lookup((uint32_t)t->block_nr);
        char sym[96], where[128] = "";
        if (loader_symbolize(&t->proc->img, t->block_pc, sym, sizeof sym) == 0)
            snprintf(where, sizeof where, " (%s)", sym);
        if (t->wait == WAIT_FUTEX)
            len += (size_t)snprintf(s + len, cap - len,
                                    "  thread %u: %s (futex wait on 0x%" PRIx64
                                    ") at pc 0x%" PRIx64 "%s\n",
                                    t->tid, info.name, t->wait_addr, t->block_pc, where);
        else
            len += (size_t)snprintf(s + len, cap - len, "  thread %u: %s%s at pc 0x%" PRIx64 "%s\n",
                                    t->tid, info.name, t->wait == WAIT_PIPE   ? " (pipe)"
                                    : t->wait == WAIT_POLL ? " (poll)"
                                    : t->wait == WAIT_LOCK ? " (file lock)" : "",
                                    t->block_pc, where);
    }
    if (len > 0 && len < cap && s[len - 1] == '\n')
        s[len - 1] = 0;
    return s;
}
