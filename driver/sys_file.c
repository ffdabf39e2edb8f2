/* driver/sys_file.c: file system calls on host files the user names:
 * read-only unless the path lies under an --allow-write directory; the
 * guest's stdin, stdout and stderr pass through. The simulated system has
 * no /proc, /sys or devices (but /dev/null and /proc/self/exe). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver/internal.h"

#define IO_PIECE (1u << 20)          /* host I/O per step of a large transfer */
#define IOV_MAX_GUEST 1024

int64_t proc_output(drv_proc *p, file_obj *f, const uint8_t *data, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = write(f->host_fd, data + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return done ? (int64_t)done : -(int64_t)errno;
        done += (size_t)r;
    }
    if (p->cfg.output)
        p->cfg.output(p->cfg.output_ctx, f->kind == FILE_STDERR ? 2 : 1, data, n);
    return (int64_t)n;
}

/* The two devices the simulated system has; writes to them vanish. */
static int sink_device(const char *path)
{
    return strcmp(path, "/dev/null") == 0 || strcmp(path, "/dev/zero") == 0;
}

/* Paths the simulated system does not have. */
static int hidden_path(const char *path)
{
    static const char *const roots[] = {"/proc", "/sys", "/dev"};
    if (sink_device(path))
        return 0;
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(path, roots[i], n) == 0 && (path[n] == '/' || path[n] == 0))
            return 1;
    }
    return 0;
}

/* Host directory descriptor for guest DIRFD (AT_FDCWD stays). */
static int64_t host_dirfd(drv_proc *p, int64_t dirfd)
{
    if (dirfd == LX_AT_FDCWD)
        return AT_FDCWD;
    file_obj *f = files_get(p, dirfd);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST)
        return -LX_ENOTDIR;
    return f->host_fd;
}

static int host_open_flags(int64_t fl)
{
    int h = 0;
    switch (fl & LX_O_ACCMODE) {
    case LX_O_WRONLY: h = O_WRONLY; break;
    case LX_O_RDWR: h = O_RDWR; break;
    default: h = O_RDONLY; break;
    }
    if (fl & LX_O_CREAT) h |= O_CREAT;
    if (fl & LX_O_EXCL) h |= O_EXCL;
    if (fl & LX_O_TRUNC) h |= O_TRUNC;
    if (fl & LX_O_APPEND) h |= O_APPEND;
    if (fl & LX_O_DIRECTORY) h |= O_DIRECTORY;
    if (fl & LX_O_NOFOLLOW) h |= O_NOFOLLOW;
    if (fl & LX_O_DSYNC) h |= O_DSYNC;
    if ((fl & LX_O_PATH) == LX_O_PATH) h |= O_PATH;
    if ((fl & LX_O_TMPFILE) == LX_O_TMPFILE) h |= O_TMPFILE;
    return h | O_CLOEXEC | O_NOCTTY;
}

/* Reads the guest path at ADDR into PATH: its length, or -errno (an empty
 * path is ENOENT, as for every *at call without AT_EMPTY_PATH). */
static int64_t guest_path(drv_proc *p, uint64_t addr, char *path, size_t size)
{
    int64_t n = guest_read_str(p, addr, path, size);
    return n == 0 ? -LX_ENOENT : n;
}

/* The host directory descriptor for a guest *at call's (dirfd, path), after
 * the checks every such call makes: AT_FDCWD, a descriptor, or -errno. */
static int64_t host_at(drv_proc *p, uint64_t guest_dirfd, const char *path)
{
    int64_t dir = host_dirfd(p, (int64_t)(int32_t)guest_dirfd);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (path[0] == '/' && hidden_path(path))
        return -LX_ENOENT;
    return dir;
}

int64_t sc_openat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char path[PATH_MAX];
    int64_t n = guest_path(p, a[1], path, sizeof path);
    if (n < 0)
        return n;
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    int64_t fl = (int64_t)a[2];
    int writes = (fl & LX_O_ACCMODE) != LX_O_RDONLY || (fl & (LX_O_CREAT | LX_O_TRUNC)) ||
                 (fl & LX_O_TMPFILE) == LX_O_TMPFILE;
    if (writes && !sink_device(path) && !files_write_allowed(p, (int)dir, path)) {
        proc_warn_once(p, WARN_WRITE_DENIED,
                       "the guest may not write '%s' (EACCES); allow it with --allow-write DIR",
                       path);
        return -LX_EACCES;
    }
    int hfd = openat((int)dir, path, host_open_flags(fl), (mode_t)(a[3] & ~p->umask & 07777));
    if (hfd < 0)
        return -(int64_t)errno;
    file_obj *f = files_new(FILE_HOST, hfd, (int)(fl & (LX_O_ACCMODE | LX_O_APPEND | LX_O_NONBLOCK |
                                                       LX_O_DIRECTORY | LX_O_PATH)), writes);
    if (!f) {
        close(hfd);
        return -LX_ENOMEM;
    }
    int64_t fd = files_install(p, f, 0, (fl & LX_O_CLOEXEC) != 0);
    if (fd < 0)
        files_unref(p, f);
    return fd;
}

int64_t sc_close(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t fd = (int64_t)(int32_t)a[0];
    file_obj *f = files_get(p, fd);
    if (!f)
        return -LX_EBADF;
    p->fds[fd].file = NULL;
    files_unref(p, f);
    return 0;
}

static int readable(const file_obj *f) { return (f->flags & LX_O_ACCMODE) != LX_O_WRONLY && (f->flags & LX_O_PATH) != LX_O_PATH; }
static int writable(const file_obj *f) { return (f->flags & LX_O_ACCMODE) != LX_O_RDONLY && f->writable; }

/* ---- pipes ---- */

/* Blocks the calling thread on pipe PB; the call runs again when woken. */
static int64_t pipe_block(drv_proc *p, pipe_buf *pb)
{
    thread *t = p->sys_thread;
    t->wait_addr = pb->id;
    sched_block(p, t, WAIT_PIPE, UINT64_MAX);
    return SC_BLOCKED;
}

static int64_t pipe_read(drv_proc *p, file_obj *f, uint64_t buf, uint64_t n, int may_block)
{
    pipe_buf *pb = f->pipe;
    if (pb->len == 0) {
        if (pb->writers == 0)
            return 0;
        if ((f->flags & LX_O_NONBLOCK) || !may_block)
            return -LX_EAGAIN;
        return pipe_block(p, pb);
    }
    uint64_t take = n < pb->len ? n : pb->len;
    uint8_t *tmp = malloc(take);
    if (!tmp)
        return -LX_ENOMEM;
    for (uint64_t i = 0; i < take; i++)
        tmp[i] = pb->data[(pb->head + i) % pb->cap];
    int64_t rc = guest_write(p, buf, tmp, take);
    free(tmp);
    if (rc < 0)
        return rc;
    pb->head = (pb->head + take) % pb->cap;
    pb->len -= take;
    files_pipe_wake(p, pb);   /* room for writers */
    return (int64_t)take;
}

/* Linux semantics but one: a blocking write larger than PIPE_BUF that does
 * not fit returns what fitted (a short write) instead of waiting for room
 * for the rest; callers loop, as they must for any write. */
static int64_t pipe_write(drv_proc *p, file_obj *f, const uint8_t *data, uint64_t n)
{
    pipe_buf *pb = f->pipe;
    if (pb->readers == 0) {
        int64_t rc = signal_send(p, p->sys_thread, LX_SIGPIPE, p->sys_thread);
        return rc == SC_GONE ? rc : -LX_EPIPE;
    }
    uint64_t room = pb->cap - pb->len;
    if (room == 0 || (n <= LX_PIPE_BUF && room < n)) {
        if (f->flags & LX_O_NONBLOCK)
            return -LX_EAGAIN;
        return pipe_block(p, pb);
    }
    uint64_t put = n < room ? n : room;
    for (uint64_t i = 0; i < put; i++)
        pb->data[(pb->head + pb->len + i) % pb->cap] = data[i];
    pb->len += put;
    files_pipe_wake(p, pb);   /* data for readers */
    return (int64_t)put;
}

int64_t sc_pipe2(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (a[1] & ~(uint64_t)(LX_O_CLOEXEC | LX_O_NONBLOCK | LX_O_DIRECT))
        return -LX_EINVAL;
    if (!guest_ok(p, a[0], 8, LX_PROT_WRITE))
        return -LX_EFAULT;
    pipe_buf *pb = calloc(1, sizeof *pb);
    uint8_t *data = malloc(PIPE_CAPACITY);
    file_obj *r = files_new(FILE_PIPE_R, -1, LX_O_RDONLY | (int)(a[1] & LX_O_NONBLOCK), 0);
    file_obj *w = files_new(FILE_PIPE_W, -1, LX_O_WRONLY | (int)(a[1] & LX_O_NONBLOCK), 1);
    if (!pb || !data || !r || !w) {
        free(pb);
        free(data);
        free(r);
        free(w);
        return -LX_ENOMEM;
    }
    pb->id = 0x100000000ull + p->pipe_seq++;   /* never a guest address: above 2^32 ids */
    pb->data = data;
    pb->cap = PIPE_CAPACITY;
    pb->readers = pb->writers = 1;
    r->pipe = w->pipe = pb;
    int cloexec = (a[1] & LX_O_CLOEXEC) != 0;
    int64_t fr = files_install(p, r, 0, cloexec);
    if (fr < 0) {
        files_unref(p, r);
        files_unref(p, w);
        return fr;
    }
    int64_t fw = files_install(p, w, 0, cloexec);
    if (fw < 0) {
        p->fds[fr].file = NULL;
        files_unref(p, r);
        files_unref(p, w);
        return fw;
    }
    uint8_t b[8];
    for (int i = 0; i < 4; i++) {
        b[i] = (uint8_t)((uint64_t)fr >> (8 * i));
        b[4 + i] = (uint8_t)((uint64_t)fw >> (8 * i));
    }
    guest_write(p, a[0], b, 8);
    return 0;
}

/* Reads up to N bytes from F (at OFF, or the file position if OFF < 0)
 * into guest memory at BUF. */
static int64_t read_into(drv_proc *p, file_obj *f, uint64_t buf, uint64_t n, int64_t off)
{
    if (!readable(f))
        return -LX_EBADF;
    if (n == 0)
        return 0;
    if (f->kind == FILE_PIPE_R) {
        if (!guest_ok(p, buf, n, LX_PROT_WRITE))
            return -LX_EFAULT;
        return pipe_read(p, f, buf, n, 1);
    }
    if (n > 0x7ffff000)
        n = 0x7ffff000;      /* Linux's MAX_RW_COUNT */
    if (!guest_ok(p, buf, n, LX_PROT_WRITE))
        return -LX_EFAULT;
    uint8_t *tmp = malloc(n < IO_PIECE ? n : IO_PIECE);
    if (!tmp)
        return -LX_ENOMEM;
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < IO_PIECE ? (size_t)(n - done) : IO_PIECE;
        ssize_t r = off < 0 ? read(f->host_fd, tmp, want)
                            : pread(f->host_fd, tmp, want, (off_t)(off + (int64_t)done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(tmp);
            return done ? (int64_t)done : -(int64_t)e;
        }
        if (r == 0)
            break;
        guest_write(p, buf + done, tmp, (size_t)r);
        done += (uint64_t)r;
        if ((size_t)r < want || f->kind != FILE_HOST)
            break;           /* short read: end of file, pipe or terminal */
    }
    free(tmp);
    return (int64_t)done;
}

/* Writes N guest bytes at BUF to F (at OFF, or the position if OFF < 0). */
static int64_t write_from(drv_proc *p, file_obj *f, uint64_t buf, uint64_t n, int64_t off)
{
    if (!writable(f))
        return -LX_EBADF;
    if (n == 0)
        return 0;
    if (n > 0x7ffff000)
        n = 0x7ffff000;
    if (!guest_ok(p, buf, n, LX_PROT_READ))
        return -LX_EFAULT;
    uint8_t *tmp = malloc(n);
    if (!tmp)
        return -LX_ENOMEM;
    int64_t rc = guest_read(p, buf, tmp, n);
    if (rc == 0) {
        if (f->kind == FILE_STDOUT || f->kind == FILE_STDERR) {
            rc = proc_output(p, f, tmp, n);
        } else if (f->kind == FILE_PIPE_W) {
            rc = pipe_write(p, f, tmp, n);
        } else {
            uint64_t done = 0;
            while (done < n) {
                ssize_t r = off < 0 ? write(f->host_fd, tmp + done, n - done)
                                    : pwrite(f->host_fd, tmp + done, n - done,
                                             (off_t)(off + (int64_t)done));
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0) {
                    rc = done ? (int64_t)done : -(int64_t)errno;
                    break;
                }
                done += (uint64_t)r;
                rc = (int64_t)done;
            }
        }
    }
    free(tmp);
    return rc;
}

int64_t sc_read(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    return f ? read_into(p, f, a[1], a[2], -1) : -LX_EBADF;
}

/* The file of a pread64/pwrite64 (fd a[0], offset a[3]), or NULL with the
 * Linux error in *rc. */
static file_obj *positional_file(drv_proc *p, const uint64_t a[6], int64_t *rc)
{
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    *rc = !f ? -LX_EBADF : (int64_t)a[3] < 0 ? -LX_EINVAL : f->kind != FILE_HOST ? -LX_ESPIPE : 0;
    return *rc ? NULL : f;
}

int64_t sc_pread64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t rc;
    file_obj *f = positional_file(p, a, &rc);
    return f ? read_into(p, f, a[1], a[2], (int64_t)a[3]) : rc;
}

int64_t sc_write(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    return f ? write_from(p, f, a[1], a[2], -1) : -LX_EBADF;
}

int64_t sc_pwrite64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t rc;
    file_obj *f = positional_file(p, a, &rc);
    return f ? write_from(p, f, a[1], a[2], (int64_t)a[3]) : rc;
}

/* The iovec array of readv/writev: CNT (base, len) pairs. */
static int64_t read_iov(drv_proc *p, uint64_t iov, uint64_t cnt, uint64_t (*v)[2])
{
    uint8_t b[16];
    uint64_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        int64_t rc = guest_read(p, iov + 16 * i, b, 16);
        if (rc < 0)
            return rc;
        v[i][0] = v[i][1] = 0;
        for (int k = 7; k >= 0; k--) {
            v[i][0] = v[i][0] << 8 | b[k];
            v[i][1] = v[i][1] << 8 | b[8 + k];
        }
        if ((int64_t)v[i][1] < 0 || v[i][1] > INT64_MAX - total)
            return -LX_EINVAL;
        total += v[i][1];
    }
    return 0;
}

int64_t sc_readv(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (a[2] > IOV_MAX_GUEST)
        return -LX_EINVAL;
    uint64_t v[IOV_MAX_GUEST][2];
    int64_t rc = read_iov(p, a[1], a[2], v);
    if (rc < 0)
        return rc;
    int64_t total = 0;
    for (uint64_t i = 0; i < a[2]; i++) {
        if (v[i][1] == 0)
            continue;
        int64_t r = f->kind == FILE_PIPE_R && total > 0
                        ? (guest_ok(p, v[i][0], v[i][1], LX_PROT_WRITE)
                               ? pipe_read(p, f, v[i][0], v[i][1], 0) : -LX_EFAULT)
                        : read_into(p, f, v[i][0], v[i][1], -1);
        if (r == SC_BLOCKED || r == SC_GONE)
            return r;
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((uint64_t)r < v[i][1])
            break;
    }
    return total;
}

int64_t sc_writev(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (a[2] > IOV_MAX_GUEST)
        return -LX_EINVAL;
    if (!writable(f))
        return -LX_EBADF;
    uint64_t v[IOV_MAX_GUEST][2];
    int64_t rc = read_iov(p, a[1], a[2], v);
    if (rc < 0)
        return rc;
    /* Gathered into one host write, so that the output stays in one piece. */
    uint64_t total = 0;
    for (uint64_t i = 0; i < a[2]; i++)
        total += v[i][1];
    if (total > 0x7ffff000)
        return -LX_EINVAL;
    uint8_t *tmp = malloc(total ? total : 1);
    if (!tmp)
        return -LX_ENOMEM;
    uint64_t at = 0;
    for (uint64_t i = 0; i < a[2]; i++) {
        rc = guest_read(p, v[i][0], tmp + at, v[i][1]);
        if (rc < 0) {
            free(tmp);
            return rc;
        }
        at += v[i][1];
    }
    if (total == 0)
        rc = 0;
    else if (f->kind == FILE_STDOUT || f->kind == FILE_STDERR)
        rc = proc_output(p, f, tmp, total);
    else if (f->kind == FILE_PIPE_W)
        rc = pipe_write(p, f, tmp, total);
    else {
        ssize_t r = write(f->host_fd, tmp, total);
        rc = r < 0 ? -(int64_t)errno : (int64_t)r;
    }
    free(tmp);
    return rc;
}

int64_t sc_lseek(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (f->kind == FILE_PIPE_R || f->kind == FILE_PIPE_W)
        return -LX_ESPIPE;
    if (a[2] > LX_SEEK_HOLE)
        return -LX_EINVAL;
    off_t r = lseek(f->host_fd, (off_t)a[1], (int)a[2]);
    return r < 0 ? -(int64_t)errno : (int64_t)r;
}

/* Writes a host struct stat as the guest's (asm-generic) struct stat. The
 * access time is reported equal to the modification time: reading an input
 * file changes its atime, and a run must not see its previous run. */
static int64_t put_stat(drv_proc *p, uint64_t addr, const struct stat *st)
{
    uint8_t b[LX_STAT_SIZE];
    memset(b, 0, sizeof b);
#define P64(off, v) do { uint64_t x_ = (uint64_t)(v); for (int i_ = 0; i_ < 8; i_++) b[(off) + i_] = (uint8_t)(x_ >> (8 * i_)); } while (0)
#define P32(off, v) do { uint32_t x_ = (uint32_t)(v); for (int i_ = 0; i_ < 4; i_++) b[(off) + i_] = (uint8_t)(x_ >> (8 * i_)); } while (0)
    P64(LX_STAT_DEV, st->st_dev);
    P64(LX_STAT_INO, st->st_ino);
    P32(LX_STAT_MODE, st->st_mode);
    P32(LX_STAT_NLINK, st->st_nlink);
    P32(LX_STAT_UID, st->st_uid);
    P32(LX_STAT_GID, st->st_gid);
    P64(LX_STAT_RDEV, st->st_rdev);
    P64(LX_STAT_SIZE_OFF, st->st_size);
    P32(LX_STAT_BLKSIZE, st->st_blksize);
    P64(LX_STAT_BLOCKS, st->st_blocks);
    P64(LX_STAT_ATIME, st->st_mtim.tv_sec);
    P64(LX_STAT_ATIME + 8, st->st_mtim.tv_nsec);
    P64(LX_STAT_MTIME, st->st_mtim.tv_sec);
    P64(LX_STAT_MTIME + 8, st->st_mtim.tv_nsec);
    P64(LX_STAT_CTIME, st->st_ctim.tv_sec);
    P64(LX_STAT_CTIME + 8, st->st_ctim.tv_nsec);
#undef P64
#undef P32
    return guest_write(p, addr, b, sizeof b);
}

/* fstat of an open file. The guest's stdin, stdout and stderr are always
 * pipes of the simulated system, whatever rnr's own are (terminal, file,
 * pipe with a fresh inode each run), so that the run does not depend on
 * how it was started. */
static int file_stat(const file_obj *f, struct stat *st)
{
    if (f->kind == FILE_HOST)
        return fstat(f->host_fd, st);
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFIFO | 0600;
    st->st_dev = 0xd;
    st->st_ino = f->pipe ? f->pipe->id : 100 + (unsigned)f->kind;
    st->st_nlink = 1;
    st->st_uid = 1000;
    st->st_gid = 1000;
    st->st_blksize = 4096;
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = (time_t)DRV_EPOCH;
    return 0;
}

int64_t sc_fstat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    struct stat st;
    if (file_stat(f, &st) != 0)
        return -(int64_t)errno;
    return put_stat(p, a[1], &st);
}

int64_t sc_newfstatat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t flags = (int64_t)(int32_t)a[3];
    if (flags & ~(int64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_EMPTY_PATH | LX_AT_NO_AUTOMOUNT))
        return -LX_EINVAL;
    char path[PATH_MAX];
    int64_t n = guest_read_str(p, a[1], path, sizeof path);
    if (n < 0)
        return n;
    int64_t gdir = (int64_t)(int32_t)a[0];
    struct stat st;
    if (n == 0) {
        if (!(flags & LX_AT_EMPTY_PATH))
            return -LX_ENOENT;
        if (gdir == LX_AT_FDCWD) {
            if (stat(".", &st) != 0)
                return -(int64_t)errno;
        } else {
            file_obj *f = files_get(p, gdir);
            if (!f)
                return -LX_EBADF;
            if (file_stat(f, &st) != 0)
                return -(int64_t)errno;
        }
        return put_stat(p, a[2], &st);
    }
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (fstatat((int)dir, path, &st, flags & LX_AT_SYMLINK_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) != 0)
        return -(int64_t)errno;
    return put_stat(p, a[2], &st);
}

int64_t sc_readlinkat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t size = (int64_t)(int32_t)a[3];
    if (size <= 0)
        return -LX_EINVAL;
    char path[PATH_MAX], target[PATH_MAX];
    int64_t n = guest_path(p, a[1], path, sizeof path);
    if (n < 0)
        return n;
    ssize_t len;
    if (strcmp(path, "/proc/self/exe") == 0) {
        len = (ssize_t)strlen(p->exe_path);
        memcpy(target, p->exe_path, (size_t)len);
    } else {
        int64_t dir = host_at(p, a[0], path);
        if (dir < 0 && dir != AT_FDCWD)
            return dir;
        len = readlinkat((int)dir, path, target, sizeof target);
        if (len < 0)
            return -(int64_t)errno;
    }
    if (len > size)
        len = (ssize_t)size;
    int64_t rc = guest_write(p, a[2], target, (size_t)len);
    return rc < 0 ? rc : (int64_t)len;
}

int64_t sc_faccessat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t mode = (int64_t)(int32_t)a[2];
    if (mode & ~7)
        return -LX_EINVAL;
    char path[PATH_MAX];
    int64_t n = guest_path(p, a[1], path, sizeof path);
    if (n < 0)
        return n;
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (faccessat((int)dir, path, (int)mode, 0) != 0)
        return -(int64_t)errno;
    if ((mode & LX_W_OK) && !files_write_allowed(p, (int)dir, path))
        return -LX_EACCES;
    return 0;
}

int64_t sc_ioctl(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (!files_get(p, (int64_t)(int32_t)a[0]))
        return -LX_EBADF;
    /* No terminals in the simulated system: the guest's stdio is never a
     * tty, whatever the host's is (so buffering does not depend on it). */
    return -LX_ENOTTY;
}

int64_t sc_fcntl(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t fd = (int64_t)(int32_t)a[0];
    file_obj *f = files_get(p, fd);
    if (!f)
        return -LX_EBADF;
    int64_t arg = (int64_t)a[2];
    switch ((int)a[1]) {
    case LX_F_DUPFD:
    case LX_F_DUPFD_CLOEXEC: {
        if (arg < 0 || arg >= FD_MAX)
            return -LX_EINVAL;
        f->refs++;
        int64_t nfd = files_install(p, f, arg, (int)a[1] == LX_F_DUPFD_CLOEXEC);
        if (nfd < 0)
            f->refs--;
        return nfd;
    }
    case LX_F_GETFD:
        return p->fds[fd].cloexec ? LX_FD_CLOEXEC : 0;
    case LX_F_SETFD:
        p->fds[fd].cloexec = (arg & LX_FD_CLOEXEC) != 0;
        return 0;
    case LX_F_GETFL:
        return f->flags;
    case LX_F_SETFL:
        f->flags = (f->flags & ~(LX_O_APPEND | LX_O_NONBLOCK)) |
                   (int)(arg & (LX_O_APPEND | LX_O_NONBLOCK));
        return 0;
    default:
        return -LX_EINVAL;
    }
}

int64_t sc_dup(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    f->refs++;
    int64_t fd = files_install(p, f, 0, 0);
    if (fd < 0)
        f->refs--;
    return fd;
}

int64_t sc_dup3(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t oldfd = (int64_t)(int32_t)a[0], newfd = (int64_t)(int32_t)a[1];
    if (a[2] & ~(uint64_t)LX_O_CLOEXEC)
        return -LX_EINVAL;
    if (oldfd == newfd)
        return -LX_EINVAL;
    file_obj *f = files_get(p, oldfd);
    if (!f)
        return -LX_EBADF;
    if (newfd < 0 || newfd >= FD_MAX)
        return -LX_EBADF;
    file_obj *old = p->fds[newfd].file;
    f->refs++;
    p->fds[newfd].file = NULL;
    files_unref(p, old);
    p->fds[newfd].file = f;
    p->fds[newfd].cloexec = (a[2] & LX_O_CLOEXEC) != 0;
    return newfd;
}

int64_t sc_getdents64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST)
        return -LX_ENOTDIR;
    uint64_t n = a[2] < IO_PIECE ? a[2] : IO_PIECE;
    if (!guest_ok(p, a[1], n, LX_PROT_WRITE))
        return -LX_EFAULT;
    uint8_t *tmp = malloc(n ? n : 1);
    if (!tmp)
        return -LX_ENOMEM;
    /* struct linux_dirent64 has the same layout on every 64-bit Linux. */
    long r = syscall(SYS_getdents64, f->host_fd, tmp, (size_t)n);
    int64_t rc = r < 0 ? -(int64_t)errno : r;
    if (r > 0) {
        int64_t w = guest_write(p, a[1], tmp, (size_t)r);
        if (w < 0)
            rc = w;
    }
    free(tmp);
    return rc;
}
