/* driver/sys_thread.c: threads and time: clone, exit, futex, sleeping,
 * yielding, identities, affinity, membarrier. */
#include <stdio.h>
#include <string.h>

#include "driver/internal.h"

static uint64_t now_of(drv_proc *p, thread *t) { return sched_now(p, t); }

/* ---- threads ---- */

thread *thread_clone(drv_proc *p, thread *t, const rru_ctx *parent, const uint64_t a[6],
                     int64_t *err)
{
    uint64_t flags = a[0], newsp = a[1], ptid = a[2], tls = a[3], ctid = a[4];
    const uint64_t required = LX_CLONE_VM | LX_CLONE_FS | LX_CLONE_FILES | LX_CLONE_SIGHAND |
                              LX_CLONE_THREAD;
    const uint64_t allowed = LX_CLONE_THREAD_FLAGS | LX_CLONE_CHILD_SETTID;
    /* A process: fork (no CLONE_VM) or vfork (CLONE_VM|CLONE_VFORK), with
     * the exit signal in the low byte; sharing files, signal actions or a
     * namespace is not supported. */
    const uint64_t proc_allowed = 0xff | LX_CLONE_VM | LX_CLONE_VFORK | LX_CLONE_SETTLS |
                                  LX_CLONE_PARENT_SETTID | LX_CLONE_CHILD_SETTID |
                                  LX_CLONE_CHILD_CLEARTID;
    int is_proc = !(flags & LX_CLONE_THREAD);
    if (is_proc ? (flags & ~proc_allowed) || (flags & 0xff) > LX_NSIG ||
                      ((flags & LX_CLONE_VM) && !(flags & LX_CLONE_VFORK))
                : (flags & required) != required || (flags & ~allowed)) {
        proc_warn_once(p, WARN_CLONE_FLAGS,
                       "clone with flags 0x%llx refused (EINVAL): rnr creates threads "
                       "(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD...) and "
                       "processes by fork or vfork only",
                       (unsigned long long)flags);
        *err = -LX_EINVAL;
        return NULL;
    }
    rru_ctx child = *parent;
    child.x[10] = 0;
    if (newsp)
        child.x[2] = newsp;
    if (flags & LX_CLONE_SETTLS)
        child.x[4] = tls;
    child.resv_valid = 0;
    int vfork = is_proc && (flags & LX_CLONE_VFORK);
    process *self = p->cur, *cp = NULL;
    if (is_proc && !(cp = process_fork(p, vfork, (int)(flags & 0xff), err)))
        return NULL;
    if (cp)
        p->cur = cp;
    thread *c = sched_new_thread(p, &child);
    p->cur = self;
    if (!c) {
        if (cp) {
            p->nprocs--;
            p->cur = cp;
            files_close_all(p);
            p->cur = self;
            process_free(cp);
        }
        *err = -LX_EAGAIN;
        return NULL;
    }
    c->sigmask = t->sigmask;
    memcpy(c->name, t->name, sizeof c->name);
    c->policy = t->policy;
    c->no_new_privs = t->no_new_privs;
    if (flags & LX_CLONE_PARENT_SETTID)
        (void)guest_write_u32(p, ptid, c->tid);
    if ((flags & LX_CLONE_CHILD_SETTID) && (!cp || vfork)) {
        (void)guest_write_u32(p, ctid, c->tid);
    } else if (flags & LX_CLONE_CHILD_SETTID) {
        /* Into the child's copy: the kernel's store, as the loader's. */
        uint32_t v = c->tid;
        p->cur = cp;
        if (proc_materialize(p, ctid, sizeof v) == 0)
            (void)rru_mem_write(cp->mem, ctid, &v, sizeof v);
        p->cur = self;
    }
    if (flags & LX_CLONE_CHILD_CLEARTID)
        c->clear_child_tid = ctid;
    if (vfork)
        cp->vfork_parent = t;
    return c;
}

int64_t sc_clone(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t err = 0;
    thread *c = thread_clone(p, t, sched_ctx(p, t), a, &err);
    if (!c)
        return err;
    sched_make_ready(p, c, now_of(p, t));
    if (c->proc->vfork_parent == t) {
        /* vfork: the parent waits for the child's execve or end. */
        sched_block(p, t, WAIT_VFORK, UINT64_MAX);
        return SC_BLOCKED;
    }
    return c->tid;
}

uint64_t thread_clear_tid(drv_proc *p, thread *t)
{
    if (t->clear_child_tid && guest_write_u32(p, t->clear_child_tid, 0) == 0)
        return t->clear_child_tid;
    return 0;
}

/* One futex of the list (the kernel's handle_futex_death): owned by T, it
 * keeps its waiters bit and gets OWNER_DIED; a plain futex with waiters
 * gets a wake, and so does the pending operation's futex left at 0. 0, or
 * -1 when the word cannot be read (the walk stops). */
static int futex_death(drv_proc *p, thread *t, uint64_t uaddr, int pi, int pending, uint64_t *wake,
                       size_t *n, size_t max)
{
    uint32_t v;
    if ((uaddr & 3) || guest_read_u32(p, uaddr, &v) < 0)
        return -1;
    int woke = 0;
    if (pending && !pi && v == 0) {
        woke = 1;
    } else if ((v & LX_FUTEX_TID_MASK) == t->vtid) {
        if (guest_write_u32(p, uaddr, (v & LX_FUTEX_WAITERS) | LX_FUTEX_OWNER_DIED) < 0)
            return -1;
        woke = !pi && (v & LX_FUTEX_WAITERS);
    }
    if (woke && *n < max)
        wake[(*n)++] = uaddr;
    return 0;
}

/* struct robust_list_head: next (bit 0: the entry is a PI futex),
 * futex_offset (signed, from an entry to its futex word), list_op_pending. */
size_t thread_robust_exit(drv_proc *p, thread *t, uint64_t *wake, size_t max)
{
    uint64_t head = t->robust_list, next, off, pending;
    size_t n = 0;
    if (!head || guest_read_u64(p, head, &next) < 0 || guest_read_u64(p, head + 8, &off) < 0 ||
        guest_read_u64(p, head + 16, &pending) < 0)
        return 0;
    for (unsigned left = LX_ROBUST_LIST_LIMIT; next != head && left; left--) {
        uint64_t entry = next & ~1ull;
        int pi = (int)(next & 1), rc = guest_read_u64(p, entry, &next);
        if (entry != (pending & ~1ull) && futex_death(p, t, entry + off, pi, 0, wake, &n, max) < 0)
            return n;
        if (rc < 0)
            return n;
    }
    if (pending)
        (void)futex_death(p, t, (pending & ~1ull) + off, (int)(pending & 1), 1, wake, &n, max);
    return n;
}

/* The end of a thread: its robust futexes released (their waiters woken),
 * then CLONE_CHILD_CLEARTID's store of 0 and futex wake (what pthread_join
 * waits for), as accesses of its core. */
static void thread_ends(drv_proc *p, thread *t)
{
    uint64_t wake[16];
    size_t nw = thread_robust_exit(p, t, wake, sizeof wake / sizeof wake[0]);
    for (size_t i = 0; i < nw; i++)
        futex_wake(p, wake[i], 1, LX_FUTEX_BITSET_MATCH_ANY, now_of(p, t));
    uint64_t at = thread_clear_tid(p, t);
    if (at)
        futex_wake(p, at, 1, LX_FUTEX_BITSET_MATCH_ANY, now_of(p, t));
}

int64_t sc_exit(drv_proc *p, thread *t, const uint64_t a[6])
{
    thread_ends(p, t);
    if (t->vtid == p->cur->pid)
        p->cur->leader_status = (int)(a[0] & 0xff);
    sched_exit_thread(p, t);
    if (t->proc->live == 0)
        proc_exit(p, DRV_EXITED, p->cur->leader_status, t, 0);
    return SC_GONE;
}

int64_t sc_exit_group(drv_proc *p, thread *t, const uint64_t a[6])
{
    proc_exit(p, DRV_EXITED, (int)(a[0] & 0xff), t, 0);
    return SC_GONE;
}

int64_t sc_set_tid_address(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    t->clear_child_tid = a[0];
    return t->vtid;
}

int64_t sc_set_robust_list(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    if (a[1] != 24)   /* sizeof(struct robust_list_head) */
        return -LX_EINVAL;
    t->robust_list = a[0];
    return 0;
}

/* ---- futex ---- */

static int64_t futex_wait(drv_proc *p, thread *t, uint64_t uaddr, uint32_t val, uint64_t deadline,
                          uint32_t bitset)
{
    uint32_t cur;
    int64_t rc = guest_read_u32(p, uaddr, &cur);
    if (rc < 0)
        return rc;
    if (cur != val)
        return -LX_EAGAIN;
    if (deadline <= now_of(p, t))
        return -LX_ETIMEDOUT;
    t->wait_addr = uaddr;
    t->wait_bitset = bitset;
    futex_enqueue(p, t);
    sched_block(p, t, WAIT_FUTEX, deadline);
    return SC_BLOCKED;
}

int64_t sc_futex(drv_proc *p, thread *t, const uint64_t a[6])
{
    uint64_t uaddr = a[0], uaddr2 = a[4];
    int op = (int)a[1], cmd = op & LX_FUTEX_CMD_MASK;
    uint32_t val = (uint32_t)a[2], val3 = (uint32_t)a[5];
    if ((op & LX_FUTEX_CLOCK_REALTIME) && cmd != LX_FUTEX_WAIT_BITSET &&
        cmd != LX_FUTEX_WAIT_REQUEUE_PI && cmd != LX_FUTEX_LOCK_PI2)
        return -LX_ENOSYS;
    if (uaddr & 3)
        return -LX_EINVAL;
    uint64_t now = now_of(p, t);
    switch (cmd) {
    case LX_FUTEX_WAIT:
    case LX_FUTEX_WAIT_BITSET: {
        uint32_t bitset = cmd == LX_FUTEX_WAIT ? LX_FUTEX_BITSET_MATCH_ANY : val3;
        if (bitset == 0)
            return -LX_EINVAL;
        uint64_t deadline = UINT64_MAX;
        if (a[3]) {
            uint64_t ts;
            int64_t rc = guest_read_timespec(p, a[3], &ts);
            if (rc < 0)
                return rc;
            if (cmd == LX_FUTEX_WAIT) {                     /* relative */
                deadline = now + ts;
            } else {                                       /* absolute */
                uint64_t epoch = (op & LX_FUTEX_CLOCK_REALTIME) ? DRV_EPOCH * DRV_HZ : 0;
                deadline = ts > epoch ? ts - epoch : 0;
            }
        }
        return futex_wait(p, t, uaddr, val, deadline, bitset);
    }
    case LX_FUTEX_WAKE:
    case LX_FUTEX_WAKE_BITSET: {
        uint32_t bitset = cmd == LX_FUTEX_WAKE ? LX_FUTEX_BITSET_MATCH_ANY : val3;
        if (bitset == 0)
            return -LX_EINVAL;
        int n = (int)val;
        /* As Linux: a count of 0 or less still wakes one waiter. */
        return futex_wake(p, uaddr, n > 0 ? n : 1, bitset, now);
    }
    case LX_FUTEX_REQUEUE:
    case LX_FUTEX_CMP_REQUEUE: {
        int nr_wake = (int)val, nr_requeue = (int)a[3];
        if (nr_wake < 0 || nr_requeue < 0 || (uaddr2 & 3))
            return -LX_EINVAL;
        if (cmd == LX_FUTEX_CMP_REQUEUE) {
            uint32_t cur;
            int64_t rc = guest_read_u32(p, uaddr, &cur);
            if (rc < 0)
                return rc;
            if (cur != val3)
                return -LX_EAGAIN;
        }
        int woken = nr_wake > 0 ? futex_wake(p, uaddr, nr_wake, LX_FUTEX_BITSET_MATCH_ANY, now) : 0;
        return woken + futex_requeue(p, uaddr, uaddr2, nr_requeue);
    }
    default:
        proc_warn_once(p, WARN_FUTEX_OP, "futex operation %d is not supported: ENOSYS", cmd);
        return -LX_ENOSYS;
    }
}

/* ---- time passing ---- */

static int64_t sleep_until(drv_proc *p, thread *t, uint64_t deadline)
{
    if (deadline <= now_of(p, t))
        return 0;
    sched_block(p, t, WAIT_SLEEP, deadline);
    return SC_BLOCKED;
}

int64_t sc_nanosleep(drv_proc *p, thread *t, const uint64_t a[6])
{
    uint64_t ts;
    int64_t rc = guest_read_timespec(p, a[0], &ts);
    if (rc < 0)
        return rc;
    return sleep_until(p, t, now_of(p, t) + ts);
}

int64_t sc_clock_nanosleep(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t clk = (int64_t)a[0];
    if (clk != LX_CLOCK_REALTIME && clk != LX_CLOCK_MONOTONIC && clk != LX_CLOCK_BOOTTIME)
        return -LX_EINVAL;
    if (a[1] & ~(uint64_t)LX_TIMER_ABSTIME)
        return -LX_EINVAL;
    uint64_t ts;
    int64_t rc = guest_read_timespec(p, a[2], &ts);
    if (rc < 0)
        return rc;
    if (!(a[1] & LX_TIMER_ABSTIME))
        return sleep_until(p, t, now_of(p, t) + ts);
    uint64_t epoch = clk == LX_CLOCK_REALTIME ? DRV_EPOCH * DRV_HZ : 0;
    return sleep_until(p, t, ts > epoch ? ts - epoch : 0);
}

/* ---- the interval timer ---- */

#define ITIMER_MAX_NS (1ull << 62)   /* longer values saturate (146 years) */

/* A guest timeval at ADDR (+ OFF) in nanoseconds (saturated), or -EINVAL /
 * -EFAULT. */
static int64_t read_timeval(drv_proc *p, uint64_t addr, uint64_t *ns)
{
    int64_t tv[2];
    int64_t rc = guest_read(p, addr, tv, sizeof tv);
    if (rc < 0)
        return rc;
    if (tv[0] < 0 || tv[1] < 0 || tv[1] >= 1000000)
        return -LX_EINVAL;
    *ns = (uint64_t)tv[0] >= ITIMER_MAX_NS / DRV_HZ ? ITIMER_MAX_NS
                                                    : (uint64_t)tv[0] * DRV_HZ + (uint64_t)tv[1] * 1000;
    return 0;
}

/* ITIMER_REAL as getitimer reports it at NOW: interval and time left, in
 * microseconds rounded down (an armed timer whose time is up reports 1 us,
 * as Linux does). */
static int64_t write_itimer(drv_proc *p, uint64_t addr, uint64_t now)
{
    uint64_t left = 0;
    if (p->cur->itimer_at != UINT64_MAX)
        left = p->cur->itimer_at > now ? p->cur->itimer_at - now : 0;
    uint64_t left_us = p->cur->itimer_at == UINT64_MAX ? 0 : left / 1000 ? left / 1000 : 1;
    uint64_t every_us = p->cur->itimer_every / 1000;
    int64_t v[4] = {(int64_t)(every_us / 1000000), (int64_t)(every_us % 1000000),
                    (int64_t)(left_us / 1000000), (int64_t)(left_us % 1000000)};
    return guest_write(p, addr, v, sizeof v);
}

/* Only ITIMER_REAL counts on the simulated clock; the CPU-time timers are
 * refused (EINVAL, reported once). */
static int64_t itimer_kind(drv_proc *p, int64_t which)
{
    if (which == LX_ITIMER_REAL)
        return 0;
    if (which == LX_ITIMER_VIRTUAL || which == LX_ITIMER_PROF)
        proc_warn_once(p, WARN_ITIMER_KIND,
                       "only ITIMER_REAL is supported: %s says EINVAL",
                       which == LX_ITIMER_VIRTUAL ? "ITIMER_VIRTUAL" : "ITIMER_PROF");
    return -LX_EINVAL;
}

int64_t sc_getitimer(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t rc = itimer_kind(p, (int64_t)(int32_t)a[0]);
    return rc < 0 ? rc : write_itimer(p, a[1], now_of(p, t));
}

/* setitimer (alarm in glibc): SIGALRM when the simulated clock reaches
 * now + it_value, then every it_interval (sched_expire fires it). */
int64_t sc_setitimer(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t rc = itimer_kind(p, (int64_t)(int32_t)a[0]);
    if (rc < 0)
        return rc;
    uint64_t every = 0, value = 0, now = now_of(p, t);
    if (a[1]) {
        if ((rc = read_timeval(p, a[1], &every)) < 0 || (rc = read_timeval(p, a[1] + 16, &value)) < 0)
            return rc;
    }
    if (a[2] && (rc = write_itimer(p, a[2], now)) < 0)
        return rc;
    p->cur->itimer_at = value ? now + value : UINT64_MAX;
    p->cur->itimer_every = value ? every : 0;
    return 0;
}

int64_t sc_sched_yield(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)a;
    unsigned core = (unsigned)t->core;
    sched_ctx(p, t)->x[10] = 0;
    syscall_log_result(p, t, t->block_nr, 0);
    sched_preempt(p, core);
    return SC_SWITCHED;
}

/* ---- identities ---- */

#define GUEST_UID 1000u
#define GUEST_GID 1000u

int64_t sc_getpid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)t; (void)a; return p->cur->pid; }
/* The first process's parent is outside the simulated system. */
int64_t sc_getppid(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    (void)a;
    return p->cur->parent ? p->cur->parent->pid : p->procs[0]->pid - 1;
}
int64_t sc_gettid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)a; return t->vtid; }
int64_t sc_getuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; (void)a; return GUEST_UID; }

/* The guest is one unprivileged user: its real, effective and saved ids
 * are all GUEST_UID (GUEST_GID). It may set them to that id, or leave one
 * as it is (-1, where the call allows it), as Linux lets such a user;
 * any other id is EPERM. */
static int64_t set_ids(const uint64_t a[6], int n, uint32_t own, int keep_ok)
{
    for (int i = 0; i < n; i++) {
        uint32_t v = (uint32_t)a[i];
        if (v == UINT32_MAX && !keep_ok)
            return -LX_EINVAL;
        if (v != own && v != UINT32_MAX)
            return -LX_EPERM;
    }
    return 0;
}

int64_t sc_setuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 1, GUEST_UID, 0); }
int64_t sc_setgid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 1, GUEST_GID, 0); }
int64_t sc_setreuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 2, GUEST_UID, 1); }
int64_t sc_setregid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 2, GUEST_GID, 1); }
int64_t sc_setresuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 3, GUEST_UID, 1); }
int64_t sc_setresgid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; return set_ids(a, 3, GUEST_GID, 1); }

/* getresuid, getresgid: the three ids, each at its address. */
static int64_t get_ids(drv_proc *p, const uint64_t a[6], uint32_t own)
{
    for (int i = 0; i < 3; i++) {
        int64_t rc = guest_write_u32(p, a[i], own);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int64_t sc_getresuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)t; return get_ids(p, a, GUEST_UID); }
int64_t sc_getresgid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)t; return get_ids(p, a, GUEST_GID); }
/* The process is its own group and session leader. */
/* The process PID names (0: the caller's), a zombie included, or NULL. */
static process *id_target(drv_proc *p, uint64_t pid)
{
    process *pr = (int32_t)pid == 0 ? p->cur : process_by_pid(p, (int32_t)pid);
    return pr && !pr->reaped ? pr : NULL;
}

int64_t sc_getpgid(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    process *pr = id_target(p, a[0]);
    return pr ? (int64_t)pr->pgid : -LX_ESRCH;
}

int64_t sc_getsid(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    process *pr = id_target(p, a[0]);
    return pr ? (int64_t)pr->sid : -LX_ESRCH;
}

/* setpgid(PID, PGID): the caller or its child (ESRCH otherwise), not a
 * session leader and in the caller's session (EPERM), moves to group
 * PGID (0: its own pid), which must be its own pid or a group of the
 * same session (EPERM). */
int64_t sc_setpgid(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t pgid = (int64_t)(int32_t)a[1];
    if (pgid < 0)
        return -LX_EINVAL;
    process *pr = id_target(p, a[0]);
    if (!pr || (pr != p->cur && pr->parent != p->cur))
        return -LX_ESRCH;
    if (pr->sid == pr->pid || pr->sid != p->cur->sid)
        return -LX_EPERM;
    if (pgid == 0)
        pgid = pr->pid;
    if (pgid != (int64_t)pr->pid) {
        int found = 0;
        for (size_t i = 0; i < p->nprocs && !found; i++)
            found = !p->procs[i]->reaped && p->procs[i]->pgid == (uint32_t)pgid &&
                    p->procs[i]->sid == pr->sid;
        if (!found)
            return -LX_EPERM;
    }
    pr->pgid = (uint32_t)pgid;
    return 0;
}

/* setsid: a process that leads no group starts a session and a group of
 * its own (EPERM for a group leader: some process has its pid as group). */
int64_t sc_setsid(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    (void)a;
    for (size_t i = 0; i < p->nprocs; i++)
        if (!p->procs[i]->reaped && p->procs[i]->pgid == p->cur->pid)
            return -LX_EPERM;
    p->cur->sid = p->cur->pgid = p->cur->pid;
    return p->cur->pid;
}
int64_t sc_getgid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; (void)a; return GUEST_GID; }

/* 1 if PID names this process or one of its live threads (0 = the caller). */
static int is_ours(drv_proc *p, int64_t pid)
{
    if (pid == 0 || pid == p->cur->pid)
        return 1;
    return proc_guest_thread(p, pid) != NULL;
}

/* Scheduling policies. Threads run under SCHED_OTHER (0), SCHED_BATCH (3)
 * or SCHED_IDLE (5) with static priority 0, which an unprivileged process
 * may choose among (the simulated scheduler treats them alike); the
 * real-time SCHED_FIFO (1) and SCHED_RR (2) need a privilege the guest
 * (uid 1000, RLIMIT_RTPRIO 0) lacks: EPERM. SCHED_DEADLINE (6) has a
 * priority range (0) but is set only by sched_setattr, which the simulated
 * system lacks. */
enum { POL_OTHER = 0, POL_FIFO = 1, POL_RR = 2, POL_BATCH = 3, POL_IDLE = 5, POL_DEADLINE = 6 };
#define SCHED_RESET_ON_FORK 0x40000000

static int policy_known(int64_t pol)
{
    return pol == POL_OTHER || pol == POL_FIFO || pol == POL_RR || pol == POL_BATCH ||
           pol == POL_IDLE;
}

/* The thread PID names (0: T; the process id: its main thread), NULL if
 * none. */
static thread *sched_target(drv_proc *p, thread *t, int64_t pid)
{
    return pid == 0 ? t : proc_guest_thread(p, pid);
}

int64_t sc_sched_getscheduler(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t pid = (int64_t)(int32_t)a[0];
    if (pid < 0)
        return -LX_EINVAL;
    thread *who = sched_target(p, t, pid);
    return who ? who->policy : -LX_ESRCH;
}

/* A bound of policy POL's priorities: RT for the real-time ones, 0 for the
 * others. */
static int64_t priority_bound(int64_t pol, int64_t rt)
{
    if (pol == POL_FIFO || pol == POL_RR)
        return rt;
    return policy_known(pol) || pol == POL_DEADLINE ? 0 : -LX_EINVAL;
}

int64_t sc_sched_get_priority_max(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    return priority_bound((int64_t)(int32_t)a[0], 99);
}

int64_t sc_sched_get_priority_min(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    return priority_bound((int64_t)(int32_t)a[0], 1);
}

/* Sets the policy POL (-1: keep) with the priority at PARAM for PID. */
static int64_t set_policy(drv_proc *p, thread *t, int64_t pid, int64_t pol, uint64_t param)
{
    if (pid < 0 || !param)
        return -LX_EINVAL;
    uint32_t prio;
    int64_t rc = guest_read(p, param, &prio, sizeof prio);
    if (rc < 0)
        return rc;
    thread *who = sched_target(p, t, pid);
    if (!who)
        return -LX_ESRCH;
    if (pol < 0)
        pol = who->policy;
    if (!policy_known(pol))
        return -LX_EINVAL;
    if (pol == POL_FIFO || pol == POL_RR)
        return (int32_t)prio >= 1 && prio <= 99 ? -LX_EPERM : -LX_EINVAL;
    if (prio != 0)
        return -LX_EINVAL;
    who->policy = (int)pol;
    return 0;
}

int64_t sc_sched_setscheduler(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t pol = (int64_t)(int32_t)a[1];
    if (pol < 0)
        return -LX_EINVAL;
    return set_policy(p, t, (int64_t)(int32_t)a[0], pol & ~(int64_t)SCHED_RESET_ON_FORK, a[2]);
}

int64_t sc_sched_setparam(drv_proc *p, thread *t, const uint64_t a[6])
{
    return set_policy(p, t, (int64_t)(int32_t)a[0], -1, a[1]);
}

int64_t sc_sched_getparam(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if ((int64_t)a[0] < 0 || !a[1])
        return -LX_EINVAL;
    if (!is_ours(p, (int64_t)a[0]))
        return -LX_ESRCH;
    return guest_write_u32(p, a[1], 0);
}

/* The nice value, process-wide (PRIO_PROCESS of this process or one of its
 * threads; PRIO_PGRP and PRIO_USER of ours too). The system call returns
 * 20 - nice. Raising it is allowed, lowering it below its value is not
 * (EACCES: an unprivileged process). */
static int prio_target(drv_proc *p, const uint64_t a[6])
{
    int64_t which = (int64_t)(int32_t)a[0], who = (int64_t)(int32_t)a[1];
    if (which < 0 || which > 2)
        return -LX_EINVAL;
    if (which == 2)   /* PRIO_USER */
        return who == 0 || who == GUEST_UID ? 0 : -LX_ESRCH;
    return is_ours(p, who) ? 0 : -LX_ESRCH;
}

int64_t sc_getpriority(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int rc = prio_target(p, a);
    return rc < 0 ? rc : 20 - p->cur->nice;
}

int64_t sc_setpriority(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int rc = prio_target(p, a);
    if (rc < 0)
        return rc;
    int64_t nice = (int64_t)(int32_t)a[2];
    nice = nice < -20 ? -20 : nice > 19 ? 19 : nice;
    if (nice < p->cur->nice)
        return -LX_EACCES;
    p->cur->nice = (int)nice;
    return 0;
}

int64_t sc_sched_getaffinity(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint64_t len = a[1];
    if (!is_ours(p, (int64_t)(int32_t)a[0]))
        return -LX_ESRCH;
    if (len * 8 < p->ncores || (len & 7))
        return -LX_EINVAL;
    uint64_t mask = p->ncores >= 64 ? UINT64_MAX : (1ull << p->ncores) - 1;
    int64_t rc = guest_write_u64(p, a[2], mask);
    return rc < 0 ? rc : 8;
}

int64_t sc_sched_setaffinity(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (!is_ours(p, (int64_t)(int32_t)a[0]))
        return -LX_ESRCH;
    uint8_t b[8] = {0};
    int64_t rc = guest_read(p, a[2], b, a[1] < 8 ? (size_t)a[1] : 8);
    return rc < 0 ? rc : 0;
}

int64_t sc_membarrier(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    /* The simulated machine is sequentially consistent: every barrier
     * already holds. */
    const int64_t supported = LX_MEMBARRIER_CMD_GLOBAL | LX_MEMBARRIER_CMD_PRIVATE_EXPEDITED |
                              LX_MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    if (a[1] != 0)
        return -LX_EINVAL;
    if (a[0] == LX_MEMBARRIER_CMD_QUERY)
        return supported;
    return (a[0] & supported) && !(a[0] & (a[0] - 1)) ? 0 : -LX_EINVAL;
}
