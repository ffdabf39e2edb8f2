/* workloads/fsprobe.c: looks at a directory the way programs do: lists it
 * (opendir/readdir, i.e. getdents64; names printed sorted, since the order
 * is the file system's), checks access() to its entries, stats them, and
 * reads a file with readv into three buffers; then locks (flock and fcntl
 * record locks, which a process alone always gets), fadvise and statfs.
 * Prints nothing that depends on inode numbers, times, the order of the
 * listing or the host's file system.
 * Usage: fsprobe DIR (DIR holding a regular file named data.txt) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fsprobe DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    DIR *d = opendir(dir);
    if (!d) {
        printf("opendir: %s\n", strerror(errno));
        return 1;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256)
        names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    printf("%d entries\n", n);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        int s = stat(path, &st);
        printf("  %-12s %s size %lld; access R %d X %d\n", names[i],
               s != 0 ? "?" : S_ISDIR(st.st_mode) ? "dir " : S_ISREG(st.st_mode) ? "file" : "other",
               s == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1LL,
               access(path, R_OK), access(path, X_OK) == 0);
        free(names[i]);
    }
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/no-such-entry", dir);
    errno = 0;
    printf("access missing: %d %s\n", access(missing, F_OK), strerror(errno));
    errno = 0;
    printf("access bad mode: %d %s\n", access(dir, 0x100), strerror(errno));

    char data[4096];
    snprintf(data, sizeof data, "%s/data.txt", dir);
    int fd = open(data, O_RDONLY);
    if (fd < 0) {
        printf("open data.txt: %s\n", strerror(errno));
        return 1;
    }
    char a[5] = {0}, b[9] = {0}, c[64] = {0};
    struct iovec iov[3] = {{a, 4}, {b, 8}, {c, 63}};
    ssize_t r = readv(fd, iov, 3);
    printf("readv %zd: '%s' '%s' '%s'\n", r, a, b, c);
    r = readv(fd, iov, 3);
    printf("readv at the end: %zd\n", r);

    printf("flock sh %d ex nb %d un %d bad %d\n", flock(fd, LOCK_SH), flock(fd, LOCK_EX | LOCK_NB),
           flock(fd, LOCK_UN), flock(fd, 77) == -1 && errno == EINVAL);
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
    printf("setlk read %d\n", fcntl(fd, F_SETLK, &fl));
    fl.l_type = F_WRLCK;
    errno = 0;
    printf("setlk write on a read-only fd %d %s\n", fcntl(fd, F_SETLK, &fl), strerror(errno));
    fl.l_pid = 12345;
    printf("getlk %d type unlocked %d start kept %d\n", fcntl(fd, F_GETLK, &fl),
           fl.l_type == F_UNLCK, fl.l_start == 0 && fl.l_len == 10);
    fl.l_type = F_UNLCK;
    errno = 0;
    printf("getlk of unlock %d %s\n", fcntl(fd, F_GETLK, &fl), strerror(errno));
    fl.l_type = 9;
    errno = 0;
    printf("setlkw bad type %d %s\n", fcntl(fd, F_SETLKW, &fl), strerror(errno));
    fl.l_type = F_RDLCK;
    fl.l_pid = 0;
    printf("ofd setlk %d\n", fcntl(fd, F_OFD_SETLK, &fl));
    printf("fadvise %d bad %d\n", posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL),
           posix_fadvise(fd, 0, 0, 99));
    struct statfs sf;
    printf("fstatfs %d bsize>0 %d\n", fstatfs(fd, &sf), sf.f_bsize > 0);
    printf("statfs %d\n", statfs(dir, &sf));
    int pfd[2];
    if (pipe(pfd) == 0) {
        printf("fstatfs pipe %d pipefs %d\n", fstatfs(pfd[0], &sf), sf.f_type == 0x50495045);
        printf("fadvise pipe %d\n", posix_fadvise(pfd[0], 0, 0, POSIX_FADV_NORMAL));
        close(pfd[0]);
        close(pfd[1]);
    }
    errno = 0;
    printf("statfs missing %d %s\n", statfs(missing, &sf), strerror(errno));
    close(fd);
    errno = 0;
    printf("readv closed: %zd %s\n", readv(fd, iov, 3), strerror(errno));
    return 0;
}
