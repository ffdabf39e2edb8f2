/* driver/sys_proc.c: processes: fork and vfork (clone without
 * CLONE_THREAD), a process's end, wait4 and waitid, getppid.
 *
 * A process owns its memory, address space, descriptor table, signal
 * actions and limits (struct process); every thread names its own. The
 * machine runs the threads of every process on its cores like any thread:
 * a core switches memory with the thread it gets (rru_machine_set_mem),
 * and coherence stays keyed by address, so the lines of two processes at
 * one address are one line to it: conflicts between them are false, never
 * missed. fork's copy is made inside clone, which serializes every core
 * (ORD_GLOBAL): every chunk before it in the recorded order has ended and
 * none after it has begun, so a replay copies the same bytes.
 *
 * The first process is the run's: its end ends the run, and processes
 * still alive then end with it, as in a PID namespace whose init ends.
 * Another process's end leaves a zombie for its parent (reparented to
 * the first process when its parent ended before it), with its final
 * state's digest kept for the run's (drv_proc_digest). */
#include <stdlib.h>
#include <string.h>

#include "driver/internal.h"

process *process_by_pid(const drv_proc *p, int64_t pid)
{
    for (size_t i = 0; i < p->nprocs; i++)
        if ((int64_t)p->procs[i]->pid == pid)
            return p->procs[i];
    return NULL;
}

void process_free(process *pr)
{
    if (!pr)
        return;
    if (!pr->shares_mem) {
        vm_free(pr->vm);
        rru_mem_free(pr->mem);
    }
    loader_free(&pr->img);
    free(pr->exe_path);
    free(pr->shmaps);
    free(pr);
}

process *process_fork(drv_proc *p, int vfork, int exit_signal, int64_t *err)
{
    process *par = p->cur;
    if (p->nprocs == p->cap_procs) {
        size_t cap = p->cap_procs ? 2 * p->cap_procs : 8;
        process **v = realloc(p->procs, cap * sizeof *v);
        if (!v)
            goto nomem;
        p->procs = v;
        p->cap_procs = cap;
    }
    process *c = malloc(sizeof *c);
    if (!c)
        goto nomem;
    *c = *par;
    c->parent = par;
    c->live = 0;
    c->ended = c->reaped = 0;
    c->wstatus = 0;
    c->exit_signal = exit_signal;
    c->leader_status = 0;
    c->vfork_parent = NULL;
    c->shares_mem = vfork;
    c->leader_alias = NULL;
    c->shmaps = NULL;
    c->nshmaps = c->cap_shmaps = 0;
    memset(&c->img, 0, sizeof c->img);   /* symbols: the parent's program, not kept twice */
    c->itimer_at = UINT64_MAX;           /* timers are not inherited */
    c->itimer_every = 0;
    c->pid = p->tid_base + (uint32_t)p->nthreads;   /* its first thread's id */
    c->exe_path = strdup(par->exe_path);
    if (vfork) {
        c->mem = par->mem;
        c->vm = par->vm;
    } else {
        c->mem = rru_mem_clone(par->mem);
        c->vm = vm_clone(par->vm);
    }
    if (!c->exe_path || !c->mem || !c->vm) {
        c->shares_mem = 0;
        if (vfork)
            c->mem = NULL, c->vm = NULL;
        process_free(c);
        goto nomem;
    }
    /* MAP_SHARED regions: one memory's pages for both (present first, so
     * that neither makes a private page there later). */
    for (size_t i = 0; !vfork && i < vm_count(par->vm); i++) {
        const vm_region *r = vm_region_at(par->vm, i);
        if (!r->shared)
            continue;
        if (proc_materialize(p, r->start, r->end - r->start) < 0 ||
            rru_mem_share(c->mem, par->mem, r->start, r->end - r->start) < 0) {
            process_free(c);
            goto nomem;
        }
    }
    for (int i = 0; i < FD_MAX; i++)
        if (c->fds[i].file)
            c->fds[i].file->refs++;
    if (!vfork)
        shmap_fork(p, c);
    p->procs[p->nprocs++] = c;
    return c;
nomem:
    *err = -LX_ENOMEM;
    return NULL;
}

int process_vfork_done(drv_proc *p)
{
    process *pr = p->cur;
    if (!pr->shares_mem)
        return 0;
    rru_mem *mem = rru_mem_new();
    vm *v = mem ? vm_clone(pr->vm) : NULL;   /* its backend and limit; regions dropped below */
    if (!v) {
        rru_mem_free(mem);
        return -1;
    }
    vm_forget_regions(v);
    pr->mem = mem;
    pr->vm = v;
    pr->shares_mem = 0;
    if (p->m && p->sys_thread && p->sys_thread->state == THR_RUNNING)
        rru_machine_set_mem(p->m, (unsigned)p->sys_thread->core, mem);
    thread *w = pr->vfork_parent;
    pr->vfork_parent = NULL;
    if (w && p->m && w->state == THR_BLOCKED && w->wait == WAIT_VFORK)
        sched_wake(p, w, pr->pid, p->sys_thread ? sched_now(p, p->sys_thread) : w->ready_time);
    return 0;
}

void proc_end_threads(drv_proc *p, thread *t, int replay)
{
    /* Recording and run: through the scheduler (a running one's chunk ends
     * there, as at an exit: the calls that get here serialize every core
     * at their entry, so nothing of theirs runs after it); the runnable
     * ones first, so that a core freed takes no thread that is about to
     * end. Replay: they are marked ended (no chunk of theirs follows in
     * the log). */
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < p->nalive; i++) {
            thread *o = p->alive[i];
            if (o == t || o->state == THR_DEAD || o->proc != p->cur)
                continue;
            if (replay) {
                o->state = THR_DEAD;
                sched_thread_died(p, o);
                continue;
            }
            thr_state want = pass == 0 ? THR_RUNNABLE : pass == 1 ? THR_BLOCKED : THR_RUNNING;
            if (o->state == want)
                sched_kill_thread(p, o);
        }
    }
}

void process_end(drv_proc *p, int wstatus)
{
    process *pr = p->cur;
    int replay = !p->m;
    proc_end_threads(p, NULL, replay);
    shmap_end(p);
    locks_process_ended(p, pr);
    files_close_all(p);
    pr->ended = 1;
    pr->wstatus = wstatus;
    /* Its final state joins the run's digest. Its memory stays until the
     * run's end: a replay's worker may still hold it (rru_hart_set_mem
     * knows a memory by its address, which must not be reused). */
    rnr_sha256 s;
    rnr_sha256_init(&s);
    if (!pr->shares_mem)
        process_digest(pr, &s);
    rnr_sha256_final(&s, pr->digest);
    uint64_t now = p->sys_thread ? sched_now(p, p->sys_thread) : 0;
    thread *w = pr->vfork_parent;
    pr->vfork_parent = NULL;
    if (w && !replay && w->state == THR_BLOCKED && w->wait == WAIT_VFORK)
        sched_wake(p, w, pr->pid, now);
    /* Its children go to the first process. */
    for (size_t i = 1; i < p->nprocs; i++)
        if (p->procs[i]->parent == pr)
            p->procs[i]->parent = p->procs[0];
    process *par = pr->parent;
    if (!par || par->ended)
        return;
    if (!replay)
        for (size_t i = 0; i < p->nalive; i++) {
            thread *o = p->alive[i];
            if (o->proc == par && o->state == THR_BLOCKED && o->wait == WAIT_CHILD)
                sched_restart(p, o, now);
        }
    if (pr->exit_signal) {
        /* The exit signal (SIGCHLD) to the parent, as from outside. */
        p->cur = par;
        thread *to = NULL;
        for (size_t i = 0; i < p->nalive && !to; i++)
            if (p->alive[i]->proc == par && p->alive[i]->state != THR_DEAD)
                to = p->alive[i];
        int killed = (wstatus & 0x7f) != 0;
        p->chld_pid = pr->pid;
        p->chld_status = killed ? wstatus & 0x7f : (wstatus >> 8) & 0xff;
        if (to)
            (void)signal_send(p, to, pr->exit_signal, NULL, killed ? LX_CLD_KILLED : LX_CLD_EXITED);
        p->chld_pid = 0;
        p->chld_status = 0;
        p->cur = pr;
    }
}

/* ---- wait4, waitid ---- */

#define LX_WNOHANG 1
#define LX_WUNTRACED 2
#define LX_WEXITED 4
#define LX_WCONTINUED 8
#define LX_WNOWAIT 0x01000000
#define LX_WNOTHREAD 0x20000000
#define LX_WALL 0x40000000
#define LX_WCLONE 0x80000000u
#define RUSAGE_SIZE 144

/* The child of the current process that PID selects (wait4's: -1 or
 * below 0 any, as every process is in one group; else that one) and has
 * ended: *FOUND; returns 0, or -ECHILD if PID selects no child at all. */
static int64_t find_child(drv_proc *p, int64_t pid, process **found)
{
    int any = 0;
    *found = NULL;
    for (size_t i = 1; i < p->nprocs; i++) {
        process *c = p->procs[i];
        if (c->parent != p->cur || c->reaped || (pid > 0 && (int64_t)c->pid != pid))
            continue;
        any = 1;
        if (c->ended) {
            *found = c;
            return 0;
        }
    }
    return any ? 0 : -LX_ECHILD;
}

int64_t sc_wait4(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t pid = (int64_t)(int32_t)a[0];
    uint64_t opts = a[2];
    if (opts & ~(uint64_t)(LX_WNOHANG | LX_WUNTRACED | LX_WCONTINUED | LX_WNOTHREAD | LX_WALL |
                           LX_WCLONE))
        return -LX_EINVAL;
    if (pid == INT32_MIN)
        return -LX_ESRCH;
    process *c;
    int64_t rc = find_child(p, pid, &c);
    if (rc < 0)
        return rc;
    if (!c) {
        if (opts & LX_WNOHANG)
            return 0;
        sched_block(p, t, WAIT_CHILD, UINT64_MAX);
        return SC_BLOCKED;
    }
    if (a[1] && (rc = guest_write_u32(p, a[1], (uint32_t)c->wstatus)) < 0)
        return rc;
    if (a[3]) {
        static const uint8_t zero[RUSAGE_SIZE];
        if ((rc = guest_write(p, a[3], zero, sizeof zero)) < 0)
            return rc;
    }
    c->reaped = 1;
    return c->pid;
}

int64_t sc_waitid(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t idtype = (int64_t)(int32_t)a[0], id = (int64_t)(int32_t)a[1];
    uint64_t opts = a[3];
    if (opts & ~(uint64_t)(LX_WNOHANG | LX_WUNTRACED | LX_WEXITED | LX_WCONTINUED | LX_WNOWAIT |
                           LX_WNOTHREAD | LX_WALL | LX_WCLONE))
        return -LX_EINVAL;
    if (!(opts & (LX_WEXITED | LX_WUNTRACED | LX_WCONTINUED)))
        return -LX_EINVAL;
    int64_t pid;
    if (idtype == 0)          /* P_ALL */
        pid = -1;
    else if (idtype == 1)     /* P_PID */
        pid = id > 0 ? id : INT64_MAX;
    else if (idtype == 2)     /* P_PGID: one group holds every process */
        pid = -1;
    else
        return -LX_EINVAL;
    process *c;
    int64_t rc = find_child(p, pid, &c);
    if (rc < 0)
        return rc;
    if (!c && !(opts & LX_WEXITED))
        return -LX_ECHILD;   /* stops and continues never happen */
    if (!c && !(opts & LX_WNOHANG)) {
        sched_block(p, t, WAIT_CHILD, UINT64_MAX);
        return SC_BLOCKED;
    }
    /* siginfo: signo, errno, code, then pid, uid, status; zeros when
     * WNOHANG finds none. */
    uint8_t si[32];
    memset(si, 0, sizeof si);
    if (c) {
        int killed = (c->wstatus & 0x7f) != 0;
        int32_t v[3] = {LX_SIGCHLD, 0, killed ? 2 : 1};
        memcpy(si, v, sizeof v);
        int32_t w[3] = {(int32_t)c->pid, 1000, killed ? c->wstatus & 0x7f : (c->wstatus >> 8) & 0xff};
        memcpy(si + 16, w, sizeof w);
    }
    if (a[2] && (rc = guest_write(p, a[2], si, sizeof si)) < 0)
        return rc;
    if (a[4]) {
        static const uint8_t zero[RUSAGE_SIZE];
        if ((rc = guest_write(p, a[4], zero, sizeof zero)) < 0)
            return rc;
    }
    if (c && !(opts & LX_WNOWAIT))
        c->reaped = 1;
    return 0;
}
