/* workloads/pipes.c: a pipe between threads: a writer sends COUNT records
 * (some larger than the pipe holds at once), a reader adds them up and
 * sees end of file when the writer closes; then a non-blocking read on an
 * empty pipe (EAGAIN) and a write with no reader left (EPIPE, SIGPIPE
 * ignored). Usage: pipes [COUNT] (default 300). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fds[2];
static long count;

static void *writer(void *arg)
{
    (void)arg;
    static unsigned char big[100000];
    for (long i = 0; i < count; i++) {
        size_t n = i % 50 == 49 ? sizeof big : 1 + (size_t)(i % 200);
        memset(big, (int)(i & 0xff), n);
        for (size_t done = 0; done < n;) {
            ssize_t w = write(fds[1], big + done, n - done);
            if (w <= 0) {
                printf("write failed: %s\n", strerror(errno));
                exit(1);
            }
            done += (size_t)w;
        }
    }
    close(fds[1]);
    return NULL;
}

int main(int argc, char **argv)
{
    count = argc > 1 ? atol(argv[1]) : 300;
    if (pipe(fds) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    uint64_t bytes = 0, sum = 0;
    unsigned char buf[3000];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof buf)) > 0) {
        bytes += (uint64_t)r;
        for (ssize_t i = 0; i < r; i++)
            sum += buf[i];
    }
    pthread_join(t, NULL);
    uint64_t eb = 0, es = 0;
    for (long i = 0; i < count; i++) {
        uint64_t n = i % 50 == 49 ? 100000 : 1 + (uint64_t)(i % 200);
        eb += n;
        es += n * (uint64_t)(i & 0xff);
    }
    printf("pipes: records %ld bytes %" PRIu64 " sum %" PRIu64 " eof %zd %s\n", count, bytes, sum, r,
           bytes == eb && sum == es ? "ok" : "WRONG");
    close(fds[0]);

    int p2[2];
    if (pipe2(p2, O_NONBLOCK) != 0)
        return 1;
    errno = 0;
    printf("nonblocking empty read %zd %s\n", read(p2[0], buf, 1), errno == EAGAIN ? "EAGAIN" : "?");
    signal(SIGPIPE, SIG_IGN);
    close(p2[0]);
    errno = 0;
    printf("write without reader %zd %s\n", write(p2[1], "x", 1), errno == EPIPE ? "EPIPE" : "?");
    close(p2[1]);
    return bytes == eb && sum == es ? 0 : 1;
}
