/* workloads/shmap.c: threads that share a writable file mapping
 * (MAP_SHARED, PROT_WRITE) of DIR/shared, a file of two pages and 100
 * bytes, and print what a read() of the file and the mapping show, in an
 * order that does not depend on the interleaving:
 *   - THREADS threads each fill their own slice of the first 8 KiB and
 *     add ROUNDS times to a counter in the mapping (atomic adds);
 *   - after msync, pread of the file sees every slice and the counter;
 *   - a store not yet synced is seen by a read() at once (Linux's page
 *     cache); MADV_DONTNEED keeps the mapping's bytes (the file's pages);
 *   - a store past the file's end (inside the last page) does not reach
 *     the file, whose size does not change;
 *   - bytes written to the file with pwrite, write and writev (across a
 *     page boundary) show in the mapping at once;
 *   - ftruncate to a smaller size zeros the mapping past the new end,
 *     which stays zero when the file grows back;
 *   - after munmap, the file holds what the mapping held, and what a
 *     mapping through a descriptor closed since held;
 *   - finally a new mapping gets "END!" stored at offset 8000 and the
 *     program exits without msync or munmap: the exit writes it back
 *     (the caller checks the file).
 * With "alias", it maps the first page twice and prints what the second
 * mmap gives (rnr refuses it with ENODEV; Linux allows it).
 * Usage: shmap DIR [THREADS [ROUNDS]] | shmap DIR alias */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096
#define FILE_SIZE (2 * PAGE + 100)

static unsigned char *map;
static int rounds;
static int nthreads;

static void die(const char *what)
{
    printf("%s: %s\n", what, strerror(errno));
    exit(1);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    size_t slice = 2 * PAGE / (size_t)nthreads;
    memset(map + 64 + (size_t)id * slice, 'a' + id, slice - 64);   /* slice >= 512 */
    _Atomic uint64_t *counter = (_Atomic uint64_t *)(void *)map;
    for (int i = 0; i < rounds; i++)
        atomic_fetch_add(counter, 1);
    return NULL;
}

static unsigned long sum(const unsigned char *p, size_t n)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

static unsigned long file_sum(int fd, size_t *size)
{
    static unsigned char buf[3 * PAGE];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    *size = n < 0 ? 0 : (size_t)n;
    return sum(buf, *size);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shmap DIR [THREADS [ROUNDS]] | shmap DIR alias\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/shared", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("open");
    static unsigned char init[FILE_SIZE];
    for (size_t i = 0; i < sizeof init; i++)
        init[i] = (unsigned char)('0' + i % 10);
    if (write(fd, init, sizeof init) != (ssize_t)sizeof init)
        die("write");
    map = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        die("mmap");
    if (argc > 2 && strcmp(argv[2], "alias") == 0) {
        void *again = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        printf("second mapping of page 0: %s\n", again == MAP_FAILED ? strerror(errno) : "mapped");
        return 0;
    }
    nthreads = argc > 2 ? atoi(argv[2]) : 4;
    rounds = argc > 3 ? atoi(argv[3]) : 200;
    if (nthreads < 1 || nthreads > 16 || rounds < 0)
        return 2;
    printf("mapped: first bytes '%.10s', byte past the end %d\n", (char *)map, map[FILE_SIZE]);
    memset(map, 0, 8);   /* the counter */
    pthread_t th[16];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    printf("msync: %d\n", msync(map, 3 * PAGE, MS_SYNC));
    uint64_t counter = 0;
    if (pread(fd, &counter, sizeof counter, 0) != sizeof counter)
        die("pread");
    size_t size;
    unsigned long s = file_sum(fd, &size);
    printf("file after msync: counter %llu of %d, size %zu, sum %lu, mapping sum %lu\n",
           (unsigned long long)counter, nthreads * rounds, size, s, sum(map, FILE_SIZE));
    map[5000] = 'Z';
    char c = 0;
    if (pread(fd, &c, 1, 5000) != 1)
        die("pread");
    printf("store not synced, read(): '%c'\n", c);
    map[6000] = 'Q';
    printf("madvise dontneed: %d, byte '%c'\n", madvise(map + PAGE, PAGE, MADV_DONTNEED), map[6000]);
    map[FILE_SIZE + 10] = 'X';
    printf("msync async: %d\n", msync(map, 3 * PAGE, MS_ASYNC));
    struct stat st;
    fstat(fd, &st);
    printf("size after a store past the end: %lld\n", (long long)st.st_size);
    /* Written through the descriptor: the mapping shows it at once. */
    if (pwrite(fd, "PW", 2, 100) != 2)
        die("pwrite");
    if (lseek(fd, 4200, SEEK_SET) != 4200 || write(fd, "WR", 2) != 2)
        die("write");
    struct iovec iov[2] = {{"V1", 2}, {"V2", 2}};
    if (lseek(fd, 8190, SEEK_SET) != 8190 || writev(fd, iov, 2) != 4)
        die("writev");
    printf("pwrite, write and writev (across a page) in the mapping: '%.2s' '%.2s' '%.4s'\n",
           (char *)map + 100, (char *)map + 4200, (char *)map + 8190);
    /* Truncated, the mapping's bytes past the new end read as zeros, and
     * stay zeros when the file grows again (the page past the end is not
     * touched while it is past it: Linux would raise SIGBUS). */
    if (ftruncate(fd, 4250) != 0)
        die("ftruncate");
    printf("ftruncate to 4250: mapping at 4200 '%.2s', at 4249 %d, at 4250 %d, at 8190 %d\n",
           (char *)map + 4200, map[4249], map[4250], map[8190]);
    if (ftruncate(fd, FILE_SIZE) != 0)
        die("ftruncate");
    printf("ftruncate back to %d: at 4250 %d, at 8190 %d, at 8192 %d, past the end %d\n", FILE_SIZE,
           map[4250], map[8190], map[8192], map[FILE_SIZE + 10]);
    map[8000] = 'T';
    printf("munmap: %d\n", munmap(map, 3 * PAGE));
    /* Another descriptor maps the last page; the mapping outlives it. */
    int fd2 = open(path, O_RDWR);
    unsigned char *m2 = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, PAGE * 2);
    if (m2 == MAP_FAILED)
        die("mmap 2");
    close(fd2);
    memcpy(m2 + 10, "second", 6);
    printf("munmap of another descriptor's mapping: %d\n", munmap(m2, PAGE));
    s = file_sum(fd, &size);
    char tail[7] = {0};
    pread(fd, tail, 6, 2 * PAGE + 10);
    printf("file after munmap: size %zu, sum %lu, at 8202 '%s'\n", size, s, tail);
    /* Left mapped at exit. */
    unsigned char *m3 = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m3 == MAP_FAILED)
        die("mmap 3");
    memcpy(m3 + 8000, "END!", 4);
    printf("exit with a store not synced\n");
    return 0;
}
