/* workloads/sysprobe.c: checks Linux system call semantics from the guest
 * side and prints what it sees, in a form that does not depend on
 * addresses or timing, so that a run can be compared with qemu-riscv64
 * (which is why a few Linux behaviours qemu lacks, such as EINVAL for an
 * unknown madvise advice or MAP_FIXED_NOREPLACE, are tested elsewhere).
 * Usage: sysprobe mem|futex|time|misc|proc [strict]|maps [strict]|unknown|auxv */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static long fx(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts, uint32_t *uaddr2,
               uint32_t val3)
{
    long r = syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
    return r < 0 ? -errno : r;
}

static const char *err_name(long e)
{
    switch (e) {
    case 0: return "0";
    case -EINVAL: return "EINVAL";
    case -ENOMEM: return "ENOMEM";
    case -EEXIST: return "EEXIST";
    case -EAGAIN: return "EAGAIN";
    case -ETIMEDOUT: return "ETIMEDOUT";
    case -EFAULT: return "EFAULT";
    case -EBADF: return "EBADF";
    case -ENOSYS: return "ENOSYS";
    case -EACCES: return "EACCES";
    case -ERANGE: return "ERANGE";
    case -ESRCH: return "ESRCH";
    case -ENOTDIR: return "ENOTDIR";
    case -EPERM: return "EPERM";
    default: return "other";
    }
}

static long rc(long r) { return r < 0 ? -errno : r; }

static int mem(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    printf("pagesize %ld\n", pg);
    unsigned char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap ok %d aligned %d zero %d\n", a != MAP_FAILED, ((uintptr_t)a % pg) == 0,
           a[0] == 0 && a[4 * pg - 1] == 0);
    memset(a, 0x5a, 4 * pg);
    printf("mprotect ro %s\n", err_name(rc(mprotect(a + pg, pg, PROT_READ))));
    printf("mprotect unaligned %s\n", err_name(rc(mprotect(a + 1, pg, PROT_READ))));
    printf("mprotect badprot %s\n", err_name(rc(mprotect(a, pg, 0x40))));
    printf("madvise dontneed %s byte %d other %d\n", err_name(rc(madvise(a + 2 * pg, pg, MADV_DONTNEED))),
           a[2 * pg + 5], a[3 * pg + 5]);
    printf("munmap middle %s\n", err_name(rc(munmap(a + pg, pg))));
    printf("mprotect hole %s\n", err_name(rc(mprotect(a, 3 * pg, PROT_READ | PROT_WRITE))));
    printf("munmap unaligned %s zero %s\n", err_name(rc(munmap(a + 3, pg))),
           err_name(rc(munmap(a, 0))));
    errno = 0;
    void *z = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap len0 %s\n", z == MAP_FAILED ? err_name(-errno) : "ok");
    void *fx1 = mmap(a + 3 * pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("mmap fixed same %d replaced zero %d\n", fx1 == a + 3 * pg, a[3 * pg + 5] == 0);
    void *bad = mmap(NULL, pg, PROT_READ, MAP_ANONYMOUS, -1, 0);
    printf("mmap notype %s\n", bad == MAP_FAILED ? err_name(-errno) : "ok");
    void *badfd = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, 77, 0);
    printf("mmap badfd %s\n", badfd == MAP_FAILED ? err_name(-errno) : "ok");
    /* Locking and syncing pages check their arguments (a + pg is a hole). */
    printf("mlock %s munlock %s hole %s\n", err_name(rc(mlock(a, pg))), err_name(rc(munlock(a, pg))),
           err_name(rc(mlock(a, 2 * pg))));
    printf("mlockall none %s munlockall %s\n", err_name(rc(mlockall(0))), err_name(rc(munlockall())));
    printf("msync %s unaligned %s both %s hole %s\n", err_name(rc(msync(a, pg, MS_SYNC))),
           err_name(rc(msync(a + 1, pg, MS_SYNC))), err_name(rc(msync(a, pg, MS_SYNC | MS_ASYNC))),
           err_name(rc(msync(a, 2 * pg, MS_ASYNC))));
    unsigned char vec[1] = {9};
    printf("mincore %s touched %d", err_name(rc(mincore(a, pg, vec))), vec[0] & 1);
    /* (An unaligned address is EINVAL on Linux; qemu-riscv64 says ENOMEM.) */
    printf(" hole %s\n", err_name(rc(mincore(a + pg, pg, vec))));
    /* brk */
    void *b0 = sbrk(0);
    void *b1 = sbrk(3 * pg);
    memset(b1, 1, 3 * pg);
    printf("sbrk grows %d\n", b1 == b0 && sbrk(0) == (char *)b0 + 3 * pg);
    sbrk(-(intptr_t)(3 * pg));
    printf("sbrk shrinks %d\n", sbrk(0) == b0);
    /* A big allocation: glibc uses mmap, then frees with munmap. */
    char *big = malloc(8 << 20);
    big[0] = 1;
    big[(8 << 20) - 1] = 2;
    printf("big malloc %d\n", big[0] + big[(8 << 20) - 1]);
    free(big);
    return 0;
}

static uint32_t f1, f2;
static atomic_int arrived;
static struct timespec woke_at[2];

static void *waiter(void *arg)
{
    int id = (int)(intptr_t)arg;
    /* A first clock read before blocking, so that the one after waking
     * needs no shared data: it sees the core's own time. */
    clock_gettime(CLOCK_MONOTONIC, &woke_at[id]);
    atomic_fetch_add(&arrived, 1);
    long r;
    do
        r = fx(&f1, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    while (r == -EINTR);
    clock_gettime(CLOCK_MONOTONIC, &woke_at[id]);
    return (void *)(intptr_t)r;
}

static int not_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static int futex(void)
{
    uint32_t w = 5;
    printf("wait wrong value %s\n", err_name(fx(&w, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0)));
    struct timespec ts = {0, 2000000}, t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long r = fx(&w, FUTEX_WAIT_PRIVATE, 5, &ts, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long waited = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
    printf("wait timeout %s waited>=2ms %d\n", err_name(r), waited >= 2000000);
    struct timespec bad = {0, 1000000000};
    printf("wait bad timeout %s\n", err_name(fx(&w, FUTEX_WAIT_PRIVATE, 5, &bad, NULL, 0)));
    printf("wake nobody %ld\n", fx(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    printf("wait unaligned %s\n", err_name(fx((uint32_t *)((char *)&w + 1), FUTEX_WAIT_PRIVATE, 5, NULL, NULL, 0)));
    printf("wait bitset 0 %s\n", err_name(fx(&w, FUTEX_WAIT_BITSET_PRIVATE, 5, NULL, NULL, 0)));
    printf("bogus op %s\n", err_name(fx(&w, 99, 0, NULL, NULL, 0)));
    /* Absolute deadline in the past: times out at once. */
    struct timespec past = {0, 1};
    printf("wait_bitset past %s\n", err_name(fx(&w, FUTEX_WAIT_BITSET_PRIVATE, 5, &past, NULL, ~0u)));
    printf("cmp_requeue mismatch %s\n", err_name(fx(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)(uintptr_t)1, &f2, 9)));

    /* Two waiters on f1, moved to f2 by CMP_REQUEUE (repeated until both
     * were moved, whatever the interleaving), then woken from f2. */
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i);
    long moved = 0, calls = 0;
    while (moved < 2) {
        long m = fx(&f1, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)(uintptr_t)INT_MAX, &f2, 0);
        if (m < 0) {
            printf("cmp_requeue failed %s\n", err_name(m));
            return 1;
        }
        moved += m;
        if (++calls % 16 == 0)
            sched_yield();
    }
    printf("requeued %ld\n", moved);
    printf("wake on f1 after requeue %ld\n", fx(&f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0));
    struct timespec before_wake;
    clock_gettime(CLOCK_MONOTONIC, &before_wake);
    long woken = 0;
    while (woken < 2)
        woken += fx(&f2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    printf("woken from f2 %ld\n", woken);
    for (int i = 0; i < 2; i++) {
        void *res;
        pthread_join(t[i], &res);
        printf("waiter %d returned %s, ran again no earlier than its waker %d\n", i,
               err_name((long)(intptr_t)res), not_before(&woke_at[i], &before_wake));
    }
    return 0;
}

static int timing(void)
{
    struct timespec a, b, c;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("monotonic nondecreasing %d\n", (b.tv_sec > a.tv_sec) || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
    struct timespec d = {0, 3000000};
    printf("nanosleep %s\n", err_name(rc(nanosleep(&d, NULL))));
    clock_gettime(CLOCK_MONOTONIC, &c);
    long ns = (c.tv_sec - b.tv_sec) * 1000000000L + (c.tv_nsec - b.tv_nsec);
    printf("slept>=3ms %d\n", ns >= 3000000);
    struct timespec bad = {0, -1};
    printf("nanosleep bad %s\n", err_name(rc(nanosleep(&bad, NULL))));
    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_nsec += 1000000;
    if (abs.tv_nsec >= 1000000000) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000;
    }
    printf("clock_nanosleep abs %d\n", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL));
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("after deadline %d\n", now.tv_sec > abs.tv_sec || (now.tv_sec == abs.tv_sec && now.tv_nsec >= abs.tv_nsec));
    struct timespec rt;
    printf("realtime after 2020 %d\n", clock_gettime(CLOCK_REALTIME, &rt) == 0 && rt.tv_sec > 1577836800);
    printf("bad clock %s\n", err_name(rc(clock_gettime(99, &rt))));
    return 0;
}

static int misc(void)
{
    struct utsname u;
    uname(&u);
    printf("uname %s %s\n", u.sysname, u.machine);
    printf("pid==tid %d ppid>0 %d\n", getpid() == (pid_t)syscall(SYS_gettid), getppid() > 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    printf("affinity %d count>0 %d\n", sched_getaffinity(0, sizeof set, &set), CPU_COUNT(&set) > 0);
    printf("setaffinity %d\n", sched_setaffinity(0, sizeof set, &set));
    unsigned char buf[64];
    printf("getrandom %zd\n", getrandom(buf, sizeof buf, 0));
    printf("getrandom badflags %s\n", err_name(rc(getrandom(buf, 8, 0x100))));
    struct rlimit rl;
    printf("getrlimit stack %d cur %lu\n", getrlimit(RLIMIT_STACK, &rl), (unsigned long)rl.rlim_cur);
    printf("prlimit bad resource %s\n", err_name(rc(prlimit(0, 99, NULL, &rl))));
    stack_t ss = {0}, old;
    ss.ss_size = 1024;
    ss.ss_sp = buf;
    printf("sigaltstack small %s\n", err_name(rc(sigaltstack(&ss, &old))));
    printf("sigaltstack old disabled %d\n", sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE));
    sigset_t s, o;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    printf("sigprocmask %d\n", sigprocmask(SIG_BLOCK, &s, &o));
    sigprocmask(SIG_SETMASK, NULL, &o);
    printf("usr1 blocked %d\n", sigismember(&o, SIGUSR1));
    printf("raise blocked usr1 %d (pending, not delivered)\n", raise(SIGUSR1));
    signal(SIGUSR1, SIG_IGN);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    printf("unblocked ignored usr1: alive\n");
    printf("kill bad signal %s\n", err_name(rc(kill(getpid(), 99))));
    printf("sigaction kill %s\n", err_name(rc(sigaction(SIGKILL, &(struct sigaction){0}, NULL))));
    char cwd[4096];
    printf("getcwd %d\n", getcwd(cwd, sizeof cwd) != NULL && cwd[0] == '/');
    printf("getcwd small %s\n", getcwd(cwd, 1) ? "ok" : err_name(-errno));
    printf("close bad %s\n", err_name(rc(close(99))));
    printf("dup2 same %d\n", dup2(1, 1));
    int d = dup(1);
    printf("dup >2 %d fcntl getfd %d\n", d > 2, fcntl(d, F_GETFD));
    printf("dup3 same %s\n", err_name(rc(dup3(d, d, 0))));
    printf("write via dup %zd\n", write(d, "dup says hi\n", 12));
    close(d);
    printf("write closed %s\n", err_name(rc(write(d, "x", 1))));
    volatile uintptr_t badbuf = 16;
    printf("write badbuf %s\n", err_name(rc(write(1, (const void *)badbuf, 4))));
    /* Limits and umask: process-wide state the replay executes again. */
    struct rlimit lim, back;
    getrlimit(RLIMIT_NOFILE, &lim);
    struct rlimit lower = {lim.rlim_cur / 2, lim.rlim_max};
    printf("setrlimit nofile half %d\n", setrlimit(RLIMIT_NOFILE, &lower));
    getrlimit(RLIMIT_NOFILE, &back);
    printf("nofile now half %d\n", back.rlim_cur == lower.rlim_cur && back.rlim_max == lim.rlim_max);
    struct rlimit inverted = {lim.rlim_max, lim.rlim_cur / 4};
    printf("setrlimit cur>max %s\n", err_name(rc(setrlimit(RLIMIT_NOFILE, &inverted))));
    printf("prlimit old and new %d\n", prlimit(0, RLIMIT_NOFILE, &lim, &back) == 0 &&
                                          back.rlim_cur == lower.rlim_cur);
    umask(027);
    printf("umask gives back 027: %d\n", umask(022) == 027);
    struct timeval tv;
    printf("gettimeofday after 2020 %d\n", gettimeofday(&tv, NULL) == 0 && tv.tv_sec > 1577836800);
    struct timespec res;
    printf("clock_getres monotonic %d\n", clock_getres(CLOCK_MONOTONIC, &res) == 0 &&
                                            res.tv_sec == 0 && res.tv_nsec > 0);
    printf("tkill self 0: %ld\n", syscall(SYS_tkill, syscall(SYS_gettid), 0));
    return 0;
}

/* Thread names, the running CPU, CPU time, scheduling policy, priority,
 * process group: what thread pools and timing code ask. Threads keep what
 * they see; main prints it after joining them. */
static char inherited[4][16], renamed[4][16];
static unsigned cpus_seen[4];
static long getcpu_rc[4];

static void *proc_worker(void *arg)
{
    long i = (long)arg;
    prctl(PR_GET_NAME, inherited[i]);
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", i);
    prctl(PR_SET_NAME, name);
    prctl(PR_GET_NAME, renamed[i]);
    unsigned node = 9;
    getcpu_rc[i] = syscall(SYS_getcpu, &cpus_seen[i], &node, NULL) == 0 && node == 0;
    return NULL;
}

static void *proc_reader(void *arg)
{
    char c;
    read(*(int *)arg, &c, 1);
    return NULL;
}

static int proc(int strict)
{
    char name[16] = {0};
    printf("initial name set %d\n", prctl(PR_GET_NAME, name) == 0 && name[0] != 0);
    printf("set name %d\n", prctl(PR_SET_NAME, "probe-main"));
    prctl(PR_GET_NAME, name);
    printf("name %s\n", name);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, proc_worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    for (int i = 0; i < 4; i++)
        printf("thread %d inherited %s renamed %s getcpu %ld in range %d\n", i, inherited[i], renamed[i],
               getcpu_rc[i], cpus_seen[i] < (unsigned)CPU_COUNT(&set));
    prctl(PR_GET_NAME, name);
    printf("main still %s\n", name);
    printf("long name %d\n", prctl(PR_SET_NAME, "a-name-longer-than-fifteen"));
    prctl(PR_GET_NAME, name);
    printf("truncated %s\n", name);
    printf("prctl unknown %s\n", err_name(rc(prctl(9999, 0, 0, 0, 0))));
    struct rusage r1, r2, rt, rc_;
    int ok = getrusage(RUSAGE_SELF, &r1) == 0;
    volatile uint64_t x = 1;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005ull + 1;
    ok = ok && getrusage(RUSAGE_SELF, &r2) == 0;
    printf("getrusage self %d grows %d maxrss>0 %d\n", ok,
           r2.ru_utime.tv_sec > r1.ru_utime.tv_sec ||
               (r2.ru_utime.tv_sec == r1.ru_utime.tv_sec && r2.ru_utime.tv_usec >= r1.ru_utime.tv_usec),
           r2.ru_maxrss > 0);
    printf("getrusage thread %d\n", getrusage(RUSAGE_THREAD, &rt));
    printf("getrusage children %d zero %d\n", getrusage(RUSAGE_CHILDREN, &rc_),
           rc_.ru_utime.tv_sec == 0 && rc_.ru_utime.tv_usec == 0 && rc_.ru_stime.tv_usec == 0);
    printf("getrusage bad %s\n", err_name(rc(syscall(SYS_getrusage, 7, &r1))));
    struct tms tm;
    clock_t c = times(&tm);
    printf("times %d children 0 %d\n", c != (clock_t)-1, tm.tms_cutime == 0 && tm.tms_cstime == 0);
    printf("scheduler other %d\n", sched_getscheduler(0) == SCHED_OTHER);
    struct sched_param sp = {.sched_priority = 9};
    printf("getparam %d priority %d\n", sched_getparam(0, &sp), sp.sched_priority);
    printf("getscheduler nobody %s\n", err_name(rc(sched_getscheduler(999999))));
    errno = 0;
    int nice0 = getpriority(PRIO_PROCESS, 0);
    printf("getpriority ok %d\n", errno == 0 && nice0 >= -20 && nice0 <= 19);
    /* Nice 19 is the floor: asking for 20 leaves it at 19. */
    int want = nice0 < 19 ? nice0 + 1 : 19;
    printf("setpriority up %d\n", setpriority(PRIO_PROCESS, 0, nice0 + 1));
    printf("getpriority +1 %d\n", getpriority(PRIO_PROCESS, 0) == want);
    printf("getpriority bad which %s\n", err_name(rc(getpriority(7, 0))));
    /* Only success is compared: in a PID namespace whose leader lies outside
     * it, the kernel reports group and session 0. */
    printf("getpgid ok %d getsid ok %d\n", getpgid(0) >= 0, getsid(0) >= 0);
    printf("getpgid nobody %s\n", err_name(rc(getpgid(999999))));

    /* Policies an unprivileged process may choose, and their ranges. */
    static const int pols[] = {SCHED_OTHER, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_IDLE, 6, 9};
    for (int i = 0; i < 7; i++)
        printf("priority range %d: %s %s\n", pols[i],
               err_name(rc(sched_get_priority_min(pols[i]))),
               err_name(rc(sched_get_priority_max(pols[i]))));
    sp.sched_priority = 0;
    printf("setscheduler batch %s now %d\n", err_name(rc(sched_setscheduler(0, SCHED_BATCH, &sp))),
           sched_getscheduler(0));
    printf("setparam batch %s\n", err_name(rc(sched_setparam(0, &sp))));
    printf("setscheduler other %s now %d\n", err_name(rc(sched_setscheduler(0, SCHED_OTHER, &sp))),
           sched_getscheduler(0));
    sp.sched_priority = 5;
    printf("other priority 5 %s\n", err_name(rc(sched_setscheduler(0, SCHED_OTHER, &sp))));
    printf("setparam 5 %s\n", err_name(rc(sched_setparam(0, &sp))));
    sp.sched_priority = 0;
    printf("setscheduler nobody %s\n", err_name(rc(sched_setscheduler(999999, SCHED_OTHER, &sp))));
    printf("setscheduler bad policy %s\n", err_name(rc(sched_setscheduler(0, 9, &sp))));
    printf("setscheduler deadline %s\n", err_name(rc(sched_setscheduler(0, 6, &sp))));
    if (strict) {
        /* What Linux answers a process that is not root (qemu-riscv64 as
         * root would say 0). */
        sp.sched_priority = 10;
        printf("setscheduler fifo %s\n", err_name(rc(sched_setscheduler(0, SCHED_FIFO, &sp))));
        printf("setscheduler rr %s\n", err_name(rc(sched_setscheduler(0, SCHED_RR, &sp))));
        sp.sched_priority = 0;
        printf("setscheduler fifo priority 0 %s\n",
               err_name(rc(sched_setscheduler(0, SCHED_FIFO, &sp))));
    }

    /* CPU-time clocks by id: another thread's (blocked on a pipe) and the
     * process's. */
    int pfd[2];
    pipe(pfd);
    pthread_t w;
    pthread_create(&w, NULL, proc_reader, &pfd[0]);
    usleep(1000);
    clockid_t cid;
    struct timespec ts = {0, 0};
    int g = pthread_getcpuclockid(w, &cid);
    int r = clock_gettime(cid, &ts);
    printf("thread clock %d %d ran %d res %d\n", g, r, ts.tv_sec > 0 || ts.tv_nsec > 0,
           clock_getres(cid, &ts));
    write(pfd[1], "x", 1);
    pthread_join(w, NULL);
    g = clock_getcpuclockid(0, &cid);
    r = clock_gettime(cid, &ts);
    printf("process clock %d %d ran %d\n", g, r, ts.tv_sec > 0 || ts.tv_nsec > 0);
    printf("process clock of nobody %s\n", err_name(-clock_getcpuclockid(999999, &cid)));
    return 0;
}

/* The memory map as /proc/self/maps gives it: whether a line covers ADDR
 * (its protection in PERM, name in NAME), and how many lines it has. */
static int maps_find(uint64_t addr, char perm[5], char *name, size_t name_size, int *lines)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -errno;
    char line[512];
    int found = 0;
    *lines = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char pm[5];
        int off = 0;
        (*lines)++;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s%n", &lo, &hi, pm, &off) < 3 || lo >= hi)
            return fclose(f), -EINVAL;
        if (addr >= lo && addr < hi && !found) {
            found = 1;
            memcpy(perm, pm, 5);
            const char *n = line + off;
            n += strspn(n, " ");
            snprintf(name, name_size, "%.*s", (int)strcspn(n, "\n"), n);
        }
    }
    fclose(f);
    return found;
}

/* pthread_getattr_np of the calling thread: its result; in *HOLDS whether
 * the stack it reports holds LOCAL (an object in the caller's frame), in
 * *SIZE the stack's size. */
static int own_stack(const char *local, int *holds, size_t *size)
{
    pthread_attr_t a;
    void *lo = NULL;
    *size = 0;
    int rc = pthread_getattr_np(pthread_self(), &a);
    if (rc == 0) {
        pthread_attr_getstack(&a, &lo, size);
        pthread_attr_destroy(&a);
    }
    *holds = rc == 0 && (const char *)lo <= local && local < (const char *)lo + *size;
    return rc;
}

static void *maps_worker(void *arg)
{
    char here;
    size_t size;
    own_stack(&here, arg, &size);
    return NULL;
}

/* The memory map (/proc/self/maps) and what glibc reads from it:
 * pthread_getattr_np of the main thread finds its stack there. STRICT
 * adds the opens that are refused. */
static int maps(const char *argv0, int strict)
{
    char here;
    int holds;
    size_t size;
    int grc = own_stack(&here, &holds, &size);
    struct rlimit rl;
    getrlimit(RLIMIT_STACK, &rl);
    printf("main getattr %s holds local %d within limit %d\n", err_name(-grc), holds,
           size > 0 && size <= rl.rlim_cur);
    int in_thread = 0;
    pthread_t t;
    pthread_create(&t, NULL, maps_worker, &in_thread);
    pthread_join(t, NULL);
    printf("thread getattr holds local %d\n", in_thread);

    char perm[5] = "", name[256] = "";
    int lines = 0;
    int f = maps_find((uint64_t)(uintptr_t)&here, perm, name, sizeof name, &lines);
    printf("stack line %d %s %s\n", f, perm, name);
    f = maps_find((uint64_t)(uintptr_t)&maps, perm, name, sizeof name, &lines);
    char real[PATH_MAX];
    printf("code line %d %s names program %d\n", f, perm,
           realpath(argv0, real) && strcmp(name, real) == 0);
    static int data_word = 1;
    f = maps_find((uint64_t)(uintptr_t)&data_word, perm, name, sizeof name, &lines);
    printf("data line %d %s\n", f, perm);
    void *heap = sbrk(0);
    f = maps_find((uint64_t)(uintptr_t)heap - 1, perm, name, sizeof name, &lines);
    printf("below break %d %s\n", f, perm);
    int before = lines;
    char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    f = maps_find((uint64_t)(uintptr_t)m, perm, name, sizeof name, &lines);
    printf("mmap line %d %s no name %d\n", f, perm, name[0] == 0);
    mprotect(m + 4096, 4096, PROT_READ);
    f = maps_find((uint64_t)(uintptr_t)m + 4096, perm, name, sizeof name, &lines);
    printf("mprotect splits %d %s\n", f, perm);
    munmap(m, 3 * 4096);
    f = maps_find((uint64_t)(uintptr_t)m, perm, name, sizeof name, &lines);
    printf("munmap gone %d lines back %d\n", f == 0, lines == before);
    if (strict) {
        /* Linux's answers for a user who is not root; qemu-riscv64 opens
         * its own copy of the file either way. */
        printf("write open %s\n", err_name(rc(open("/proc/self/maps", O_WRONLY))));
        printf("directory open %s\n", err_name(rc(open("/proc/self/maps", O_RDONLY | O_DIRECTORY))));
        printf("access write %s\n", err_name(rc(access("/proc/self/maps", W_OK))));
    }
    struct stat st;
    printf("access read %d stat regular %d\n", access("/proc/self/maps", R_OK),
           stat("/proc/self/maps", &st) == 0 && S_ISREG(st.st_mode));
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)getpid());
    int fd = open(path, O_RDONLY);
    char c;
    printf("by pid %d\n", fd >= 0 && read(fd, &c, 1) == 1 && c != 0);
    close(fd);
    return 0;
}

extern const char __ehdr_start[];
extern void _start(void);

/* The auxiliary vector and initial stack as rnr builds them (not compared
 * with qemu, whose hardware capabilities and ids are the host's). */
static int auxv(int argc, char **argv)
{
    printf("hwcap 0x%lx pagesz %lu clktck %lu\n", getauxval(AT_HWCAP), getauxval(AT_PAGESZ),
           getauxval(AT_CLKTCK));
    printf("uid %lu euid %lu gid %lu egid %lu secure %lu base %lu flags %lu\n", getauxval(AT_UID),
           getauxval(AT_EUID), getauxval(AT_GID), getauxval(AT_EGID), getauxval(AT_SECURE),
           getauxval(AT_BASE), getauxval(AT_FLAGS));
    const unsigned char *eh = (const unsigned char *)__ehdr_start;
    uint64_t phoff;
    memcpy(&phoff, eh + 32, 8);
    printf("entry is _start %d phdr in image %d phent %lu phnum>1 %d\n",
           getauxval(AT_ENTRY) == (unsigned long)(uintptr_t)_start,
           getauxval(AT_PHDR) == (unsigned long)(uintptr_t)(eh + phoff), getauxval(AT_PHENT),
           getauxval(AT_PHNUM) > 1);
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("execfn is argv[0] %d platform %lu\n", execfn && strcmp(execfn, argv[0]) == 0,
           getauxval(AT_PLATFORM));
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    printf("random");
    for (int i = 0; i < 16; i++)
        printf(" %02x", r[i]);
    printf("\n");
    /* argv and envp sit just above argc on the initial stack. */
    extern char **environ;
    printf("environ follows argv %d\n", environ == argv + argc + 1);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(what, "mem") == 0)
        return mem();
    if (strcmp(what, "futex") == 0)
        return futex();
    if (strcmp(what, "time") == 0)
        return timing();
    if (strcmp(what, "misc") == 0)
        return misc();
    if (strcmp(what, "proc") == 0)
        return proc(argc > 2 && strcmp(argv[2], "strict") == 0);
    if (strcmp(what, "auxv") == 0)
        return auxv(argc, argv);
    if (strcmp(what, "maps") == 0)
        return maps(argv[0], argc > 2 && strcmp(argv[2], "strict") == 0);
    if (strcmp(what, "unknown") == 0) {
        /* bind(2) is not part of the simulated system: ENOSYS, twice. */
        long a = syscall(SYS_bind, -1, NULL, 0);
        int e1 = errno;
        long b = syscall(SYS_bind, -1, NULL, 0);
        int e2 = errno;
        printf("unknown %ld %s %ld %s\n", a, err_name(-e1), b, err_name(-e2));
        return 0;
    }
    fprintf(stderr, "usage: sysprobe mem|futex|time|misc|proc [strict]|maps [strict]|unknown|auxv\n");
    return 2;
}
