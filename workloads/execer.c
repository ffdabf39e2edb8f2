/* workloads/execer.c: a process that replaces its program with execve.
 * Usage: execer N [PROGRAM ARG...]
 * Prints its round, pid and arguments, then:
 *   - N > 0: tries execve on a missing file and on a file that is not a
 *     program (prints the errors), opens /dev/null twice (one descriptor
 *     close-on-exec), catches SIGUSR1, fills some heap, and executes
 *     itself (argv[0]) with N - 1 and the descriptors' numbers in its
 *     environment;
 *   - N = 0: shows what survived the last execve (the descriptors: one
 *     open, the close-on-exec one closed; SIGUSR1's action back to the
 *     default; AT_EXECFN), then executes PROGRAM with its ARGs if given,
 *     or exits with status 7.
 * Usage: execer threaded
 * Starts a thread blocked in read() and one spinning, then executes itself
 * (round 0) from the main thread: the two threads end, as in Linux (round
 * 0 yields a while and says whether the spinner's counter moved).
 * Usage: execer at
 * execveat: its errors (an unknown flag, an empty path, a descriptor that
 * is not a directory, a missing file), then the program again at a
 * descriptor of its directory (AT_EXECFN /dev/fd/D/NAME), which executes
 * itself with fexecve (execveat AT_EMPTY_PATH; AT_EXECFN /dev/fd/F) into
 * round 0. The program's path must name its directory; when it is a
 * symbolic link, AT_SYMLINK_NOFOLLOW refuses it first (ELOOP).
 * Usage: execer fromthread
 * A second thread executes the program (round 0) while the main thread
 * waits in pthread_join: the main thread ends, and the caller goes on
 * with the first thread's id (gettid() is the pid, and tgkill finds it by
 * it), as in Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_usr1(int sig) { (void)sig; }

static int ready[2];
static volatile unsigned long spins;
static char *self;

static void *idle_thread(void *arg)
{
    (void)arg;
    char c;
    while (read(ready[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void *spinning_thread(void *arg)
{
    (void)arg;
    for (;;)
        spins++;
    return NULL;
}

static void *exec_thread(void *arg)
{
    (void)arg;
    char *args[] = {self, "0", NULL}, *env[] = {"EXECER_FROMTHREAD=1", NULL};
    printf("second thread: gettid() %s the pid\n", gettid() == getpid() ? "is" : "is not");
    fflush(stdout);
    execve(self, args, env);
    printf("execve from a second thread: %s\n", strerror(errno));
    return NULL;
}

int main(int argc, char **argv, char **envp)
{
    if (argc < 2) {
        fprintf(stderr, "usage: execer N [PROGRAM ARG...]\n");
        return 2;
    }
    self = argv[0];
    if (strcmp(argv[1], "threaded") == 0) {
        pthread_t th, sp;
        if (pipe(ready) != 0 || pthread_create(&th, NULL, idle_thread, NULL) != 0 ||
            pthread_create(&sp, NULL, spinning_thread, NULL) != 0)
            return 1;
        while (spins < 1000)
            ;
        char *args[] = {argv[0], "0", NULL}, *env[] = {"EXECER_THREADED=1", NULL};
        (void)envp;
        execve(argv[0], args, env);
        printf("execve with three threads: %s\n", strerror(errno));
        return 1;
    }
    if (strcmp(argv[1], "at") == 0) {
        printf("execer at: execfn %s\n", (const char *)getauxval(AT_EXECFN));
        char *none[] = {"nothing", NULL};
        syscall(SYS_execveat, AT_FDCWD, self, none, envp, 0x4000);
        printf("  execveat with an unknown flag: %s\n", strerror(errno));
        syscall(SYS_execveat, AT_FDCWD, "", none, envp, 0);
        printf("  execveat of an empty path: %s\n", strerror(errno));
        int nul = open("/dev/null", O_RDONLY);
        syscall(SYS_execveat, nul, "x", none, envp, 0);
        printf("  execveat at a descriptor that is not a directory: %s\n", strerror(errno));
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", self);
        char *slash = strrchr(dir, '/');
        if (!slash)
            return 2;
        *slash = '\0';
        int d = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY);
        syscall(SYS_execveat, d, "no-such-program", none, envp, 0);
        printf("  execveat of a missing file: %s\n", strerror(errno));
        struct stat st;
        if (lstat(self, &st) == 0 && S_ISLNK(st.st_mode)) {
            syscall(SYS_execveat, d, slash + 1, none, envp, AT_SYMLINK_NOFOLLOW);
            printf("  execveat of a symbolic link with AT_SYMLINK_NOFOLLOW: %s\n", strerror(errno));
        }
        if (getenv("EXECER_PROC")) {
            /* The simulated system has no /proc/self/fd. */
            execve("/proc/self/fd/0", none, envp);
            printf("  execve of /proc/self/fd/0: %s\n", strerror(errno));
            syscall(SYS_execveat, AT_FDCWD, "/proc/self/fd/0", none, envp, 0);
            printf("  execveat of /proc/self/fd/0: %s\n", strerror(errno));
        }
        char *args[] = {self, "at2", NULL};
        fflush(stdout);
        syscall(SYS_execveat, d, slash + 1, args, envp, 0);
        printf("  execveat at the program's directory: %s\n", strerror(errno));
        return 1;
    }
    if (strcmp(argv[1], "at2") == 0) {
        printf("execer at2: execfn %s\n", (const char *)getauxval(AT_EXECFN));
        int fd = open(self, O_RDONLY);
        char *args[] = {self, "0", NULL};
        fflush(stdout);
        fexecve(fd, args, envp);
        printf("  fexecve: %s\n", strerror(errno));
        return 1;
    }
    if (strcmp(argv[1], "fromthread") == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, exec_thread, envp) != 0)
            return 1;
        pthread_join(th, NULL);
        return 0;
    }
    int n = atoi(argv[1]);
    printf("execer round %d: pid %d, %d arguments, execfn %s\n", n, (int)getpid(), argc,
           (const char *)getauxval(AT_EXECFN));
    const char *keep = getenv("EXECER_KEEP"), *gone = getenv("EXECER_GONE");
    if (keep && gone) {
        int k = atoi(keep), g = atoi(gone);
        printf("  descriptor %d after execve: %s; close-on-exec %d: %s\n", k,
               fcntl(k, F_GETFD) >= 0 ? "open" : strerror(errno), g,
               fcntl(g, F_GETFD) >= 0 ? "open" : strerror(errno));
        struct sigaction sa;
        sigaction(SIGUSR1, NULL, &sa);
        printf("  SIGUSR1 action: %s\n", sa.sa_handler == SIG_DFL ? "default" : "still caught");
    }
    fflush(stdout);
    if (n > 0) {
        char *none[] = {"nothing", NULL};
        execve("/nonexistent/program", none, envp);
        printf("  execve of a missing file: %s\n", strerror(errno));
        execve("/dev/null", none, envp);
        printf("  execve of /dev/null: %s\n", strerror(errno));
        int k = open("/dev/null", O_RDONLY), g = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
        char *heap = malloc(1 << 20);
        memset(heap, n, 1 << 20);
        char round[16], ke[32], ge[32];
        snprintf(round, sizeof round, "%d", n - 1);
        snprintf(ke, sizeof ke, "EXECER_KEEP=%d", k);
        snprintf(ge, sizeof ge, "EXECER_GONE=%d", g);
        char **args = calloc((size_t)argc + 1, sizeof *args);
        args[0] = argv[0];
        args[1] = round;
        for (int i = 2; i < argc; i++)
            args[i] = argv[i];
        char *env[] = {ke, ge, NULL};
        fflush(stdout);
        execve(argv[0], args, env);
        printf("  execve of itself: %s\n", strerror(errno));
        return 1;
    }
    if (getenv("EXECER_THREADED")) {
        /* The spinning thread ran this same program: alive, it would go on
         * counting in this image's copy of the counter. */
        unsigned long before = spins;
        for (int i = 0; i < 100; i++)
            sched_yield();
        printf("  the old threads: %s\n", spins == before ? "gone" : "still running");
    }
    if (getenv("EXECER_FROMTHREAD")) {
        /* The caller of the execve, now the only thread, has the pid as its
         * id; its old id names nothing. */
        printf("  after execve from the second thread: gettid() %s the pid; tgkill(pid, pid, 0) %s; "
               "tgkill(pid, pid + 1, 0) %s\n", gettid() == getpid() ? "is" : "is not",
               tgkill(getpid(), getpid(), 0) == 0 ? "finds it" : strerror(errno),
               tgkill(getpid(), getpid() + 1, 0) == 0 ? "finds a thread" : strerror(errno));
    }
    if (argc > 2) {
        char *env[] = {"FROM=execer", NULL};
        execve(argv[2], argv + 2, env);
        printf("  execve of %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    return 7;
}
