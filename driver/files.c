/* driver/files.c: the guest's file-descriptor table over host descriptors,
 * and the rule that says which host paths the guest may write. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/internal.h"

file_obj *files_new(file_kind kind, int host_fd, int flags, int writable)
{
    file_obj *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->refs = 1;
    f->kind = kind;
    f->host_fd = host_fd;
    f->flags = flags;
    f->writable = writable;
    return f;
}

void files_pipe_wake(drv_proc *p, pipe_buf *pb)
{
    thread *waker = p->sys_thread;
    uint64_t now = waker ? sched_now(p, waker) : 0;
    for (size_t i = 0; i < p->nalive; i++) {
        thread *t = p->alive[i];
        if (t->state == THR_BLOCKED &&
            ((t->wait == WAIT_PIPE && t->wait_addr == pb->id) || t->wait == WAIT_POLL))
            sched_restart(p, t, now);
    }
}

void files_unref(drv_proc *p, file_obj *f)
{
    if (!f || --f->refs > 0)
        return;
    locks_released(p, f);
    if (f->kind == FILE_HOST && f->host_fd >= 0)
        close(f->host_fd);
    if (f->pipe) {
        pipe_buf *pb = f->pipe;
        if (f->kind == FILE_PIPE_R)
            pb->readers--;
        else
            pb->writers--;
        if (pb->readers == 0 && pb->writers == 0) {
            free(pb->data);
            free(pb);
        } else if (!p->done) {
            files_pipe_wake(p, pb);   /* EOF for readers, EPIPE for writers */
        }
    }
    free(f);
}

void files_init(drv_proc *p)
{
    p->cur->fds[0].file = files_new(FILE_STDIN, p->cfg.stdin_fd, LX_O_RDONLY, 0);
    p->cur->fds[1].file = files_new(FILE_STDOUT, p->cfg.stdout_fd, LX_O_WRONLY, 1);
    p->cur->fds[2].file = files_new(FILE_STDERR, p->cfg.stderr_fd, LX_O_WRONLY, 1);
}

void files_close_all(drv_proc *p)
{
    for (int i = 0; i < FD_MAX; i++) {
        file_obj *f = p->cur->fds[i].file;
        p->cur->fds[i].file = NULL;
        files_unref(p, f);
    }
}

file_obj *files_get(drv_proc *p, int64_t fd)
{
    return fd >= 0 && fd < FD_MAX ? p->cur->fds[fd].file : NULL;
}

int64_t files_install(drv_proc *p, file_obj *f, int64_t min, int cloexec)
{
    uint64_t limit = p->cur->rlim_cur[LX_RLIMIT_NOFILE] < FD_MAX ? p->cur->rlim_cur[LX_RLIMIT_NOFILE] : FD_MAX;
    for (int64_t fd = min < 0 ? 0 : min; fd < (int64_t)limit; fd++) {
        if (!p->cur->fds[fd].file) {
            p->cur->fds[fd].file = f;
            p->cur->fds[fd].cloexec = cloexec;
            return fd;
        }
    }
    return -LX_EMFILE;
}

/* The absolute, symlink-free form of PATH (relative to host directory
 * descriptor DIRFD or the current directory) when its parent exists:
 * realpath of the parent plus the last component, itself resolved if it
 * is a symbolic link and FOLLOW. 0 or -1. */
static int resolve(int dirfd, const char *path, int follow, char out[PATH_MAX])
{
    char full[2 * PATH_MAX];
    if (path[0] == '/') {
        snprintf(full, sizeof full, "%s", path);
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base))
                return -1;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, base, sizeof base - 1);
            if (n < 0)
                return -1;
            base[n] = 0;
        }
        snprintf(full, sizeof full, "%s/%s", base, path);
    }
    size_t len = strlen(full);
    while (len > 1 && full[len - 1] == '/')
        full[--len] = 0;
    char *slash = strrchr(full, '/');
    const char *leaf = slash + 1;
    char parent[PATH_MAX];
    if (slash == full) {
        snprintf(parent, sizeof parent, "/");
    } else {
        *slash = 0;
        if (!realpath(full, parent))
            return -1;
    }
    if (strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0 || !*leaf) {
        char tmp[2 * PATH_MAX + 4];
        snprintf(tmp, sizeof tmp, "%s/%s", parent, leaf);
        return realpath(tmp, out) ? 0 : -1;
    }
    if (snprintf(out, PATH_MAX, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", leaf) >= PATH_MAX)
        return -1;
    /* A symbolic link followed is judged by where it leads (a dangling
     * one: no); one not followed (unlink, rename, link: the call changes
     * the link) by where it is. */
    struct stat st;
    if (follow && lstat(out, &st) == 0 && S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        if (!realpath(out, target))
            return -1;
        memcpy(out, target, strlen(target) + 1);
    }
    return 0;
}

/* 1 if absolute, symlink-free path ABS lies under an --allow-write directory. */
static int under_allowed(const drv_proc *p, const char *abs)
{
    for (size_t i = 0; i < p->n_allow_write; i++) {
        const char *dir = p->allow_write[i];
        size_t n = strlen(dir);
        if (strcmp(dir, "/") == 0)
            return 1;
        if (strncmp(abs, dir, n) == 0 && (abs[n] == '/' || abs[n] == 0))
            return 1;
    }
    return 0;
}

int files_write_allowed(const drv_proc *p, int dirfd_host, const char *path, int follow)
{
    if (p->n_allow_write == 0)
        return 0;
    char abs[PATH_MAX];
    if (resolve(dirfd_host, path, follow, abs) < 0)
        return 0;
    return under_allowed(p, abs);
}

int files_fd_write_allowed(const drv_proc *p, int host_fd)
{
    if (p->n_allow_write == 0)
        return 0;
    char link[64], abs[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", host_fd);
    ssize_t n = readlink(link, abs, sizeof abs - 1);
    if (n <= 0 || abs[0] != '/')   /* a memfd's "/memfd:..." passes here, is in no directory */
        return 0;
    abs[n] = 0;
    return under_allowed(p, abs);
}

/* PATH under the guest directory GUEST (e.g. "/tmp") moved to HOST. */
static int64_t map_prefix(char *path, size_t size, const char *guest, const char *host)
{
    size_t g = strlen(guest);
    if (!host || strncmp(path, guest, g) != 0 || (path[g] != '/' && path[g] != 0))
        return 0;
    size_t h = strlen(host), rest = strlen(path + g);
    if (h + rest + 1 > size)
        return -LX_ENAMETOOLONG;
    memmove(path + h, path + g, rest + 1);
    memcpy(path, host, h);
    return 1;
}

int64_t files_map_tmp(const drv_proc *p, char *path, size_t size)
{
    int64_t rc = map_prefix(path, size, "/tmp", p->private_tmp);
    if (rc == 0)
        rc = map_prefix(path, size, "/dev/shm", p->private_shm);
    return rc < 0 ? rc : 0;
}

int files_private_tmp(drv_proc *p, char *err, size_t errlen)
{
    const char *base = getenv("TMPDIR");
    char tmpl[PATH_MAX], abs[PATH_MAX], sub[PATH_MAX + 8];
    if (!base || !*base)
        base = "/tmp";
    if (snprintf(tmpl, sizeof tmpl, "%s/rnr-tmp-XXXXXX", base) >= (int)sizeof tmpl ||
        !mkdtemp(tmpl) || !realpath(tmpl, abs)) {
        snprintf(err, errlen, "%s: cannot make the guest's private /tmp: %s (--private-tmp)",
                 base, strerror(errno));
        return -1;
    }
    /* ROOT/tmp is the guest's /tmp, ROOT/shm its /dev/shm; writes are
     * allowed under ROOT. */
    p->private_root = strdup(abs);
    snprintf(sub, sizeof sub, "%s/tmp", abs);
    p->private_tmp = strdup(sub);
    int ok = mkdir(sub, 0700) == 0;
    snprintf(sub, sizeof sub, "%s/shm", abs);
    p->private_shm = strdup(sub);
    ok = ok && mkdir(sub, 0700) == 0;
    char **aw = realloc(p->allow_write, (p->n_allow_write + 1) * sizeof *aw);
    if (aw)
        p->allow_write = aw;
    if (!ok || !p->private_root || !p->private_tmp || !p->private_shm || !aw ||
        !(aw[p->n_allow_write] = strdup(abs))) {
        snprintf(err, errlen, "%s: cannot make the guest's private /tmp: %s (--private-tmp)", abs,
                 ok ? "out of memory" : strerror(errno));
        files_private_tmp_remove(p);
        return -1;
    }
    p->n_allow_write++;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void files_private_tmp_remove(drv_proc *p)
{
    if (p->private_root)
        nftw(p->private_root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(p->private_root);
    free(p->private_tmp);
    free(p->private_shm);
    p->private_root = p->private_tmp = p->private_shm = NULL;
}
