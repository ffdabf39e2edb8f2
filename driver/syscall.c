/* driver/syscall.c: system call dispatch through the table of
 * syscalls.def, the names of syscall_names.def, the guest-memory helpers
 * handlers use (accesses of the calling core) and the logging of results. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "driver/internal.h"

static const syscall_row rows[] = {
#define SYSCALL(nr, name, fn, replay, order) {nr, #name, fn, replay, DRV_##order},
#include "driver/syscalls.def"
#undef SYSCALL
};

typedef struct name_row {
    uint32_t nr;
    const char *name;
} name_row;

static const name_row names[] = {
#define SYSNAME(nr, name) {nr, #name},
#include "driver/syscall_names.def"
#undef SYSNAME
};

#define NR_LIMIT 512

static const syscall_row *row_of(uint64_t nr)
{
    /* Built once; the table is tiny and sorted by number in the .def. */
    static const syscall_row *by_nr[NR_LIMIT];
    static int built;
    if (!built) {
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
            by_nr[rows[i].nr] = &rows[i];
        built = 1;
    }
    return nr < NR_LIMIT ? by_nr[nr] : NULL;
}

static const char *name_of(uint64_t nr)
{
    size_t lo = 0, hi = sizeof names / sizeof names[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (names[mid].nr == nr)
            return names[mid].name;
        if (names[mid].nr < nr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return "?";
}

drv_syscall_info drv_syscall_lookup(uint32_t nr)
{
    const syscall_row *r = row_of(nr);
    drv_syscall_info info = {nr, r ? r->name : name_of(nr), r ? r->replay : (drv_replay)0,
                             r ? r->order : DRV_ORD_LOCAL};
    return info;
}

const char *drv_replay_name(drv_replay r)
{
    switch (r) {
    case DRV_RP_EMULATE: return "emulate";
    case DRV_RP_RESULT: return "result";
    case DRV_RP_RESULT_MEM: return "result+mem";
    case DRV_RP_ADDRSPACE: return "addrspace";
    case DRV_RP_OUTPUT: return "output";
    case DRV_RP_EXEC: return "exec";
    }
    return "none";
}

int64_t sc_enosys(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    (void)a;
    return -LX_ENOSYS;
}

int64_t syscall_emulate(drv_proc *p, thread *t, uint32_t nr, const uint64_t a[6])
{
    const syscall_row *row = row_of(nr), *saved = p->sys_row;
    if (!row)
        return -LX_ENOSYS;
    p->sys_row = row;
    int64_t r = row->fn(p, t, a);
    p->sys_row = saved;
    return r;
}

void syscall_log_result(drv_proc *p, thread *t, uint64_t nr, int64_t result)
{
    if (!p->in) {
        inlog_pending_flush(NULL, 0, &t->log);
        return;
    }
    int rc = inlog_syscall(p->in, t->tid, nr, result);
    if (inlog_pending_flush(rc == 0 ? p->in : NULL, t->tid, &t->log) < 0 || rc < 0)
        proc_fail(p, "input log: %s", inlog_error(p->in));
}

void syscall_dispatch(drv_proc *p, unsigned core, const rru_stop *stop)
{
    thread *t = p->core_thread[core];
    proc_select(p, t);
    rru_ctx *c = rru_hart_ctx(rru_machine_hart(p->m, core));
    uint64_t nr = c->x[17];
    uint64_t a[6] = {c->x[10], c->x[11], c->x[12], c->x[13], c->x[14], c->x[15]};
    const syscall_row *row = row_of(nr);
    p->syscalls++;
    t->block_nr = nr;
    t->block_pc = stop->pc;
    int global = row && row->order == DRV_ORD_GLOBAL;
    if (p->rec)
        rec_syscall_enter(p->rec, core, stop->pc, global);
    p->sys_core = (int)core;
    p->sys_thread = t;
    /* (No row while a handler's frame is written: the frame is the
     * handler's entry, which replay writes again, not the call's output.) */
    p->sys_row = NULL;
    if ((t->async || t->interrupted) && signal_take_async(p, t, c, (uint32_t)nr, stop->pc)) {
        /* A signal from elsewhere is taken here: its handler instead of
         * the call (which runs again after it, or ended with EINTR). */
        p->sys_core = -1;
        p->sys_thread = NULL;
        p->sys_row = NULL;
        if (p->done)
            return;
        if (p->rec)
            rec_syscall_exit(p->rec, core, global);
        rru_machine_resume(p->m, core);
        return;
    }
    p->sys_row = row;
    int64_t r;
    if (row) {
        r = row->fn(p, t, a);
    } else {
        /* Numbers past the table share one bit: Linux has none there. */
        uint64_t bit = nr < NR_LIMIT ? nr : NR_LIMIT - 1;
        if (!(p->unknown_reported[bit / 8] & (1u << (bit % 8)))) {
            p->unknown_reported[bit / 8] |= (uint8_t)(1u << (bit % 8));
            fprintf(stderr, "%s: guest system call %" PRIu64 " (%s) is not supported: ENOSYS\n",
                    rnr_msg_prefix(), nr, name_of(nr));
        }
        r = -LX_ENOSYS;
    }
    p->sys_core = -1;
    p->sys_thread = NULL;
    p->sys_row = NULL;
    if (r == SC_SWITCHED && p->rec && t->state == THR_RUNNING && t->core == (int)core)
        rec_syscall_exit(p->rec, core, global);   /* it kept its core */
    if (r == SC_BLOCKED || r == SC_GONE || r == SC_SWITCHED)
        return;
    c->x[10] = (uint64_t)r;
    syscall_log_result(p, t, nr, r);
    if (t->deliver) {
        /* A handler of a signal the call sent to its own thread: its frame
         * is written as part of the call, which replay executes again. */
        p->sys_core = (int)core;
        p->sys_thread = t;
        signal_deliver(p, t, c);
        p->sys_core = -1;
        p->sys_thread = NULL;
        if (p->done)
            return;
    }
    if (p->rec)
        rec_syscall_exit(p->rec, core, global);
    rru_machine_resume(p->m, core);
}

/* ---- guest memory as the calling core ---- */

int guest_ok(drv_proc *p, uint64_t addr, uint64_t n, int prot)
{
    return vm_accessible(p->cur->vm, addr, n, prot);
}

int64_t guest_read(drv_proc *p, uint64_t addr, void *buf, size_t n)
{
    if (n == 0)
        return 0;
    if (!guest_ok(p, addr, n, LX_PROT_READ) || proc_materialize(p, addr, n) < 0)
        return -LX_EFAULT;
    int rc = p->sys_core >= 0 ? rru_machine_read(p->m, (unsigned)p->sys_core, addr, buf, n)
                              : rru_mem_read(p->cur->mem, addr, buf, n);
    return rc < 0 ? -LX_EFAULT : 0;
}

/* Writes guest memory as the calling core; LOG: the bytes go to the input
 * log as the call's memory records. */
static int64_t write_guest(drv_proc *p, uint64_t addr, const void *buf, size_t n, int log)
{
    if (n == 0)
        return 0;
    if (!guest_ok(p, addr, n, LX_PROT_WRITE) || proc_materialize(p, addr, n) < 0)
        return -LX_EFAULT;
    int rc = p->sys_core >= 0 ? rru_machine_write(p->m, (unsigned)p->sys_core, addr, buf, n)
                              : rru_mem_write(p->cur->mem, addr, buf, n);
    if (rc < 0)
        return -LX_EFAULT;
    if (log && p->in && p->sys_thread)
        inlog_pending_add(&p->sys_thread->log, addr, buf, n);
    return 0;
}

int64_t guest_write(drv_proc *p, uint64_t addr, const void *buf, size_t n)
{
    return write_guest(p, addr, buf, n,
                       p->sys_row && (p->sys_row->replay == DRV_RP_RESULT_MEM ||
                                      p->sys_row->replay == DRV_RP_ADDRSPACE));
}

int64_t guest_write_logged(drv_proc *p, uint64_t addr, const void *buf, size_t n)
{
    return write_guest(p, addr, buf, n, 1);
}

int64_t guest_read_timespec(drv_proc *p, uint64_t addr, uint64_t *cycles)
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

int64_t guest_read_u32(drv_proc *p, uint64_t addr, uint32_t *v)
{
    uint8_t b[4];
    int64_t rc = guest_read(p, addr, b, 4);
    if (rc == 0)
        *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return rc;
}

int64_t guest_write_u32(drv_proc *p, uint64_t addr, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return guest_write(p, addr, b, 4);
}

int64_t guest_write_u64(drv_proc *p, uint64_t addr, uint64_t v)
{
    uint8_t b[8];
    le64_put(b, v);
    return guest_write(p, addr, b, 8);
}

int64_t guest_read_u64(drv_proc *p, uint64_t addr, uint64_t *v)
{
    uint8_t b[8];
    int64_t rc = guest_read(p, addr, b, 8);
    if (rc == 0)
        *v = le64_get(b);
    return rc;
}

int64_t guest_read_str(drv_proc *p, uint64_t addr, char *buf, size_t max)
{
    /* Line by line, never past the line holding the NUL, so that the
     * syscall reads only bytes a kernel's strncpy_from_user would. */
    size_t len = 0;
    while (len < max) {
        uint64_t at = addr + len;
        size_t piece = (size_t)(RRU_LINE_SIZE - (at & (RRU_LINE_SIZE - 1)));
        if (piece > max - len)
            piece = max - len;
        if (guest_read(p, at, buf + len, piece) < 0)
            return -LX_EFAULT;
        void *nul = memchr(buf + len, 0, piece);
        if (nul)
            return (int64_t)((char *)nul - buf);
        len += piece;
    }
    return -LX_ENAMETOOLONG;
}
