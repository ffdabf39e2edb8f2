/* forker: processes. The parent forks N workers (default 3), each with
 * a pipe back to it: worker k sums a slice of a table the parent filled
 * before the fork (its copy), writes the sum into the pipe and exits
 * with status 10 + k. A write into the table after the fork must not
 * reach the other side. The parent reads every pipe, reaps the workers
 * with waitpid in reverse order, and prints their statuses and sums.
 * Then: a child that blocks reading a pipe is killed with SIGTERM
 * (waitid reports CLD_KILLED); a SIGCHLD handler counts the ends; a
 * posix_spawn (vfork and execve) of this program with "child" prints
 * its getppid relation and exits 3. Deterministic output; exit 0.
 * "forker shared": a fork after a MAP_SHARED anonymous mapping (which
 * rnr refuses: ENOMEM) prints its result. "forker segv": a child killed
 * by SIGSEGV, reaped. "forker orphan": the parent exits 5 while its
 * child waits in read forever. "forker threads": forks from a process
 * whose other threads keep writing memory, children that make threads of
 * their own, and a fork from a thread that is not the first. "forker
 * mapfile PATH": a child maps PATH writable and shared, then the parent
 * tries to (rnr refuses the second process's mapping: ENODEV). "forker
 * shm": memory shared between processes, made before a fork: an
 * anonymous MAP_SHARED counter under a process-shared mutex that three
 * children increment at once, an shm_open object the children fill in
 * turn, and sem_open semaphores for the turns and the end (needs a
 * /dev/shm: rnr --private-tmp). "forker locks PATH": POSIX record
 * locks between a parent and its child (a conflict, F_GETLK naming the
 * holder, a blocking wait until the parent unlocks, release at the
 * child's end). "forker spin K N" and "forker spin-threads K N": the
 * same work (K workers, N rounds of a hash each) in K processes or in K
 * threads, for measuring what a switch between processes costs.
 * "forker ids": the user and group id calls of an unprivileged user
 * (what busybox and the like call before they run a command). "forker
 * suspend": sigsuspend waiting for a child's SIGCHLD, and taking one that
 * waits pending (a shell's wait). "forker groups": process groups and
 * sessions: setpgid, setsid, getpgid, getsid, kill of a group (0 and
 * -PGID). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define TABLE 4096
static long table[TABLE];
static volatile sig_atomic_t chld;
/* What each SIGCHLD's siginfo said (up to 16), and what waitpid said. */
static volatile int chld_code[16], chld_pid[16], chld_status[16];
static int reaped_n, reaped_pid[16], reaped_st[16];

static void on_chld(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (chld < 16) {
        chld_code[chld] = si->si_code;
        chld_pid[chld] = si->si_pid;
        chld_status[chld] = si->si_status;
    }
    chld++;
}

static void note_reaped(pid_t pid, int st)
{
    if (reaped_n < 16) {
        reaped_pid[reaped_n] = pid;
        reaped_st[reaped_n++] = st;
    }
}

/* 1 if every SIGCHLD's siginfo names a reaped child with its status. */
static int chld_infos_match(void)
{
    for (int i = 0; i < chld && i < 16; i++) {
        int ok = 0;
        for (int k = 0; k < reaped_n; k++) {
            int st = reaped_st[k];
            if (chld_pid[i] != reaped_pid[k])
                continue;
            ok = chld_code[i] == CLD_EXITED ? WIFEXITED(st) && WEXITSTATUS(st) == chld_status[i]
               : chld_code[i] == CLD_KILLED ? WIFSIGNALED(st) && WTERMSIG(st) == chld_status[i] : 0;
        }
        if (!ok)
            return 0;
    }
    return chld > 0;
}

/* All N bytes of BUF written to (WRITE) or read from FD: 0, or -1. */
static int move_all(int fd, void *buf, size_t n, int write_it)
{
    char *b = buf;
    while (n) {
        ssize_t k = write_it ? write(fd, b, n) : read(fd, b, n);
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A child that blocks reading a new pipe (PF: its ends; the caller keeps
 * the write end open) until no writer is left: its pid, or -1. */
static pid_t fork_reader(int pf[2])
{
    if (pipe(pf) != 0)
        return -1;
    pid_t c = fork();
    if (c == 0) {
        char b;
        close(pf[1]);
        (void)read(pf[0], &b, 1);
        _exit(0);
    }
    return c;
}

/* ---- "threads" ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_counter;
static volatile int stop_workers;

static void *busy(void *arg)
{
    long id = (long)arg;
    while (!stop_workers) {
        pthread_mutex_lock(&lock);
        shared_counter += id;
        table[(shared_counter + id) % TABLE]++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *adder(void *arg)
{
    long *v = arg;
    for (int i = 0; i < 1000; i++)
        *v += i;
    return NULL;
}

/* A child: two threads of its own, then its exit status from their sums. */
static void child_with_threads(int k)
{
    long a = k, b = 2 * k;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, adder, &a);
    pthread_create(&t2, NULL, adder, &b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    _exit((int)((a + b) % 200));
}

static void *forking_thread(void *arg)
{
    (void)arg;
    pid_t c = fork();
    if (c == 0)
        _exit(getppid() > 0 ? 33 : 34);
    int st = 0;
    waitpid(c, &st, 0);
    printf("fork from a second thread: status %d\n", WEXITSTATUS(st));
    return NULL;
}

static int threads_mode(void)
{
    pthread_t w[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&w[i], NULL, busy, (void *)(i + 1));
    for (int k = 0; k < 3; k++) {
        pid_t c = fork();
        if (c == 0) {
            /* Only the caller's thread is copied: the counter's lock may
             * be held by a thread that does not exist here, so the child
             * leaves it alone. */
            child_with_threads(k);
        }
        int st = 0;
        waitpid(c, &st, 0);
        printf("threaded child %d: status %d\n", k, WEXITSTATUS(st));
    }
    pthread_t f;
    pthread_create(&f, NULL, forking_thread, NULL);
    pthread_join(f, NULL);
    stop_workers = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    printf("workers stopped\n");
    return 0;
}

/* ---- "shm" ---- */

struct shared_block {
    pthread_mutex_t mu;
    long counter;
    int order[8];
    int norder;
};

static int shm_mode(void)
{
    struct shared_block *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                                  -1, 0);
    if (b == MAP_FAILED)
        return 1;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&b->mu, &ma);
    shm_unlink("/forker-shm");
    int fd = shm_open("/forker-shm", O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror("shm_open");
        return 1;
    }
    char *text = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (text == MAP_FAILED)
        return 1;
    sem_unlink("/forker-turn");
    sem_unlink("/forker-done");
    sem_t *turn = sem_open("/forker-turn", O_CREAT | O_EXCL, 0600, 0);
    sem_t *done = sem_open("/forker-done", O_CREAT | O_EXCL, 0600, 0);
    if (turn == SEM_FAILED || done == SEM_FAILED) {
        perror("sem_open");
        return 1;
    }
    pid_t c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = fork();
        if (c[k] == 0) {
            for (int i = 0; i < 500; i++) {
                pthread_mutex_lock(&b->mu);
                b->counter += k + 1;
                pthread_mutex_unlock(&b->mu);
            }
            sem_wait(turn);   /* one child at a time writes its line */
            pthread_mutex_lock(&b->mu);
            b->order[b->norder++] = k;
            pthread_mutex_unlock(&b->mu);
            size_t len = strlen(text);
            snprintf(text + len, 4096 - len, "child wrote a line\n");
            sem_post(done);
            _exit(0);
        }
    }
    for (int k = 0; k < 3; k++) {
        sem_post(turn);
        sem_wait(done);
    }
    for (int k = 0; k < 3; k++)
        waitpid(c[k], NULL, 0);
    printf("counter %ld (want %d)\n", b->counter, 500 * (1 + 2 + 3));
    printf("lines from the shm object:\n%s", text);
    int seen = 0;
    for (int k = 0; k < b->norder; k++)
        seen |= 1 << b->order[k];
    printf("every child took a turn: %s\n", b->norder == 3 && seen == 7 ? "yes" : "no");
    struct stat st;
    printf("shm object size %ld\n", fstat(fd, &st) == 0 ? (long)st.st_size : -1L);
    sem_close(turn);
    sem_close(done);
    sem_unlink("/forker-turn");
    sem_unlink("/forker-done");
    shm_unlink("/forker-shm");
    return 0;
}

/* ---- "spin" ---- */

static unsigned long spin_work(long k, long n)
{
    unsigned long h = (unsigned long)k * 0x9e3779b97f4a7c15ul;
    for (long i = 0; i < n; i++)
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ul + (unsigned long)i;
    return h;
}

static long spin_n;

static void *spin_thread(void *arg)
{
    return (void *)spin_work((long)arg, spin_n);
}

static int spin_mode(int threads, int k, long n)
{
    unsigned long sum = 0;
    if (threads) {
        pthread_t t[16];
        spin_n = n;
        for (long i = 0; i < k; i++)
            pthread_create(&t[i], NULL, spin_thread, (void *)i);
        for (int i = 0; i < k; i++) {
            void *r;
            pthread_join(t[i], &r);
            sum += (unsigned long)r & 0xff;
        }
    } else {
        pid_t c[16];
        for (int i = 0; i < k; i++)
            if ((c[i] = fork()) == 0)
                _exit((int)(spin_work(i, n) & 0xff));
        for (int i = 0; i < k; i++) {
            int st = 0;
            waitpid(c[i], &st, 0);
            sum += (unsigned long)WEXITSTATUS(st);
        }
    }
    printf("spin: %lu\n", sum);
    return 0;
}

/* ---- "groups" ---- */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
    (void)sig;
    usr1++;
}

static int groups_mode(void)
{
    /* A group of its own (rnr's first process leads its group and session
     * already: EPERM there, as Linux says to a session leader). */
    (void)setpgid(0, 0);
    printf("own group: %s\n", getpgid(0) == getpid() ? "yes" : "no");
    signal(SIGUSR1, on_usr1);
    sigset_t set, none;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &set, NULL);
    pid_t me = getpid();
    pid_t a = fork();
    if (a == 0) {   /* in its parent's group: the group's signal reaches it */
        int same = getpgid(0) == me;
        sigsuspend(&none);
        _exit(same && usr1 == 1 ? 10 : 11);
    }
    pid_t b = fork();
    if (b == 0) {   /* a group of its own; a group leader cannot start a session */
        setpgid(0, 0);
        int eperm = setsid() == -1 && errno == EPERM;
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        for (;;)
            pause();
        _exit(eperm ? 20 : 21);
    }
    setpgid(b, b);   /* both sides, as shells do: no race with the child's own */
    pid_t c = fork();
    if (c == 0) {   /* a session of its own */
        pid_t sid = setsid();
        _exit(sid == getpid() && getsid(0) == sid && getpgid(0) == sid ? 30 : 31);
    }
    int st = 0;
    waitpid(c, &st, 0);
    printf("child in a new session: status %d\n", WEXITSTATUS(st));
    printf("the other child's group is its own: %s\n", getpgid(b) == b ? "yes" : "no");
    printf("kill(0, SIGUSR1): %d\n", kill(0, SIGUSR1));
    waitpid(a, &st, 0);
    printf("child in the group: status %d\n", WEXITSTATUS(st));
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("the caller took it too: %s\n", usr1 == 1 ? "yes" : "no");
    printf("kill(-%s, SIGTERM): %d\n", "other group", kill(-b, SIGTERM));
    waitpid(b, &st, 0);
    printf("child of the other group: killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    errno = 0;
    printf("kill of a group no process is in: %d (%s)\n", kill(-b, 0), strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        printf("spawned child: parent is %s\n", getppid() == atoi(argv[2]) ? "the spawner" : "another");
        fflush(stdout);
        return 3;
    }
    if (argc > 1 && strcmp(argv[1], "threads") == 0)
        return threads_mode();
    if (argc > 1 && strcmp(argv[1], "shm") == 0)
        return shm_mode();
    if (argc > 1 && strcmp(argv[1], "groups") == 0)
        return groups_mode();
    if (argc > 1 && strcmp(argv[1], "suspend") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_chld;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGCHLD, &sa, NULL);
        sigset_t set, none, now;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigemptyset(&none);
        sigprocmask(SIG_BLOCK, &set, NULL);
        for (int round = 0; round < 2; round++) {
            pid_t c = fork();
            if (c == 0)
                _exit(20 + round);
            if (round == 1) {   /* the child's signal waits pending first */
                int st;
                waitpid(c, &st, 0);
            }
            int before = chld;
            errno = 0;
            int rc = sigsuspend(&none);
            int e = errno;
            sigprocmask(SIG_BLOCK, NULL, &now);
            printf("round %d: sigsuspend %d (%s), handler ran %d time(s), child %s status %d, SIGCHLD "
                   "blocked again: %s\n", round, rc, strerror(e), chld - before,
                   chld_pid[before] == c ? "named" : "not named", chld_status[before],
                   sigismember(&now, SIGCHLD) ? "yes" : "no");
            if (round == 0)
                waitpid(c, NULL, 0);
        }
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "ids") == 0) {
        uid_t u = getuid(), r, e, sv;
        gid_t g = getgid(), rg, eg, sg;
        printf("setuid(own) %d, setgid(own) %d\n", setuid(u), setgid(g));
        errno = 0;
        printf("setuid(other) %d %s\n", setuid(u + 1), strerror(errno));
        errno = 0;
        printf("setreuid(-1, own) %d, setresgid(own, -1, own) %d\n", setreuid((uid_t)-1, u),
               setresgid(g, (gid_t)-1, g));
        errno = 0;
        printf("setresuid(other) %d %s\n", setresuid(u, u + 1, u), strerror(errno));
        getresuid(&r, &e, &sv);
        getresgid(&rg, &eg, &sg);
        printf("getresuid all own: %s, getresgid all own: %s\n", r == u && e == u && sv == u ? "yes" : "no",
               rg == g && eg == g && sg == g ? "yes" : "no");
        return 0;
    }
    if (argc > 3 && (strcmp(argv[1], "spin") == 0 || strcmp(argv[1], "spin-threads") == 0)) {
        int k = atoi(argv[2]);
        return spin_mode(argv[1][4] == '-', k < 1 ? 1 : k > 16 ? 16 : k, atol(argv[3]));
    }
    if (argc > 1 && strcmp(argv[1], "segv") == 0) {
        pid_t c = fork();
        if (c == 0) {
            volatile int *z = (volatile int *)(uintptr_t)argc - argc;
            *z = 1;
            _exit(0);
        }
        int st = 0;
        waitpid(c, &st, 0);
        printf("child: signaled %d, signal %d\n", WIFSIGNALED(st), WTERMSIG(st));
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "orphan") == 0) {
        /* The write end stays open here: the child waits until the run
         * ends with this process. */
        int pf[2];
        if (fork_reader(pf) < 0)
            return 1;
        printf("parent leaves its child waiting\n");
        fflush(stdout);
        sleep(0);
        return 5;
    }
    if (argc > 2 && strcmp(argv[1], "locks") == 0) {
        int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return 1;
        struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
        printf("parent locks: %d\n", fcntl(fd, F_SETLK, &l));
        int pf[2];
        if (pipe(pf) != 0)
            return 1;
        pid_t parent = getpid(), c = fork();
        if (c == 0) {
            struct flock m = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 10};
            int rc = fcntl(fd, F_SETLK, &m);
            printf("child tries: %d (%s)\n", rc, rc < 0 ? strerror(errno) : "locked");
            struct flock q = m;
            fcntl(fd, F_GETLK, &q);
            printf("child sees a %s lock of %s at %ld+%ld\n", q.l_type == F_WRLCK ? "write" : "other",
                   q.l_pid == parent ? "its parent" : "another", (long)q.l_start, (long)q.l_len);
            fflush(stdout);
            (void)write(pf[1], "w", 1);
            rc = fcntl(fd, F_SETLKW, &m);   /* until the parent unlocks */
            printf("child waits, then: %d\n", rc);
            fflush(stdout);
            _exit(0);   /* its lock goes with it */
        }
        char b;
        (void)read(pf[0], &b, 1);
        usleep(1000);
        l.l_type = F_UNLCK;
        fcntl(fd, F_SETLK, &l);
        int st = 0;
        waitpid(c, &st, 0);
        l.l_type = F_WRLCK;
        l.l_len = 0;
        printf("parent locks the whole file after the child's end: %d\n", fcntl(fd, F_SETLK, &l));
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "mapfile") == 0) {
        int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            return 1;
        int pf[2], back[2];
        if (pipe(pf) != 0 || pipe(back) != 0)
            return 1;
        pid_t c = fork();
        if (c == 0) {
            char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            char b = m == MAP_FAILED ? 'n' : 'y';
            (void)write(back[1], &b, 1);
            (void)read(pf[0], &b, 1);   /* until the parent tried */
            _exit(m == MAP_FAILED);
        }
        char b;
        (void)read(back[0], &b, 1);
        printf("child's mapping: %s\n", b == 'y' ? "made" : "refused");
        char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        printf("parent's mapping: %s\n", m == MAP_FAILED ? strerror(errno) : "made");
        (void)write(pf[1], "x", 1);
        int st = 0;
        waitpid(c, &st, 0);
        printf("child: status %d\n", WEXITSTATUS(st));
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "shared") == 0) {
        int *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        pid_t c = fork();
        if (c == 0) {
            *m = 42;
            _exit(0);
        }
        if (c < 0) {
            printf("fork after a shared mapping: %s\n", strerror(errno));
            return 0;
        }
        waitpid(c, NULL, 0);
        printf("fork after a shared mapping: child wrote %d\n", *m);
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 1 || n > 16)
        n = 3;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(SIGCHLD, &sa, NULL);
    for (int i = 0; i < TABLE; i++)
        table[i] = (long)i * i % 1009;
    pid_t pids[16];
    int fds[16];
    pid_t self = getpid();
    for (int k = 0; k < n; k++) {
        int pf[2];
        if (pipe(pf) != 0) {
            perror("pipe");
            return 1;
        }
        pid_t c = fork();
        if (c < 0) {
            perror("fork");
            return 1;
        }
        if (c == 0) {
            close(pf[0]);
            long sum = 0;
            for (int i = k; i < TABLE; i += n)
                sum += table[i];
            table[k] = -1;   /* the parent's copy keeps its value */
            int ok = getppid() == self && getpid() != self;
            long msg[2] = {sum, ok};
            if (move_all(pf[1], msg, sizeof msg, 1) != 0)
                _exit(99);
            _exit(10 + k);
        }
        close(pf[1]);
        pids[k] = c;
        fds[k] = pf[0];
    }
    long total = 0;
    for (int k = 0; k < n; k++) {
        long msg[2];
        if (move_all(fds[k], msg, sizeof msg, 0) != 0) {
            printf("worker %d: short read\n", k);
            return 1;
        }
        char extra;
        ssize_t eof = read(fds[k], &extra, 1);   /* the worker's end closed the pipe */
        close(fds[k]);
        printf("worker %d: sum %ld, parent seen %s, then %s\n", k, msg[0], msg[1] ? "yes" : "no",
               eof == 0 ? "end of file" : "more");
        total += msg[0];
    }
    for (int k = n - 1; k >= 0; k--) {
        int st = 0;
        pid_t w = waitpid(pids[k], &st, 0);
        note_reaped(w, st);
        printf("worker %d: reaped %s, exited %d status %d\n", k, w == pids[k] ? "itself" : "another",
               WIFEXITED(st), WEXITSTATUS(st));
    }
    errno = 0;
    printf("signal 0 to a reaped child: %d (%s)\n", kill(pids[0], 0), strerror(errno));
    long check = 0;
    for (int i = 0; i < TABLE; i++)
        check += table[i];
    printf("total %ld, table intact %s\n", total, check == total ? "yes" : "no");

    /* A child blocked in read, killed. */
    int pf[2];
    pid_t c = fork_reader(pf);
    if (c < 0)
        return 1;
    close(pf[0]);
    int st = 0;
    printf("no child ended yet: %d\n", waitpid(c, &st, WNOHANG));
    kill(c, SIGTERM);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc = waitid(P_PID, (id_t)c, &si, WEXITED);
    note_reaped(c, si.si_status);   /* a signal number: as WTERMSIG reads it from a status */
    printf("waitid %d: code %s, signal %d, pid %s\n", rc, si.si_code == CLD_KILLED ? "killed" : "other",
           si.si_status, si.si_pid == c ? "right" : "wrong");
    close(pf[1]);

    /* posix_spawn: vfork, then execve of this program. */
    char self_s[16];
    snprintf(self_s, sizeof self_s, "%d", (int)self);
    char *args[] = {argv[0], "child", self_s, NULL};
    pid_t sp;
    fflush(stdout);
    rc = posix_spawn(&sp, argv[0], NULL, NULL, args, environ);
    if (rc != 0) {
        printf("posix_spawn: %s\n", strerror(rc));
        return 1;
    }
    waitpid(sp, &st, 0);
    note_reaped(sp, st);
    printf("spawned: exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));
    printf("no children left: %s\n", waitpid(-1, &st, WNOHANG) < 0 ? "ECHILD" : "more");
    printf("SIGCHLD handled, each siginfo naming a child and its status: %s\n",
           chld_infos_match() ? "yes" : "no");
    /* A SIGCHLD held while blocked keeps its child's siginfo. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t held = fork();
    if (held == 0)
        _exit(42);
    waitpid(held, &st, 0);
    int before = chld;
    sigprocmask(SIG_SETMASK, &old, NULL);
    int last = chld - 1;
    printf("a SIGCHLD held while blocked: %s\n",
           chld == before + 1 && last < 16 && chld_code[last] == CLD_EXITED && chld_pid[last] == held &&
           chld_status[last] == 42 ? "names its child and status 42" : "wrong");
    return 0;
}
