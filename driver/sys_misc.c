/* driver/sys_misc.c: clocks, random bytes, limits, uname, umask, getcwd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/internal.h"

static void put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* Nanoseconds of clock CLK for thread T, or -1 for an unknown clock. */
static int64_t clock_ns(drv_proc *p, thread *t, int64_t clk)
{
    uint64_t now = sched_now(p, t);   /* cycles = ns at DRV_HZ = 1 GHz */
    switch (clk) {
    case LX_CLOCK_REALTIME:
    case LX_CLOCK_REALTIME_COARSE:
    case 11:                           /* CLOCK_TAI */
        return (int64_t)(DRV_EPOCH * DRV_HZ + now);
    case LX_CLOCK_MONOTONIC:
    case LX_CLOCK_MONOTONIC_RAW:
    case LX_CLOCK_MONOTONIC_COARSE:
    case LX_CLOCK_BOOTTIME:
    case LX_CLOCK_PROCESS_CPUTIME_ID:
        return (int64_t)now;
    case LX_CLOCK_THREAD_CPUTIME_ID:
        return (int64_t)rru_hart_ctx(rru_machine_hart(p->m, (unsigned)t->core))->instret;
    default:
        return -1;
    }
}

int64_t sc_clock_gettime(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t ns = clock_ns(p, t, (int64_t)(int32_t)a[0]);
    if (ns < 0)
        return -LX_EINVAL;
    uint8_t b[16];
    put64(b, (uint64_t)ns / 1000000000u);
    put64(b + 8, (uint64_t)ns % 1000000000u);
    return guest_write(p, a[1], b, 16);
}

int64_t sc_clock_getres(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (clock_ns(p, t, (int64_t)(int32_t)a[0]) < 0)
        return -LX_EINVAL;
    if (!a[1])
        return 0;
    uint8_t b[16];
    put64(b, 0);
    put64(b + 8, 1);
    return guest_write(p, a[1], b, 16);
}

int64_t sc_gettimeofday(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (a[0]) {
        uint64_t ns = (uint64_t)clock_ns(p, t, LX_CLOCK_REALTIME);
        uint8_t b[16];
        put64(b, ns / 1000000000u);
        put64(b + 8, ns % 1000000000u / 1000u);
        int64_t rc = guest_write(p, a[0], b, 16);
        if (rc < 0)
            return rc;
    }
    if (a[1]) {
        uint8_t z[8] = {0};
        return guest_write(p, a[1], z, 8);
    }
    return 0;
}

int64_t sc_getrandom(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint64_t flags = a[2], len = a[1];
    if (flags & ~(uint64_t)(LX_GRND_NONBLOCK | LX_GRND_RANDOM | LX_GRND_INSECURE))
        return -LX_EINVAL;
    if ((flags & LX_GRND_RANDOM) && (flags & LX_GRND_INSECURE))
        return -LX_EINVAL;
    if (len > 33554431)
        len = 33554431;
    if (len == 0)
        return 0;
    if (!guest_ok(p, a[0], len, LX_PROT_WRITE))
        return -LX_EFAULT;
    uint8_t *buf = malloc(len);
    if (!buf)
        return -LX_ENOMEM;
    /* From the seeded generator, recording or not (a recording executes
     * what the run does); a recording logs the bytes as an input. */
    for (uint64_t i = 0; i < len; i += 8) {
        uint64_t r = proc_rand(p);
        for (uint64_t k = 0; k < 8 && i + k < len; k++)
            buf[i + k] = (uint8_t)(r >> (8 * k));
    }
    int64_t rc = guest_write(p, a[0], buf, len);
    free(buf);
    return rc < 0 ? rc : (int64_t)len;
}

static int64_t rlimit_op(drv_proc *p, uint64_t res, uint64_t new_addr, uint64_t old_addr)
{
    if (res >= LX_RLIM_NLIMITS)
        return -LX_EINVAL;
    uint64_t ncur = 0, nmax = 0;
    if (new_addr) {
        uint8_t b[16];
        int64_t rc = guest_read(p, new_addr, b, 16);
        if (rc < 0)
            return rc;
        ncur = get64(b);
        nmax = get64(b + 8);
        if (ncur > nmax)
            return -LX_EINVAL;
        if (nmax > p->rlim_max[res])
            return -LX_EPERM;   /* an unprivileged process cannot raise a hard limit */
    }
    if (old_addr) {
        uint8_t b[16];
        put64(b, p->rlim_cur[res]);
        put64(b + 8, p->rlim_max[res]);
        int64_t rc = guest_write(p, old_addr, b, 16);
        if (rc < 0)
            return rc;
    }
    if (new_addr) {
        p->rlim_cur[res] = ncur;
        p->rlim_max[res] = nmax;
    }
    return 0;
}

int64_t sc_prlimit64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t pid = (int64_t)(int32_t)a[0];
    if (pid != 0 && pid != p->pid)
        return -LX_ESRCH;
    return rlimit_op(p, a[1], a[2], a[3]);
}

int64_t sc_getrlimit(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return rlimit_op(p, a[0], 0, a[1]);
}

int64_t sc_setrlimit(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return rlimit_op(p, a[0], a[1], 0);
}

int64_t sc_uname(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    static const char *const fields[6] = {
        "Linux", "rnr", "6.1.0-rnr", "#1 SMP rnr simulated multicore", "riscv64", "(none)",
    };
    uint8_t b[LX_UTSNAME_SIZE];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 6; i++)
        memcpy(b + i * LX_UTS_FIELD, fields[i], strlen(fields[i]));
    return guest_write(p, a[0], b, sizeof b);
}

/* The simulated machine's memory as sysinfo reports it (glibc's qsort and
 * sysconf(_SC_PHYS_PAGES) ask): fixed, so that runs do not depend on the
 * host. */
#define SIM_RAM (8ull << 30)

int64_t sc_sysinfo(drv_proc *p, thread *t, const uint64_t a[6])
{
    /* struct sysinfo (LP64): uptime, loads[3], totalram, freeram, sharedram,
     * bufferram, totalswap, freeswap (8 bytes each), procs (2), pad (2 + 4),
     * totalhigh, freehigh (8 each), mem_unit (4), padding: 112 bytes. */
    uint8_t b[112];
    memset(b, 0, sizeof b);
    put64(b, sched_now(p, t) / DRV_HZ);
    put64(b + 32, SIM_RAM);
    put64(b + 40, SIM_RAM - SIM_RAM / 8);
    b[80] = (uint8_t)p->live;
    b[81] = (uint8_t)(p->live >> 8);
    b[104] = 1;   /* mem_unit */
    return guest_write(p, a[0], b, sizeof b);
}

int64_t sc_umask(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint32_t old = p->umask;
    p->umask = (uint32_t)a[0] & 0777;
    return old;
}

int64_t sc_getcwd(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char buf[4096];
    if (!getcwd(buf, sizeof buf))
        return -(int64_t)errno;
    size_t n = strlen(buf) + 1;
    if (n > a[1])
        return -LX_ERANGE;
    int64_t rc = guest_write(p, a[0], buf, n);
    return rc < 0 ? rc : (int64_t)n;
}
