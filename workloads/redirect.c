/* workloads/redirect.c: moves the standard streams between descriptors
 * (dup, dup2, fcntl F_DUPFD, close, /dev/null opened at descriptor 1) and
 * writes through each, so that what reaches stdout and stderr depends on
 * which stream a descriptor held at the time of each write. With THREADS
 * > 0, that many threads write through two duplicated descriptors while
 * the main thread moves one of them from stdout to stderr once a first
 * line went through it: which of the other lines go where depends on the
 * interleaving (a replay must reproduce it).
 * Usage: redirect [THREADS] (default 0: one thread, the same output on
 * every correct system) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 16

static int via_dup, via_20, err_copy, out_copy;
static _Atomic int lines_via_20;

static void say(int fd, const char *s) { (void)!write(fd, s, strlen(s)); }

/* Reports on stdout what an empty write to FD returned. */
static void try_write(const char *what, int fd)
{
    char line[160];
    ssize_t r = write(fd, "", 0);
    snprintf(line, sizeof line, "%s: %s\n", what, r < 0 ? strerror(errno) : "0 bytes");
    say(1, line);
}

static void *writer(void *arg)
{
    int i = (int)(long)arg;
    char line[64];
    for (int k = 0; k < 4; k++) {
        snprintf(line, sizeof line, "thread %d line %d\n", i, k);
        say(k % 2 ? via_20 : via_dup, line);
        if (k % 2)
            lines_via_20++;
    }
    /* Each thread points descriptor 30 at stdout or stderr: the last one
     * to do so decides where the main thread's line through it goes. */
    dup2(i % 2 ? err_copy : out_copy, 30);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    if (threads < 0 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: redirect [THREADS 0..%d]\n", MAX_THREADS);
        return 2;
    }
    int saved = dup(1);
    via_dup = dup(1);
    say(via_dup, "via dup of stdout\n");
    int e = fcntl(2, F_DUPFD, 10);
    char line[96];
    snprintf(line, sizeof line, "fcntl F_DUPFD of stderr gave one >= 10: %d\n", e >= 10);
    say(1, line);
    say(e, "via fcntl dup of stderr\n");
    via_20 = dup2(1, 20);
    say(20, "via dup2 of stdout at 20\n");

    err_copy = e;
    out_copy = saved;
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, writer, (void *)(long)i);
    /* Descriptor 20 becomes stderr while the threads write through it:
     * once one line went through it, the others race with the switch. */
    while (threads && lines_via_20 == 0)
        sched_yield();
    dup2(e, 20);
    say(20, "via 20, now stderr\n");
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    if (threads)
        say(30, "via 30, where the last thread pointed it\n");

    close(via_dup);
    try_write("write to a closed dup", via_dup);
    close(1);
    int n = open("/dev/null", O_WRONLY);
    say(n, "this line goes to /dev/null, not to stdout\n");
    dup2(saved, 1);
    snprintf(line, sizeof line, "/dev/null opened at %d; stdout restored\n", n);
    say(1, line);
    close(n == 1 ? 99 : n);
    close(2);
    try_write("write to closed stderr", 2);
    dup2(e, 2);
    say(2, "stderr restored\n");
    errno = 0;
    snprintf(line, sizeof line, "dup2 onto itself %d, dup3 onto itself: %s\n", dup2(1, 1),
             dup3(1, 1, 0) < 0 ? strerror(errno) : "allowed");
    say(1, line);
    return 0;
}
