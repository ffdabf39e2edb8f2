/* driver/locks.c: advisory file locks between the guest's threads: POSIX
 * record locks (fcntl F_SETLK, owned by the process), open file
 * description locks (F_OFD_*, owned by the description) and flock (per
 * description), with Linux's conflicts, merging and release rules.
 *
 * Linux semantics kept here (fs/locks.c):
 * - fcntl locks (POSIX and OFD) share one list per file; a request
 *   conflicts with a lock of another owner over an overlapping range when
 *   either is a write lock. The owner of a POSIX lock is the process, so
 *   its threads never conflict with one another, and two processes do; an OFD lock's owner is
 *   its open file description, so two descriptions of one file conflict
 *   (even in one thread), and a POSIX lock and an OFD lock conflict too.
 * - A request replaces the owner's own locks over its range (splitting
 *   them) and merges with the owner's adjacent or overlapping locks of the
 *   same type: F_GETLK reports the merged lock.
 * - flock locks are a separate list, one lock per description: a
 *   conversion removes the old lock first (not atomic, as in Linux: a
 *   failed LOCK_NB upgrade leaves the description unlocked).
 * - Closing any descriptor of a file drops the process's POSIX locks on
 *   it, and so does the process's end; the last close of a description
 *   drops its OFD and flock locks (a description a fork shares keeps
 *   them while a process holds it).
 *
 * Locks live only in a run or a recording: their calls are of the RESULT
 * policy, so a replay takes every result (and F_GETLK's bytes) from the
 * input log and keeps no lock. A blocking request that conflicts blocks
 * its thread (WAIT_LOCK); every release wakes all lock waiters in tid
 * order, which run their call again (ERESTARTSYS, logged as -512 like a
 * pipe's), so blocking is as deterministic as the scheduler. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/internal.h"

struct lock_rec {
    uint64_t dev, ino;           /* the host file */
    int flock;                   /* 1: a flock lock, 0: an fcntl lock */
    const file_obj *owner;       /* description (OFD, flock) or NULL: the process (POSIX) */
    const process *proc;         /* POSIX: the owning process; NULL otherwise */
    int type;                    /* LOCKS_RD or LOCKS_WR */
    uint64_t start, end;         /* byte range [start, end]; end UINT64_MAX: to the end */
};

/* The host file's identity, or -errno. */
static int64_t file_id(const file_obj *f, uint64_t *dev, uint64_t *ino)
{
    struct stat st;
    if (fstat(f->host_fd, &st) < 0)
        return -(int64_t)errno;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return 0;
}

static void wake_waiters(drv_proc *p)
{
    if (p->done || !p->m)
        return;
    thread *waker = p->sys_thread;
    uint64_t now = waker ? sched_now(p, waker) : 0;
    for (size_t i = 0; i < p->nalive; i++) {
        thread *t = p->alive[i];
        if (t->state == THR_BLOCKED && t->wait == WAIT_LOCK)
            sched_restart(p, t, now);
    }
}

/* Removes lock I (order kept: Linux reports the first conflict in list order). */
static void drop(drv_proc *p, size_t i)
{
    memmove(&p->locks[i], &p->locks[i + 1], (p->nlocks - i - 1) * sizeof *p->locks);
    p->nlocks--;
}

static int push(drv_proc *p, const lock_rec *r)
{
    if (p->nlocks == p->caplocks) {
        size_t cap = p->caplocks ? 2 * p->caplocks : 8;
        lock_rec *n = realloc(p->locks, cap * sizeof *n);
        if (!n)
            return -1;
        p->locks = n;
        p->caplocks = cap;
    }
    p->locks[p->nlocks++] = *r;
    return 0;
}

static int same_file(const lock_rec *a, uint64_t dev, uint64_t ino)
{
    return a->dev == dev && a->ino == ino;
}

/* The first lock that conflicts with request R, or NULL. */
static const lock_rec *conflict(const drv_proc *p, const lock_rec *r)
{
    for (size_t i = 0; i < p->nlocks; i++) {
        const lock_rec *l = &p->locks[i];
        if (!same_file(l, r->dev, r->ino) || l->flock != r->flock ||
            (l->owner == r->owner && l->proc == r->proc))
            continue;
        if (l->type != LOCKS_WR && r->type != LOCKS_WR)
            continue;
        if (r->flock || (l->start <= r->end && r->start <= l->end))
            return l;
    }
    return NULL;
}

/* Sets R (type LOCKS_UN: removes) over its range for its owner: the
 * owner's locks there are cut away, R added and merged with the owner's
 * same-type neighbours. 1 if some lock was removed or weakened (waiters
 * may proceed), 0, or -1 out of memory (nothing changed then). */
static int apply(drv_proc *p, lock_rec r)
{
    if (p->nlocks + 2 > p->caplocks) {   /* room for a split and the new lock */
        size_t cap = p->caplocks ? 2 * p->caplocks : 8;
        while (cap < p->nlocks + 2)
            cap *= 2;
        lock_rec *n = realloc(p->locks, cap * sizeof *n);
        if (!n)
            return -1;
        p->locks = n;
        p->caplocks = cap;
    }
    int released = 0;
    for (size_t i = 0; i < p->nlocks;) {
        lock_rec *l = &p->locks[i];
        int mine = same_file(l, r.dev, r.ino) && l->flock == r.flock && l->owner == r.owner &&
                   l->proc == r.proc;
        if (!mine) {
            i++;
            continue;
        }
        /* Same type and touching: absorb it into R. */
        int touching = (r.start == 0 || l->end >= r.start - 1) &&
                       (r.end == UINT64_MAX || l->start <= r.end + 1);
        if (l->type == r.type && touching) {
            if (l->start < r.start)
                r.start = l->start;
            if (l->end > r.end)
                r.end = l->end;
            drop(p, i);
            continue;
        }
        if (l->end < r.start || l->start > r.end) {
            i++;
            continue;
        }
        /* Another type over part of R's range: that part goes. */
        if (l->type == LOCKS_WR || r.type == LOCKS_UN)
            released = 1;
        if (l->start < r.start && l->end > r.end) {   /* R inside it: split */
            lock_rec tail = *l;
            tail.start = r.end + 1;
            l->end = r.start - 1;
            p->locks[p->nlocks++] = tail;
            i++;
        } else if (l->start < r.start) {
            l->end = r.start - 1;
            i++;
        } else if (l->end > r.end) {
            l->start = r.end + 1;
            i++;
        } else {
            drop(p, i);
        }
    }
    if (r.type != LOCKS_UN)
        p->locks[p->nlocks++] = r;
    return released;
}

int64_t locks_fcntl(drv_proc *p, file_obj *f, int ofd, int cmd, int type, int64_t start,
                    int64_t len, uint64_t *out_start, uint64_t *out_len, int *out_type,
                    int32_t *out_pid)
{
    if (f->kind != FILE_HOST)
        return cmd == LOCKS_GET ? (*out_type = LOCKS_UN, 0) : 0;   /* nothing shares it */
    lock_rec r = {0};
    int64_t rc = file_id(f, &r.dev, &r.ino);
    if (rc < 0)
        return rc;
    r.owner = ofd ? f : NULL;
    r.proc = ofd ? NULL : p->cur;
    r.type = type;
    /* [start, start + len - 1], len 0: to the end, negative: before start. */
    if (len < 0) {
        if (start + len < 0)
            return -LX_EINVAL;
        r.start = (uint64_t)(start + len);
        r.end = (uint64_t)start - 1;
    } else {
        if (start < 0)
            return -LX_EINVAL;
        r.start = (uint64_t)start;
        if (len > 0 && start > INT64_MAX - (len - 1))
            return -LX_EOVERFLOW;
        r.end = len == 0 ? UINT64_MAX : (uint64_t)start + (uint64_t)len - 1;
    }
    if (cmd == LOCKS_GET) {
        const lock_rec *l = conflict(p, &r);
        if (!l) {
            *out_type = LOCKS_UN;
            return 0;
        }
        *out_type = l->type;
        *out_start = l->start;
        *out_len = l->end == UINT64_MAX ? 0 : l->end - l->start + 1;
        *out_pid = l->owner ? -1 : (int32_t)l->proc->pid;
        return 0;
    }
    if (type != LOCKS_UN && conflict(p, &r)) {
        if (cmd == LOCKS_SET)
            return -LX_EAGAIN;
        sched_block(p, p->sys_thread, WAIT_LOCK, UINT64_MAX);
        return SC_BLOCKED;
    }
    int released = apply(p, r);
    if (released < 0)
        return -LX_ENOLCK;
    if (released)
        wake_waiters(p);
    return 0;
}

int64_t locks_flock(drv_proc *p, file_obj *f, int type, int nonblock)
{
    if (f->kind != FILE_HOST)
        return 0;
    lock_rec r = {.flock = 1, .owner = f, .type = type, .start = 0, .end = UINT64_MAX};
    int64_t rc = file_id(f, &r.dev, &r.ino);
    if (rc < 0)
        return rc;
    /* The description's own lock: kept if of the same type, else removed
     * before the new one is tried (Linux's non-atomic conversion). */
    for (size_t i = 0; i < p->nlocks; i++) {
        lock_rec *l = &p->locks[i];
        if (l->flock && l->owner == f && same_file(l, r.dev, r.ino)) {
            if (l->type == type)
                return 0;
            drop(p, i);
            wake_waiters(p);
            break;
        }
    }
    if (type == LOCKS_UN)
        return 0;
    if (conflict(p, &r)) {
        if (nonblock)
            return -LX_EAGAIN;
        sched_block(p, p->sys_thread, WAIT_LOCK, UINT64_MAX);
        return SC_BLOCKED;
    }
    return push(p, &r) < 0 ? -LX_ENOLCK : 0;
}

/* Drops every lock that GONE says yes to; wakes the waiters if any went. */
static void drop_where(drv_proc *p, int (*gone)(const lock_rec *, const void *), const void *arg)
{
    int any = 0;
    for (size_t i = 0; i < p->nlocks;) {
        if (gone(&p->locks[i], arg)) {
            drop(p, i);
            any = 1;
        } else {
            i++;
        }
    }
    if (any)
        wake_waiters(p);
}

typedef struct { uint64_t dev, ino; const process *proc; } posix_key;

static int posix_of(const lock_rec *l, const void *arg)
{
    const posix_key *k = arg;
    return !l->flock && !l->owner && l->proc == k->proc && same_file(l, k->dev, k->ino);
}

static int posix_of_process(const lock_rec *l, const void *arg)
{
    return !l->flock && !l->owner && l->proc == arg;
}

void locks_process_ended(drv_proc *p, const process *pr)
{
    if (p->nlocks > 0)
        drop_where(p, posix_of_process, pr);
}

static int owned_by(const lock_rec *l, const void *arg)
{
    return l->owner == arg;
}

void locks_closing(drv_proc *p, const file_obj *f)
{
    if (p->nlocks == 0 || f->kind != FILE_HOST)
        return;
    posix_key k = {0, 0, p->cur};
    if (file_id(f, &k.dev, &k.ino) == 0)
        drop_where(p, posix_of, &k);
}

void locks_released(drv_proc *p, const file_obj *f)
{
    if (p->nlocks > 0)
        drop_where(p, owned_by, f);
}

void locks_free(drv_proc *p)
{
    free(p->locks);
    p->locks = NULL;
    p->nlocks = p->caplocks = 0;
}
