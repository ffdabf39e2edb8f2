/* driver/sys_exec.c: execve: the process replaces its program.
 *
 * Recording and run: the checks Linux makes before the point of no return
 * (the path names an executable regular file, the arguments are readable,
 * the file is a static riscv64 program rnr loads), then the caller's
 * other threads end (end_other_threads), the old address space goes
 * (shared file mappings written back first, as at munmap), the new image
 * and its initial stack come in as at the start
 * (proc_exec_image), close-on-exec descriptors close, caught signals go
 * back to their default action, and the thread goes on at the new entry
 * point with every register zero but sp. The recording lists every image
 * a successful execve loaded, in order, with its SHA-256 (drv_proc_exec),
 * hands the file's bytes to the recorder (drv_config.exec_loaded, which
 * packs them into the bundle), and logs the new stack's 16 AT_RANDOM
 * bytes as the call's memory record.
 *
 * Replay: a successful execve is executed again on the next image of that
 * list (drv_config.exec_images, the file checked against its hash): the
 * same image, arguments and environment give the same address space and
 * stack, and the logged bytes put back the random ones.
 *
 * From a thread other than the first, the caller takes the first thread's
 * id (the pid) as the guest sees it (thread.vtid); rnr's records keep its
 * own. Not supported (docs/driver.md): a program that is not a static
 * riscv64 ELF executable (ENOEXEC). execveat is execve at a directory
 * descriptor's path or of a descriptor's own file (AT_EMPTY_PATH; glibc's
 * fexecve), found through the host's /proc/self/fd. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/internal.h"
#include "formats/digest.h"

#define EXEC_ARGS_MAX 65536u        /* arguments or environment strings (E2BIG past it) */
#define EXEC_BYTES_MAX (2u << 20)   /* bytes of them together (E2BIG past it) */

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* The NULL-terminated array of strings at ADDR in guest memory; *BYTES
 * grows by their lengths. 0, or -errno. */
static int64_t read_strings(drv_proc *p, uint64_t addr, char ***out, size_t *n, size_t *bytes)
{
    *out = NULL;
    *n = 0;
    if (!addr)
        return 0;
    size_t cap = 0;
    char buf[PATH_MAX * 4];
    for (;;) {
        uint64_t ptr;
        uint8_t b[8];
        int64_t rc = guest_read(p, addr + 8 * *n, b, 8);
        if (rc < 0)
            goto fail_rc;
        ptr = le64_get(b);
        if (!ptr)
            return 0;
        if (*n == EXEC_ARGS_MAX) {
            rc = -LX_E2BIG;
            goto fail_rc;
        }
        int64_t len = guest_read_str(p, ptr, buf, sizeof buf);
        if (len < 0) {
            rc = len == -LX_ENAMETOOLONG ? -LX_E2BIG : len;
            goto fail_rc;
        }
        *bytes += (size_t)len + 1;
        if (*bytes > EXEC_BYTES_MAX) {
            rc = -LX_E2BIG;
            goto fail_rc;
        }
        if (*n + 1 >= cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(*out, cap * sizeof *v);
            if (!v) {
                rc = -LX_ENOMEM;
                goto fail_rc;
            }
            *out = v;
        }
        (*out)[*n] = strdup(buf);
        if (!(*out)[*n]) {
            rc = -LX_ENOMEM;
            goto fail_rc;
        }
        ++*n;
        continue;
fail_rc:
        free_strings(*out, *n);
        *out = NULL;
        *n = 0;
        return rc;
    }
}

/* The thread's state an exec resets (the registers are the image's). */
static void exec_resets(drv_proc *p, thread *t)
{
    for (int sig = 1; sig <= LX_NSIG; sig++) {
        sigaction_state *s = &p->cur->sigactions[sig];
        if (s->handler != LX_SIG_IGN)
            s->handler = LX_SIG_DFL;
        s->flags = 0;
        s->mask = 0;
    }
    p->cur->sigtramp = 0;   /* its page went with the address space */
    t->altstack_sp = t->altstack_size = 0;
    t->altstack_flags = LX_SS_DISABLE;
    t->clear_child_tid = 0;
    t->robust_list = 0;
    for (int fd = 0; fd < FD_MAX; fd++) {
        file_obj *f = p->cur->fds[fd].file;
        if (f && p->cur->fds[fd].cloexec) {
            p->cur->fds[fd].file = NULL;
            locks_closing(p, f);
            files_unref(p, f);
        }
    }
}

/* SHA (hex) of the N bytes FILE of a program execve loads. The same bytes
 * loaded lately (a shell executes one program many times) are compared,
 * not hashed again: a compare costs a fraction of a hash, and exactly the
 * same bytes have exactly the same hash. */
static void program_hash(drv_proc *p, const uint8_t *file, size_t n, char sha[RNR_SHA256_HEX])
{
    const size_t slots = sizeof p->exec_seen / sizeof p->exec_seen[0];
    for (size_t i = 0; i < slots; i++) {
        const struct exec_seen *e = &p->exec_seen[i];
        if (e->bytes && e->n == n && memcmp(e->bytes, file, n) == 0) {
            memcpy(sha, e->sha, RNR_SHA256_HEX);
            return;
        }
    }
    rnr_sha256 h;
    uint8_t digest[32];
    rnr_sha256_init(&h);
    rnr_sha256_update(&h, file, n);
    rnr_sha256_final(&h, digest);
    rnr_hex(digest, 32, sha);
    struct exec_seen *e = &p->exec_seen[p->exec_seen_next++ % slots];
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        return;   /* not remembered: hashed again next time */
    memcpy(copy, file, n);
    free(e->bytes);
    e->bytes = copy;
    e->n = n;
    memcpy(e->sha, sha, RNR_SHA256_HEX);
}

/* Replaces the program with the one at HOST_PATH (the guest named it
 * GUEST_PATH): 0 with *CTX the new registers and SHA the SHA-256 (hex) of
 * the file loaded; 1 if a replay's WANT (NULL: none) is not that hash, or
 * -errno, before anything changed; past the point of no return a failure
 * ends the process. The file is read once: hashed as loaded. */
static int64_t do_exec(drv_proc *p, thread *t, const char *host_path, const char *guest_path,
                       char **argv, size_t argc, char **envp, size_t envc, rru_ctx *ctx,
                       const char *want, char sha[RNR_SHA256_HEX])
{
    char err[512];
    loader_image img;
    if (loader_open(host_path, &img, err, sizeof err) < 0)
        return -LX_ENOEXEC;
    program_hash(p, img.file, img.file_size, sha);
    if (want && strcmp(sha, want) != 0) {
        loader_free(&img);
        return 1;
    }
    proc_end_threads(p, t, want != NULL);
    /* A vfork child gets its own memory now, and its parent goes on. */
    if (process_vfork_done(p) < 0) {
        loader_free(&img);
        proc_fail(p, "execve of %s: out of memory", host_path);
        return SC_GONE;
    }
    /* From another thread than the first, the caller takes the first
     * thread's id, as in Linux; rnr's records go on keying it by its own
     * (thread.vtid). */
    if (t->vtid != p->cur->pid) {
        t->vtid = p->cur->pid;
        p->cur->leader_alias = t;
    }
    rru_ctx fresh;
    if (proc_exec_image(p, &img, host_path, guest_path, (const char *const *)argv, argc,
                        (const char *const *)envp, envc, &fresh, err, sizeof err) < 0) {
        proc_fail(p, "execve of %s: %s", host_path, err);
        return SC_GONE;
    }
    exec_resets(p, t);
    const char *slash = strrchr(guest_path, '/');
    snprintf(t->name, sizeof t->name, "%s", slash ? slash + 1 : guest_path);
    /* The thread's retired-instruction count goes on (the logs key checks
     * and store-conditionals by it): every other register starts afresh. */
    fresh.instret = ctx->instret;
    *ctx = fresh;
    return 0;
}

#define EXECVEAT_NR 281
#define EXEC_AT_EMPTY_PATH 0x1000
#define EXEC_AT_SYMLINK_NOFOLLOW 0x100

/* The arguments of execve (path a[0], argv a[1], envp a[2]) or execveat
 * (the same from a[1]; an empty path only with AT_EMPTY_PATH in a[4]);
 * 0 or -errno. */
static int64_t exec_args(drv_proc *p, uint64_t nr, const uint64_t a[6], char *path, size_t pathlen,
                         char ***argv, size_t *argc, char ***envp, size_t *envc)
{
    int at = nr == EXECVEAT_NR;
    int64_t n = guest_read_str(p, a[at], path, pathlen);
    if (n < 0)
        return n;
    if (n == 0 && !(at && (a[4] & EXEC_AT_EMPTY_PATH)))
        return -LX_ENOENT;
    a += at;
    size_t bytes = 0;
    int64_t rc = read_strings(p, a[1], argv, argc, &bytes);
    if (rc < 0)
        return rc;
    rc = read_strings(p, a[2], envp, envc, &bytes);
    if (rc < 0) {
        free_strings(*argv, *argc);
        return rc;
    }
    return 0;
}

static int add_exec(drv_proc *p, const char *abs, const char *sha)
{
    if (p->nexecs == p->cap_execs) {
        size_t cap = p->cap_execs ? 2 * p->cap_execs : 4;
        drv_exec_image *v = realloc(p->execs, cap * sizeof *v);
        if (!v)
            return -1;
        p->execs = v;
        p->cap_execs = cap;
    }
    drv_exec_image *e = &p->execs[p->nexecs];
    e->path = strdup(abs);
    if (!e->path)
        return -1;
    memcpy(e->sha256, sha, RNR_SHA256_HEX);
    p->nexecs++;
    return 0;
}

/* The name execveat gives the program (its AT_EXECFN) for the guest's
 * DIRFD, PATH and FLAGS, as Linux does: PATH itself when absolute or
 * relative to the working directory, else /dev/fd/DIRFD[/PATH]. */
static void execveat_name(int64_t dirfd, const char *path, char *out, size_t len)
{
    if (path[0] == '/' || dirfd == LX_AT_FDCWD)
        snprintf(out, len, "%s", path);
    else if (!path[0])
        snprintf(out, len, "/dev/fd/%d", (int)dirfd);
    else
        snprintf(out, len, "/dev/fd/%d/%.3900s", (int)dirfd, path);
}

/* The host path of execveat's program (DIRFD, PATH, FLAGS) into HOST:
 * through /proc/self/fd/ of the host descriptor for a path relative to a
 * directory descriptor, or for AT_EMPTY_PATH the descriptor's own file.
 * 0 or -errno (EINVAL for other flags, EBADF, ENOTDIR, ELOOP for a final
 * symbolic link under AT_SYMLINK_NOFOLLOW). */
static int64_t execveat_host(drv_proc *p, int64_t dirfd, const char *path, uint64_t flags,
                             char host[PATH_MAX])
{
    if (flags & ~(uint64_t)(EXEC_AT_EMPTY_PATH | EXEC_AT_SYMLINK_NOFOLLOW))
        return -LX_EINVAL;
    if (path[0] == '/' || dirfd == LX_AT_FDCWD) {
        snprintf(host, PATH_MAX, "%s", path);
        int64_t rc = files_map_tmp(p, host, PATH_MAX);
        if (rc < 0)
            return rc;
        if (host[0] == '/' && files_hidden(host))
            return -LX_ENOENT;   /* /proc/self/fd/N would be the host's descriptor N */
    } else {
        const file_obj *f = files_get(p, dirfd);
        if (!f)
            return -LX_EBADF;
        if (f->kind != FILE_HOST)
            return path[0] ? -LX_ENOTDIR : -LX_EACCES;
        /* A descriptor that is not a directory: the host's ENOTDIR. */
        if (path[0])
            snprintf(host, PATH_MAX, "/proc/self/fd/%d/%.4000s", f->host_fd, path);
        else
            snprintf(host, PATH_MAX, "/proc/self/fd/%d", f->host_fd);
    }
    struct stat st;
    if (path[0] && (flags & EXEC_AT_SYMLINK_NOFOLLOW) && lstat(host, &st) == 0 && S_ISLNK(st.st_mode))
        return -LX_ELOOP;
    return 0;
}

/* execve (a[0] path, a[1] argv, a[2] envp) and execveat (a[0] dirfd, then
 * path, argv, envp, and a[4] flags). */
static int64_t exec_call(drv_proc *p, thread *t, uint64_t nr, const uint64_t a[6])
{
    char path[PATH_MAX];
    char **argv = NULL, **envp = NULL;
    size_t argc = 0, envc = 0;
    int64_t rc = exec_args(p, nr, a, path, sizeof path, &argv, &argc, &envp, &envc);
    if (rc < 0)
        return rc;
    char host[PATH_MAX], abs[PATH_MAX], name[PATH_MAX];
    struct stat st;
    char sha[RNR_SHA256_HEX];
    if (nr == EXECVEAT_NR) {
        execveat_name((int64_t)(int32_t)a[0], path, name, sizeof name);
        rc = execveat_host(p, (int64_t)(int32_t)a[0], path, a[4], host);
    } else {
        snprintf(name, sizeof name, "%s", path);
        snprintf(host, sizeof host, "%s", path);
        rc = files_map_tmp(p, host, sizeof host);
        if (rc == 0 && host[0] == '/' && files_hidden(host))
            rc = -LX_ENOENT;   /* /proc/self/fd/N would be the host's descriptor N */
    }
    if (rc < 0)
        goto out;
    if (access(host, X_OK) != 0) {
        rc = -(int64_t)errno;
        goto out;
    }
    if (stat(host, &st) != 0 || !S_ISREG(st.st_mode) || !realpath(host, abs)) {
        rc = -LX_EACCES;
        goto out;
    }
    rru_ctx *ctx = sched_ctx(p, t);
    rc = do_exec(p, t, abs, name, argv, argc, envp, envc, ctx, NULL, sha);
    if (rc == 0 && p->in) {
        if (add_exec(p, abs, sha) < 0) {
            proc_fail(p, "recording: out of memory");
            rc = SC_GONE;
            goto out;
        }
        inlog_pending_add(&t->log, p->cur->random_addr, p->cur->random_bytes, 16);
        char err[512];
        if (p->cfg.exec_loaded &&
            p->cfg.exec_loaded(p->cfg.exec_ctx, sha, p->cur->img.file, p->cur->img.file_size, err,
                               sizeof err) != 0) {
            proc_fail(p, "recording: %s", err);
            rc = SC_GONE;
            goto out;
        }
    }
out:
    free_strings(argv, argc);
    free_strings(envp, envc);
    return rc;
}

int64_t sc_execve(drv_proc *p, thread *t, const uint64_t a[6]) { return exec_call(p, t, 221, a); }

int64_t sc_execveat(drv_proc *p, thread *t, const uint64_t a[6])
{
    return exec_call(p, t, EXECVEAT_NR, a);
}

int64_t exec_replay(drv_proc *p, thread *t, rru_ctx *ctx, uint64_t nr, const uint64_t a[6],
                    char *msg, size_t msglen)
{
    const drv_exec_image *e;
    char dyn_path[PATH_MAX];
    drv_exec_image dyn = { dyn_path, "" };
    if (p->nexecs < p->cfg.n_exec_images) {
        e = &p->cfg.exec_images[p->nexecs];
    } else if (p->cfg.exec_image) {
        char why[512];
        if (p->cfg.exec_image(p->cfg.exec_ctx, p->nexecs, dyn_path, sizeof dyn_path, dyn.sha256, why,
                              sizeof why) < 0) {
            snprintf(msg, msglen, "thread %u: execve number %zu succeeded in the recording: %s",
                     t->tid, p->nexecs + 1, why);
            return -1;
        }
        e = &dyn;
    } else {
        snprintf(msg, msglen, "thread %u: execve number %zu succeeded in the recording, whose manifest "
                 "lists %zu program%s it executed", t->tid, p->nexecs + 1, p->cfg.n_exec_images,
                 p->cfg.n_exec_images == 1 ? "" : "s");
        return -1;
    }
    char hex[RNR_SHA256_HEX];
    char path[PATH_MAX], name[PATH_MAX];
    char **argv = NULL, **envp = NULL;
    size_t argc = 0, envc = 0;
    if (exec_args(p, nr, a, path, sizeof path, &argv, &argc, &envp, &envc) < 0) {
        snprintf(msg, msglen, "thread %u: the arguments of its execve are not readable in the replay",
                 t->tid);
        return -1;
    }
    if (nr == EXECVEAT_NR)
        execveat_name((int64_t)(int32_t)a[0], path, name, sizeof name);
    else
        snprintf(name, sizeof name, "%s", path);
    int64_t rc = do_exec(p, t, e->path, name, argv, argc, envp, envc, ctx, e->sha256, hex);
    free_strings(argv, argc);
    free_strings(envp, envc);
    if (rc == 1) {
        snprintf(msg, msglen, "thread %u executes %s (execve), which is not the recorded file "
                 "(SHA-256 %s, recorded %s)", t->tid, e->path, hex, e->sha256);
        return -1;
    }
    if (rc < 0) {
        snprintf(msg, msglen, "thread %u: execve of %s fails in the replay (%s)", t->tid, e->path,
                 p->message ? p->message : "not a program rnr loads");
        return -1;
    }
    p->nexecs++;
    return 0;
}

size_t drv_proc_execs(const drv_proc *p) { return p->nexecs; }

const char *drv_proc_exe(const drv_proc *p) { return p->cur->exe_path; }

const drv_exec_image *drv_proc_exec(const drv_proc *p, size_t i)
{
    return p->execs && i < p->nexecs ? &p->execs[i] : NULL;
}
