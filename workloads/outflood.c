/* workloads/outflood.c: a flood of output. BYTES bytes go to stdout in
 * all, in write(2) calls of at most CALL bytes (default 64 KiB): with one
 * thread the main thread writes them; with THREADS > 1 it starts THREADS
 * writers, each writing its share (the first ones one byte more when
 * BYTES does not divide), and waits in pthread_join for the whole run. A
 * writer's bytes are a pattern of its number and its offset, so every
 * byte says who wrote it and where; which writer's call comes first
 * depends on the interleaving, which a replay must reproduce. BYTES and
 * CALL may end in K or M (KiB, MiB). Every other call is a writev(2) of
 * three pieces (a third, an empty one, the rest). With "stderr" the bytes go to stderr;
 * with "both" the odd-numbered writers' go to stderr, the others' to stdout.
 * Usage: outflood BYTES [THREADS [CALL [stderr|both]]] (1 to 64 threads). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long long share[64], call = 65536;
static int to_stderr;          /* 0 none, 1 all, 2 the odd-numbered writers */

static void *flood(void *arg)
{
    long id = (long)arg;
    int fd = to_stderr == 1 || (to_stderr == 2 && id % 2) ? 2 : 1;
    unsigned long long left = share[id], off = 0, calls = 0;
    size_t size = left < call ? (size_t)left : (size_t)call;
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return (void *)1;
    while (left) {
        size_t n = left < size ? (size_t)left : size;
        for (size_t i = 0; i < n; i++) {
            uint64_t at = off + i;
            buf[i] = (unsigned char)(' ' + (at * 7 + (uint64_t)id * 13 + (at >> 9)) % 95);
        }
        size_t done = 0;
        while (done < n) {
            ssize_t k;
            if (calls++ % 2 && done == 0) {
                struct iovec v[3] = {{buf, n / 3}, {buf + n / 3, 0}, {buf + n / 3, n - n / 3}};
                k = writev(fd, v, 3);
            } else {
                k = write(fd, buf + done, n - done);
            }
            if (k <= 0) {
                free(buf);
                return (void *)1;
            }
            done += (size_t)k;
        }
        left -= n;
        off += n;
    }
    free(buf);
    return NULL;
}

static int size_arg(const char *s, unsigned long long *v)
{
    char *end;
    *v = strtoull(s, &end, 10);
    if (*end == 'K')
        *v <<= 10, end++;
    else if (*end == 'M')
        *v <<= 20, end++;
    return end != s && *end == 0;
}

int main(int argc, char **argv)
{
    unsigned long long bytes;
    long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (argc < 2 || argc > 5 || !size_arg(argv[1], &bytes) || threads < 1 || threads > 64 ||
        (argc > 3 && (!size_arg(argv[3], &call) || call == 0)) ||
        (argc > 4 && strcmp(argv[4], "stderr") != 0 && strcmp(argv[4], "both") != 0)) {
        fprintf(stderr, "usage: outflood BYTES [THREADS [CALL [stderr|both]]]\n");
        return 2;
    }
    if (argc > 4)
        to_stderr = argv[4][0] == 's' ? 1 : 2;
    for (long t = 0; t < threads; t++)
        share[t] = bytes / (unsigned long long)threads +
                   ((unsigned long long)t < bytes % (unsigned long long)threads);
    if (threads == 1)
        return flood((void *)0) != NULL;
    pthread_t th[64];
    for (long t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, flood, (void *)t) != 0) {
            fprintf(stderr, "outflood: pthread_create failed\n");
            return 1;
        }
    int bad = 0;
    for (long t = 0; t < threads; t++) {
        void *r;
        pthread_join(th[t], &r);
        bad |= r != NULL;
    }
    return bad;
}
