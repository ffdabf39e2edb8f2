/* driver/sys_thread.c: threads and time: clone, exit, futex, sleeping,
 * yielding, identities, affinity, membarrier. */
#include <stdio.h>

#include "driver/internal.h"

static rru_ctx *live_ctx(drv_proc *p, thread *t)
{
    return rru_hart_ctx(rru_machine_hart(p->m, (unsigned)t->core));
}

static uint64_t now_of(drv_proc *p, thread *t) { return sched_now(p, t); }

/* struct timespec at ADDR as cycles; 0, -EFAULT or -EINVAL. */
static int64_t read_timespec(drv_proc *p, uint64_t addr, uint64_t *cycles)
{
    uint8_t b[16];
    int64_t rc = guest_read(p, addr, b, 16);
    if (rc < 0)
        return rc;
    int64_t sec = 0, nsec = 0;
    for (int i = 7; i >= 0; i--) {
        sec = (int64_t)((uint64_t)sec << 8 | b[i]);
        nsec = (int64_t)((uint64_t)nsec << 8 | b[8 + i]);
    }
    if (sec < 0 || nsec < 0 || nsec >= 1000000000)
        return -LX_EINVAL;
    uint64_t s = (uint64_t)sec;
    *cycles = s > UINT64_MAX / DRV_HZ / 2 ? UINT64_MAX / 2 : s * DRV_HZ + (uint64_t)nsec;
    return 0;
}

/* ---- threads ---- */

thread *thread_clone(drv_proc *p, thread *t, const rru_ctx *parent, const uint64_t a[6],
                     int64_t *err)
{
    uint64_t flags = a[0], newsp = a[1], ptid = a[2], tls = a[3], ctid = a[4];
    const uint64_t required = LX_CLONE_VM | LX_CLONE_FS | LX_CLONE_FILES | LX_CLONE_SIGHAND |
                              LX_CLONE_THREAD;
    const uint64_t allowed = LX_CLONE_THREAD_FLAGS | LX_CLONE_CHILD_SETTID;
    if ((flags & required) != required || (flags & ~allowed)) {
        proc_warn_once(p, WARN_CLONE_FLAGS,
                       "clone with flags 0x%llx refused (EINVAL): rnr creates threads only "
                       "(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD...), no processes",
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
    thread *c = sched_new_thread(p, &child);
    if (!c) {
        *err = -LX_EAGAIN;
        return NULL;
    }
    c->sigmask = t->sigmask;
    if (flags & LX_CLONE_PARENT_SETTID)
        (void)guest_write_u32(p, ptid, c->tid);
    if (flags & LX_CLONE_CHILD_SETTID)
        (void)guest_write_u32(p, ctid, c->tid);
    if (flags & LX_CLONE_CHILD_CLEARTID)
        c->clear_child_tid = ctid;
    return c;
}

int64_t sc_clone(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t err = 0;
    thread *c = thread_clone(p, t, live_ctx(p, t), a, &err);
    if (!c)
        return err;
    sched_make_ready(p, c, now_of(p, t));
    return c->tid;
}

uint64_t thread_clear_tid(drv_proc *p, thread *t)
{
    if (t->clear_child_tid && guest_write_u32(p, t->clear_child_tid, 0) == 0)
        return t->clear_child_tid;
    return 0;
}

/* The end of a thread: CLONE_CHILD_CLEARTID's store of 0 and futex wake
 * (what pthread_join waits for), as accesses of its core. */
static void thread_ends(drv_proc *p, thread *t)
{
    uint64_t at = thread_clear_tid(p, t);
    if (at)
        futex_wake(p, at, 1, LX_FUTEX_BITSET_MATCH_ANY, now_of(p, t));
}

int64_t sc_exit(drv_proc *p, thread *t, const uint64_t a[6])
{
    thread_ends(p, t);
    if (t->tid == p->pid)
        p->leader_status = (int)(a[0] & 0xff);
    sched_exit_thread(p, t);
    if (p->live == 0)
        proc_exit(p, DRV_EXITED, p->leader_status, t, 0);
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
    return t->tid;
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
            int64_t rc = read_timespec(p, a[3], &ts);
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
    int64_t rc = read_timespec(p, a[0], &ts);
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
    int64_t rc = read_timespec(p, a[2], &ts);
    if (rc < 0)
        return rc;
    if (!(a[1] & LX_TIMER_ABSTIME))
        return sleep_until(p, t, now_of(p, t) + ts);
    uint64_t epoch = clk == LX_CLOCK_REALTIME ? DRV_EPOCH * DRV_HZ : 0;
    return sleep_until(p, t, ts > epoch ? ts - epoch : 0);
}

int64_t sc_sched_yield(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)a;
    unsigned core = (unsigned)t->core;
    live_ctx(p, t)->x[10] = 0;
    syscall_log_result(p, t, t->block_nr, 0);
    sched_preempt(p, core);
    return SC_SWITCHED;
}

/* ---- identities ---- */

#define GUEST_UID 1000u
#define GUEST_GID 1000u

int64_t sc_getpid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)t; (void)a; return p->pid; }
int64_t sc_getppid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)t; (void)a; return p->pid - 1; }
int64_t sc_gettid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)a; return t->tid; }
int64_t sc_getuid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; (void)a; return GUEST_UID; }
int64_t sc_getgid(drv_proc *p, thread *t, const uint64_t a[6]) { (void)p; (void)t; (void)a; return GUEST_GID; }

/* 1 if PID names this process or one of its live threads (0 = the caller). */
static int is_ours(drv_proc *p, int64_t pid)
{
    if (pid == 0 || pid == p->pid)
        return 1;
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i]->tid == pid && p->threads[i]->state != THR_DEAD)
            return 1;
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
