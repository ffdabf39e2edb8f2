/* workloads/mmapfile.c: maps a file (FILE, default the program itself) and
 * reads the mapping from several threads at once; also a mapping at an
 * offset, one whose last page runs past the end of the file, a private
 * writable mapping (the file does not change; MADV_DONTNEED brings the
 * file's bytes back), a read-only shared one, and the errors of bad
 * mappings. Prints checksums and errno names only, never addresses, so
 * that any two correct runs print the same.
 * Usage: mmapfile [FILE] [THREADS] */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_LEN (48 * 1024)
#define MAX_THREADS 16

static const uint8_t *map;
static size_t map_len;
static unsigned nthreads;
static uint64_t part[MAX_THREADS];

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Thread T hashes every NTHREADS-th 64-byte line of the mapping, starting
 * at line T: all threads touch every page. */
static void *reader(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    uint64_t h = 0;
    for (size_t at = (size_t)t * 64; at < map_len; at += (size_t)nthreads * 64) {
        size_t n = map_len - at < 64 ? map_len - at : 64;
        h += hash(map + at, n) * (at / 64 + 1);
    }
    part[t] = h;
    return NULL;
}

static void show_error(const char *what, void *p)
{
    printf("%s: %s\n", what, p == MAP_FAILED ? strerror(errno) : "mapped (unexpected)");
    if (p != MAP_FAILED)
        munmap(p, PAGE);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : argv[0];
    nthreads = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
    if (nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "usage: mmapfile [FILE] [THREADS 1..%d]\n", MAX_THREADS);
        return 2;
    }
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        printf("cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t size = (size_t)st.st_size;
    if (size < 4 * PAGE + 100) {
        printf("%s: too small (%zu bytes)\n", path, size);
        return 1;
    }
    map_len = size < MAX_LEN ? size : MAX_LEN;

    /* The whole (first part of the) file, read by every thread at once. */
    void *m = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        printf("mmap: %s\n", strerror(errno));
        return 1;
    }
    map = m;
    pthread_t th[MAX_THREADS];
    for (unsigned t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, reader, (void *)(uintptr_t)t);
    uint64_t total = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        total += part[t];
    }
    uint8_t *copy = malloc(map_len);
    ssize_t got = pread(fd, copy, map_len, 0);
    printf("mapped %zu bytes, %u threads: %016" PRIx64 "; same bytes as pread: %s\n", map_len,
           nthreads, total, got == (ssize_t)map_len && memcmp(copy, map, map_len) == 0 ? "yes" : "no");

    /* At an offset: the file's bytes from there. */
    const uint8_t *o = mmap(NULL, 2 * PAGE + 100, PROT_READ, MAP_PRIVATE, fd, 2 * PAGE);
    if (o == MAP_FAILED) {
        printf("mmap at offset: %s\n", strerror(errno));
        return 1;
    }
    printf("at offset %d: %016" PRIx64 "; same as the first mapping there: %s\n", 2 * PAGE,
           hash(o, 2 * PAGE + 100), memcmp(o, map + 2 * PAGE, 2 * PAGE + 100) == 0 ? "yes" : "no");
    munmap((void *)o, 2 * PAGE + 100);

    /* The file's last page: what lies past the end reads as zeros. */
    size_t last = size & ~(size_t)(PAGE - 1), tail = size - last;
    const uint8_t *e = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, (off_t)last);
    if (e == MAP_FAILED) {
        printf("mmap of the last page: %s\n", strerror(errno));
        return 1;
    }
    size_t zeros = 0;
    for (size_t i = tail; i < PAGE && tail; i++)
        zeros += e[i] == 0;
    printf("last page: %zu bytes of file, %016" PRIx64 ", %zu of %zu bytes past the end are zero\n",
           tail, hash(e, tail), zeros, tail ? PAGE - tail : 0);
    munmap((void *)e, PAGE);

    /* Private and writable: the writes stay in the process. */
    uint8_t *w = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (w == MAP_FAILED) {
        printf("private writable mmap: %s\n", strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < PAGE; i += 7)
        w[i] ^= 0x5a;
    uint8_t first = 0;
    got = pread(fd, &first, 1, 0);
    printf("private write: mapping %02x, file %02x (%zd), first mapping %02x\n", w[0], first, got,
           map[0]);
    /* MADV_DONTNEED drops the private copy: the file's bytes again. */
    int rc = madvise(w, PAGE, MADV_DONTNEED);
    printf("madvise dontneed: %d, then mapping %02x, same as the file: %s\n", rc, w[0],
           memcmp(w, map, PAGE) == 0 ? "yes" : "no");
    printf("mprotect read-only: %d\n", mprotect(w, PAGE, PROT_READ));
    printf("munmap: %d\n", munmap(w, PAGE));

    /* Shared but read-only: allowed on a file opened read-only. */
    const uint8_t *s = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
    if (s == MAP_FAILED) {
        printf("shared read-only mmap: %s\n", strerror(errno));
        return 1;
    }
    printf("shared read-only: %s\n", memcmp(s, map + PAGE, PAGE) == 0 ? "same bytes" : "other bytes");
    munmap((void *)s, PAGE);

    /* Mappings that must fail. */
    show_error("shared writable on a read-only file",
               mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    show_error("offset not page-aligned", mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 100));
    show_error("length 0", mmap(NULL, 0, PROT_READ, MAP_PRIVATE, fd, 0));
    show_error("closed descriptor", mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 99, 0));
    int pfd[2];
    if (pipe(pfd) == 0) {
        show_error("a pipe", mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, pfd[0], 0));
        close(pfd[0]);
        close(pfd[1]);
    }

    /* The mapping outlives its descriptor. */
    close(fd);
    printf("after close: %016" PRIx64 "\n", hash(map, map_len));
    munmap(m, map_len);
    free(copy);
    return 0;
}
