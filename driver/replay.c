/* driver/replay.c: the driver's side of a replay (driver/replay.h): the
 * recorded process rebuilt by the same loader and stack code, and each
 * ECALL replayed by the policy its row of syscalls.def gives, through the
 * same handlers, address-space code and thread code as the recording. */
#include "driver/replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/internal.h"

drv_proc *drv_replay_new(const drv_config *config, const char *program, const char *const *argv,
                         size_t argc, const char *const *envp, size_t envc, char *err,
                         size_t errlen)
{
    drv_config c = *config;
    c.input_log = NULL;
    c.record = 0;
    c.chunk = NULL;
    c.access = NULL;
    c.tick = NULL;
    drv_proc *p = drv_proc_new(&c, program, argv, argc, envp, envc, err, errlen);
    if (p)
        p->threads[0]->state = THR_RUNNABLE;  /* runs on the replayer's harts, never on a core */
    return p;
}

rru_mem *drv_replay_mem(drv_proc *p) { return p->procs[0]->mem; }

rru_mem *drv_replay_thread_mem(drv_proc *p, uint32_t tid)
{
    thread *t = proc_thread(p, tid);
    return t && t->proc->mem ? t->proc->mem : p->procs[0]->mem;
}

rru_ctx *drv_replay_ctx(drv_proc *p, uint32_t tid)
{
    thread *t = proc_live_thread(p, tid);
    return t && t->state != THR_BLOCKED ? &t->ctx : NULL;
}

void drv_replay_finish(drv_proc *p, const drv_replay_input *in)
{
    for (size_t i = 0; i < p->nthreads; i++) {
        thread *t = p->threads[i];
        rnr_input_record r;
        if (t->state == THR_DEAD || t->state == THR_BLOCKED || t->proc == p->procs[0] ||
            t->proc->ended || !in->peek(in->ctx, t->tid, &r) || r.type != RNR_IN_SYSCALL ||
            r.nr != DRV_FAULT_MARK)
            continue;
        in->take(in->ctx, t->tid);
        proc_select(p, t);
        process_end(p, (int)r.value & 0x7f);   /* also after the first process's end */
    }
}

int drv_replay_fault(drv_proc *p, uint32_t tid, const rru_stop *stop)
{
    thread *t = proc_live_thread(p, tid);
    if (!t)
        return 0;
    proc_select(p, t);
    int rc = proc_demand_page(p, stop->cause, stop->tval);
    if (rc != 0)
        return rc;
    /* Two workers may fault on one absent page: the one that takes the
     * lock second finds it present. Run the instruction again if the page
     * is there now and allows the access (a real fault stays one). */
    int prot = rru_mem_prot(p->cur->mem, stop->tval);
    int need = stop->cause == 12 ? LX_PROT_EXEC : stop->cause == 15 ? LX_PROT_WRITE : LX_PROT_READ;
    const vm_region *r = vm_find(p->cur->vm, stop->tval);
    return prot >= 0 && (prot & need) == need && r && (r->prot & need) == need;
}

int drv_proc_peek(const drv_proc *p, uint64_t addr, uint8_t *buf, size_t n)
{
    while (n) {
        uint64_t page = addr & ~LX_PAGE_MASK;
        size_t k = (size_t)(page + LX_PAGE_SIZE - addr);
        if (k > n)
            k = n;
        if (rru_mem_prot(p->cur->mem, page) >= 0) {
            if (rru_mem_read(p->cur->mem, addr, buf, k) < 0)
                return -1;
        } else if (vm_find(p->cur->vm, page)) {
            memset(buf, 0, k);      /* mapped, never touched: zeros when it is */
        } else {
            return -1;
        }
        addr += k;
        buf += k;
        n -= k;
    }
    return 0;
}

int drv_replay_ended(const drv_proc *p, drv_end *end, int *status)
{
    if (!p->done)
        return 0;
    *end = p->result.end;
    *status = p->result.status;
    return 1;
}

#define DIVERGE(...)                                   \
    do {                                               \
        snprintf(msg, msglen, __VA_ARGS__);            \
        return DRV_REPLAY_DIVERGED;                    \
    } while (0)

/* Bytes of guest memory for output, pages never touched reading as zero. */
static int read_guest(drv_proc *p, uint64_t addr, uint8_t *buf, uint64_t n)
{
    if (n == 0)
        return 0;
    if (proc_materialize(p, addr, n) < 0)
        return -1;
    return rru_mem_read(p->cur->mem, addr, buf, (size_t)n);
}

/* OUTPUT policy: the bytes a write to fd 1 or 2 put out, regenerated from
 * guest memory (RESULT of them) and handed to config->output, a block at
 * a time (proc_output_iov). 0, or -1 if they are not all readable. */
static int replay_output(drv_proc *p, uint64_t nr, const uint64_t a[6], int64_t result)
{
    /* Which stream the descriptor was at this point of the recording: the
     * replay's table holds the standard streams where the guest's dup,
     * dup3, fcntl and close calls moved them (mirror_fds), and nothing
     * else (a file the guest opened is not opened again). */
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (result <= 0 || !f || (f->kind != FILE_STDOUT && f->kind != FILE_STDERR) || !p->cfg.output)
        return 0;
    const uint64_t want = (uint64_t)result;
    if (nr != 66) {   /* write, pwrite64: one piece */
        const uint64_t v[1][2] = {{a[1], want}};
        return proc_output_iov(p, f, v, 1, want, 1) == result ? 0 : -1;
    }
    /* writev: its iovecs */
    if (a[2] > IOV_MAX_GUEST)
        return -1;
    uint64_t (*v)[2] = malloc((a[2] ? a[2] : 1) * sizeof *v);
    if (!v)
        return -1;
    int ok = 1;
    for (uint64_t i = 0; i < a[2] && ok; i++) {
        uint8_t iov[16];
        ok = read_guest(p, a[1] + 16 * i, iov, 16) == 0;
        v[i][0] = v[i][1] = 0;
        for (int k = 7; k >= 0; k--) {
            v[i][0] = v[i][0] << 8 | iov[k];
            v[i][1] = v[i][1] << 8 | iov[8 + k];
        }
    }
    ok = ok && proc_output_iov(p, f, (const uint64_t(*)[2])v, a[2], want, 1) == result;
    free(v);
    return ok ? 0 : -1;
}

/* A successful dup, dup3, fcntl F_DUPFD(_CLOEXEC) or close of the recording
 * (RESULT, its logged result), done to the replay's descriptor table: the
 * target descriptor gets what the source held there (a standard stream,
 * or nothing for a file the replay never opened); close empties it.
 * Why a write of the replay finds the table as the recording's write
 * found it: writes (OUTPUT) and these four calls are all ORD_GLOBAL, so
 * the recording orders each of them against every chunk of every core,
 * and hence against each other; the replay executes them in that order.
 * Writes alone being global would not do: two threads' dup3 onto one
 * descriptor, with no write between them, would be unordered. */
/* A wait4 or waitid that reaped a child in the recording (its result, or
 * the siginfo's pid its bytes put back): the replay's process table says
 * so too, for the calls that look at it (kill, a later wait's errors). */
static void mirror_reap(drv_proc *p, uint64_t nr, const uint64_t a[6], int64_t result)
{
    int64_t pid = 0;
    if (nr == 260 && result > 0) {
        pid = result;
    } else if (nr == 95 && result == 0 && a[2] && !(a[3] & 0x01000000)) {   /* not WNOWAIT */
        int32_t v;
        if (rru_mem_read(p->cur->mem, a[2] + 16, &v, sizeof v) == 0)
            pid = v;
    }
    process *c = pid > 0 ? process_by_pid(p, pid) : NULL;
    if (c && c->parent == p->cur)
        c->reaped = 1;
}

static void mirror_fds(drv_proc *p, uint64_t nr, const uint64_t a[6], int64_t result)
{
    const int64_t a0 = (int64_t)(int32_t)a[0];
    int64_t src = -1, dst;
    if (result < 0)
        return;
    if (nr == 57) {                                   /* close */
        dst = a0;
    } else if (nr == 23) {                            /* dup */
        src = a0;
        dst = result;
    } else if (nr == 24) {                            /* dup3 */
        src = a0;
        dst = (int64_t)(int32_t)a[1];
    } else if (nr == 25 && ((int)a[1] == LX_F_DUPFD || (int)a[1] == LX_F_DUPFD_CLOEXEC)) {
        src = a0;
        dst = result;
    } else {
        return;
    }
    if (dst < 0 || dst >= FD_MAX)
        return;
    file_obj *f = files_get(p, src), *old = p->cur->fds[dst].file;
    if (f)
        f->refs++;
    p->cur->fds[dst].file = f;
    files_unref(p, old);
}

/* The MEM records that follow the SYSCALL record of TID: applied to guest
 * memory (host-side: permissions were the kernel's), or gathered into
 * *data for a file mapping when DATA is not NULL. */
static int apply_mem(drv_proc *p, uint32_t tid, const drv_replay_input *in, uint8_t **data,
                     uint64_t *len, char *msg, size_t msglen)
{
    rnr_input_record r;
    while (in->peek(in->ctx, tid, &r) && r.type == RNR_IN_MEM) {
        if (data) {
            uint8_t *d = realloc(*data, *len + r.len + 1);
            if (!d)
                DIVERGE("out of memory");
            memcpy(d + *len, r.data, r.len);
            *data = d;
            *len += r.len;
        } else if (proc_materialize(p, r.addr, r.len) < 0 ||
                   rru_mem_write(p->cur->mem, r.addr, r.data, r.len) < 0) {
            DIVERGE("thread %u: the log writes %" PRIu64 " bytes at 0x%" PRIx64
                    ", which is not mapped in the replay",
                    tid, r.len, r.addr);
        }
        in->take(in->ctx, tid);
    }
    return 0;
}

/* exit: the thread ends (its CLEARTID store; the joiner's wake-up is its
 * own logged futex result); the last one ends the process. */
static int replay_exit(drv_proc *p, thread *t, int status)
{
    uint64_t wake[16];   /* the waiters' results are logged: no wake here */
    (void)thread_robust_exit(p, t, wake, sizeof wake / sizeof wake[0]);
    (void)thread_clear_tid(p, t);
    if (t->vtid == p->cur->pid)
        p->cur->leader_status = status & 0xff;
    t->state = THR_DEAD;
    sched_thread_died(p, t);
    if (t->proc->live == 0) {
        proc_exit(p, DRV_EXITED, p->cur->leader_status, t, 0);
        return p->done ? DRV_REPLAY_END : DRV_REPLAY_EXITED;
    }
    return DRV_REPLAY_EXITED;
}

int drv_replay_syscall(drv_proc *p, uint32_t tid, rru_ctx *ctx, const drv_replay_input *in,
                       char *msg, size_t msglen)
{
    thread *t = proc_live_thread(p, tid);
    if (!t)
        DIVERGE("thread %u runs after its end", tid);
    proc_select(p, t);
    uint64_t nr = ctx->x[17];
    uint64_t a[6] = {ctx->x[10], ctx->x[11], ctx->x[12], ctx->x[13], ctx->x[14], ctx->x[15]};
    drv_syscall_info info = drv_syscall_lookup((uint32_t)nr);
    if (nr == 93 || nr == 94) {   /* exit, exit_group: nothing logged */
        if (nr == 94) {
            proc_exit(p, DRV_EXITED, (int)(a[0] & 0xff), t, 0);
            return p->done ? DRV_REPLAY_END : DRV_REPLAY_EXITED;
        }
        return replay_exit(p, t, (int)a[0]);
    }
    rnr_input_record r;
    if (!in->peek(in->ctx, tid, &r)) {
        /* No record: the call never returned in the recording. Either it
         * ended the process (an emulated call: kill, tkill or tgkill of a
         * fatal signal, as abort() and raise() do, or rt_sigprocmask
         * unblocking a pending one; executed again to find out: emulated
         * calls never block), or the process ended while the call was
         * still blocked (a deadlock, an exit_group or a fatal signal of
         * another thread, an interrupted recording): the thread stops
         * here, and the replayer requires that the log gives it nothing
         * more to run. */
        if (info.replay == DRV_RP_EMULATE && nr != 220 && nr != 435 && nr != 133) {
            p->sys_thread = t;
            p->sys_core = -1;
            (void)syscall_emulate(p, t, (uint32_t)nr, a);
            p->sys_thread = NULL;
            if (p->done)
                return DRV_REPLAY_END;
            DIVERGE("thread %u makes system call %" PRIu64 " (%s) at pc 0x%" PRIx64
                    " but the input log has no more records for it",
                    tid, nr, info.name, ctx->pc - 4);
        }
        t->state = THR_BLOCKED;   /* drv_replay_ctx no longer gives it */
        return DRV_REPLAY_STUCK;
    }
    if (r.type != RNR_IN_SYSCALL || r.nr != nr)
        DIVERGE("thread %u makes system call %" PRIu64 " (%s) at pc 0x%" PRIx64
                " but the input log's next record is %s %" PRIu64,
                tid, nr, info.name, ctx->pc - 4,
                r.type == RNR_IN_SYSCALL ? "system call" : r.type == RNR_IN_CSR ? "a csr read of"
                : r.type == RNR_IN_SC ? "sc" : "record type", r.type == RNR_IN_SYSCALL ? r.nr : r.type);
    int64_t result = r.value;
    in->take(in->ctx, tid);
    p->sys_thread = t;
    p->sys_core = -1;
    if (signal_replay_mark(p, t, ctx, result)) {
        /* A signal from elsewhere taken at this call's entry. */
        p->sys_thread = NULL;
        return p->done ? DRV_REPLAY_END : DRV_REPLAY_OK;
    }
    p->sys_thread = NULL;
    if (result == -LX_ERESTARTSYS) {
        /* The call blocked and ran again: its ECALL executes a second time. */
        signal_replay_suspend(p, t, ctx);
        ctx->pc -= 4;
        return DRV_REPLAY_OK;
    }
    int rc = DRV_REPLAY_OK;
    p->sys_thread = t;
    p->sys_core = -1;
    switch (info.replay) {
    case DRV_RP_RESULT:
        mirror_fds(p, nr, a, result);
        break;
    case DRV_RP_RESULT_MEM:
        if (apply_mem(p, tid, in, NULL, NULL, msg, msglen) < 0)
            rc = DRV_REPLAY_DIVERGED;
        mirror_fds(p, nr, a, result);   /* fcntl's F_DUPFD (F_GETLK writes memory) */
        mirror_reap(p, nr, a, result);
        break;
    case DRV_RP_OUTPUT:
        if (replay_output(p, nr, a, result) < 0)
            DIVERGE("thread %u: the bytes of its %s are not readable in the replay", tid, info.name);
        /* A write to a file with shared mappings: its bytes in them. */
        if (apply_mem(p, tid, in, NULL, NULL, msg, msglen) < 0)
            rc = DRV_REPLAY_DIVERGED;
        break;
    case DRV_RP_EXEC:
        /* A failed execve changed nothing; a successful one loads the
         * recorded image again, and the log puts back its random bytes. */
        if (result == 0 && (exec_replay(p, t, ctx, nr, a, msg, msglen) < 0 ||
                            apply_mem(p, tid, in, NULL, NULL, msg, msglen) < 0))
            rc = DRV_REPLAY_DIVERGED;
        break;
    case DRV_RP_ADDRSPACE:
        if (nr == 222 && !(a[3] & LX_MAP_ANONYMOUS)) {
            /* A file mapping: the file's bytes come from the log. */
            uint8_t *data = NULL;
            uint64_t len = 0;
            if (apply_mem(p, tid, in, &data, &len, msg, msglen) < 0) {
                free(data);
                rc = DRV_REPLAY_DIVERGED;
                break;
            }
            if (result >= 0) {
                /* The list of writable shared mappings kept as the
                 * recording kept it (nothing goes to a file in a replay):
                 * what the mapping replaces leaves it (a non-fixed mmap
                 * took free pages), a shared writable one joins it. */
                uint64_t type = a[3] & LX_MAP_TYPE;
                shmap_drop(p, (uint64_t)result, (a[1] + LX_PAGE_MASK) & ~LX_PAGE_MASK);
                if ((type == LX_MAP_SHARED || type == LX_MAP_SHARED_VALIDATE) && (a[2] & LX_PROT_WRITE))
                    shmap_add(p, (uint64_t)result, a[1], -1, a[5]);
                int64_t got = vm_mmap(p->cur->vm, (uint64_t)result, a[1], (int)a[2],
                                      (int)(a[3] | LX_MAP_FIXED),
                                      1, data, len, a[5]);
                if (got != result) {
                    free(data);
                    DIVERGE("thread %u: mmap of a file at 0x%" PRIx64 " gives %" PRId64 " in the replay",
                            tid, (uint64_t)result, got);
                }
            }
            free(data);
            break;
        }
        /* brk, anonymous mmap, mremap: the same call on the same address
         * space gives the same address. */
        __attribute__((fallthrough));
    case DRV_RP_EMULATE: {
        int64_t got;
        if (nr == 220) {   /* clone */
            int64_t err = 0;
            thread *c = thread_clone(p, t, ctx, a, &err);
            got = c ? (int64_t)c->tid : err;
        } else {
            got = info.replay ? syscall_emulate(p, t, (uint32_t)nr, a) : -LX_ENOSYS;
        }
        if (info.replay == DRV_RP_ADDRSPACE)
            (void)apply_mem(p, tid, in, NULL, NULL, msg, msglen);   /* zeroes: written again */
        if (got != result && !p->done)
            DIVERGE("thread %u: %s (system call %" PRIu64 ") gives %" PRId64
                    " in the replay, %" PRId64 " in the recording",
                    tid, info.name, nr, got, result);
        if (p->done)
            rc = DRV_REPLAY_END;
        break;
    }
    default:   /* not implemented: -ENOSYS, logged as such */
        break;
    }
    if (rc == DRV_REPLAY_OK) {
        ctx->x[10] = (uint64_t)result;
        signal_deliver(p, t, ctx);   /* as syscall_dispatch does, if the call set one */
        if (p->done)
            rc = DRV_REPLAY_END;
    }
    t->deliver = 0;
    p->sys_thread = NULL;
    return rc;
}
