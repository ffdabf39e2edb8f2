/* driver/proc.c: the guest process: loading (segments, stack, auxv),
 * the main loop over rru_machine_run stops, the end of the run, the final
 * digest and statistics. The memory backend of the address space lives
 * here too: demand paging (pages exist in the machine's memory once
 * touched). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rru/clock.h"
#include "driver/initstack.h"
#include "driver/internal.h"
#include "formats/digest.h"

#define GUEST_PID 1000u

_Static_assert(DRV_MEM_LIMIT_MAX == VM_USER_TOP, "the largest memory limit is the user address space");
_Static_assert(DRV_MEM_UNLIMITED == VM_NO_LIMIT && VM_NO_LIMIT == LX_RLIM_INFINITY,
               "no memory limit is RLIM_INFINITY");

void drv_config_default(drv_config *c)
{
    memset(c, 0, sizeof *c);
    rru_machine_config_default(&c->machine);
    c->quantum = 100000;
    c->check_every = DRV_CHECK_EVERY_DEFAULT;
    c->mem_limit = DRV_MEM_LIMIT_DEFAULT;
    c->stdin_fd = 0;
    c->stdout_fd = 1;
    c->stderr_fd = 2;
    rru_config_default(&c->rru, c->machine.cores);
}

void proc_warn_once(drv_proc *p, int id, const char *fmt, ...)
{
    if (p->warned[id / 8] & (1u << (id % 8)))
        return;
    p->warned[id / 8] |= (uint8_t)(1u << (id % 8));
    va_list ap;
    fprintf(stderr, "%s: warning: ", rnr_msg_prefix());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    return s;
}

void proc_fail(drv_proc *p, const char *fmt, ...)
{
    if (p->done)
        return;
    va_list ap;
    va_start(ap, fmt);
    free(p->message);
    p->message = vformat(fmt, ap);
    va_end(ap);
    p->done = 1;
    p->result.end = DRV_FAILED;
    p->result.status = 1;
}

/* Saves the registers of every thread still on a core (for the digest). */
static void save_running(drv_proc *p)
{
    for (unsigned c = 0; c < p->ncores; c++) {
        thread *t = p->core_thread[c];
        if (t)
            rru_machine_save(p->m, c, &t->ctx);
    }
}

void proc_exit(drv_proc *p, drv_end end, int status, const thread *t, uint64_t pc)
{
    if (p->done)
        return;
    if (p->cur != p->procs[0]) {
        if (!p->cur->ended)
            process_end(p, end == DRV_SIGNALED ? (status & 0x7f) : (status & 0xff) << 8);
        return;
    }
    save_running(p);
    p->done = 1;
    shmap_end(p);   /* the shared mappings' last stores reach their files */
    p->result.end = end;
    p->result.status = status;
    p->result.pc = pc;
    p->result.tid = t ? t->tid : 0;
    if (end == DRV_SIGNALED) {
        free(p->message);
        if (asprintf(&p->message, "guest thread %u killed by %s (signal %d) at pc 0x%" PRIx64,
                     p->result.tid, signal_name(status), status, pc) < 0)
            p->message = NULL;
    }
}

/* ---- the memory backend of the address space: demand paging ----
 *
 * The machine's memory holds a page only once the guest (or the kernel)
 * touches it: mapping costs nothing, a first access faults, and the fault
 * handler (proc_demand_fault) materializes the page with its region's
 * protection and lets the instruction run again. So an 8 MiB thread stack
 * or a 64 MiB PROT_NONE malloc-arena reservation costs only the pages used,
 * as in Linux. A page that was never materialized reads as zero; the final
 * digest (drv_proc_digest) treats absent and zero pages alike, so it does
 * not depend on which pages happened to be touched. */

static int be_map(void *ctx, uint64_t addr, uint64_t len, int prot)
{
    (void)ctx;
    (void)addr;
    (void)len;
    (void)prot;
    return 0;
}

static void be_unmap(void *ctx, uint64_t addr, uint64_t len)
{
    drv_proc *p = ctx;
    rru_mem_unmap(p->cur->mem, addr, len);
    if (p->m)
        rru_machine_forget(p->m, addr, len);
}

static void be_protect(void *ctx, uint64_t addr, uint64_t len, int prot)
{
    drv_proc *p = ctx;
    /* Present pages change; absent ones take the region's when touched. */
    uint64_t end = addr + len, a = addr;
    while (a < end) {
        while (a < end && rru_mem_prot(p->cur->mem, a) < 0)
            a += LX_PAGE_SIZE;
        uint64_t b = a;
        while (b < end && rru_mem_prot(p->cur->mem, b) >= 0)
            b += LX_PAGE_SIZE;
        if (b > a)
            rru_mem_protect(p->cur->mem, a, b - a, (unsigned)prot);
        a = b;
    }
}

/* Materializes the absent pages of [addr, addr+len) that lie in mapped
 * regions (zero-filled, with the region's protection). 0, or -1 if host
 * memory ran out. */
static int materialize(drv_proc *p, uint64_t addr, uint64_t len)
{
    uint64_t a = addr & ~LX_PAGE_MASK, end = addr + len;
    while (a < end) {
        if (rru_mem_prot(p->cur->mem, a) >= 0) {
            a += LX_PAGE_SIZE;
            continue;
        }
        const vm_region *r = vm_find(p->cur->vm, a);
        if (!r) {
            a += LX_PAGE_SIZE;
            continue;
        }
        uint64_t b = a + LX_PAGE_SIZE;
        while (b < end && b < r->end && rru_mem_prot(p->cur->mem, b) < 0)
            b += LX_PAGE_SIZE;
        if (rru_mem_populate(p->cur->mem, a, b - a, (unsigned)r->prot) < 0)
            return -1;
        p->demand_pages += (b - a) / LX_PAGE_SIZE;
        a = b;
    }
    return 0;
}

int proc_materialize(drv_proc *p, uint64_t addr, uint64_t len)
{
    return len ? materialize(p, addr, len) : 0;
}

/* Pages materialized at once around a faulting address (clipped to the
 * region): fewer faults when a stack or an array is walked. */
#define FAULT_AROUND_PAGES 16u

/* A FAULT stop: if the address lies in a region that allows the access and
 * its page is absent, materialize it (and a few neighbours) and let the
 * core run the instruction again. 1 if handled, 0 if it is a real fault. */
int proc_demand_page(drv_proc *p, unsigned cause, uint64_t addr)
{
    int need = cause == 12 ? LX_PROT_EXEC : cause == 15 ? LX_PROT_WRITE : LX_PROT_READ;
    if (cause != 12 && cause != 13 && cause != 15)
        return 0;
    uint64_t page = addr & ~LX_PAGE_MASK;
    const vm_region *r = vm_find(p->cur->vm, page);
    if (!r || (r->prot & need) != need || rru_mem_prot(p->cur->mem, page) >= 0)
        return 0;
    uint64_t span = (uint64_t)FAULT_AROUND_PAGES * LX_PAGE_SIZE;
    uint64_t lo = page & ~(span - 1), hi = lo + span;
    if (lo < r->start)
        lo = r->start;
    if (hi > r->end)
        hi = r->end;
    if (materialize(p, lo, hi - lo) < 0)
        return -1;
    p->page_faults++;
    return 1;
}

static int demand_fault(drv_proc *p, const rru_stop *st)
{
    proc_select(p, p->core_thread[st->core]);
    int rc = proc_demand_page(p, st->cause, st->tval);
    if (rc < 0)
        proc_fail(p, "out of host memory for guest pages");
    else if (rc > 0)
        rru_machine_resume(p->m, st->core);
    return rc != 0;
}

static int page_is_zero(drv_proc *p, uint64_t page)
{
    static const uint8_t zero[LX_PAGE_SIZE];
    uint8_t buf[LX_PAGE_SIZE];
    return rru_mem_read(p->cur->mem, page, buf, sizeof buf) == 0 && memcmp(buf, zero, sizeof buf) == 0;
}

/* The kernel's store into mapped pages: during a system call, an access of
 * the calling core (with write permission lent for the moment); at load
 * time, a host-side copy. DATA NULL writes zeros, skipping pages that are
 * absent or zero already (what they hold does not change). */
static int be_fill(void *ctx, uint64_t addr, const uint8_t *data, uint64_t len)
{
    drv_proc *p = ctx;
    static const uint8_t zero[LX_PAGE_SIZE];
    if (data && materialize(p, addr, len) < 0)
        return -1;
    uint64_t a = addr, end = addr + len;
    while (a < end) {
        uint64_t page = a & ~LX_PAGE_MASK;
        uint64_t n = page + LX_PAGE_SIZE - a < end - a ? page + LX_PAGE_SIZE - a : end - a;
        const uint8_t *src = data ? data + (a - addr) : zero;
        int prot = rru_mem_prot(p->cur->mem, page);
        if (!data && (prot < 0 || page_is_zero(p, page))) {
            a += n;
            continue;
        }
        int rc;
        if (p->sys_core < 0) {
            rc = rru_mem_write(p->cur->mem, a, src, (size_t)n);
        } else {
            int lend = !(prot & LX_PROT_WRITE);
            if (lend)
                rru_mem_protect(p->cur->mem, page, LX_PAGE_SIZE, (unsigned)(prot | LX_PROT_READ | LX_PROT_WRITE));
            rc = rru_machine_write(p->m, (unsigned)p->sys_core, a, src, (size_t)n);
            if (lend)
                rru_mem_protect(p->cur->mem, page, LX_PAGE_SIZE, (unsigned)prot);
        }
        if (rc < 0)
            return -1;
        a += n;
    }
    if (data && p->in && p->sys_thread && p->sys_row && p->sys_row->replay == DRV_RP_ADDRSPACE)
        inlog_pending_add(&p->sys_thread->log, addr, data, len);
    return 0;
}

/* ---- nondeterministic inputs seen by the interpreter ---- */

/* Counter CSR reads and failed store-conditionals go to the input log
 * (installed only when there is one: they cost a call per event). */
static uint64_t env_csr_read(void *env, rru_hart *h, unsigned csr, uint64_t value)
{
    drv_proc *p = env;
    thread *t = p->core_thread[rru_hart_id(h)];
    if (t && inlog_csr(p->in, t->tid, csr, value) < 0)
        proc_fail(p, "input log: %s", inlog_error(p->in));
    return value;
}

static int env_sc(void *env, rru_hart *h, uint64_t addr, int ok)
{
    drv_proc *p = env;
    thread *t = p->core_thread[rru_hart_id(h)];
    if (!t)
        return ok;
    uint64_t ordinal = t->sc_count++;
    if (!ok && inlog_sc(p->in, t->tid, ordinal, 1, addr) < 0)
        proc_fail(p, "input log: %s", inlog_error(p->in));
    return ok;
}

static const rru_env_ops env_ops = {env_csr_read, env_sc};

/* ---- loading ---- */

/* The message for a program whose image and stack exceed the memory limit. */
static void too_big(const drv_proc *p, const char *program, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: the program and its stack do not fit in the memory limit of %" PRIu64
             " bytes (--mem-limit)", program, vm_limit(p->cur->vm));
}

static int load_image(drv_proc *p, char *err, size_t errlen)
{
    const loader_image *img = &p->cur->img;
    uint64_t prev_end = 0;
    int prev_prot = 0;
    for (size_t i = 0; i < img->nseg; i++) {
        const loader_segment *s = &img->seg[i];
        uint64_t start = s->vaddr & ~LX_PAGE_MASK;
        uint64_t end = (s->vaddr + s->memsz + LX_PAGE_MASK) & ~LX_PAGE_MASK;
        if (start < prev_end) {
            /* Shares pages with the previous segment: they get both
             * protections, and this segment's bytes are copied in. */
            uint64_t shared_end = end < prev_end ? end : prev_end;
            vm_mprotect(p->cur->vm, start, shared_end - start, prev_prot | s->prot);
            uint64_t n = s->filesz < shared_end - s->vaddr ? s->filesz : shared_end - s->vaddr;
            if (n && (materialize(p, s->vaddr, n) < 0 ||
                      rru_mem_write(p->cur->mem, s->vaddr, s->data, (size_t)n) < 0))
                goto nomem;
            start = shared_end;
        }
        if (start < end) {
            uint64_t skip = start > s->vaddr ? start - s->vaddr : 0;
            uint64_t dlen = s->filesz > skip ? s->filesz - skip : 0;
            int rc = vm_map_image(p->cur->vm, start, end - start, s->prot, s->vaddr + skip,
                                  s->data + skip, dlen);
            if (rc == -LX_ENOMEM && vm_limit(p->cur->vm) != VM_NO_LIMIT) {
                too_big(p, img->path, err, errlen);
                return -1;
            }
            if (rc < 0) {
                snprintf(err, errlen, "%s: cannot map segment at 0x%" PRIx64 " (error %d)",
                         img->path, s->vaddr, -rc);
                return -1;
            }
        }
        prev_end = end > prev_end ? end : prev_end;
        prev_prot = s->prot;
    }
    vm_set_brk_start(p->cur->vm, img->hi);
    return 0;
nomem:
    snprintf(err, errlen, "%s: out of memory while loading", img->path);
    return -1;
}

static int build_stack(drv_proc *p, const char *program, const char *const *argv, size_t argc,
                       const char *const *envp, size_t envc, rru_ctx *main_ctx, char *err,
                       size_t errlen)
{
    uint64_t bottom = VM_STACK_TOP - VM_STACK_SIZE;
    int rc = vm_map_fixed(p->cur->vm, bottom, VM_STACK_SIZE, LX_PROT_READ | LX_PROT_WRITE, VM_STACK);
    if (rc == -LX_ENOMEM && vm_limit(p->cur->vm) != VM_NO_LIMIT) {
        too_big(p, program, err, errlen);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot map the stack", program);
        return -1;
    }
    initstack_params sp;
    memset(&sp, 0, sizeof sp);
    sp.top = VM_STACK_TOP;
    sp.argv = argv;
    sp.argc = argc;
    sp.envp = envp;
    sp.envc = envc;
    sp.execfn = p->cfg.execfn ? p->cfg.execfn : program;
    if (p->cfg.random_bytes) {
        memcpy(sp.random, p->cfg.random_bytes, sizeof sp.random);
    } else {
        for (int i = 0; i < 2; i++) {
            uint64_t r = proc_rand(p);
            memcpy(sp.random + 8 * i, &r, 8);
        }
    }
    sp.phdr = p->cur->img.phdr;
    sp.phent = p->cur->img.phent;
    sp.phnum = p->cur->img.phnum;
    sp.entry = p->cur->img.entry;
    sp.base = 0;
    sp.hwcap = LX_HWCAP_RV64IMAFDC;
    sp.uid = 1000;
    sp.gid = 1000;
    initstack st;
    if (initstack_build(&sp, &st) < 0) {
        snprintf(err, errlen, "%s: arguments and environment too large (E2BIG)", program);
        return -1;
    }
    if (materialize(p, st.sp, st.len) < 0 || rru_mem_write(p->cur->mem, st.sp, st.bytes, st.len) < 0) {
        initstack_free(&st);
        snprintf(err, errlen, "%s: cannot write the initial stack", program);
        return -1;
    }
    rru_ctx_init(main_ctx, p->cur->img.entry);
    main_ctx->x[2] = st.sp;
    p->cur->random_addr = st.random_addr;
    memcpy(p->cur->random_bytes, sp.random, 16);
    initstack_free(&st);
    return 0;
}

int proc_exec_image(drv_proc *p, loader_image *img, const char *host_path, const char *guest_path,
                    const char *const *argv, size_t argc, const char *const *envp, size_t envc,
                    rru_ctx *ctx, char *err, size_t errlen)
{
    /* The old address space goes: shared mappings reach their files as at
     * munmap, and every page leaves the machine (coherence forgets them,
     * the harts' translations and decoded code go stale) as at munmap. */
    shmap_end(p);
    if (vm_munmap(p->cur->vm, 0, VM_USER_TOP) < 0) {
        loader_free(img);
        snprintf(err, errlen, "out of memory while unmapping");
        return -1;
    }
    loader_free(&p->cur->img);
    p->cur->img = *img;
    memset(img, 0, sizeof *img);
    char *exe = strdup(host_path);
    if (!exe) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free(p->cur->exe_path);
    p->cur->exe_path = exe;
    if (load_image(p, err, errlen) < 0)
        return -1;
    /* AT_EXECFN is the path the guest gave; AT_RANDOM from the seed (a
     * replay puts the recorded bytes back from the log). */
    const char *execfn = p->cfg.execfn;
    const uint8_t *random = p->cfg.random_bytes;
    p->cfg.execfn = guest_path;
    p->cfg.random_bytes = NULL;
    int rc = build_stack(p, host_path, argv, argc, envp, envc, ctx, err, errlen);
    p->cfg.execfn = execfn;
    p->cfg.random_bytes = random;
    return rc;
}

drv_proc *drv_proc_new(const drv_config *config, const char *program, const char *const *argv,
                       size_t argc, const char *const *envp, size_t envc, char *err,
                       size_t errlen)
{
    drv_proc *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->cfg = *config;
    p->sys_core = -1;
    p->cur = calloc(1, sizeof *p->cur);
    p->procs = calloc(8, sizeof *p->procs);
    if (!p->cur || !p->procs) {
        free(p->cur);
        free(p->procs);
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->procs[0] = p->cur;
    p->nprocs = 1;
    p->cap_procs = 8;
    p->cur->pid = GUEST_PID;
    p->cur->pgid = p->cur->sid = GUEST_PID;   /* its own group and session */
    p->tid_base = GUEST_PID;
    p->rng = config->machine.seed ^ 0x5eed0f0d51ee7ull;
    p->cur->umask = 022;
    p->cur->itimer_at = UINT64_MAX;
    for (int r = 0; r < LX_RLIM_NLIMITS; r++)
        p->cur->rlim_cur[r] = p->cur->rlim_max[r] = LX_RLIM_INFINITY;
    p->cur->rlim_cur[LX_RLIMIT_STACK] = VM_STACK_SIZE;
    p->cur->rlim_cur[LX_RLIMIT_NOFILE] = FD_MAX;
    p->cur->rlim_max[LX_RLIMIT_NOFILE] = FD_MAX;
    p->cur->rlim_cur[LX_RLIMIT_CORE] = 0;
    p->cur->rlim_cur[LX_RLIMIT_AS] = p->cur->rlim_max[LX_RLIMIT_AS] = config->mem_limit;
    files_init(p);

    if (config->n_allow_write) {
        p->allow_write = calloc(config->n_allow_write, sizeof *p->allow_write);
        if (!p->allow_write)
            goto nomem;
        for (size_t i = 0; i < config->n_allow_write; i++) {
            char abs[PATH_MAX];
            if (!realpath(config->allow_write[i], abs)) {
                snprintf(err, errlen, "%s: %s (--allow-write)", config->allow_write[i],
                         strerror(errno));
                drv_proc_free(p);
                return NULL;
            }
            p->allow_write[p->n_allow_write] = strdup(abs);
            if (!p->allow_write[p->n_allow_write++])
                goto nomem;
        }
    }
    if (config->private_tmp && files_private_tmp(p, err, errlen) < 0) {
        drv_proc_free(p);
        return NULL;
    }
    if (loader_open(program, &p->cur->img, err, errlen) < 0) {
        drv_proc_free(p);
        return NULL;
    }
    char abs[PATH_MAX];
    p->cur->exe_path = strdup(realpath(program, abs) ? abs : program);
    p->cur->mem = rru_mem_new();
    vm_backend be = {p, be_map, be_unmap, be_protect, be_fill};
    p->cur->vm = vm_new(&be);
    if (!p->cur->exe_path || !p->cur->mem || !p->cur->vm)
        goto nomem;
    vm_set_limit(p->cur->vm, config->mem_limit);
    if (load_image(p, err, errlen) < 0) {
        drv_proc_free(p);
        return NULL;
    }
    rru_ctx main_ctx;
    if (build_stack(p, program, argv, argc, envp, envc, &main_ctx, err, errlen) < 0) {
        drv_proc_free(p);
        return NULL;
    }
    char merr[256];
    p->m = rru_machine_new(&config->machine, p->cur->mem, merr, sizeof merr);
    if (!p->m) {
        snprintf(err, errlen, "machine: %s", merr);
        drv_proc_free(p);
        return NULL;
    }
    p->ncores = rru_machine_cores(p->m);
    thread *main_thread = sched_new_thread(p, &main_ctx);
    if (!main_thread)
        goto nomem;
    {   /* the name the kernel gives it: the program file's, 15 bytes at most */
        const char *exe = config->execfn ? config->execfn : program, *slash = strrchr(exe, '/');
        snprintf(main_thread->name, sizeof main_thread->name, "%s", slash ? slash + 1 : exe);
    }
    if (config->input_log) {
        uint8_t sha[32];
        if (rnr_sha256_file(program, sha, err, errlen) < 0) {
            drv_proc_free(p);
            return NULL;
        }
        p->in = inlog_open(config->input_log, p->ncores, sha, err, errlen);
        if (!p->in) {
            drv_proc_free(p);
            return NULL;
        }
        rru_machine_set_env(p->m, &env_ops, p);
        if (config->record)
            p->rec = rec_new(p);
        if (inlog_start(p->in, main_thread->tid, p->cur->random_addr, p->cur->random_bytes, 16) < 0) {
            snprintf(err, errlen, "%s: %s", config->input_log, inlog_error(p->in));
            drv_proc_free(p);
            return NULL;
        }
    }
    return p;
nomem:
    snprintf(err, errlen, "%s: out of memory", program);
    drv_proc_free(p);
    return NULL;
}

/* ---- running ---- */

static void on_stop(drv_proc *p, rru_stop_reason reason, const rru_stop *st, uint64_t deadline)
{
    switch (reason) {
    case RRU_STOP_ECALL:
        syscall_dispatch(p, st->core, st);
        break;
    case RRU_STOP_TIMER:
        sched_preempt(p, st->core);
        break;
    case RRU_STOP_ALARM:
        sched_expire(p, rru_machine_time(p->m));
        break;
    case RRU_STOP_IDLE:
        /* Every thread waits. A deadline wakes one, unless the only one left
         * is an interval timer whose SIGALRM changes nothing (ignored or
         * blocked): then nothing can ever run again, as in a deadlock. */
        if (deadline != UINT64_MAX && sched_next_wake(p) == UINT64_MAX && signal_timer_void(p))
            deadline = UINT64_MAX;
        if (deadline != UINT64_MAX) {
            sched_expire(p, deadline);
        } else {
            save_running(p);
            p->done = 1;
            p->result.end = DRV_DEADLOCK;
            p->result.status = DRV_EXIT_DEADLOCK;
            free(p->message);
            p->message = sched_deadlock_report(p);
        }
        break;
    case RRU_STOP_REQUEST:
        if (p->cfg.interrupt && *p->cfg.interrupt) {
            save_running(p);
            p->done = 1;
            p->result.end = DRV_INTERRUPTED;
            p->result.status = 130;
            break;
        }
        rru_machine_resume(p->m, st->core);
        break;
    case RRU_STOP_FAULT:
        if (demand_fault(p, st))
            break;
        __attribute__((fallthrough));   /* a real fault */
    case RRU_STOP_EBREAK:
    case RRU_STOP_ILLEGAL:
    case RRU_STOP_MISALIGNED: {
        thread *t = p->core_thread[st->core];
        proc_select(p, t);
        if (p->cur != p->procs[0])
            syscall_log_result(p, t, DRV_FAULT_MARK, st->signal);
        proc_exit(p, DRV_SIGNALED, st->signal, t, st->pc);
        if (p->message && (reason == RRU_STOP_FAULT || reason == RRU_STOP_MISALIGNED)) {
            char *m = NULL;
            if (asprintf(&m, "%s (address 0x%" PRIx64 ")", p->message, st->tval) >= 0) {
                free(p->message);
                p->message = m;
            }
        }
        break;
    }
    default:
        proc_fail(p, "the machine stopped core %u for an unexpected reason (%s)", st->core,
                  rru_stop_name(reason));
        break;
    }
}

int drv_proc_run(drv_proc *p, drv_result *result)
{
    double start = host_seconds();
    if (!p->done && p->nthreads == 1 && p->threads[0]->state == THR_RUNNABLE)
        sched_make_ready(p, p->threads[0], 0);
    while (!p->done) {
        uint64_t deadline = sched_next_deadline(p);
        rru_machine_set_alarm(p->m, deadline);
        rru_stop st;
        memset(&st, 0, sizeof st);
        rru_stop_reason reason = rru_machine_run(p->m, &st);
        on_stop(p, reason, &st, deadline);
    }
    if (p->rec && rec_finish(p->rec) < 0 && p->result.end != DRV_FAILED) {
        free(p->message);
        p->message = strdup("recording: the initial log could not be written");
        p->result.end = DRV_FAILED;
        p->result.status = 1;
    }
    p->wall = host_seconds() - start;
    if (p->in) {
        char err[RNR_ERR_MAX_DRV];
        if (inlog_close(p->in, err, sizeof err) < 0 && p->result.end != DRV_FAILED) {
            p->in = NULL;
            proc_fail(p, "input log: %s", err);
            p->done = 1;
        }
        p->in = NULL;
    }
    *result = p->result;
    result->message = p->message;
    return p->result.end == DRV_FAILED ? -1 : 0;
}

void drv_proc_stats(const drv_proc *p, drv_stats *out)
{
    memset(out, 0, sizeof *out);
    out->cores = p->ncores;
    for (unsigned c = 0; c < p->ncores; c++) {
        rru_core_stats cs;
        rru_machine_stats(p->m, c, &cs);
        out->retired[c] = cs.retired;
        out->clock[c] = cs.clock;
        out->bus_reads += cs.bus_reads;
        out->bus_exclusive += cs.bus_exclusive;
        out->instructions += cs.retired;
        if (cs.clock > out->cycles)
            out->cycles = cs.clock;
    }
    out->threads = p->nthreads;
    out->syscalls = p->syscalls;
    out->context_switches = p->switches;
    out->wall_seconds = p->wall;
    out->page_faults = p->page_faults;
    for (size_t i = 0; i < p->nprocs; i++)   /* every process's own memory */
        if (i == 0 || !p->procs[i]->shares_mem)
            out->guest_pages += rru_mem_pages(p->procs[i]->mem);
}

size_t drv_proc_threads(const drv_proc *p) { return p->nthreads; }
size_t drv_proc_processes(const drv_proc *p) { return p->nprocs; }

void drv_proc_thread(const drv_proc *p, size_t i, uint32_t *tid, uint64_t *instructions)
{
    const thread *t = p->threads[i];
    rru_ctx c = t->ctx;
    if (t->state == THR_RUNNING && t->core >= 0)
        rru_machine_save(p->m, (unsigned)t->core, &c);
    *tid = t->tid;
    *instructions = c.instret - t->instret_base;
}

void drv_proc_record_stats(const drv_proc *p, drv_record_stats *out)
{
    memset(out, 0, sizeof *out);
    if (p->rec)
        rec_stats_get(p->rec, out);
}

int drv_proc_flush_input(drv_proc *p) { return p->in ? inlog_flush(p->in) : 0; }

static void hash_u64(rnr_sha256 *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    rnr_sha256_update(s, b, 8);
}

void process_digest(const process *pr, rnr_sha256 *s)
{
    static const uint8_t zero[LX_PAGE_SIZE];
    uint8_t page[LX_PAGE_SIZE];
    /* Memory: every region (start, end, protection), then each of its
     * pages that holds a nonzero byte (address, 4096 bytes). */
    for (size_t i = 0; i < vm_count(pr->vm); i++) {
        const vm_region *r = vm_region_at(pr->vm, i);
        hash_u64(s, r->start);
        hash_u64(s, r->end);
        hash_u64(s, (uint64_t)r->prot);
        for (uint64_t a = r->start; a < r->end; a += LX_PAGE_SIZE) {
            if (rru_mem_prot(pr->mem, a) < 0 || rru_mem_read(pr->mem, a, page, sizeof page) < 0 ||
                memcmp(page, zero, sizeof page) == 0)
                continue;
            hash_u64(s, a);
            rnr_sha256_update(s, page, sizeof page);
        }
    }
}

void drv_proc_digest(const drv_proc *p, uint8_t out[32])
{
    rnr_sha256 s;
    rnr_sha256_init(&s);
    rnr_sha256_update(&s, "rnr-final-state-1", 17);
    process_digest(p->procs[0], &s);
    /* Every other process (none in a run that made none): its id, and its
     * memory now, or its wait status and memory as it ended. */
    for (size_t i = 1; i < p->nprocs; i++) {
        const process *pr = p->procs[i];
        hash_u64(&s, pr->pid);
        if (pr->ended) {
            hash_u64(&s, (uint64_t)(uint32_t)pr->wstatus);
            rnr_sha256_update(&s, pr->digest, sizeof pr->digest);
        } else if (!pr->shares_mem) {
            process_digest(pr, &s);
        }
    }
    for (size_t i = 0; i < p->nthreads; i++) {
        const thread *t = p->threads[i];
        if (t->state == THR_DEAD)
            continue;
        const rru_ctx *c = &t->ctx;
        hash_u64(&s, t->tid);
        for (int r = 1; r < 32; r++)
            hash_u64(&s, c->x[r]);
        for (int r = 0; r < 32; r++)
            hash_u64(&s, c->f[r]);
        hash_u64(&s, c->pc);
        hash_u64(&s, c->fflags);
        hash_u64(&s, c->frm);
        hash_u64(&s, c->instret);
    }
    rnr_sha256_final(&s, out);
}

void drv_proc_free(drv_proc *p)
{
    if (!p)
        return;
    p->cur = p->procs[0];
    p->done = 1;   /* closing files wakes no (freed) thread */
    if (p->in) {
        char err[RNR_ERR_MAX_DRV];
        inlog_close(p->in, err, sizeof err);
    }
    rec_free(p->rec);
    for (size_t i = 0; i < p->nthreads; i++) {
        inlog_pending_free(&p->threads[i]->log);
        free(p->threads[i]);
    }
    free(p->threads);
    free(p->alive);
    shmap_end(p);    /* a process that never ended (none after proc_exit) */
    locks_free(p);   /* first: closing the files then wakes no (freed) thread */
    files_close_all(p);
    files_private_tmp_remove(p);
    rru_machine_free(p->m);
    for (size_t i = 1; i < p->nprocs; i++) {
        p->cur = p->procs[i];
        files_close_all(p);
        process_free(p->procs[i]);
    }
    p->cur = p->procs[0];
    vm_free(p->cur->vm);
    rru_mem_free(p->cur->mem);
    loader_free(&p->cur->img);
    for (size_t i = 0; i < p->n_allow_write; i++)
        free(p->allow_write[i]);
    free(p->allow_write);
    free(p->cur->exe_path);
    for (size_t i = 0; i < p->nexecs && p->execs; i++)
        free(p->execs[i].path);
    free(p->execs);
    free(p->message);
    for (size_t i = 0; i < sizeof p->exec_seen / sizeof p->exec_seen[0]; i++)
        free(p->exec_seen[i].bytes);
    free(p->cur);
    free(p->procs);
    free(p);
}

int drv_proc_symbolize(const drv_proc *p, uint64_t pc, char *out, size_t len)
{
    return loader_symbolize(&p->procs[0]->img, pc, out, len);
}
