/* follower/follow.c: the on-line follower (follower/follow.h,
 * docs/online.md). One receiving thread reads the stream, appends each
 * channel's bytes to its file and wakes the readers; the replay reads the
 * input and final logs through cursors over those files whose reads wait
 * for bytes still to come, so the engine and the workers are those of
 * `rnr replay`. */
#include "follower/follow.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/bundle.h"
#include "formats/digest.h"
#include "formats/log.h"
#include "formats/manifest.h"
#include "formats/net.h"
#include "formats/stream.h"
#include "replayer/engine.h"
#include "replayer/exec.h"
#include "rru/alloc.h"
#include "rru/clock.h"

/* One channel of the stream: the file its bytes go to. */
typedef struct channel {
    int fd;                    /* appended to by the receiver */
    char *path;
    uint64_t size;             /* bytes received (under mu) */
    int ended;                 /* its empty end block, or the stream's END, came */
} channel;

typedef struct follower {
    const follow_options *o;
    int fd, socket;
    const char *name;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    channel ch[RNR_ST_CHANNELS];
    char *tmpdir;              /* the channels' files without -o */
    rnr_bundle *b;             /* -o */
    char *final_path;          /* the final log's file (its kind known from its header) */
    rnr_manifest *fixed, *final;
    /* The stream's state (under mu). */
    int ended;                 /* END came */
    int dead;                  /* the connection ended or failed without END */
    int bad;                   /* the stream is not a good stream: exit 2 */
    char why[1024];            /* dead or bad: the reason */
    int stop;                  /* the receiver ends */
    uint64_t bytes;
    uint64_t p_instructions, p_chunks, p_final;
    double t0, last_byte;
    /* The replay's progress (under mu). */
    uint64_t chunks, instructions;
    rp_chunk last;
    int has_last;
    uint64_t lag_samples, lag_sum, lag_max;
    rnr_stream_parser *parser;
    rp_exec *x;
    /* The program an exec block is bringing (the receiver's own). */
    uint8_t exec_sha[32];
    uint8_t *exec_buf;
    uint64_t exec_size, exec_got;
    /* The programs execve loaded, in order: path and SHA-256 (under mu). */
    struct follow_exec { char *path; char sha[RNR_SHA256_HEX]; } *execs;
    size_t nexecs;
} follower;

/* ---- the channels' files ---- */

static const char *const channel_files[RNR_ST_CHANNELS] = {
    NULL, NULL, "program", "initial.log", "input.log", "final.log", "stdout", "stderr",
};

static int bundle_file_of(uint32_t type)
{
    switch (type) {
    case RNR_ST_PROGRAM: return RNR_BF_PROGRAM;
    case RNR_ST_INITIAL: return RNR_BF_INITIAL;
    case RNR_ST_INPUT: return RNR_BF_INPUT;
    case RNR_ST_STDOUT: return RNR_BF_STDOUT;
    case RNR_ST_STDERR: return RNR_BF_STDERR;
    }
    return -1;
}

static int open_channels(follower *f, char *err, size_t errlen)
{
    if (f->o->dir) {
        f->b = rnr_bundle_create(f->o->dir, "recording", err, errlen);
        if (!f->b)
            return -1;
    } else {
        const char *t = getenv("TMPDIR");
        size_t n = strlen(t && *t ? t : "/tmp") + 32;
        f->tmpdir = xmalloc(n);
        snprintf(f->tmpdir, n, "%s/rnr-follow-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(f->tmpdir)) {
            snprintf(err, errlen, "%s: %s", f->tmpdir, strerror(errno));
            free(f->tmpdir);
            f->tmpdir = NULL;
            return -1;
        }
    }
    for (uint32_t t = RNR_ST_PROGRAM; t < RNR_ST_CHANNELS; t++) {
        channel *c = &f->ch[t];
        int bf = bundle_file_of(t);
        if (f->b && bf >= 0) {
            c->path = xoom(strdup(rnr_bundle_tmp_path(f->b, (rnr_bundle_file)bf)));
        } else {
            const char *d = f->b ? rnr_bundle_dir(f->b) : f->tmpdir;
            size_t n = strlen(d) + 64;
            c->path = xmalloc(n);
            snprintf(c->path, n, "%s/.%s.%ld.part", d, channel_files[t], (long)getpid());
        }
        c->fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, t == RNR_ST_PROGRAM ? 0755 : 0644);
        if (c->fd < 0) {
            snprintf(err, errlen, "%s: %s", c->path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* ---- receiving ---- */

static void set_bad(follower *f, const char *why)
{
    if (!f->bad && !f->dead) {
        f->bad = 1;
        snprintf(f->why, sizeof f->why, "%s", why);
    }
    pthread_cond_broadcast(&f->cv);
}

static void set_dead(follower *f, const char *why)
{
    if (!f->bad && !f->dead && !f->ended) {
        f->dead = 1;
        snprintf(f->why, sizeof f->why, "%s", why);
    }
    pthread_cond_broadcast(&f->cv);
}

/* Where the program with SHA-256 HEX was put, or NULL (mu held). */
static const char *exec_known(const follower *f, const char *hex)
{
    const char *prog = f->fixed ? rnr_manifest_get(f->fixed, "program.sha256") : NULL;
    if (prog && strcmp(prog, hex) == 0)
        return f->ch[RNR_ST_PROGRAM].path;
    for (size_t i = 0; i < f->nexecs; i++)
        if (strcmp(f->execs[i].sha, hex) == 0)
            return f->execs[i].path;
    return NULL;
}

/* The program of a completed exec block sequence, in place: the bundle's
 * programs/HASH, or the scratch directory's HASH. NULL with err. */
static char *exec_store(follower *f, const char *hex, char *err, size_t errlen)
{
    char path[4096];
    if (f->b) {
        /* Its bytes were just hashed: the name is all there is to know. */
        char name[sizeof RNR_BUNDLE_PROGRAMS + RNR_SHA256_HEX];
        rnr_bundle_program_name(f->b, hex, name, sizeof name);
        if (rnr_bundle_put_program(f->b, hex, f->exec_buf, f->exec_size, err, errlen) < 0 ||
            rnr_bundle_path(rnr_bundle_dir(f->b), name, path, sizeof path, err, errlen) < 0)
            return NULL;
        return xoom(strdup(path));
    }
    snprintf(path, sizeof path, "%s/%s", f->tmpdir, hex);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (fd < 0 || rnr_write_full(fd, f->exec_buf, f->exec_size) < 0) {
        snprintf(err, errlen, "%.700s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    close(fd);
    return xoom(strdup(path));
}

/* An exec block: the next bytes of a program an execve loaded, or the
 * mention of one received before (the receiver thread). 0, or -1. */
static int on_exec(follower *f, const uint8_t *p, size_t len)
{
    uint8_t sha[32];
    uint64_t size, off;
    const uint8_t *bytes;
    size_t n;
    char hex[RNR_SHA256_HEX], err[1024];
    const char *bad = NULL;
    if (rnr_stream_get_exec(p, len, sha, &size, &off, &bytes, &n) < 0)
        bad = "an exec block shorter than its head, or with bytes past its program's size";
    else if (off == 0 && !f->exec_buf && size) {
        if (size > (1ull << 30))
            bad = "an exec block for a program over 1 GiB";
        else {
            f->exec_buf = malloc(size);
            if (!f->exec_buf)
                bad = "no memory for a program an execve loaded";
            memcpy(f->exec_sha, sha, 32);
            f->exec_size = size;
            f->exec_got = 0;
        }
    }
    rnr_hex(sha, 32, hex);
    char *path = NULL;
    if (!bad && off == size && n == 0 && !f->exec_buf) {
        /* A program received before (or the stream's own). */
        pthread_mutex_lock(&f->mu);
        const char *known = exec_known(f, hex);
        path = known ? xoom(strdup(known)) : NULL;
        pthread_mutex_unlock(&f->mu);
        if (!path)
            bad = "an exec block names a program the stream did not carry";
    } else if (!bad) {
        if (!f->exec_buf || memcmp(sha, f->exec_sha, 32) != 0 || size != f->exec_size ||
            off != f->exec_got)
            bad = "an exec block out of order";
        else {
            memcpy(f->exec_buf + off, bytes, n);
            f->exec_got += n;
            if (f->exec_got == f->exec_size) {
                uint8_t got[32];
                rnr_sha256 h;
                rnr_sha256_init(&h);
                rnr_sha256_update(&h, f->exec_buf, f->exec_size);
                rnr_sha256_final(&h, got);
                if (memcmp(got, sha, 32) != 0)
                    bad = "a program an execve loaded came with another SHA-256 than its blocks say";
                else if (!(path = exec_store(f, hex, err, sizeof err))) {
                    pthread_mutex_lock(&f->mu);
                    set_dead(f, err);
                    pthread_mutex_unlock(&f->mu);
                    return -1;
                }
                free(f->exec_buf);
                f->exec_buf = NULL;
            }
        }
    }
    pthread_mutex_lock(&f->mu);
    if (bad) {
        set_bad(f, bad);
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    if (path) {
        f->execs = xrealloc(f->execs, (f->nexecs + 1) * sizeof *f->execs);
        f->execs[f->nexecs].path = path;
        memcpy(f->execs[f->nexecs].sha, hex, RNR_SHA256_HEX);
        f->nexecs++;
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return 0;
}

/* The replay's execve number INDEX: its program once the stream has
 * brought it (drv_config.exec_image). */
static int exec_image(void *ctx, size_t index, char *path, size_t pathlen, char *sha256, char *err,
                      size_t errlen)
{
    follower *f = ctx;
    pthread_mutex_lock(&f->mu);
    while (f->nexecs <= index && !f->ended && !f->dead && !f->bad)
        pthread_cond_wait(&f->cv, &f->mu);
    int ok = f->nexecs > index;
    if (ok) {
        snprintf(path, pathlen, "%s", f->execs[index].path);
        memcpy(sha256, f->execs[index].sha, RNR_SHA256_HEX);
    } else {
        snprintf(err, errlen, "the stream ended before it brought the program that execve loaded");
    }
    pthread_mutex_unlock(&f->mu);
    return ok ? 0 : -1;
}

/* A block (the receiver thread; mu not held). */
static int on_block(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    follower *f = ctx;
    char err[1024];
    if (type == RNR_ST_ACK) {
        pthread_mutex_lock(&f->mu);
        set_bad(f, "an acknowledgement block from the primary (is the other end a follower?)");
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    if (f->ended) {
        pthread_mutex_lock(&f->mu);
        set_bad(f, "a block after the stream's end");
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    if (type == RNR_ST_MANIFEST || type == RNR_ST_END) {
        rnr_manifest *m = rnr_manifest_parse((const char *)p, len,
                                             type == RNR_ST_END ? "the stream's final manifest"
                                                                : "the stream's manifest",
                                             err, sizeof err);
        pthread_mutex_lock(&f->mu);
        if (!m || (type == RNR_ST_MANIFEST && f->fixed) ||
            (type == RNR_ST_END && !f->fixed)) {
            set_bad(f, m ? "a manifest block out of place" : err);
            pthread_mutex_unlock(&f->mu);
            rnr_manifest_free(m);
            return -1;
        }
        if (type == RNR_ST_MANIFEST) {
            f->fixed = m;
        } else {
            f->final = m;
            f->ended = 1;
            for (int t = 0; t < RNR_ST_CHANNELS; t++)
                f->ch[t].ended = 1;
        }
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        return 0;
    }
    if (type == RNR_ST_EXEC)
        return on_exec(f, p, len);
    if (type == RNR_ST_PROGRESS) {
        uint64_t v[3];
        pthread_mutex_lock(&f->mu);
        if (rnr_stream_get_u64s(p, len, v, 3) < 0) {
            set_bad(f, "a progress block of the wrong size");
            pthread_mutex_unlock(&f->mu);
            return -1;
        }
        f->p_instructions = v[0];
        f->p_chunks = v[1];
        f->p_final = v[2];
        pthread_mutex_unlock(&f->mu);
        return 0;
    }
    /* A channel's bytes. */
    channel *c = &f->ch[type];
    if (c->ended) {
        pthread_mutex_lock(&f->mu);
        set_bad(f, "bytes of a channel after its end");
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    if (len && rnr_write_full(c->fd, p, len) < 0) {
        snprintf(err, sizeof err, "%s: %s", c->path, strerror(errno));
        pthread_mutex_lock(&f->mu);
        set_dead(f, err);
        pthread_mutex_unlock(&f->mu);
        return -1;
    }
    pthread_mutex_lock(&f->mu);
    c->size += len;
    if (!len)
        c->ended = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void send_ack(follower *f)
{
    rnr_membuf m = { NULL, 0, 0 };
    pthread_mutex_lock(&f->mu);
    uint64_t v[2] = { f->chunks, f->instructions };
    pthread_mutex_unlock(&f->mu);
    rnr_stream_put_u64s(&m, RNR_ST_ACK, v, 2);
    /* Best effort: a primary that went away is the reading side's news. */
    ssize_t w = send(f->fd, m.data, m.len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w;
    free(m.data);
}

static void *receiver(void *arg)
{
    follower *f = arg;
    uint8_t buf[65536];
    int reading = 1;
    double last_ack = 0, last_lag = 0, last_sample = 0, rate_t = host_seconds();
    uint64_t acked = UINT64_MAX, rate_bytes = 0;
    double rate = 0;
    double timeout = f->o->timeout > 0 ? f->o->timeout : FOLLOW_TIMEOUT_DEFAULT;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        int stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        struct pollfd pf = { f->fd, POLLIN, 0 };
        int pr = reading ? poll(&pf, 1, 100) : (usleep(100000), 0);
        double now = host_seconds();
        if (pr > 0) {
            ssize_t n = read(f->fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                char why[256];
                snprintf(why, sizeof why, "%s: %s", f->name,
                         n == 0 ? (f->socket ? "the connection was closed" : "end of input") : strerror(errno));
                pthread_mutex_lock(&f->mu);
                if (n == 0 && f->bytes && rnr_stream_parser_pending(f->parser))
                    snprintf(why, sizeof why, "%s: the connection was closed in the middle of a "
                             "block", f->name);
                if (n == 0 && !f->bytes)
                    set_bad(f, "the stream is empty (no header): is the other end "
                               "`rnr record --stream`?");
                set_dead(f, why);
                pthread_mutex_unlock(&f->mu);
                reading = 0;
                if (!f->socket)
                    break;
                continue;
            }
            pthread_mutex_lock(&f->mu);
            f->bytes += (uint64_t)n;
            f->last_byte = now;
            pthread_mutex_unlock(&f->mu);
            if (rnr_stream_feed(f->parser, buf, (size_t)n, on_block, f) < 0) {
                pthread_mutex_lock(&f->mu);
                if (*rnr_stream_parser_error(f->parser))
                    set_bad(f, rnr_stream_parser_error(f->parser));
                else
                    set_bad(f, "the stream broke off");
                pthread_mutex_unlock(&f->mu);
                reading = 0;
                if (!f->socket)
                    break;
            }
        }
        pthread_mutex_lock(&f->mu);
        if (reading && !f->ended && now - f->last_byte > timeout) {
            char why[256];
            snprintf(why, sizeof why, "%s: nothing received for %.0f s", f->name, timeout);
            set_dead(f, why);
            reading = 0;
        }
        if (now - last_sample >= 0.1) {
            last_sample = now;
            uint64_t behind = f->p_final > f->chunks ? f->p_final - f->chunks : 0;
            if (f->fixed && !f->ended) {
                f->lag_samples++;
                f->lag_sum += behind;
                if (behind > f->lag_max)
                    f->lag_max = behind;
            }
        }
        follow_lag l = { f->chunks, f->instructions, f->p_final, f->p_instructions, f->bytes, 0,
                         now - f->t0 };
        uint64_t chunks = f->chunks;
        pthread_mutex_unlock(&f->mu);
        if (now - rate_t >= 1.0) {
            rate = (double)(l.bytes - rate_bytes) / (now - rate_t);
            rate_bytes = l.bytes;
            rate_t = now;
        }
        l.bytes_per_second = rate;
        if (f->socket && now - last_ack >= 0.1 && chunks != acked) {
            last_ack = now;
            acked = chunks;
            send_ack(f);
        }
        if (f->o->lag && now - last_lag >= 0.5) {
            last_lag = now;
            f->o->lag(f->o->ctx, &l);
        }
    }
    if (f->socket)
        send_ack(f);
    return NULL;
}

/* ---- reading a channel as it grows ---- */

typedef struct tail {
    follower *f;
    uint32_t type;
    int fd;
    uint64_t off;
} tail;

static long tail_read(void *ctx, void *buf, size_t n)
{
    tail *t = ctx;
    follower *f = t->f;
    channel *c = &f->ch[t->type];
    pthread_mutex_lock(&f->mu);
    while (c->size <= t->off && !c->ended && !f->dead && !f->bad)
        pthread_cond_wait(&f->cv, &f->mu);
    uint64_t avail = c->size - t->off;
    pthread_mutex_unlock(&f->mu);
    if (avail == 0)
        return 0;       /* the channel's end, or the stream's */
    size_t k = n < avail ? n : (size_t)avail;
    ssize_t r = pread(t->fd, buf, k, (off_t)t->off);
    if (r > 0)
        t->off += (uint64_t)r;
    return (long)r;
}

static int tail_close(void *ctx)
{
    tail *t = ctx;
    close(t->fd);
    free(t);
    return 0;
}

static const rnr_io_ops tail_ops = { tail_read, NULL, NULL, tail_close };

static rnr_io *open_tail(follower *f, uint32_t type)
{
    tail *t = xcalloc(1, sizeof *t);
    t->f = f;
    t->type = type;
    t->fd = open(f->ch[type].path, O_RDONLY | O_CLOEXEC);
    return rnr_io_custom(&tail_ops, t, type == RNR_ST_INPUT ? "the stream's input log"
                                                            : "the stream's final log", 0);
}

static rnr_io *open_input(void *ctx) { return open_tail(ctx, RNR_ST_INPUT); }

/* ---- replaying ---- */

static int run_chunk(void *ctx, unsigned w, const rp_chunk *c, char *msg, size_t msglen)
{
    follower *f = ctx;
    int rc = rp_exec_chunk(f->x, w, c->cpu, c->lane_index, c->tid, c->cs, msg, msglen);
    if (rc == 0) {
        pthread_mutex_lock(&f->mu);
        f->chunks++;
        f->instructions += c->cs;
        f->last = *c;
        f->has_last = 1;
        pthread_mutex_unlock(&f->mu);
    }
    return rc;
}

/* Waits until the manifest and the whole program have come. 0, or -1. */
static int wait_start(follower *f)
{
    pthread_mutex_lock(&f->mu);
    while (!(f->fixed && f->ch[RNR_ST_PROGRAM].ended) && !f->dead && !f->bad)
        pthread_cond_wait(&f->cv, &f->mu);
    int ok = f->fixed && f->ch[RNR_ST_PROGRAM].ended;
    pthread_mutex_unlock(&f->mu);
    return ok ? 0 : -1;
}

/* M's keys that describe the recording into the bundle's manifest (the
 * files, the status and the programs' places are the follower's own). */
static void copy_keys(rnr_manifest *to, const rnr_manifest *m)
{
    for (size_t i = 0; i < rnr_manifest_count(m); i++) {
        const char *k = rnr_manifest_key(m, i);
        size_t n = strlen(k);
        if (strcmp(k, "kind") == 0 || strcmp(k, "status") == 0 || strncmp(k, "file.", 5) == 0 ||
            strcmp(k, "program.path") == 0 ||
            (strncmp(k, "exec.", 5) == 0 && n > 5 && strcmp(k + n - 5, ".file") == 0))
            continue;
        rnr_manifest_set(to, k, rnr_manifest_value(m, i));
    }
    rnr_manifest_set(to, "program.packed", "program");
}

/* The -o bundle: every file received in place, then the status. */
static void finish_bundle(follower *f, follow_result *res, const char *incomplete)
{
    char err[1024];
    rnr_manifest *m = rnr_bundle_manifest(f->b);
    copy_keys(m, f->final ? f->final : f->fixed);
    /* The programs execve loaded that the stream brought, where this
     * bundle holds them. */
    for (size_t i = 0; f->final && i < f->nexecs; i++) {
        char key[64], file[sizeof RNR_BUNDLE_PROGRAMS + RNR_SHA256_HEX];
        rnr_bundle_program_name(f->b, f->execs[i].sha, file, sizeof file);
        snprintf(key, sizeof key, "exec.%zu.file", i);
        rnr_manifest_set(m, key, file);
    }
    const char *status = f->final ? rnr_manifest_get(f->final, "status") : NULL;
    if (incomplete || !status)
        snprintf(res->bundle_status_text, sizeof res->bundle_status_text, "%s: %.400s",
                 RNR_BUNDLE_INCOMPLETE, incomplete ? incomplete : "the stream ended early");
    else
        snprintf(res->bundle_status_text, sizeof res->bundle_status_text, "%s", status);
    res->bundle_status = res->bundle_status_text;
    for (uint32_t t = RNR_ST_PROGRAM; t < RNR_ST_CHANNELS; t++) {
        channel *c = &f->ch[t];
        if (c->fd >= 0 && fsync(c->fd) != 0 && !incomplete)
            snprintf(res->bundle_status_text, sizeof res->bundle_status_text,
                     "%s: %s: %s", RNR_BUNDLE_INCOMPLETE, c->path, strerror(errno));
        int bf = bundle_file_of(t);
        if (t == RNR_ST_FINAL) {
            /* Its kind is in its header. */
            rnr_reader *r = c->size ? rnr_reader_open(c->path, err, sizeof err) : NULL;
            int kind = r ? (int)rnr_reader_header(r)->kind : -1;
            rnr_reader_close(r);
            bf = rnr_log_kind_has_tokens((uint32_t)kind) ? rnr_bundle_file_of_kind((uint32_t)kind) : -1;
            if (bf >= 0 && rename(c->path, rnr_bundle_tmp_path(f->b, (rnr_bundle_file)bf)) != 0)
                bf = -1;
            if (bf < 0)
                unlink(c->path);
        }
        if (bf >= 0 && rnr_bundle_commit(f->b, (rnr_bundle_file)bf, err, sizeof err) < 0)
            snprintf(res->bundle_status_text, sizeof res->bundle_status_text, "%s: %.400s",
                     RNR_BUNDLE_INCOMPLETE, err);
    }
    if (rnr_bundle_save(f->b, res->bundle_status_text, err, sizeof err) < 0) {
        fprintf(stderr, "rnr follow: %s\n", err);
        res->bundle_status = NULL;
    }
}

/* The message for a stream that ended before the recording did. */
static void ended_early(follower *f, follow_result *res)
{
    char last[256];
    if (f->has_last)
        snprintf(last, sizeof last, "cpu %u chunk %" PRIu64 " (thread %u)", f->last.cpu,
                 f->last.lane_index, f->last.tid);
    else
        snprintf(last, sizeof last, "none");
    snprintf(res->message, sizeof res->message,
             "the stream ended before the recording did (%.600s): last chunk replayed: %s, %" PRIu64
             " chunk%s and %" PRIu64 " instructions replayed", f->why, last, f->chunks,
             f->chunks == 1 ? "" : "s", f->instructions);
}

int follow_run(int fd, int socket, const char *name, const follow_options *o, follow_result *res)
{
    memset(res, 0, sizeof *res);
    follower f;
    memset(&f, 0, sizeof f);
    f.o = o;
    f.fd = fd;
    f.socket = socket;
    f.name = name;
    f.t0 = f.last_byte = host_seconds();
    for (int t = 0; t < RNR_ST_CHANNELS; t++)
        f.ch[t].fd = -1;
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    f.parser = rnr_stream_parser_new(name, 1);
    char err[8192];
    pthread_t th;
    int started = 0;
    rnr_reader *r = NULL;
    if (open_channels(&f, err, sizeof err) < 0) {
        res->status = 2;
        snprintf(res->message, sizeof res->message, "%.3000s", err);
        goto out;
    }
    if (pthread_create(&th, NULL, receiver, &f) != 0) {
        res->status = 2;
        snprintf(res->message, sizeof res->message, "cannot start the receiving thread");
        goto out;
    }
    started = 1;
    if (wait_start(&f) == 0) {
        rp_exec_options eo = {.workers = o->workers ? o->workers : 1, .out = o->out,
                              .exec_image = exec_image, .exec_ctx = &f};
        f.x = rp_exec_open_stream(f.fixed, f.ch[RNR_ST_PROGRAM].path, open_input, &f, &eo, err,
                                  sizeof err);
        if (f.x)
            r = rnr_reader_open_io(open_tail(&f, RNR_ST_FINAL), err, sizeof err);
        if (r && !rnr_log_kind_has_tokens(rnr_reader_header(r)->kind)) {
            snprintf(err, sizeof err, "the stream's final log is a %s log, not maxpar, stitched or adaptive",
                     rnr_log_kind_name(rnr_reader_header(r)->kind));
            rnr_reader_close(r);
            r = NULL;
        }
    }
    int dead, bad;
    if (r) {
        unsigned workers = o->workers ? o->workers : 1;
        if (workers > rp_exec_cpus(f.x))
            workers = rp_exec_cpus(f.x);
        res->workers = workers;
        snprintf(res->format, sizeof res->format, "%s", rnr_log_kind_name(rnr_reader_header(r)->kind));
        rp_options ro;
        memset(&ro, 0, sizeof ro);
        ro.workers = workers;
        rp_result rr;
        rp_replay_reader(r, &ro, run_chunk, &f, &rr);
        /* The verdict waits for the recording's end (or the stream's). */
        pthread_mutex_lock(&f.mu);
        while (rr.status == RP_OK && !f.ended && !f.dead && !f.bad)
            pthread_cond_wait(&f.cv, &f.mu);
        dead = f.dead;
        bad = f.bad;
        pthread_mutex_unlock(&f.mu);
        if (bad) {
            res->status = 2;
            snprintf(res->message, sizeof res->message, "%s", f.why);
        } else if (dead) {
            res->status = 1;
            ended_early(&f, res);
        } else if (rr.status != RP_OK) {
            res->status = rr.status == RP_BAD_LOG || rr.status == RP_ERROR ? 2 : 1;
            snprintf(res->message, sizeof res->message, "%s", rr.message);
        } else {
            char p1[4096], p2[4096];
            snprintf(p1, sizeof p1, "%s", f.ch[RNR_ST_STDOUT].path);
            snprintf(p2, sizeof p2, "%s", f.ch[RNR_ST_STDERR].path);
            if (rp_exec_finish_stream(f.x, f.final, p1, p2, err, sizeof err) != 0) {
                res->status = 1;
                snprintf(res->message, sizeof res->message, "verification failed: %.3000s", err);
            }
            const char *ws = rnr_manifest_get(f.final, "wall-seconds");
            res->primary_seconds = ws ? strtod(ws, NULL) : 0;
        }
    } else {
        pthread_mutex_lock(&f.mu);
        dead = f.dead;
        bad = f.bad;
        int have_fixed = f.fixed != NULL;
        pthread_mutex_unlock(&f.mu);
        if (bad || (!dead && !have_fixed)) {
            res->status = 2;
            snprintf(res->message, sizeof res->message, "%.3000s", bad ? f.why : err);
        } else if (dead) {
            res->status = 1;
            ended_early(&f, res);
        } else {
            res->status = 2;
            snprintf(res->message, sizeof res->message, "%.3000s", err);
        }
    }
out:
    if (started) {
        pthread_mutex_lock(&f.mu);
        f.stop = 1;
        pthread_mutex_unlock(&f.mu);
        pthread_join(th, NULL);
    }
    if (r)
        rnr_reader_close(r);
    res->chunks = f.chunks;
    res->instructions = f.instructions;
    res->bytes = f.bytes;
    res->seconds = host_seconds() - f.t0;
    res->lag_samples = f.lag_samples;
    res->lag_sum = f.lag_sum;
    res->lag_max = f.lag_max;
    rp_exec_free(f.x);
    free(f.exec_buf);
    if (f.b && f.fixed)
        finish_bundle(&f, res, res->status == 0 ? NULL : f.ended ? res->message
                               : res->message);
    for (int t = 0; t < RNR_ST_CHANNELS; t++) {
        if (f.ch[t].fd >= 0)
            close(f.ch[t].fd);
        if (f.tmpdir && f.ch[t].path)
            unlink(f.ch[t].path);
        free(f.ch[t].path);
    }
    for (size_t i = 0; i < f.nexecs; i++) {
        if (f.tmpdir && strncmp(f.execs[i].path, f.tmpdir, strlen(f.tmpdir)) == 0)
            unlink(f.execs[i].path);
        free(f.execs[i].path);
    }
    free(f.execs);
    if (f.tmpdir) {
        rmdir(f.tmpdir);
        free(f.tmpdir);
    }
    if (f.b && !f.fixed) {
        char e2[256];
        rnr_bundle_save(f.b, RNR_BUNDLE_INCOMPLETE ": no recording came", e2, sizeof e2);
    }
    rnr_bundle_close(f.b);
    rnr_manifest_free(f.fixed);
    rnr_manifest_free(f.final);
    rnr_stream_parser_free(f.parser);
    pthread_mutex_destroy(&f.mu);
    pthread_cond_destroy(&f.cv);
    return res->status;
}

/* ---- listening ---- */

int follow_listen(const char *spec, char *bound, size_t boundlen, char *err, size_t errlen)
{
    char host[RNR_NET_HOST_MAX], why[512];
    unsigned port, got;
    int fd = -1;
    if (rnr_net_split(spec, RNR_NET_LOOPBACK, host, &port, why, sizeof why) == 0)
        fd = rnr_net_listen(host, port, &got, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen, "--listen %s", why);
        return -1;
    }
    snprintf(bound, boundlen, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, got);
    return fd;
}

int follow_accept(int lfd, char *err, size_t errlen)
{
    int fd;
    while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (fd < 0)
        snprintf(err, errlen, "accept: %s", strerror(errno));
    /* One primary: a second one is refused from now on. */
    close(lfd);
    return fd;
}
