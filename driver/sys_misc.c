/* driver/sys_misc.c: clocks, random bytes, limits, uname, umask, getcwd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/internal.h"


/* Instructions thread T has retired: its CPU time (1 ns each). */
static int64_t thread_cpu_ns(drv_proc *p, thread *t) { return (int64_t)sched_ctx(p, t)->instret; }

/* A CPU-time clock named by its id (clock_getcpuclockid,
 * pthread_getcpuclockid), as Linux encodes it: the bitwise complement of
 * a pid or tid shifted left by 3, bit 2 set for a thread, and in the low
 * two bits which time (PROF, VIRT or SCHED: all the same here; 3 is a
 * descriptor clock, which the simulated system has none of). A thread's
 * must be one of ours (tid 0: the caller), a process's ours (pid 0: the
 * caller's). -1 if it names none. */
static int64_t cpu_clock_ns(drv_proc *p, thread *t, int64_t clk)
{
    if ((clk & 3) == 3)
        return -1;
    int64_t id = ~(clk >> 3);
    if (clk & 4) {
        thread *who = id == 0 ? t : proc_guest_thread(p, id);
        return who ? thread_cpu_ns(p, who) : -1;
    }
    return id == 0 || id == p->cur->pid ? (int64_t)sched_now(p, t) : -1;
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
        return thread_cpu_ns(p, t);
    default:
        return clk < 0 ? cpu_clock_ns(p, t, clk) : -1;
    }
}

int64_t sc_clock_gettime(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t ns = clock_ns(p, t, (int64_t)(int32_t)a[0]);
    if (ns < 0)
        return -LX_EINVAL;
    uint8_t b[16];
    le64_put(b, (uint64_t)ns / 1000000000u);
    le64_put(b + 8, (uint64_t)ns % 1000000000u);
    return guest_write(p, a[1], b, 16);
}

int64_t sc_clock_getres(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (clock_ns(p, t, (int64_t)(int32_t)a[0]) < 0)
        return -LX_EINVAL;
    if (!a[1])
        return 0;
    uint8_t b[16];
    le64_put(b, 0);
    le64_put(b + 8, 1);
    return guest_write(p, a[1], b, 16);
}

int64_t sc_gettimeofday(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (a[0]) {
        uint64_t ns = (uint64_t)clock_ns(p, t, LX_CLOCK_REALTIME);
        uint8_t b[16];
        le64_put(b, ns / 1000000000u);
        le64_put(b + 8, ns % 1000000000u / 1000u);
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
        ncur = le64_get(b);
        nmax = le64_get(b + 8);
        if (ncur > nmax)
            return -LX_EINVAL;
        if (nmax > p->cur->rlim_max[res])
            return -LX_EPERM;   /* an unprivileged process cannot raise a hard limit */
    }
    if (old_addr) {
        uint8_t b[16];
        le64_put(b, p->cur->rlim_cur[res]);
        le64_put(b + 8, p->cur->rlim_max[res]);
        int64_t rc = guest_write(p, old_addr, b, 16);
        if (rc < 0)
            return rc;
    }
    if (new_addr) {
        p->cur->rlim_cur[res] = ncur;
        p->cur->rlim_max[res] = nmax;
        if (res == LX_RLIMIT_AS)
            vm_set_limit(p->cur->vm, ncur);
    }
    return 0;
}

int64_t sc_prlimit64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t pid = (int64_t)(int32_t)a[0];
    if (pid != 0 && pid != p->cur->pid)
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

/* CPU time, simulated: the process's is its clock, a thread's its
 * instructions (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID); no
 * system time, no children. getrusage: RUSAGE_SELF (0), RUSAGE_CHILDREN
 * (-1), RUSAGE_THREAD (1); struct rusage is two timevals and 14 longs,
 * of which ru_maxrss (KiB) is the guest's mapped memory. */
int64_t sc_getrusage(drv_proc *p, thread *t, const uint64_t a[6])
{
    int64_t who = (int64_t)(int32_t)a[0];
    if (who != 0 && who != -1 && who != 1)
        return -LX_EINVAL;
    uint8_t b[144];
    memset(b, 0, sizeof b);
    if (who != -1) {
        uint64_t ns = (uint64_t)clock_ns(p, t, who == 1 ? LX_CLOCK_THREAD_CPUTIME_ID
                                                        : LX_CLOCK_PROCESS_CPUTIME_ID);
        le64_put(b, ns / 1000000000u);
        le64_put(b + 8, ns % 1000000000u / 1000u);
        le64_put(b + 32, rru_mem_pages(p->cur->mem) * 4);
    }
    return guest_write(p, a[1], b, sizeof b);
}

/* times: the process's CPU time in clock ticks (100 per second), and the
 * clock in ticks as the result. */
int64_t sc_times(drv_proc *p, thread *t, const uint64_t a[6])
{
    uint64_t ticks = (uint64_t)clock_ns(p, t, LX_CLOCK_MONOTONIC) / (1000000000u / 100u);
    if (a[0]) {
        uint8_t b[32];
        memset(b, 0, sizeof b);
        le64_put(b, (uint64_t)clock_ns(p, t, LX_CLOCK_PROCESS_CPUTIME_ID) / (1000000000u / 100u));
        int64_t rc = guest_write(p, a[0], b, sizeof b);
        if (rc < 0)
            return rc;
    }
    return (int64_t)ticks;
}

/* getcpu: the core the thread runs on; one NUMA node. */
int64_t sc_getcpu(drv_proc *p, thread *t, const uint64_t a[6])
{
    if (a[0]) {
        int64_t rc = guest_write_u32(p, a[0], (uint32_t)t->core);
        if (rc < 0)
            return rc;
    }
    return a[1] ? guest_write_u32(p, a[1], 0) : 0;
}

/* prctl: the thread's name (PR_SET_NAME 15, PR_GET_NAME 16), its
 * no_new_privs bit (PR_SET_NO_NEW_PRIVS 38, PR_GET_NO_NEW_PRIVS 39: kept
 * and reported; nothing here gains privileges anyway) and its parent-death
 * signal (PR_SET_PDEATHSIG 1, PR_GET_PDEATHSIG 2: kept and reported; the
 * parent never dies first), with Linux's argument checks; any other
 * option is one this kernel does not have (EINVAL). Per thread, so that
 * replay, which runs them again, needs no order between threads. */
int64_t sc_prctl(drv_proc *p, thread *t, const uint64_t a[6])
{
    switch (a[0]) {
    case 1:
        if (a[1] > LX_NSIG)
            return -LX_EINVAL;
        t->pdeathsig = (int)a[1];
        return 0;
    case 2:
        return guest_write_u32(p, a[1], (uint32_t)t->pdeathsig);
    case 38:
        if (a[1] != 1 || a[2] || a[3] || a[4])
            return -LX_EINVAL;
        t->no_new_privs = 1;
        return 0;
    case 39:
        return a[1] || a[2] || a[3] || a[4] ? -LX_EINVAL : t->no_new_privs;
    default:
        break;
    }
    if (a[0] == 15) {   /* up to 15 bytes or the NUL, as strncpy_from_user */
        char name[16] = {0};
        for (size_t n = 0; n < sizeof name - 1; n++) {
            if (guest_read(p, a[1] + n, name + n, 1) < 0)
                return -LX_EFAULT;   /* before the NUL: the name stays */
            if (!name[n])
                break;
        }
        memcpy(t->name, name, sizeof t->name);
        return 0;
    }
    if (a[0] == 16)
        return guest_write(p, a[1], t->name, sizeof t->name);
    return -LX_EINVAL;
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
    le64_put(b, sched_now(p, t) / DRV_HZ);
    le64_put(b + 32, SIM_RAM);
    le64_put(b + 40, SIM_RAM - SIM_RAM / 8);
    b[80] = (uint8_t)p->live;
    b[81] = (uint8_t)(p->live >> 8);
    b[104] = 1;   /* mem_unit */
    return guest_write(p, a[0], b, sizeof b);
}

int64_t sc_umask(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint32_t old = p->cur->umask;
    p->cur->umask = (uint32_t)a[0] & 0777;
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
