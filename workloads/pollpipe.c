/* workloads/pollpipe.c: poll(2) on pipes between threads, in an order that
 * does not depend on timing: nothing ready, a write end ready, a timeout
 * with nobody writing, a wait that another thread's write ends (ROUNDS
 * times), end of file (HUP), a write end with no reader left (ERR), a
 * descriptor that is not open (NVAL) and a negative one (ignored), a
 * regular file, and poll with no descriptors as a sleep; then select(2):
 * nothing ready, write end, a timeout (the time left written back as 0),
 * one more wait for the writer's byte, and a descriptor not open (EBADF).
 * Usage: pollpipe [ROUNDS] (default 3). */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int a[2], b[2], go[2];
static long rounds;

/* Waits for main's word on GO, then writes one byte into B; ROUNDS times. */
static void *writer(void *arg)
{
    (void)arg;
    char c;
    for (long i = 0; i <= rounds; i++) {
        if (read(go[0], &c, 1) != 1)
            return NULL;
        c = (char)('a' + i % 26);
        if (write(b[1], &c, 1) != 1)
            return NULL;
    }
    return NULL;
}

static void show(const char *what, int n, const struct pollfd *p, int count)
{
    printf("%s: %d", what, n);
    for (int i = 0; i < count; i++)
        printf(" %#x", (unsigned)p[i].revents);
    printf("\n");
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 3;
    signal(SIGPIPE, SIG_IGN);
    if (pipe(a) || pipe(b) || pipe(go)) {
        perror("pipe");
        return 1;
    }
    struct pollfd p[3] = {{a[0], POLLIN, 0}, {b[0], POLLIN, 0}};
    show("nothing ready", poll(p, 2, 0), p, 2);
    struct pollfd w = {a[1], POLLOUT, 0};
    show("write end", poll(&w, 1, 0), &w, 1);
    p[0].revents = 0x7fff;
    show("timeout 20 ms", poll(p, 1, 20), p, 1);

    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    for (long i = 0; i < rounds; i++) {
        if (write(go[1], "x", 1) != 1)
            return 1;
        int n = poll(p, 2, -1);
        char c = 0;
        if (p[1].revents & POLLIN && read(b[0], &c, 1) != 1)
            return 1;
        printf("round %ld: %d %#x %#x '%c'\n", i, n, (unsigned)p[0].revents, (unsigned)p[1].revents, c);
    }
    fd_set r, w2;
    FD_ZERO(&r);
    FD_SET(a[0], &r);
    FD_SET(b[0], &r);
    struct timeval tv = {0, 0};
    printf("select nothing ready: %d\n", select(b[0] + 1, &r, NULL, NULL, &tv));
    FD_ZERO(&w2);
    FD_SET(a[1], &w2);
    printf("select write end: %d %d\n", select(a[1] + 1, NULL, &w2, NULL, &tv), FD_ISSET(a[1], &w2));
    FD_ZERO(&r);
    FD_SET(a[0], &r);
    tv.tv_usec = 15000;
    int n = select(a[0] + 1, &r, NULL, NULL, &tv);
    printf("select timeout: %d, set empty %d, time left 0: %d\n", n, !FD_ISSET(a[0], &r),
           tv.tv_sec == 0 && tv.tv_usec == 0);
    if (write(go[1], "x", 1) != 1)
        return 1;
    FD_ZERO(&r);
    FD_SET(a[0], &r);
    FD_SET(b[0], &r);
    n = select(b[0] + 1, &r, NULL, NULL, NULL);
    char c = 0;
    if (FD_ISSET(b[0], &r) && read(b[0], &c, 1) != 1)
        return 1;
    printf("select wait: %d a %d b %d '%c'\n", n, FD_ISSET(a[0], &r), FD_ISSET(b[0], &r), c);
    /* A descriptor below 64: Linux's select checks only the descriptors
     * its table has room for (at least 64), so one above that is ignored
     * (0) by a process that never opened one so high, and EBADF in one that
     * did. Below 64 it is EBADF in every process. */
    FD_ZERO(&r);
    FD_SET(60, &r);
    tv.tv_usec = 0;
    printf("select not open: %d %s\n", select(61, &r, NULL, NULL, &tv), strerror(errno));
    pthread_join(t, NULL);

    close(a[1]);
    show("writer closed", poll(p, 1, 0), p, 1);
    close(b[0]);
    struct pollfd nr = {b[1], POLLOUT, 0};
    show("reader closed", poll(&nr, 1, 0), &nr, 1);
    struct pollfd odd[2] = {{99, POLLIN, 0}, {-1, POLLIN, 0x55}};
    show("not open, negative", poll(odd, 2, 0), odd, 2);
    int fd = open(argc > 2 ? argv[2] : argv[0], O_RDONLY);
    struct pollfd file = {fd, POLLIN | POLLOUT, 0};
    show("regular file", poll(&file, 1, 0), &file, 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    n = poll(NULL, 0, 10);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("sleep 10 ms: %d, at least 10 ms passed: %d\n", n, ms >= 10);
    return 0;
}
