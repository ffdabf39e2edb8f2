/* workloads/fsmut.c: a program that changes files in DIR from several
 * threads and prints what each call gives, in an order that does not
 * depend on the interleaving:
 *   - a small key-value file replaced atomically (write a temporary file,
 *     ftruncate, fallocate, fsync/fdatasync/sync_file_range, rename over
 *     the old one) by every thread;
 *   - two counters in one file, incremented by every thread through its
 *     own descriptor under an OFD write lock (F_OFD_SETLKW) and under
 *     flock(LOCK_EX): a lost update means the locks did not exclude;
 *   - lock semantics: OFD locks conflict between descriptions, POSIX locks
 *     of one process never conflict with each other but do with OFD locks,
 *     F_GETLK/F_OFD_GETLK report the (merged) conflicting lock, a close
 *     drops the process's POSIX locks, flock conversion is not atomic;
 *   - blocking: a thread waits in F_OFD_SETLKW and in flock until the
 *     holder lets go (it checks the holder had let go);
 *   - truncate, fchmod, fchmodat, fchown/fchownat/lchown (to the owner
 *     the file has), utimensat, linkat, symlinkat,
 *     readlinkat, mkdirat, unlinkat (AT_REMOVEDIR), renameat2
 *     (RENAME_NOREPLACE);
 *   - landlock_create_ruleset: ENOSYS (an old kernel); prctl's
 *     no_new_privs (inherited by a new thread) and parent-death signal
 *     (not inherited).
 * Everything it makes is removed at the end: DIR is left as it was.
 * With "refused", it instead tries each changing call on DIR/victim (which
 * must exist) and prints the errors: run without --allow-write DIR, every
 * call must fail and the file stay as it was. With "via OP", it makes one
 * change through DIR/victim, a symbolic link: truncate, chmod, touch
 * (utimensat), link (linkat following it to DIR/hard), unlink (the link),
 * chown (to the owner it has) or give (chown to another owner).
 * With "scratch" (DIR unused), it works in /tmp, as under rnr's
 * --private-tmp: lists it (empty at the start), makes a tmpfile and two
 * threads' mkstemp files, renames, makes and removes a directory, and
 * prints the mkstemp names, then removes what it made but one file.
 * With "stuck", the main thread holds an OFD lock on DIR/stuck and joins a
 * thread that waits for it with F_OFD_SETLKW: both wait forever.
 * With "now", it sets DIR/now's times to UTIME_NOW and prints its mtime.
 * Usage: fsmut DIR [THREADS [ROUNDS]] | fsmut DIR refused | fsmut DIR via OP
 *        | fsmut DIR scratch | fsmut DIR stuck | fsmut DIR now */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static int rounds = 10;
static char path_kv[4096], path_ctr[4096], path_locks[4096];

static const char *rc(int r) { return r == 0 ? "0" : strerror(errno); }

static void path(char *out, const char *name) { snprintf(out, 4096, "%s/%s", dir, name); }

static void die(const char *what)
{
    printf("%s: %s\n", what, strerror(errno));
    exit(1);
}

static int ofd_lock(int fd, int cmd, short type, off_t start, off_t len)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &l);
}

/* A counter of 8 bytes at OFF, read, incremented and written back. */
static void bump(int fd, off_t off)
{
    uint64_t v = 0;
    if (pread(fd, &v, sizeof v, off) < 0)
        die("pread");
    v++;
    if (pwrite(fd, &v, sizeof v, off) != (ssize_t)sizeof v)
        die("pwrite");
}

static void *worker(void *arg)
{
    long id = (long)arg;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path_kv, id);
    int fd = open(path_ctr, O_RDWR);
    int fd2 = open(path_ctr, O_RDWR);
    if (fd < 0 || fd2 < 0)
        die("open counters");
    for (int i = 0; i < rounds; i++) {
        /* The key-value file: a new version made aside, then renamed over. */
        int t = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (t < 0)
            die("open tmp");
        char rec[64];
        int n = snprintf(rec, sizeof rec, "writer=%ld round=%d padding-padding\n", id, i);
        if (write(t, rec, (size_t)n) != n)
            die("write tmp");
        if (ftruncate(t, n - 16) < 0)   /* drop the padding */
            die("ftruncate");
        if (write(t, "\n", 1) != 1)     /* at the old offset: a hole, then a newline */
            die("write tail");
        if (fallocate(t, 0, 0, 64) < 0 && errno != EOPNOTSUPP)
            die("fallocate");
        if (ftruncate(t, n - 16) < 0 || pwrite(t, "\n", 1, n - 16) != 1)
            die("ftruncate 2");
        if ((i % 3 == 0 ? fsync(t) : i % 3 == 1 ? fdatasync(t) : sync_file_range(t, 0, 0, 0)) < 0)
            die("sync");
        close(t);
        if (rename(tmp, path_kv) < 0)
            die("rename");
        /* Counter 0 under an OFD lock of this thread's own description. */
        if (ofd_lock(fd, F_OFD_SETLKW, F_WRLCK, 0, 8) < 0)
            die("F_OFD_SETLKW");
        bump(fd, 0);
        if (ofd_lock(fd, F_OFD_SETLK, F_UNLCK, 0, 8) < 0)
            die("F_OFD_SETLK unlock");
        /* Counter 1 under flock on the other description. */
        if (flock(fd2, LOCK_EX) < 0)
            die("flock");
        bump(fd2, 8);
        if (flock(fd2, LOCK_UN) < 0)
            die("flock unlock");
    }
    close(fd);
    close(fd2);
    return NULL;
}

static void getlk(const char *what, int fd, int cmd, short type, off_t start, off_t len)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    if (fcntl(fd, cmd, &l) < 0) {
        printf("%s: %s\n", what, strerror(errno));
        return;
    }
    if (l.l_type == F_UNLCK)
        printf("%s: unlocked\n", what);
    else
        printf("%s: %s %lld+%lld pid %s\n", what, l.l_type == F_WRLCK ? "write" : "read",
               (long long)l.l_start, (long long)l.l_len,
               l.l_pid == getpid() ? "self" : l.l_pid == -1 ? "-1 (ofd)" : "other");
}

static void semantics(void)
{
    int fd1 = open(path_locks, O_RDWR | O_CREAT, 0644);
    int fd2 = open(path_locks, O_RDWR);
    if (fd1 < 0 || fd2 < 0)
        die("open locks");
    printf("ofd write 0+10 on fd1: %s\n", rc(ofd_lock(fd1, F_OFD_SETLK, F_WRLCK, 0, 10)));
    printf("ofd read 5+1 on fd2: %s\n", rc(ofd_lock(fd2, F_OFD_SETLK, F_RDLCK, 5, 1)));
    int d1 = dup(fd1);
    printf("ofd read 5+1 on dup(fd1): %s\n", rc(ofd_lock(d1, F_OFD_SETLK, F_RDLCK, 5, 1)));
    getlk("ofd getlk fd2 0+100", fd2, F_OFD_GETLK, F_WRLCK, 0, 100);
    getlk("ofd getlk fd1 0+100", fd1, F_OFD_GETLK, F_WRLCK, 0, 100);
    printf("posix write 100+10 on fd1: %s\n", rc(ofd_lock(fd1, F_SETLK, F_WRLCK, 100, 10)));
    printf("posix write 100+10 on fd2: %s\n", rc(ofd_lock(fd2, F_SETLK, F_WRLCK, 100, 10)));
    getlk("posix getlk fd2 100+10", fd2, F_GETLK, F_WRLCK, 100, 10);
    getlk("ofd getlk fd2 100+100", fd2, F_OFD_GETLK, F_RDLCK, 100, 100);
    printf("posix write 0+5 (ofd holds it): %s\n", rc(ofd_lock(fd2, F_SETLK, F_WRLCK, 0, 5)));
    getlk("posix getlk 0+0", fd2, F_GETLK, F_RDLCK, 0, 0);
    printf("posix read 200+10: %s\n", rc(ofd_lock(fd1, F_SETLK, F_RDLCK, 200, 10)));
    printf("posix read 210+10: %s\n", rc(ofd_lock(fd2, F_SETLK, F_RDLCK, 210, 10)));
    getlk("ofd getlk 205+10 (merged)", fd2, F_OFD_GETLK, F_WRLCK, 205, 10);
    printf("posix unlock 212+3: %s\n", rc(ofd_lock(fd1, F_SETLK, F_UNLCK, 212, 3)));
    getlk("ofd getlk 212+8 (split)", fd2, F_OFD_GETLK, F_WRLCK, 212, 8);
    int fd3 = open(path_locks, O_RDONLY);
    close(fd3);
    getlk("ofd getlk 100+200 after a close", fd2, F_OFD_GETLK, F_WRLCK, 100, 200);
    printf("ofd unlock fd1: %s\n", rc(ofd_lock(fd1, F_OFD_SETLK, F_UNLCK, 0, 0)));
    getlk("ofd getlk fd2 0+0", fd2, F_OFD_GETLK, F_WRLCK, 0, 0);
    printf("ofd write on a read-only fd: %s\n",
           rc(ofd_lock(fd3 = open(path_locks, O_RDONLY), F_OFD_SETLK, F_WRLCK, 0, 1)));
    close(fd3);
    /* flock: per description, independent of fcntl locks. */
    printf("flock ex fd1: %s\n", rc(flock(fd1, LOCK_EX | LOCK_NB)));
    printf("flock sh fd2: %s\n", rc(flock(fd2, LOCK_SH | LOCK_NB)));
    printf("ofd write fd2 (flock apart): %s\n", rc(ofd_lock(fd2, F_OFD_SETLK, F_WRLCK, 0, 1)));
    int d = dup(fd1);
    printf("flock sh dup(fd1): %s\n", rc(flock(d, LOCK_SH | LOCK_NB)));
    printf("flock sh fd2: %s\n", rc(flock(fd2, LOCK_SH | LOCK_NB)));
    printf("flock ex fd1 (fd2 shares): %s\n", rc(flock(fd1, LOCK_EX | LOCK_NB)));
    printf("flock ex fd2 (fd1 lost its lock): %s\n", rc(flock(fd2, LOCK_EX | LOCK_NB)));
    close(d);
    close(d1);
    close(fd1);
    printf("flock ex reopened (fd2 holds): %s\n",
           rc(flock(fd1 = open(path_locks, O_RDONLY), LOCK_EX | LOCK_NB)));
    close(fd2);   /* its description's last descriptor: its locks go */
    printf("flock ex after fd2 closed: %s\n", rc(flock(fd1, LOCK_EX | LOCK_NB)));
    close(fd1);
    printf("flock bad op: %s\n", rc(flock(0, 3)));
    unlink(path_locks);
}

/* Blocking: the holder sets released before it lets go; the waiter must
 * see it set once its blocking call returns. */
static atomic_int released, waiting;
static int holder_fd;

static void *waiter(void *arg)
{
    int use_flock = (int)(long)arg;
    int fd = open(path_locks, O_RDWR);
    atomic_store(&waiting, 1);
    int r = use_flock ? flock(fd, LOCK_EX) : ofd_lock(fd, F_OFD_SETLKW, F_WRLCK, 0, 0);
    int was = atomic_load(&released);
    printf("%s waiter: %s, holder had let go: %s\n", use_flock ? "flock" : "ofd", rc(r),
           was ? "yes" : "no");
    close(fd);
    return NULL;
}

static void blocking(int use_flock)
{
    holder_fd = open(path_locks, O_RDWR | O_CREAT, 0644);
    if (holder_fd < 0)
        die("open holder");
    if (use_flock ? flock(holder_fd, LOCK_EX) : ofd_lock(holder_fd, F_OFD_SETLK, F_WRLCK, 0, 0))
        die("hold");
    atomic_store(&released, 0);
    atomic_store(&waiting, 0);
    pthread_t th;
    pthread_create(&th, NULL, waiter, (void *)(long)use_flock);
    while (!atomic_load(&waiting))
        sched_yield();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);   /* time for the waiter to block */
    atomic_store(&released, 1);
    close(holder_fd);
    pthread_join(th, NULL);
    unlink(path_locks);
}

static void files(void)
{
    char a[4096], b[4096], s[4096], sub[4096], inner[4200], target[4096];
    path(a, "a");
    path(b, "b");
    path(s, "s");
    path(sub, "sub");
    snprintf(inner, sizeof inner, "%s/x", sub);
    int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "0123456789", 10) != 10)
        die("make a");
    struct stat st;
    printf("truncate a 4: %s\n", rc(truncate(a, 4)));
    fstat(fd, &st);
    printf("size %lld\n", (long long)st.st_size);
    printf("truncate -1: %s\n", rc(truncate(a, -1)));
    printf("fchmod 640: %s\n", rc(fchmod(fd, 0640)));
    fstat(fd, &st);
    printf("mode %o\n", (unsigned)(st.st_mode & 07777));
    printf("fchmodat 604: %s\n", rc(fchmodat(AT_FDCWD, a, 0604, 0)));
    stat(a, &st);
    printf("mode %o\n", (unsigned)(st.st_mode & 07777));
    printf("fchown unchanged: %s\n", rc(fchown(fd, (uid_t)-1, (gid_t)-1)));
    printf("chown to its owner: %s\n", rc(fchownat(AT_FDCWD, a, st.st_uid, st.st_gid, 0)));
    printf("fchownat bad flags: %s\n", rc(fchownat(AT_FDCWD, a, (uid_t)-1, (gid_t)-1, 0x8000)));
    struct timespec times[2] = {{1000000, 500}, {2000000, 600}};
    printf("utimensat: %s\n", rc(utimensat(AT_FDCWD, a, times, 0)));
    stat(a, &st);
    printf("mtime %lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    times[1].tv_nsec = UTIME_OMIT;
    times[0].tv_sec = 3000000;
    printf("futimens omit mtime: %s\n", rc(futimens(fd, times)));
    fstat(fd, &st);
    printf("mtime %lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    times[1].tv_nsec = 1000000000;
    printf("utimensat bad nsec: %s\n", rc(utimensat(AT_FDCWD, a, times, 0)));
    printf("fallocate 100: %s\n", rc(fallocate(fd, 0, 0, 100)));
    fstat(fd, &st);
    printf("size %lld\n", (long long)st.st_size);
    printf("fallocate len 0: %s\n", rc(fallocate(fd, 0, 0, 0)));
    printf("sync_file_range bad flags: %s\n", rc(sync_file_range(fd, 0, 0, 8)));
    close(fd);
    printf("link a b: %s\n", rc(link(a, b)));
    stat(a, &st);
    printf("links %lu\n", (unsigned long)st.st_nlink);
    printf("link a b again: %s\n", rc(link(a, b)));
    printf("symlink: %s\n", rc(symlink("a", s)));
    printf("lchown: %s\n", rc(lchown(s, (uid_t)-1, (gid_t)-1)));
    ssize_t n = readlink(s, target, sizeof target - 1);
    target[n < 0 ? 0 : n] = 0;
    printf("readlink %s\n", target);
    printf("mkdir sub: %s\n", rc(mkdirat(AT_FDCWD, sub, 0755)));
    printf("rename b sub/x: %s\n", rc(renameat2(AT_FDCWD, b, AT_FDCWD, inner, 0)));
    printf("rename a sub/x noreplace: %s\n",
           rc(renameat2(AT_FDCWD, a, AT_FDCWD, inner, RENAME_NOREPLACE)));
    printf("rename flags 8: %s\n", rc(renameat2(AT_FDCWD, a, AT_FDCWD, inner, 8)));
    printf("rmdir sub (not empty): %s\n", rc(unlinkat(AT_FDCWD, sub, AT_REMOVEDIR)));
    printf("unlink sub (a directory): %s\n", rc(unlinkat(AT_FDCWD, sub, 0)));
    printf("unlink sub/x: %s\n", rc(unlinkat(AT_FDCWD, inner, 0)));
    printf("rmdir sub: %s\n", rc(unlinkat(AT_FDCWD, sub, AT_REMOVEDIR)));
    printf("unlink s: %s\n", rc(unlink(s)));
    stat(a, &st);
    printf("links %lu\n", (unsigned long)st.st_nlink);
    printf("unlink a: %s\n", rc(unlink(a)));
    printf("unlink a again: %s\n", rc(unlink(a)));
}

static int refused(void)
{
    char v[4096], o[4096];
    path(v, "victim");
    path(o, "other");
    int fd = open(v, O_RDONLY);
    if (fd < 0)
        die("open victim");
    struct timespec times[2] = {{1, 0}, {1, 0}};
    printf("truncate: %s\n", rc(truncate(v, 0)));
    printf("fchmod: %s\n", rc(fchmod(fd, 0600)));
    printf("fchmodat: %s\n", rc(fchmodat(AT_FDCWD, v, 0600, 0)));
    printf("fchown: %s\n", rc(fchown(fd, (uid_t)-1, (gid_t)-1)));
    printf("chown: %s\n", rc(chown(v, (uid_t)-1, (gid_t)-1)));
    printf("utimensat: %s\n", rc(utimensat(AT_FDCWD, v, times, 0)));
    printf("futimens: %s\n", rc(futimens(fd, times)));
    printf("link: %s\n", rc(link(v, o)));
    printf("symlink: %s\n", rc(symlink(v, o)));
    printf("unlink: %s\n", rc(unlink(v)));
    printf("rename: %s\n", rc(rename(v, o)));
    printf("mkdir: %s\n", rc(mkdir(o, 0755)));
    printf("fallocate on a read-only fd: %s\n", rc(fallocate(fd, 0, 0, 100)));
    close(fd);
    return 0;
}

/* A new thread: no_new_privs inherited, the parent-death signal not. */
static void *privs(void *arg)
{
    (void)arg;
    int sig = -1;
    prctl(PR_GET_PDEATHSIG, &sig);
    printf("thread: no_new_privs %d pdeathsig %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), sig);
    return NULL;
}

/* chown of PATH to another owner than its own: an unprivileged guest may
 * not (EPERM), whoever runs rnr. */
static int give(const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return -1;
    return chown(p, st.st_uid + 1, (gid_t)-1);
}

static int via(const char *op)
{
    char v[4096], h[4096];
    path(v, "victim");
    path(h, "hard");
    struct timespec times[2] = {{1, 0}, {1, 0}};
    int r = strcmp(op, "truncate") == 0 ? truncate(v, 0)
            : strcmp(op, "chmod") == 0  ? chmod(v, 0600)
            : strcmp(op, "touch") == 0  ? utimensat(AT_FDCWD, v, times, 0)
            : strcmp(op, "link") == 0   ? linkat(AT_FDCWD, v, AT_FDCWD, h, AT_SYMLINK_FOLLOW)
            : strcmp(op, "unlink") == 0 ? unlink(v)
            : strcmp(op, "chown") == 0  ? chown(v, (uid_t)-1, (gid_t)-1)
            : strcmp(op, "give") == 0   ? give(v)
                                        : (errno = EINVAL, -1);
    printf("%s: %s\n", op, rc(r));
    return 0;
}

static int tmp_entries(void)
{
    DIR *d = opendir("/tmp");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void *stemp(void *arg)
{
    char *name = arg;
    int fd = mkstemp(name);
    if (fd < 0 || write(fd, name, strlen(name)) < 0)
        die("mkstemp");
    close(fd);
    return NULL;
}

static int scratch(void)
{
    printf("entries at the start %d\n", tmp_entries());
    FILE *f = tmpfile();
    if (!f) {
        printf("tmpfile: %s\n", strerror(errno));
        return 1;
    }
    char b[16] = {0};
    fputs("scratch", f);
    rewind(f);
    printf("tmpfile read back '%s'\n", fgets(b, sizeof b, f) ? b : "");
    fclose(f);
    char n1[] = "/tmp/oneXXXXXX", n2[] = "/tmp/twoXXXXXX";
    pthread_t a, c;
    pthread_create(&a, NULL, stemp, n1);
    pthread_create(&c, NULL, stemp, n2);
    pthread_join(a, NULL);
    pthread_join(c, NULL);
    printf("mkstemp %s %s\n", n1, n2);
    printf("entries %d\n", tmp_entries());
    printf("mkdir /tmp/d %s\n", rc(mkdir("/tmp/d", 0700)));
    printf("rename into it %s\n", rc(rename(n1, "/tmp/d/one")));
    struct stat st;
    printf("stat %s size %lld\n", rc(stat("/tmp/d/one", &st)), (long long)st.st_size);
    printf("unlink %s rmdir %s\n", rc(unlink("/tmp/d/one")), rc(rmdir("/tmp/d")));
    printf("entries at the end %d\n", tmp_entries());
    return 0;
}

static void *stuck_waiter(void *arg)
{
    int fd = open(arg, O_RDWR);
    ofd_lock(fd, F_OFD_SETLKW, F_WRLCK, 0, 0);
    printf("the waiter got the lock\n");
    return NULL;
}

static int now(void)
{
    char p[4096];
    path(p, "now");
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    struct stat st;
    if (fd < 0 || futimens(fd, NULL) < 0 || fstat(fd, &st) < 0)
        die("now");
    printf("mtime %lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    close(fd);
    unlink(p);
    return 0;
}

static int stuck(void)
{
    char p[4096];
    path(p, "stuck");
    int fd = open(p, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ofd_lock(fd, F_OFD_SETLK, F_WRLCK, 0, 0) < 0)
        die("stuck lock");
    printf("holding the lock\n");
    fflush(stdout);
    pthread_t th;
    pthread_create(&th, NULL, stuck_waiter, p);
    pthread_join(th, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fsmut DIR [THREADS [ROUNDS]] | fsmut DIR refused\n");
        return 2;
    }
    dir = argv[1];
    if (argc > 2 && strcmp(argv[2], "refused") == 0)
        return refused();
    if (argc > 2 && strcmp(argv[2], "scratch") == 0)
        return scratch();
    if (argc > 2 && strcmp(argv[2], "stuck") == 0)
        return stuck();
    if (argc > 2 && strcmp(argv[2], "now") == 0)
        return now();
    if (argc > 3 && strcmp(argv[2], "via") == 0)
        return via(argv[3]);
    int nthreads = argc > 2 ? atoi(argv[2]) : 4;
    if (argc > 3)
        rounds = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 64 || rounds < 1)
        return 2;
    path(path_kv, "kv");
    path(path_ctr, "counters");
    path(path_locks, "locks");
    errno = 0;
    long ll = syscall(444, NULL, 0, 1);   /* landlock_create_ruleset: the ABI version */
    printf("landlock: %ld %s\n", ll, ll < 0 ? strerror(errno) : "");
    printf("no_new_privs %d, set %d, now %d, bad %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
           prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
           prctl(PR_SET_NO_NEW_PRIVS, 2, 0, 0, 0));
    int sig = -1;
    printf("pdeathsig set %d", prctl(PR_SET_PDEATHSIG, SIGTERM));
    prctl(PR_GET_PDEATHSIG, &sig);
    printf(" got %d bad %d\n", sig, prctl(PR_SET_PDEATHSIG, 99));
    pthread_t pt;
    pthread_create(&pt, NULL, privs, NULL);
    pthread_join(pt, NULL);
    int c = open(path_ctr, O_RDWR | O_CREAT | O_TRUNC, 0644);
    uint64_t zero[2] = {0, 0};
    if (c < 0 || write(c, zero, sizeof zero) != (ssize_t)sizeof zero)
        die("counters");
    close(c);
    pthread_t th[64];
    for (long i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    c = open(path_ctr, O_RDONLY);
    uint64_t got[2] = {0, 0};
    if (c < 0 || read(c, got, sizeof got) != (ssize_t)sizeof got)
        die("read counters");
    close(c);
    printf("ofd counter %llu of %d, flock counter %llu of %d\n", (unsigned long long)got[0],
           nthreads * rounds, (unsigned long long)got[1], nthreads * rounds);
    FILE *kv = fopen(path_kv, "r");
    long w = -1;
    int r = -1;
    char line[128];
    if (!kv || !fgets(line, sizeof line, kv) || sscanf(line, "writer=%ld round=%d", &w, &r) != 2)
        die("kv");
    fclose(kv);
    printf("kv holds a whole record: %s\n", w >= 0 && w < nthreads && r >= 0 && r < rounds &&
                                                    strchr(line, '\n') ? "yes" : "no");
    unlink(path_kv);
    unlink(path_ctr);
    semantics();
    blocking(0);
    blocking(1);
    files();
    return 0;
}
