/* workloads/sigthreads.c: signal handlers for signals that come from
 * elsewhere: pthread_kill of a thread blocked in a read (EINTR, or the read
 * runs again under SA_RESTART), of a thread in pause(), of a thread that
 * spins and yields; the interval timer's SIGALRM to a handler (pause()
 * after setitimer, a periodic timer); SIGPIPE's handler; and
 * pthread_cancel of threads blocked in read, pthread_cond_wait and
 * nanosleep, with their cleanup handlers. The waits before each signal
 * let the target block first, on Linux as in rnr.
 *
 * Usage: sigthreads */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, usr2, alrm, pipes, stop_spin;
static int fds[2];

static void on_usr1(int s) { (void)s; usr1++; }
static void on_usr2(int s) { (void)s; usr2++; }
static void on_alrm(int s) { (void)s; alrm++; }
static void on_pipe(int s) { (void)s; pipes++; }
static void on_stop(int s) { (void)s; stop_spin = 1; }

static void set(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void settle(void)
{
    struct timespec ms = {0, 20 * 1000 * 1000};
    nanosleep(&ms, NULL);
}

static void *reader(void *arg)
{
    (void)arg;
    char c = 0;
    ssize_t n = read(fds[0], &c, 1);
    static char out[64];
    snprintf(out, sizeof out, "read %zd %s '%c'", n, n < 0 ? strerror(errno) : "ok", n > 0 ? c : '-');
    return out;
}

static void *pauser(void *arg)
{
    (void)arg;
    int r = pause();
    static char out[64];
    snprintf(out, sizeof out, "pause %d %s", r, strerror(errno));
    return out;
}

static void *spinner(void *arg)
{
    (void)arg;
    while (!stop_spin)
        sched_yield();
    return "spinner stopped";
}

static void cleanup(void *what) { printf("cleanup: %s\n", (const char *)what); }

static void *cancel_read(void *arg)
{
    (void)arg;
    char c;
    pthread_cleanup_push(cleanup, "read");
    if (read(fds[0], &c, 1) < 0)
        printf("read returned\n");
    pthread_cleanup_pop(0);
    return NULL;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void unlock(void *arg)
{
    pthread_mutex_unlock(arg);
    printf("cleanup: cond_wait (mutex unlocked)\n");
}

static void *cancel_cond(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock, &m);
    for (;;)
        pthread_cond_wait(&cv, &m);
    pthread_cleanup_pop(1);
    return NULL;
}

static void *cancel_sleep(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, "nanosleep");
    struct timespec s = {100, 0};
    nanosleep(&s, NULL);
    pthread_cleanup_pop(0);
    return NULL;
}

static void join(pthread_t t, const char *what)
{
    void *r;
    pthread_join(t, &r);
    printf("%s: %s\n", what, r == PTHREAD_CANCELED ? "canceled" : r ? (const char *)r : "(null)");
}

int main(void)
{
    pthread_t t;
    if (pipe(fds) != 0)
        return 1;

    /* A blocked read: EINTR without SA_RESTART. */
    set(SIGUSR1, on_usr1, 0);
    pthread_create(&t, NULL, reader, NULL);
    settle();
    pthread_kill(t, SIGUSR1);
    join(t, "no SA_RESTART");
    /* With SA_RESTART the read runs again and gets the byte. */
    set(SIGUSR1, on_usr1, SA_RESTART);
    pthread_create(&t, NULL, reader, NULL);
    settle();
    pthread_kill(t, SIGUSR1);
    settle();
    if (write(fds[1], "x", 1) != 1)
        return 1;
    join(t, "SA_RESTART");
    printf("usr1 handler runs %d\n", (int)usr1);

    /* pause() ends with EINTR after the handler. */
    set(SIGUSR2, on_usr2, 0);
    pthread_create(&t, NULL, pauser, NULL);
    settle();
    pthread_kill(t, SIGUSR2);
    join(t, "pauser");
    printf("usr2 handler runs %d\n", (int)usr2);

    /* A spinning thread takes it at its next system call (a short wait:
     * every turn of its loop is a system call). */
    set(SIGUSR1, on_stop, 0);
    pthread_create(&t, NULL, spinner, NULL);
    struct timespec us = {0, 50 * 1000};
    nanosleep(&us, NULL);
    pthread_kill(t, SIGUSR1);
    join(t, "spinner");

    /* The timer: pause() until SIGALRM, then a periodic timer. */
    set(SIGALRM, on_alrm, 0);
    struct itimerval it = {{0, 0}, {0, 10000}};
    setitimer(ITIMER_REAL, &it, NULL);
    int r = pause();
    printf("pause after setitimer %d %s, alarm handler runs %d\n", r, strerror(errno), (int)alrm);
    struct itimerval every = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_REAL, &every, NULL);
    while (alrm < 4)
        pause();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("periodic: alarm handler runs %d\n", (int)alrm);

    /* SIGPIPE's handler. */
    set(SIGPIPE, on_pipe, 0);
    int q[2];
    if (pipe(q) != 0)
        return 1;
    close(q[0]);
    ssize_t w = write(q[1], "y", 1);
    int e = errno;
    getpid();
    printf("write without reader %zd %s, sigpipe handler runs %d\n", w, strerror(e), (int)pipes);

    /* pthread_cancel of threads blocked in cancellation points. */
    pthread_create(&t, NULL, cancel_read, NULL);
    settle();
    pthread_cancel(t);
    join(t, "blocked in read");
    pthread_create(&t, NULL, cancel_cond, NULL);
    settle();
    pthread_cancel(t);
    join(t, "blocked in pthread_cond_wait");
    pthread_mutex_lock(&m);
    printf("mutex free again\n");
    pthread_mutex_unlock(&m);
    pthread_create(&t, NULL, cancel_sleep, NULL);
    settle();
    pthread_cancel(t);
    join(t, "blocked in nanosleep");
    return 0;
}
