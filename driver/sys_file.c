/* driver/sys_file.c: file system calls on host files the user names:
 * read-only unless the path lies under an --allow-write directory; the
 * guest's stdin, stdout and stderr pass through. The simulated system has
 * no /proc, /sys or devices (but /dev/null, /dev/zero, /proc/self/exe and
 * /proc/self/maps). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver/internal.h"

#define IO_PIECE (1u << 20)          /* host I/O per step of a large transfer */

int64_t proc_output(drv_proc *p, file_obj *f, const uint8_t *data, size_t n)
{
    size_t done = 0;
    int64_t err = 0;
    if (p->cfg.output_begin && n)
        p->cfg.output_begin(p->cfg.output_ctx);
    while (done < n) {
        ssize_t r = write(f->host_fd, data + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            err = -(int64_t)errno;
            break;
        }
        done += (size_t)r;
    }
    /* The hook gets what the guest's write put out, which is its result:
     * a host descriptor that took part of it (a full non-blocking pipe,
     * a full disk) took that part. */
    if (done && p->cfg.output)
        p->cfg.output(p->cfg.output_ctx, f->kind == FILE_STDERR ? 2 : 1, data, done);
    return done ? (int64_t)done : err;
}

int64_t proc_output_iov(drv_proc *p, file_obj *f, const uint64_t (*v)[2], uint64_t cnt,
                        uint64_t limit, int replay)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < cnt && total < limit; i++)
        total += v[i][1] < limit - total ? v[i][1] : limit - total;
    if (total == 0)
        return 0;
    size_t cap = total < DRV_OUTPUT_BLOCK ? (size_t)total : DRV_OUTPUT_BLOCK, fill = 0;
    uint8_t *block = malloc(cap);
    if (!block)
        return -LX_ENOMEM;
    uint64_t done = 0, left = total;
    int64_t rc = 0;
    for (uint64_t i = 0; i < cnt && left && rc == 0; i++) {
        uint64_t addr = v[i][0], n = v[i][1] < left ? v[i][1] : left;
        while (n && rc == 0) {
            size_t k = n < cap - fill ? (size_t)n : cap - fill;
            rc = guest_read(p, addr, block + fill, k);
            if (rc < 0)
                break;
            addr += k;
            n -= k;
            left -= k;
            fill += k;
            if (fill < cap && left)
                continue;
            /* A block full, or the write's last bytes. */
            int64_t r = (int64_t)fill;
            if (!replay)
                r = proc_output(p, f, block, fill);
            else if (p->cfg.output)
                p->cfg.output(p->cfg.output_ctx, f->kind == FILE_STDERR ? 2 : 1, block, fill);
            if (r > 0)
                done += (uint64_t)r;
            rc = r < 0 ? r : (size_t)r < fill ? 1 : 0;   /* 1: the host took part */
            fill = 0;
        }
    }
    free(block);
    return done ? (int64_t)done : rc < 0 ? rc : 0;
}

/* The two devices the simulated system has; writes to them vanish. */
static int sink_device(const char *path)
{
    return strcmp(path, "/dev/null") == 0 || strcmp(path, "/dev/zero") == 0;
}

/* Paths the simulated system does not have (/proc, /sys and /dev but
 * for /dev/null and /dev/zero; the few /proc/self files it has are
 * answered before this is asked). */
int files_hidden(const char *path)
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
    if (n > 0) {
        int64_t rc = files_map_tmp(p, path, size);
        if (rc < 0)
            return rc;
    }
    return n == 0 ? -LX_ENOENT : n;
}

/* The host directory descriptor for a guest *at call's (dirfd, path), after
 * the checks every such call makes: AT_FDCWD, a descriptor, or -errno. */
static int64_t host_at(drv_proc *p, uint64_t guest_dirfd, const char *path)
{
    int64_t dir = host_dirfd(p, (int64_t)(int32_t)guest_dirfd);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (path[0] == '/' && files_hidden(path)) {
        if (strncmp(path, "/dev/shm", 8) == 0 && (path[8] == '/' || path[8] == 0))
            proc_warn_once(p, WARN_DEV_SHM, "the guest has no /dev/shm (shm_open, sem_open: "
                           "ENOENT); --private-tmp gives it one of its own");
        return -LX_ENOENT;
    }
    return dir;
}

static int readable(const file_obj *f) { return (f->flags & LX_O_ACCMODE) != LX_O_WRONLY && (f->flags & LX_O_PATH) != LX_O_PATH; }
static int writable(const file_obj *f) { return (f->flags & LX_O_ACCMODE) != LX_O_RDONLY && f->writable; }

/* 0 if --allow-write covers a write to PATH (at host directory DIR; a
 * final symbolic link judged by its target if FOLLOW), else -EACCES, with
 * the one-time hint. */
static int64_t write_refused(drv_proc *p, int64_t dir, const char *path, int follow)
{
    if (files_write_allowed(p, (int)dir, path, follow))
        return 0;
    proc_warn_once(p, WARN_WRITE_DENIED,
                   "the guest may not write '%s' (EACCES); allow it with --allow-write DIR", path);
    return -LX_EACCES;
}

/* A call that changes the file system at the guest's (DIRFD, path at
 * ADDR): the path read into PATH and the host directory descriptor, or
 * -errno (write_refused's EACCES among them). FOLLOW: the call acts on
 * what a final symbolic link leads to, not on the link. */
static int64_t changing_at(drv_proc *p, uint64_t dirfd, uint64_t addr, char path[PATH_MAX],
                           int follow)
{
    int64_t n = guest_path(p, addr, path, PATH_MAX);
    if (n < 0)
        return n;
    int64_t dir = host_at(p, dirfd, path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    int64_t rc = write_refused(p, dir, path, follow);
    return rc < 0 ? rc : dir;
}

int64_t sc_mkdirat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char path[PATH_MAX];
    int64_t dir = changing_at(p, a[0], a[1], path, 0);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    return mkdirat((int)dir, path, (mode_t)(a[2] & ~p->cur->umask & 07777)) < 0 ? -(int64_t)errno : 0;
}

int64_t sc_unlinkat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    const uint64_t removedir = 0x200;   /* AT_REMOVEDIR */
    if (a[2] & ~removedir)
        return -LX_EINVAL;
    char path[PATH_MAX];
    int64_t dir = changing_at(p, a[0], a[1], path, 0);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    return unlinkat((int)dir, path, a[2] ? AT_REMOVEDIR : 0) < 0 ? -(int64_t)errno : 0;
}

/* renameat2: RENAME_NOREPLACE (1) and RENAME_EXCHANGE (2), as the host's. */
int64_t sc_renameat2(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (a[4] & ~3ull || a[4] == 3)
        return -LX_EINVAL;
    char from[PATH_MAX], to[PATH_MAX];
    int64_t d1 = changing_at(p, a[0], a[1], from, 0);
    if (d1 < 0 && d1 != AT_FDCWD)
        return d1;
    int64_t d2 = changing_at(p, a[2], a[3], to, 0);
    if (d2 < 0 && d2 != AT_FDCWD)
        return d2;
    return renameat2((int)d1, from, (int)d2, to, (unsigned)a[4]) < 0 ? -(int64_t)errno : 0;
}

/* A file whose status before a truncation to LEN was ST: its writable
 * shared mappings see the change. */
static void resized(drv_proc *p, const struct stat *st, uint64_t len)
{
    uint64_t old = (uint64_t)st->st_size;
    shmap_file_resized(p, (uint64_t)st->st_dev, (uint64_t)st->st_ino, old < len ? old : len);
}

int64_t sc_ftruncate(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if ((int64_t)a[1] < 0)
        return -LX_EINVAL;
    const file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST || !writable(f))   /* not a file open for writing */
        return -LX_EINVAL;
    struct stat st;
    int known = p->cur->nshmaps && fstat(f->host_fd, &st) == 0;
    if (ftruncate(f->host_fd, (off_t)a[1]) < 0)
        return -(int64_t)errno;
    if (known)
        resized(p, &st, a[1]);
    return 0;
}

/* fsync, fdatasync: a host file is as durable as the host makes it;
 * the simulated system's stdio and pipes cannot be synced (EINVAL). */
int64_t sc_fsync(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    const file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    return f->kind == FILE_HOST ? 0 : -LX_EINVAL;
}

/* truncate: as ftruncate, by path (a symbolic link followed). */
int64_t sc_truncate(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if ((int64_t)a[1] < 0)
        return -LX_EINVAL;
    char path[PATH_MAX];
    int64_t dir = changing_at(p, LX_AT_FDCWD, a[0], path, 1);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    struct stat st;
    int known = p->cur->nshmaps && stat(path, &st) == 0;
    if (truncate(path, (off_t)a[1]) < 0)
        return -(int64_t)errno;
    if (known)
        resized(p, &st, a[1]);
    return 0;
}

/* The host file of guest descriptor FD that a call changes (fallocate,
 * fchmod, futimens), or NULL with *RC = -errno: EBADF, or what NOT_HOST
 * says for the standard streams and pipes. */
static file_obj *changed_file(drv_proc *p, uint64_t fd, int64_t not_host, int64_t *rc)
{
    file_obj *f = files_get(p, (int64_t)(int32_t)fd);
    *rc = !f ? -LX_EBADF : f->kind != FILE_HOST || f->proc ? not_host : 0;
    return *rc ? NULL : f;
}

/* fallocate: mode 0 (allocate, extending the size) only; the other modes
 * (keep size, punch or zero a range, collapse, insert) say EOPNOTSUPP, as
 * a file system without them does. */
int64_t sc_fallocate(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t off = (int64_t)a[2], len = (int64_t)a[3], rc;
    if (off < 0 || len <= 0)
        return -LX_EINVAL;
    file_obj *f = changed_file(p, a[0], -LX_ESPIPE, &rc);
    if (!f)
        return rc;
    if (!writable(f))
        return -LX_EBADF;
    if (a[1] != 0)
        return -LX_ENOTSUP;
    return fallocate(f->host_fd, 0, (off_t)off, (off_t)len) < 0 ? -(int64_t)errno : 0;
}

/* sync_file_range: like fsync, nothing to wait for (every write reached
 * the host when it returned); Linux's checks. */
int64_t sc_sync_file_range(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (a[3] & ~7ull || (int64_t)a[1] < 0 || (int64_t)a[2] < 0)
        return -LX_EINVAL;
    const file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    return f->kind == FILE_HOST ? 0 : -LX_ESPIPE;
}

/* fchmod: a host file under --allow-write (by its path now), else EPERM
 * as for a file of another user; the standard streams belong to rnr
 * (EPERM); a pipe's mode is kept nowhere (0). */
int64_t sc_fchmod(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    const file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (f->kind == FILE_PIPE_R || f->kind == FILE_PIPE_W)
        return 0;
    if (f->kind != FILE_HOST || f->proc || !files_fd_write_allowed(p, f->host_fd))
        return -LX_EPERM;
    return fchmod(f->host_fd, (mode_t)(a[1] & 07777)) < 0 ? -(int64_t)errno : 0;
}

/* fchmodat (riscv64's has no flags): a symbolic link followed. */
int64_t sc_fchmodat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char path[PATH_MAX];
    int64_t dir = changing_at(p, a[0], a[1], path, 1);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    return fchmodat((int)dir, path, (mode_t)(a[2] & 07777), 0) < 0 ? -(int64_t)errno : 0;
}

/* The ownership change the guest asks for (uid and gid as 32-bit values,
 * -1 = unchanged) on a file whose owner is ST: the guest is an unprivileged
 * user (uid 1000, docs/driver.md), and an unprivileged chown may only give
 * the file the owner and group it already has. rnr never changes a host
 * file's owner (it may run as root): such a chown succeeds without a host
 * call, any other is EPERM. */
static int64_t chown_allowed(const struct stat *st, uint64_t uid, uint64_t gid)
{
    uint32_t u = (uint32_t)uid, g = (uint32_t)gid;
    if ((u != UINT32_MAX && u != (uint32_t)st->st_uid) || (g != UINT32_MAX && g != (uint32_t)st->st_gid))
        return -LX_EPERM;
    return 0;
}

/* fchown: a host file under --allow-write, or a pipe (its owner is the
 * guest: 1000 for both), else EPERM as for a file of another user. */
int64_t sc_fchown(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    const file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    struct stat st;
    if (f->kind == FILE_PIPE_R || f->kind == FILE_PIPE_W) {
        st.st_uid = 1000;
        st.st_gid = 1000;
        return chown_allowed(&st, a[1], a[2]);
    }
    if (f->kind != FILE_HOST || f->proc || !files_fd_write_allowed(p, f->host_fd))
        return -LX_EPERM;
    if (fstat(f->host_fd, &st) != 0)
        return -(int64_t)errno;
    return chown_allowed(&st, a[1], a[2]);
}

/* fchownat: AT_SYMLINK_NOFOLLOW acts on a final link itself; AT_EMPTY_PATH
 * (an empty path: the descriptor DIRFD) is fchown. */
int64_t sc_fchownat(drv_proc *p, thread *t, const uint64_t a[6])
{
    uint64_t flags = a[4];
    if (flags & ~(uint64_t)(LX_AT_SYMLINK_NOFOLLOW | LX_AT_EMPTY_PATH))
        return -LX_EINVAL;
    char path[PATH_MAX];
    if (flags & LX_AT_EMPTY_PATH) {
        int64_t n = guest_read_str(p, a[1], path, sizeof path);
        if (n == 0) {
            const uint64_t b[6] = {a[0], a[2], a[3], 0, 0, 0};
            return sc_fchown(p, t, b);
        }
    }
    int follow = !(flags & LX_AT_SYMLINK_NOFOLLOW);
    int64_t dir = changing_at(p, a[0], a[1], path, follow);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    struct stat st;
    if (fstatat((int)dir, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
        return -(int64_t)errno;
    return chown_allowed(&st, a[2], a[3]);
}

/* utimensat, and futimens (path NULL: the descriptor DIRFD). The times
 * are the guest's, or UTIME_NOW: the simulated CLOCK_REALTIME of the
 * calling core (never the host's clock, so a run is repeatable). */
int64_t sc_utimensat(drv_proc *p, thread *t, const uint64_t a[6])
{
    const uint64_t nofollow = 0x100, empty_path = 0x1000;   /* AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH */
    if (a[3] & ~(nofollow | empty_path))
        return -LX_EINVAL;
    uint64_t now = DRV_EPOCH * DRV_HZ + sched_now(p, t);
    struct timespec ts[2] = {{(time_t)(now / DRV_HZ), (long)(now % DRV_HZ)},
                             {(time_t)(now / DRV_HZ), (long)(now % DRV_HZ)}};
    if (a[2]) {
        uint8_t b[32];
        int64_t rc = guest_read(p, a[2], b, sizeof b);
        if (rc < 0)
            return rc;
        for (int i = 0; i < 2; i++) {
            int64_t sec = (int64_t)le64_get(b + 16 * i), nsec = (int64_t)le64_get(b + 16 * i + 8);
            if (nsec == LX_UTIME_OMIT) {
                ts[i].tv_nsec = UTIME_OMIT;
            } else if (nsec != LX_UTIME_NOW) {
                if (nsec < 0 || nsec >= 1000000000)
                    return -LX_EINVAL;
                ts[i].tv_sec = (time_t)sec;
                ts[i].tv_nsec = (long)nsec;
            }
        }
    }
    char path[PATH_MAX] = "";
    if (a[1] != 0) {
        int64_t n = guest_read_str(p, a[1], path, sizeof path);
        if (n > 0 && files_map_tmp(p, path, sizeof path) < 0)
            return -LX_ENAMETOOLONG;
        if (n < 0)
            return n;
        if (n == 0 && !(a[3] & empty_path))
            return -LX_ENOENT;
    }
    if (!path[0]) {   /* futimens, or AT_EMPTY_PATH: the descriptor itself */
        if ((int64_t)(int32_t)a[0] == LX_AT_FDCWD)
            return -LX_EFAULT;
        int64_t rc;
        file_obj *f = changed_file(p, a[0], -LX_EPERM, &rc);
        if (!f)
            return rc;
        if (!files_fd_write_allowed(p, f->host_fd))
            return -LX_EPERM;
        return futimens(f->host_fd, ts) < 0 ? -(int64_t)errno : 0;
    }
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    int64_t rc = write_refused(p, dir, path, !(a[3] & nofollow));
    if (rc < 0)
        return rc;
    return utimensat((int)dir, path, ts, (a[3] & nofollow) ? AT_SYMLINK_NOFOLLOW : 0) < 0
               ? -(int64_t)errno
               : 0;
}

/* linkat: the new name is made, and the file it names becomes writable
 * through it, so both names must lie under --allow-write (the old one by
 * its target with AT_SYMLINK_FOLLOW). AT_EMPTY_PATH needs a capability
 * the guest lacks (ENOENT, as Linux says without it). */
int64_t sc_linkat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    const uint64_t follow = 0x400, empty_path = 0x1000;
    if (a[4] & ~(follow | empty_path))
        return -LX_EINVAL;
    if (a[4] & empty_path)
        return -LX_ENOENT;
    char from[PATH_MAX], to[PATH_MAX];
    int64_t d1 = changing_at(p, a[0], a[1], from, (a[4] & follow) != 0);
    if (d1 < 0 && d1 != AT_FDCWD)
        return d1;
    int64_t d2 = changing_at(p, a[2], a[3], to, 0);
    if (d2 < 0 && d2 != AT_FDCWD)
        return d2;
    return linkat((int)d1, from, (int)d2, to, (a[4] & follow) ? AT_SYMLINK_FOLLOW : 0) < 0
               ? -(int64_t)errno
               : 0;
}

/* symlinkat: the link is made under --allow-write; its text may name
 * anything (a write through it is judged by where it leads) and is kept
 * as given (a private /tmp does not rewrite it). */
int64_t sc_symlinkat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char target[PATH_MAX], path[PATH_MAX];
    int64_t n = guest_read_str(p, a[0], target, sizeof target);
    if (n <= 0)
        return n == 0 ? -LX_ENOENT : n;
    int64_t dir = changing_at(p, a[1], a[2], path, 0);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    return symlinkat(target, (int)dir, path) < 0 ? -(int64_t)errno : 0;
}

/* Host descriptor HFD as the guest's lowest free descriptor (a /proc
 * file's text if PROC); the descriptor, or -errno with HFD closed. */
static int64_t install_host(drv_proc *p, int hfd, int flags, int writable, int proc, int cloexec)
{
    file_obj *f = files_new(FILE_HOST, hfd, flags, writable);
    if (!f) {
        close(hfd);
        return -LX_ENOMEM;
    }
    f->proc = proc;
    int64_t fd = files_install(p, f, 0, cloexec);
    if (fd < 0)
        files_unref(p, f);
    return fd;
}

/* Whether PATH names the process's memory map: /proc/self/maps,
 * /proc/thread-self/maps or /proc/PID/maps. */
static int maps_path(const drv_proc *p, const char *path)
{
    char own[48];
    snprintf(own, sizeof own, "/proc/%d/maps", (int)p->cur->pid);
    return strcmp(path, "/proc/self/maps") == 0 || strcmp(path, "/proc/thread-self/maps") == 0 ||
           strcmp(path, own) == 0;
}

/* Opens the memory map (glibc reads it for pthread_getattr_np of the main
 * thread): its text as of the open, in an anonymous host file, read like
 * any host file (the reads are inputs of the log; replay needs no file). */
static int64_t open_maps(drv_proc *p, int64_t fl)
{
    if ((fl & LX_O_ACCMODE) != LX_O_RDONLY || (fl & (LX_O_CREAT | LX_O_TRUNC)))
        return -LX_EACCES;
    if (fl & LX_O_DIRECTORY)
        return -LX_ENOTDIR;
    size_t len = 0;
    char *text = vm_maps_text(p->cur->vm, p->cur->exe_path, &len);
    if (!text)
        return -LX_ENOMEM;
    int hfd = memfd_create("rnr-maps", MFD_CLOEXEC);
    int64_t rc = hfd < 0 ? -(int64_t)errno : 0;
    for (size_t done = 0; rc == 0 && done < len;) {
        ssize_t w = write(hfd, text + done, len - done);
        if (w < 0 && errno != EINTR)
            rc = -(int64_t)errno;
        else if (w > 0)
            done += (size_t)w;
    }
    free(text);
    if (rc == 0 && lseek(hfd, 0, SEEK_SET) != 0)
        rc = -(int64_t)errno;
    if (rc < 0) {
        if (hfd >= 0)
            close(hfd);
        return rc;
    }
    return install_host(p, hfd, (int)(fl & (LX_O_ACCMODE | LX_O_NONBLOCK)), 0, 1,
                        (fl & LX_O_CLOEXEC) != 0);
}

int64_t sc_openat(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char path[PATH_MAX];
    int64_t n = guest_path(p, a[1], path, sizeof path);
    if (n < 0)
        return n;
    if (maps_path(p, path))
        return open_maps(p, (int64_t)a[2]);
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    int64_t fl = (int64_t)a[2];
    int writes = (fl & LX_O_ACCMODE) != LX_O_RDONLY || (fl & (LX_O_CREAT | LX_O_TRUNC)) ||
                 (fl & LX_O_TMPFILE) == LX_O_TMPFILE;
    if (writes && !sink_device(path) && write_refused(p, dir, path, !(fl & LX_O_NOFOLLOW)) < 0)
        return -LX_EACCES;
    int hfd = openat((int)dir, path, host_open_flags(fl), (mode_t)(a[3] & ~p->cur->umask & 07777));
    if (hfd < 0)
        return -(int64_t)errno;
    return install_host(p, hfd,
                        (int)(fl & (LX_O_ACCMODE | LX_O_APPEND | LX_O_NONBLOCK | LX_O_DIRECTORY |
                                    LX_O_PATH)),
                        writes, 0, (fl & LX_O_CLOEXEC) != 0);
}

int64_t sc_close(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t fd = (int64_t)(int32_t)a[0];
    file_obj *f = files_get(p, fd);
    if (!f)
        return -LX_EBADF;
    p->cur->fds[fd].file = NULL;
    locks_closing(p, f);
    files_unref(p, f);
    return 0;
}


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
        int64_t rc = signal_send(p, p->sys_thread, LX_SIGPIPE, p->sys_thread, -1);
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

/* ---- ppoll ---- */

#define LX_POLLIN 0x1u
#define LX_POLLOUT 0x4u
#define LX_POLLERR 0x8u
#define LX_POLLHUP 0x10u
#define LX_POLLNVAL 0x20u
#define LX_POLLRDNORM 0x40u
#define LX_POLLWRNORM 0x100u

/* What a poll of F reports before masking, as Linux: a pipe's read end
 * has data (IN) or no writer left (HUP), its write end has room (OUT) or
 * no reader left (ERR); a host file is always ready both ways. The
 * standard streams are ready too: a read of stdin that has nothing yet
 * waits in the host, as a read does, never in simulated time. */
static unsigned poll_ready(const file_obj *f)
{
    const pipe_buf *pb = f->pipe;
    switch (f->kind) {
    case FILE_PIPE_R:
        return (pb->len ? LX_POLLIN | LX_POLLRDNORM : 0) | (pb->writers ? 0 : LX_POLLHUP);
    case FILE_PIPE_W:
        return (pb->len < pb->cap ? LX_POLLOUT | LX_POLLWRNORM : 0) | (pb->readers ? 0 : LX_POLLERR);
    case FILE_STDIN:
        return LX_POLLIN | LX_POLLRDNORM;
    case FILE_STDOUT:
    case FILE_STDERR:
        return LX_POLLOUT | LX_POLLWRNORM;
    default:
        return LX_POLLIN | LX_POLLOUT | LX_POLLRDNORM | LX_POLLWRNORM;
    }
}

/* After a poll found READY descriptors: 1 if the call returns now (some
 * are ready, or its deadline has passed), else 0 with the thread blocked
 * until a pipe changes or the deadline (fixed from TIMEOUT at the call's
 * first entry, kept in the thread while it blocks: RESTARTED says this is
 * a run after such a block). *LEFT: the cycles left before the deadline
 * when it returns. The callers clear t->polling on entry, so a call that
 * returns early (a fault) leaves no deadline behind. */
static int poll_done(drv_proc *p, thread *t, int restarted, uint64_t timeout, int64_t ready,
                     uint64_t *left)
{
    const uint64_t now = sched_now(p, t);
    if (!restarted)
        t->poll_deadline = timeout == UINT64_MAX ? UINT64_MAX
                           : now > UINT64_MAX - 1 - timeout ? UINT64_MAX - 1 : now + timeout;
    if (ready == 0 && now < t->poll_deadline) {
        t->polling = 1;
        t->wait_addr = 0;
        sched_block(p, t, WAIT_POLL, t->poll_deadline);
        return 0;
    }
    *left = now < t->poll_deadline ? t->poll_deadline - now : 0;
    return 1;
}

/* ppoll(fds, nfds, timeout, sigmask, sigsetsize). With nothing ready and
 * time left, the thread blocks until a pipe changes or the deadline, and
 * the call runs again: it returns the ready count, or 0 once the deadline
 * has passed. The signal mask is not applied: signals never interrupt a
 * blocked call here (they wait until it returns). */
int64_t sc_ppoll(drv_proc *p, thread *t, const uint64_t a[6])
{
    const int restarted = t->polling;
    t->polling = 0;
    uint64_t nfds = a[1];
    if (nfds > p->cur->rlim_cur[LX_RLIMIT_NOFILE] || nfds > 65536 || (a[3] && a[4] != 8))
        return -LX_EINVAL;
    int64_t rc;
    uint64_t timeout = UINT64_MAX, left;   /* none */
    if (a[2] && (rc = guest_read_timespec(p, a[2], &timeout)) < 0)
        return rc;
    uint8_t *pfd = NULL;
    if (nfds) {
        pfd = malloc(nfds * 8);
        if (!pfd)
            return -LX_ENOMEM;
        if (guest_read(p, a[0], pfd, nfds * 8) < 0) {
            free(pfd);
            return -LX_EFAULT;
        }
    }
    int64_t ready = 0;
    for (uint64_t i = 0; i < nfds; i++) {
        uint8_t *e = pfd + 8 * i;
        int32_t fd = (int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                               (uint32_t)e[3] << 24);
        unsigned events = (unsigned)e[4] | (unsigned)e[5] << 8, revents = 0;
        if (fd >= 0) {
            const file_obj *f = files_get(p, fd);
            revents = f ? poll_ready(f) & (events | LX_POLLERR | LX_POLLHUP) : LX_POLLNVAL;
        }
        e[6] = (uint8_t)revents;
        e[7] = (uint8_t)(revents >> 8);
        ready += revents != 0;
    }
    if (!poll_done(p, t, restarted, timeout, ready, &left)) {
        free(pfd);
        return SC_BLOCKED;
    }
    rc = nfds ? guest_write(p, a[0], pfd, nfds * 8) : 0;
    free(pfd);
    return rc < 0 ? rc : ready;
}

/* pselect6(n, readfds, writefds, exceptfds, timeout, sigmask): the sets
 * as poll sees them (read: IN, HUP or ERR; write: OUT or ERR; except:
 * nothing here has priority data), rewritten in place with the ready
 * descriptors; a descriptor in a set that is not open is EBADF. The
 * timeout gets the time left, as Linux writes it back. Blocking as
 * ppoll; the signal mask is not applied either. */
int64_t sc_pselect6(drv_proc *p, thread *t, const uint64_t a[6])
{
    const int restarted = t->polling;
    t->polling = 0;
    int64_t n = (int64_t)(int32_t)a[0];
    if (n < 0 || (uint64_t)n > p->cur->rlim_cur[LX_RLIMIT_NOFILE] || n > FD_MAX)
        return -LX_EINVAL;
    int64_t rc;
    uint64_t timeout = UINT64_MAX, left;   /* none */
    if (a[4] && (rc = guest_read_timespec(p, a[4], &timeout)) < 0)
        return rc;
    const size_t bytes = (size_t)(n + 63) / 64 * 8;
    uint8_t in[3][FD_MAX / 8], out[3][FD_MAX / 8];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && guest_read(p, a[1 + k], in[k], bytes) < 0)
            return -LX_EFAULT;
    static const unsigned want[3] = {LX_POLLIN | LX_POLLRDNORM | LX_POLLHUP | LX_POLLERR,
                                     LX_POLLOUT | LX_POLLWRNORM | LX_POLLERR, 0};
    int64_t ready = 0;
    for (int64_t fd = 0; fd < n; fd++) {
        unsigned asked = 0;
        for (int k = 0; k < 3; k++)
            asked |= (unsigned)((in[k][fd / 8] >> (fd % 8)) & 1) << k;
        if (!asked)
            continue;
        const file_obj *f = files_get(p, fd);
        if (!f)
            return -LX_EBADF;
        unsigned r = poll_ready(f);
        for (int k = 0; k < 3; k++)
            if ((asked >> k & 1) && (r & want[k])) {
                out[k][fd / 8] |= (uint8_t)(1u << (fd % 8));
                ready++;
            }
    }
    if (!poll_done(p, t, restarted, timeout, ready, &left))
        return SC_BLOCKED;
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && (rc = guest_write(p, a[1 + k], out[k], bytes)) < 0)
            return rc;
    if (a[4]) {
        uint8_t ts[16];
        for (int i = 0; i < 8; i++) {
            ts[i] = (uint8_t)((left / DRV_HZ) >> (8 * i));
            ts[8 + i] = (uint8_t)((left % DRV_HZ) >> (8 * i));
        }
        if ((rc = guest_write(p, a[4], ts, sizeof ts)) < 0)
            return rc;
    }
    return ready;
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
        p->cur->fds[fr].file = NULL;
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
    if (f->kind == FILE_HOST)
        shmap_sync_file(p, f->host_fd);   /* a read sees the stores through shared mappings */
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

/* DONE bytes DATA were written to host file F at OFF (at its position,
 * which is now past them, if OFF < 0): the file's shared mappings show
 * them. */
static void shown_in_mappings(drv_proc *p, const file_obj *f, int64_t off, const uint8_t *data,
                              uint64_t done)
{
    if (!p->cur->nshmaps || done == 0)
        return;
    if (off < 0) {
        off_t pos = lseek(f->host_fd, 0, SEEK_CUR);
        if (pos < 0 || (uint64_t)pos < done)
            return;
        off = (int64_t)((uint64_t)pos - done);
    }
    shmap_file_written(p, f->host_fd, (uint64_t)off, data, done);
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
    if (f->kind == FILE_STDOUT || f->kind == FILE_STDERR) {
        const uint64_t v[1][2] = {{buf, n}};
        return proc_output_iov(p, f, v, 1, n, 0);
    }
    uint8_t *tmp = malloc(n);
    if (!tmp)
        return -LX_ENOMEM;
    int64_t rc = guest_read(p, buf, tmp, n);
    if (rc == 0) {
        if (f->kind == FILE_PIPE_W) {
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
            shown_in_mappings(p, f, off, tmp, done);
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
    /* Gathered into one host write, so that the output stays in one piece
     * (the standard streams: a block at a time, proc_output_iov). */
    uint64_t total = 0;
    for (uint64_t i = 0; i < a[2]; i++)
        total += v[i][1];
    if (total > 0x7ffff000)
        return -LX_EINVAL;
    if (f->kind == FILE_STDOUT || f->kind == FILE_STDERR) {
        /* Every piece is checked first: a bad one fails the call before
         * anything is written. */
        for (uint64_t i = 0; i < a[2]; i++)
            if (v[i][1] && !guest_ok(p, v[i][0], v[i][1], LX_PROT_READ))
                return -LX_EFAULT;
        return proc_output_iov(p, f, (const uint64_t(*)[2])v, a[2], total, 0);
    }
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
    else if (f->kind == FILE_PIPE_W)
        rc = pipe_write(p, f, tmp, total);
    else {
        ssize_t r = write(f->host_fd, tmp, total);
        rc = r < 0 ? -(int64_t)errno : (int64_t)r;
        if (r > 0)
            shown_in_mappings(p, f, -1, tmp, (uint64_t)r);
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

/* stat of a /proc file of the simulated system, as Linux gives it (a
 * regular file of size 0, read-only), never the host file holding its
 * text (a new inode and times each run). */
static void proc_stat(struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFREG | 0444;
    st->st_dev = 0x16;
    st->st_ino = 0x1000;
    st->st_nlink = 1;
    st->st_uid = 1000;
    st->st_gid = 1000;
    st->st_blksize = 1024;
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = (time_t)DRV_EPOCH;
}

/* fstat of an open file. The guest's stdin, stdout and stderr are always
 * pipes of the simulated system, whatever rnr's own are (terminal, file,
 * pipe with a fresh inode each run), so that the run does not depend on
 * how it was started. */
static int file_stat(const file_obj *f, struct stat *st)
{
    if (f->proc) {
        proc_stat(st);
        return 0;
    }
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
    if (n > 0 && files_map_tmp(p, path, sizeof path) < 0)
        return -LX_ENAMETOOLONG;
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
    if (maps_path(p, path)) {
        proc_stat(&st);
        return put_stat(p, a[2], &st);
    }
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (fstatat((int)dir, path, &st, flags & LX_AT_SYMLINK_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0) != 0)
        return -(int64_t)errno;
    return put_stat(p, a[2], &st);
}

/* ---- statfs ---- */

/* Writes a host struct statfs as the guest's (asm-generic, 120 bytes:
 * eleven 8-byte words with the fsid's two ints in the eighth, then four
 * spare words). */
static int64_t put_statfs(drv_proc *p, uint64_t addr, const struct statfs *s)
{
    uint64_t w[15] = {(uint64_t)s->f_type, (uint64_t)s->f_bsize, (uint64_t)s->f_blocks,
                      (uint64_t)s->f_bfree, (uint64_t)s->f_bavail, (uint64_t)s->f_files,
                      (uint64_t)s->f_ffree, 0, (uint64_t)s->f_namelen, (uint64_t)s->f_frsize,
                      (uint64_t)s->f_flags, 0, 0, 0, 0};
    int32_t fsid[2];
    memcpy(fsid, &s->f_fsid, sizeof fsid);
    w[7] = (uint64_t)(uint32_t)fsid[0] | (uint64_t)(uint32_t)fsid[1] << 32;
    uint8_t b[sizeof w];
    for (size_t i = 0; i < 15; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + (size_t)k] = (uint8_t)(w[i] >> (8 * k));
    return guest_write(p, addr, b, sizeof b);
}

/* The file system of the simulated system's own files: the standard
 * streams and pipes are pipefs, the /proc files procfs, as on Linux. */
static void own_statfs(struct statfs *s, int proc)
{
    memset(s, 0, sizeof *s);
    s->f_type = proc ? 0x9fa0 : 0x50495045;
    s->f_bsize = s->f_frsize = 4096;
    s->f_namelen = 255;
}

int64_t sc_statfs(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    char path[PATH_MAX];
    int64_t n = guest_path(p, a[0], path, sizeof path);
    if (n < 0)
        return n;
    struct statfs s;
    if (maps_path(p, path)) {
        own_statfs(&s, 1);
    } else {
        int64_t dir = host_at(p, LX_AT_FDCWD, path);
        if (dir < 0 && dir != AT_FDCWD)
            return dir;
        if (statfs(path, &s) != 0)
            return -(int64_t)errno;
    }
    return put_statfs(p, a[1], &s);
}

int64_t sc_fstatfs(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    struct statfs s;
    if (f->kind != FILE_HOST || f->proc)
        own_statfs(&s, f->proc);
    else if (fstatfs(f->host_fd, &s) != 0)
        return -(int64_t)errno;
    return put_statfs(p, a[1], &s);
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
        len = (ssize_t)strlen(p->cur->exe_path);
        memcpy(target, p->cur->exe_path, (size_t)len);
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
    if (maps_path(p, path))   /* mode 0444, as proc_stat says */
        return mode & (LX_W_OK | LX_X_OK) ? -LX_EACCES : 0;
    int64_t dir = host_at(p, a[0], path);
    if (dir < 0 && dir != AT_FDCWD)
        return dir;
    if (faccessat((int)dir, path, (int)mode, 0) != 0)
        return -(int64_t)errno;
    if ((mode & LX_W_OK) && !files_write_allowed(p, (int)dir, path, 1))
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

/* ---- locks ----
 *
 * The simulated system runs one process. POSIX record locks belong to the
 * process, and a process's own locks never conflict: F_SETLK and F_SETLKW
 * always succeed and F_GETLK always finds the range free, exactly as
 * Linux does for a process alone. flock(2) and the open-file-description
 * locks (F_OFD_*) belong to an open file description instead, so two
 * descriptions of one file in one process can conflict on Linux; here
 * they never do (the call succeeds at once). */

enum { LK_RD = 0, LK_WR = 1, LK_UN = 2 };
enum { LK_F_OFD_GETLK = 36, LK_F_OFD_SETLK = 37, LK_F_OFD_SETLKW = 38 };
#define LK_FLOCK_SIZE 32        /* l_type, l_whence (2 bytes each), l_start, l_len, l_pid */

/* fcntl's lock commands (locks.c): the struct flock read, its range made
 * absolute (SEEK_CUR: the host descriptor's offset, which is the
 * guest's; SEEK_END: the host file's size), and F_GETLK's answer written
 * back (result+mem: a replay takes it from the log). */
static int64_t fcntl_lock(drv_proc *p, file_obj *f, int cmd, uint64_t addr)
{
    uint8_t b[LK_FLOCK_SIZE];
    int64_t rc = guest_read(p, addr, b, sizeof b);
    if (rc < 0)
        return rc;
    int type = b[0] | b[1] << 8, whence = b[2] | b[3] << 8;
    int32_t pid = (int32_t)((uint32_t)b[24] | (uint32_t)b[25] << 8 | (uint32_t)b[26] << 16 |
                            (uint32_t)b[27] << 24);
    int ofd = cmd >= LK_F_OFD_GETLK;
    if (type > LK_UN || whence > 2 || (ofd && pid != 0))
        return -LX_EINVAL;
    int get = cmd == LX_F_GETLK || cmd == LK_F_OFD_GETLK;
    if (get && type == LK_UN)
        return -LX_EINVAL;
    int mode = f->flags & LX_O_ACCMODE;
    if (!get && ((type == LK_RD && mode == LX_O_WRONLY) || (type == LK_WR && mode == LX_O_RDONLY)))
        return -LX_EBADF;
    int64_t start = (int64_t)le64_get(b + 8), len = (int64_t)le64_get(b + 16), base = 0;
    if (whence != 0 && f->kind == FILE_HOST) {
        struct stat st;
        if (whence == 1)
            base = lseek(f->host_fd, 0, SEEK_CUR);
        else
            base = fstat(f->host_fd, &st) < 0 ? -1 : st.st_size;
        if (base < 0)
            return -(int64_t)errno;
    }
    if ((start > 0 && base > INT64_MAX - start) || base + start < 0)
        return -LX_EINVAL;
    int lcmd = get ? LOCKS_GET : (cmd == LX_F_SETLK || cmd == LK_F_OFD_SETLK) ? LOCKS_SET : LOCKS_SETW;
    uint64_t out_start = 0, out_len = 0;
    int out_type = LK_UN;
    int32_t out_pid = 0;
    rc = locks_fcntl(p, f, ofd, lcmd, type, base + start, len, &out_start, &out_len, &out_type,
                     &out_pid);
    if (rc < 0 || !get)
        return rc;
    if (out_type == LK_UN) {
        const uint8_t un[2] = {LK_UN, 0};
        return guest_write(p, addr, un, sizeof un);
    }
    memset(b, 0, sizeof b);
    b[0] = (uint8_t)out_type;   /* l_whence SEEK_SET */
    le64_put(b + 8, out_start);
    le64_put(b + 16, out_len);
    for (int i = 0; i < 4; i++)
        b[24 + i] = (uint8_t)((uint32_t)out_pid >> (8 * i));
    return guest_write(p, addr, b, sizeof b);
}

int64_t sc_flock(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    int op = (int)a[1] & ~4, nonblock = ((int)a[1] & 4) != 0;   /* LOCK_NB */
    switch (op) {
    case 1: return locks_flock(p, f, LOCKS_RD, nonblock);   /* LOCK_SH */
    case 2: return locks_flock(p, f, LOCKS_WR, nonblock);   /* LOCK_EX */
    case 8: return locks_flock(p, f, LOCKS_UN, nonblock);   /* LOCK_UN */
    default: return -LX_EINVAL;
    }
}

/* posix_fadvise: advice only; checked as Linux checks it. */
int64_t sc_fadvise64(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    file_obj *f = files_get(p, (int64_t)(int32_t)a[0]);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST)
        return -LX_ESPIPE;
    return (int64_t)a[2] < 0 || a[3] > 5 ? -LX_EINVAL : 0;
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
        return p->cur->fds[fd].cloexec ? LX_FD_CLOEXEC : 0;
    case LX_F_SETFD:
        p->cur->fds[fd].cloexec = (arg & LX_FD_CLOEXEC) != 0;
        return 0;
    case LX_F_GETFL:
        return f->flags;
    case LX_F_SETFL:
        f->flags = (f->flags & ~(LX_O_APPEND | LX_O_NONBLOCK)) |
                   (int)(arg & (LX_O_APPEND | LX_O_NONBLOCK));
        return 0;
    case LX_F_GETLK:
    case LX_F_SETLK:
    case LX_F_SETLKW:
    case LK_F_OFD_GETLK:
    case LK_F_OFD_SETLK:
    case LK_F_OFD_SETLKW:
        return fcntl_lock(p, f, (int)a[1], a[2]);
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
    file_obj *old = p->cur->fds[newfd].file;
    f->refs++;
    p->cur->fds[newfd].file = NULL;
    if (old)
        locks_closing(p, old);
    files_unref(p, old);
    p->cur->fds[newfd].file = f;
    p->cur->fds[newfd].cloexec = (a[2] & LX_O_CLOEXEC) != 0;
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
