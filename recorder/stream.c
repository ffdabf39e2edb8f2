/* recorder/stream.c: the sending side of the on-line stream
 * (recorder/stream.h, docs/online.md). */
#include "recorder/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/adaptive.h"
#include "backend/passes.h"
#include "formats/net.h"
#include "formats/stream.h"
#include "rru/alloc.h"
#include "rru/clock.h"

#define PIPE_MAX (4u << 20)
#define REC_STREAM_SNDBUF (256 << 10)   /* the socket's send buffer (the kernel doubles it) */   /* MaxPar bytes queued for the stitcher thread, at most */

/* The stitcher's input: MaxPar log bytes handed from the recording thread
 * to the stitcher thread, bounded. */
typedef struct byte_pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t *data;
    size_t head, len, cap;
    int closed;               /* no more bytes will come */
    int reader_done;          /* the stitcher stopped reading */
} byte_pipe;

struct rec_stream {
    int fd, is_socket, own_fd;
    pthread_mutex_t mu;       /* the queue, the counters (the stitcher thread sends too) */
    rnr_membuf q;             /* framed bytes; q.data[qhead..q.len) not written yet */
    size_t qhead;
    uint64_t buffer, sent;
    int dropped;
    char error[1024];
    rnr_stream_parser *acks;
    uint64_t acked_chunks, acked_instructions, nacks;
    int finishing;            /* the END is out: the follower may close */
    _Atomic uint64_t final_chunks;
    rec_stream_format format;
    rnr_writer *final_w;      /* MaxPar: into the stream (MAXPAR) or into pipe (STITCHED) */
    uint64_t tail_off[RNR_ST_CHANNELS];
    /* Stitched on the fly. */
    byte_pipe pipe;
    pthread_t th;
    int th_started;
    rnr_writer *st_w;         /* the stitcher thread's */
    int st_rc;
    char st_err[RNR_ERR_MAX + 256];
    /* Adaptive on the fly: the planner (recording thread), the phases it
     * decided as the stitcher thread sees them, and (bandwidth) the chunks
     * of the phase not decided yet. */
    adaptive_planner *planner;
    pthread_mutex_t ph_mu;
    uint64_t *ph_start;
    uint32_t *ph_format;
    size_t ph_cap;
    _Atomic size_t ph_n;
    rnr_final_chunk *held;
    size_t nheld, held_cap;
};

/* ---- the connection ---- */

static void drop(rec_stream *s, const char *fmt, const char *what)
{
    if (s->dropped)
        return;
    s->dropped = 1;
    snprintf(s->error, sizeof s->error, fmt, what);
    fprintf(stderr, "rnr record: warning: %s; the local bundle is written in full\n", s->error);
    free(s->q.data);
    memset(&s->q, 0, sizeof s->q);
    s->qhead = 0;
}

/* Writes queued bytes without waiting (mu held); a failed write drops
 * the stream. */
static void pump(rec_stream *s)
{
    while (!s->dropped && s->qhead < s->q.len) {
        size_t n = s->q.len - s->qhead;
        ssize_t w;
        if (s->is_socket) {
            w = send(s->fd, s->q.data + s->qhead, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else {
            /* A pipe takes PIPE_BUF bytes without blocking once poll says so. */
            struct pollfd pf = { s->fd, POLLOUT, 0 };
            if (poll(&pf, 1, 0) <= 0)
                break;
            if (pf.revents & (POLLERR | POLLHUP)) {
                drop(s, "the stream's reader is gone (%s): the stream is dropped", "pipe closed");
                break;
            }
            w = write(s->fd, s->q.data + s->qhead, n < PIPE_BUF ? n : PIPE_BUF);
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            drop(s, "the stream's follower is gone (%s): the stream is dropped", strerror(errno));
            break;
        }
        s->qhead += (size_t)w;
        s->sent += (uint64_t)w;
    }
    if (s->qhead == s->q.len) {
        s->q.len = s->qhead = 0;
    } else if (s->qhead > (1u << 20) && s->qhead > s->q.len / 2) {
        memmove(s->q.data, s->q.data + s->qhead, s->q.len - s->qhead);
        s->q.len -= s->qhead;
        s->qhead = 0;
    }
    if (!s->dropped && s->q.len - s->qhead > s->buffer) {
        char what[64];
        snprintf(what, sizeof what, "%" PRIu64, s->buffer);
        drop(s, "the stream's follower fell more than %s bytes behind (--stream-buffer): the "
             "stream is dropped", what);
    }
}

static void queue_block(rec_stream *s, uint32_t type, const void *p, size_t n)
{
    const uint8_t *b = p;
    do {
        size_t k = n < RNR_STREAM_BLOCK_MAX ? n : RNR_STREAM_BLOCK_MAX;
        rnr_stream_put_block(&s->q, type, b, k);
        b += k;
        n -= k;
    } while (n);
}

void rec_stream_send(rec_stream *s, uint32_t type, const void *p, size_t n)
{
    pthread_mutex_lock(&s->mu);
    if (!s->dropped && n) {
        queue_block(s, type, p, n);
        if (s->q.len - s->qhead > s->buffer)
            pump(s);
    }
    pthread_mutex_unlock(&s->mu);
}

void rec_stream_send_exec(rec_stream *s, const uint8_t sha[32], const void *file, uint64_t size)
{
    pthread_mutex_lock(&s->mu);
    if (!s->dropped) {
        rnr_stream_put_exec(&s->q, sha, file, size);
        if (s->q.len - s->qhead > s->buffer)
            pump(s);
    }
    pthread_mutex_unlock(&s->mu);
}

void rec_stream_end_channel(rec_stream *s, uint32_t type)
{
    pthread_mutex_lock(&s->mu);
    if (!s->dropped)
        rnr_stream_put_block(&s->q, type, NULL, 0);
    pthread_mutex_unlock(&s->mu);
}

static int connect_to(const char *where, char *err, size_t errlen)
{
    char host[RNR_NET_HOST_MAX], why[512];
    unsigned port;
    if (rnr_net_split(where, NULL, host, &port, why, sizeof why) < 0) {
        snprintf(err, errlen, "--stream %s or -", why);
        return -1;
    }
    /* The kernel's share of the queue stays small: --stream-buffer is the bound. */
    int fd = rnr_net_connect(host, port, REC_STREAM_SNDBUF, why, sizeof why);
    if (fd < 0)
        snprintf(err, errlen, "--stream %s: cannot connect: %s (is `rnr follow --listen` "
                 "waiting there, and for no other recorder?)", where, why);
    return fd;
}

/* ---- the final log ---- */

static long stream_io_write(void *ctx, const void *buf, size_t n)
{
    rec_stream *s = ctx;
    rec_stream_send(s, RNR_ST_FINAL, buf, n);
    /* Stitched or adaptive: the stitcher thread (st_w's owner, and the
     * only caller then) counts what it wrote as each block goes out, so
     * that a lag policy sees the follower fall behind while groups are
     * still open. */
    if (s->st_w)
        atomic_store(&s->final_chunks, rnr_writer_counts(s->st_w)->records);
    return (long)n;
}

static const rnr_io_ops stream_io_ops = { NULL, stream_io_write, NULL, NULL };

static long pipe_io_write(void *ctx, const void *buf, size_t n)
{
    byte_pipe *p = ctx;
    pthread_mutex_lock(&p->mu);
    /* Bounded: the recording waits for the stitcher (which only computes). */
    while (p->len + n > PIPE_MAX && p->len && !p->reader_done)
        pthread_cond_wait(&p->cv, &p->mu);
    if (!p->reader_done) {
        if (p->head + p->len + n > p->cap) {
            if (p->len)
                memmove(p->data, p->data + p->head, p->len);
            p->head = 0;
            if (p->len + n > p->cap) {
                p->cap = p->len + n > 2 * p->cap ? p->len + n : 2 * p->cap;
                p->data = xrealloc(p->data, p->cap);
            }
        }
        memcpy(p->data + p->head + p->len, buf, n);
        p->len += n;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return (long)n;
}

static const rnr_io_ops pipe_write_ops = { NULL, pipe_io_write, NULL, NULL };

static long pipe_io_read(void *ctx, void *buf, size_t n)
{
    rec_stream *s = ctx;
    byte_pipe *p = &s->pipe;
    pthread_mutex_lock(&p->mu);
    while (p->len == 0 && !p->closed) {
        /* Before waiting: what is stitched reaches the stream. */
        pthread_mutex_unlock(&p->mu);
        if (s->st_w) {
            rnr_writer_flush(s->st_w);
            atomic_store(&s->final_chunks, rnr_writer_counts(s->st_w)->records);
        }
        pthread_mutex_lock(&p->mu);
        if (p->len == 0 && !p->closed)
            pthread_cond_wait(&p->cv, &p->mu);
    }
    size_t k = n < p->len ? n : p->len;
    if (k)
        memcpy(buf, p->data + p->head, k);
    p->head += k;
    p->len -= k;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return (long)k;
}

static const rnr_io_ops pipe_read_ops = { pipe_io_read, NULL, NULL, NULL };

/* The stitcher thread's view of the decided phases (stitch_phase_fn). */
static int phase_source(void *ctx, size_t i, uint64_t *start, uint32_t *format)
{
    rec_stream *s = ctx;
    if (i >= atomic_load(&s->ph_n))
        return 0;
    pthread_mutex_lock(&s->ph_mu);
    *start = s->ph_start[i];
    *format = s->ph_format[i];
    pthread_mutex_unlock(&s->ph_mu);
    return 1;
}

/* The planner's new phases made visible to the stitcher thread, before any
 * chunk they cover goes into the pipe (the contract of
 * stitch_set_phase_source). */
static void publish_phases(rec_stream *s)
{
    const uint64_t *start;
    const uint32_t *format;
    size_t n = adaptive_planner_phases(s->planner, &start, &format), have = atomic_load(&s->ph_n);
    if (n == have)
        return;
    pthread_mutex_lock(&s->ph_mu);
    if (n > s->ph_cap) {
        s->ph_cap = n > 2 * s->ph_cap ? n : 2 * s->ph_cap;
        s->ph_start = xrealloc(s->ph_start, s->ph_cap * sizeof *s->ph_start);
        s->ph_format = xrealloc(s->ph_format, s->ph_cap * sizeof *s->ph_format);
    }
    memcpy(s->ph_start + have, start + have, (n - have) * sizeof *start);
    memcpy(s->ph_format + have, format + have, (n - have) * sizeof *format);
    pthread_mutex_unlock(&s->ph_mu);
    atomic_store(&s->ph_n, n);
}

/* Bandwidth: a copy of chunk C kept until its phase is decided. */
static void hold(rec_stream *s, const rnr_final_chunk *c)
{
    if (s->nheld == s->held_cap) {
        s->held_cap = s->held_cap ? 2 * s->held_cap : 256;
        s->held = xrealloc(s->held, s->held_cap * sizeof *s->held);
    }
    rnr_final_chunk *h = &s->held[s->nheld++];
    *h = *c;
    h->stv = c->nstv ? xmalloc(c->nstv * sizeof *c->stv) : NULL;
    h->ptv = c->nptv ? xmalloc(c->nptv * sizeof *c->ptv) : NULL;
    if (c->nstv)
        memcpy(h->stv, c->stv, c->nstv * sizeof *c->stv);
    if (c->nptv)
        memcpy(h->ptv, c->ptv, c->nptv * sizeof *c->ptv);
}

/* The held chunks into the stitcher's pipe (RELEASE) or dropped. */
static int release_held(rec_stream *s, int release)
{
    int rc = 0;
    for (size_t i = 0; i < s->nheld; i++) {
        if (release && rc == 0 && s->final_w && rnr_writer_put_final(s->final_w, &s->held[i]) < 0)
            rc = -1;
        free(s->held[i].stv);
        free(s->held[i].ptv);
    }
    s->nheld = 0;
    return rc;
}

static void *stitch_thread(void *arg)
{
    rec_stream *s = arg;
    char err[RNR_ERR_MAX + 128];
    rnr_reader *r = rnr_reader_open_io(rnr_io_custom(&pipe_read_ops, s, "<maxpar on the fly>", 0),
                                       err, sizeof err);
    if (!r) {
        s->st_rc = -1;
        snprintf(s->st_err, sizeof s->st_err, "%s", err);
    } else {
        rnr_log_header h = *rnr_reader_header(r);
        h.kind = s->format == REC_STREAM_ADAPTIVE ? RNR_LOG_ADAPTIVE : RNR_LOG_STITCHED;
        s->st_w = rnr_writer_open_io(rnr_io_custom(&stream_io_ops, s, "<stream>", 1), &h, NULL,
                                     err, sizeof err);
        if (!s->st_w) {
            s->st_rc = -1;
            snprintf(s->st_err, sizeof s->st_err, "%s", err);
        } else {
            s->st_rc = s->format == REC_STREAM_ADAPTIVE
                           ? pass_adaptive_online(r, s->st_w, phase_source, s, 0, NULL, err, sizeof err)
                           : pass_stitch(r, s->st_w, 0, NULL, NULL, NULL, err, sizeof err);
            if (s->st_rc < 0)
                snprintf(s->st_err, sizeof s->st_err, "%s", err);
            atomic_store(&s->final_chunks, rnr_writer_counts(s->st_w)->records);
            rnr_writer *w = s->st_w;
            s->st_w = NULL;
            if (rnr_writer_close(w, err, sizeof err) < 0 && s->st_rc == 0) {
                s->st_rc = -1;
                snprintf(s->st_err, sizeof s->st_err, "%s", err);
            }
        }
        rnr_reader_close(r);
    }
    pthread_mutex_lock(&s->pipe.mu);
    s->pipe.reader_done = 1;
    pthread_cond_broadcast(&s->pipe.cv);
    pthread_mutex_unlock(&s->pipe.mu);
    return NULL;
}

/* ---- the session's side ---- */

rec_stream *rec_stream_open(const char *where, rec_stream_format format,
                            const adaptive_policy *policy, const rnr_log_header *h, uint64_t buffer,
                            char *err, size_t errlen)
{
    if (format == REC_STREAM_ADAPTIVE && !policy) {
        snprintf(err, errlen, "--stream-format adaptive needs --adaptive POLICY");
        return NULL;
    }
    if (format == REC_STREAM_ADAPTIVE && policy->kind == ADAPTIVE_LAG && strcmp(where, "-") == 0) {
        snprintf(err, errlen, "--adaptive lag:%llu decides by the follower's acknowledgements, "
                 "which a pipe (--stream -) does not carry: use --stream HOST:PORT",
                 (unsigned long long)policy->lag_chunks);
        return NULL;
    }
    rec_stream *s = xcalloc(1, sizeof *s);
    s->fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->ph_mu, NULL);
    pthread_mutex_init(&s->pipe.mu, NULL);
    pthread_cond_init(&s->pipe.cv, NULL);
    s->buffer = buffer ? buffer : REC_STREAM_BUFFER_DEFAULT;
    s->format = format;
    if (strcmp(where, "-") == 0) {
        s->fd = STDOUT_FILENO;
    } else {
        s->fd = connect_to(where, err, errlen);
        if (s->fd < 0) {
            rec_stream_free(s);
            return NULL;
        }
        s->is_socket = s->own_fd = 1;
        s->acks = rnr_stream_parser_new("the follower's acknowledgements", 0);
    }
    rnr_stream_put_header(&s->q);
    rnr_log_header fh = *h;
    fh.kind = RNR_LOG_MAXPAR;
    if (format == REC_STREAM_ADAPTIVE) {
        s->planner = adaptive_planner_new(policy, &fh, err, errlen);
        if (!s->planner) {
            rec_stream_free(s);
            return NULL;
        }
        publish_phases(s);   /* phases: all of them; the others: none yet */
    }
    if (format == REC_STREAM_MAXPAR) {
        s->final_w = rnr_writer_open_io(rnr_io_custom(&stream_io_ops, s, "<stream>", 1), &fh,
                                        NULL, err, errlen);
    } else {
        s->final_w = rnr_writer_open_io(rnr_io_custom(&pipe_write_ops, &s->pipe, "<stitcher>", 1),
                                        &fh, NULL, err, errlen);
        if (s->final_w) {
            if (pthread_create(&s->th, NULL, stitch_thread, s) != 0) {
                snprintf(err, errlen, "cannot start the stitcher thread");
                rec_stream_free(s);
                return NULL;
            }
            s->th_started = 1;
        }
    }
    if (!s->final_w) {
        rec_stream_free(s);
        return NULL;
    }
    return s;
}

/* 1 once the stream was dropped (by any thread). */
static int is_dropped(rec_stream *s)
{
    pthread_mutex_lock(&s->mu);
    int d = s->dropped;
    pthread_mutex_unlock(&s->mu);
    return d;
}

void rec_stream_tail(rec_stream *s, uint32_t type, const char *path)
{
    if (type >= RNR_ST_CHANNELS || is_dropped(s))
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uint8_t buf[65536];
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf, (off_t)s->tail_off[type])) > 0) {
        rec_stream_send(s, type, buf, (size_t)n);
        s->tail_off[type] += (uint64_t)n;
    }
    close(fd);
}

int rec_stream_send_file(rec_stream *s, uint32_t type, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        rec_stream_send(s, type, buf, (size_t)n);
    }
    close(fd);
    return 0;
}

int rec_stream_put_maxpar(rec_stream *s, const rnr_final_chunk *c)
{
    if (s->planner) {
        uint64_t lag = 0;
        if (adaptive_planner_kind(s->planner) == ADAPTIVE_LAG) {
            pthread_mutex_lock(&s->mu);
            uint64_t made = atomic_load(&s->final_chunks);
            lag = made > s->acked_chunks ? made - s->acked_chunks : 0;
            pthread_mutex_unlock(&s->mu);
        }
        int decided = adaptive_planner_add(s->planner, c, lag);
        if (decided < 0)
            return -1;
        publish_phases(s);
        if (adaptive_planner_kind(s->planner) == ADAPTIVE_BANDWIDTH) {
            if (decided && release_held(s, 1) < 0)
                return -1;
            hold(s, c);
            return 0;
        }
    }
    if (rnr_writer_put_final(s->final_w, c) < 0)
        return -1;
    if (s->format == REC_STREAM_MAXPAR)
        atomic_fetch_add(&s->final_chunks, 1);
    return 0;
}

static int on_ack(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    rec_stream *s = ctx;
    uint64_t v[2];
    if (type != RNR_ST_ACK || rnr_stream_get_u64s(p, len, v, 2) < 0)
        return -1;
    s->acked_chunks = v[0];
    s->acked_instructions = v[1];
    s->nacks++;
    return 0;
}

/* The follower's acknowledgements, as far as they have come (mu held). */
static void read_acks(rec_stream *s)
{
    uint8_t buf[4096];
    while (s->acks && !s->dropped) {
        ssize_t n = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && s->finishing) {
            uint64_t all = atomic_load(&s->final_chunks);
            if (s->acked_chunks < all) {
                char what[96];
                snprintf(what, sizeof what, "%" PRIu64 " of %" PRIu64, s->acked_chunks, all);
                drop(s, "the stream's follower closed the connection having acknowledged %s "
                     "chunks: the stream is dropped", what);
                break;
            }
            rnr_stream_parser_free(s->acks);
            s->acks = NULL;
            break;
        }
        if (n <= 0) {
            if (n == 0)
                drop(s, "the stream's follower closed the connection (%s): the stream is dropped",
                     "end of its acknowledgements");
            break;
        }
        if (rnr_stream_feed(s->acks, buf, (size_t)n, on_ack, s) < 0) {
            drop(s, "%s: the stream is dropped", *rnr_stream_parser_error(s->acks)
                                                     ? rnr_stream_parser_error(s->acks)
                                                     : "a block on the back channel that is not an acknowledgement");
            break;
        }
    }
}

void rec_stream_tick(rec_stream *s, uint64_t instructions, uint64_t initial_chunks)
{
    if (is_dropped(s))
        return;
    rnr_writer_flush(s->final_w);
    uint64_t v[3] = { instructions, initial_chunks, atomic_load(&s->final_chunks) };
    pthread_mutex_lock(&s->mu);
    if (!s->dropped) {
        rnr_stream_put_u64s(&s->q, RNR_ST_PROGRESS, v, 3);
        pump(s);
        read_acks(s);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Closes the pipe into the stitcher thread and joins it; 1 if it ran. */
static int stop_stitcher(rec_stream *s)
{
    if (!s->th_started)
        return 0;
    pthread_mutex_lock(&s->pipe.mu);
    s->pipe.closed = 1;
    pthread_cond_broadcast(&s->pipe.cv);
    pthread_mutex_unlock(&s->pipe.mu);
    pthread_join(s->th, NULL);
    s->th_started = 0;
    return 1;
}

/* The final log's end: the MaxPar writer closed, the stitcher joined. */
static void finish_final(rec_stream *s)
{
    char err[RNR_ERR_MAX + 64];
    if (s->planner && s->final_w) {
        adaptive_planner_finish(s->planner);
        publish_phases(s);
        if (release_held(s, 1) < 0)
            drop(s, "the stream's final log: %s", rnr_writer_error(s->final_w));
    }
    if (s->final_w) {
        rnr_writer *w = s->final_w;
        s->final_w = NULL;
        if (rnr_writer_close(w, err, sizeof err) < 0)
            drop(s, "the stream's final log: %s", err);
    }
    if (stop_stitcher(s) && s->st_rc < 0)
        drop(s, "Stitched on the fly: %s", s->st_err);
}

void rec_stream_finish(rec_stream *s, const char *manifest, size_t len)
{
    finish_final(s);
    pthread_mutex_lock(&s->mu);
    if (!s->dropped) {
        queue_block(s, RNR_ST_END, manifest, len);
    }
    /* Written out, waiting at most a bounded time for the follower. */
    double t0 = host_seconds();
    while (!s->dropped && s->qhead < s->q.len) {
        pump(s);
        if (s->dropped || s->qhead == s->q.len)
            break;
        if (host_seconds() - t0 > REC_STREAM_FINISH_SECONDS) {
            drop(s, "the stream's follower did not take the stream's end within %s seconds: the "
                 "stream is dropped", "10");
            break;
        }
        struct pollfd pf = { s->fd, POLLOUT, 0 };
        pthread_mutex_unlock(&s->mu);
        poll(&pf, 1, 100);
        pthread_mutex_lock(&s->mu);
        read_acks(s);
    }
    s->finishing = 1;
    if (s->is_socket && !s->dropped) {
        /* The follower's last acknowledgements (a short bounded wait). */
        shutdown(s->fd, SHUT_WR);
        double t1 = host_seconds();
        while (!s->dropped && host_seconds() - t1 < 0.5 &&
               s->acks && s->acked_chunks < atomic_load(&s->final_chunks)) {
            struct pollfd pf = { s->fd, POLLIN, 0 };
            pthread_mutex_unlock(&s->mu);
            poll(&pf, 1, 50);
            pthread_mutex_lock(&s->mu);
            read_acks(s);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

void rec_stream_lag_get(rec_stream *s, rec_stream_lag *out)
{
    pthread_mutex_lock(&s->mu);
    out->sent_bytes = s->sent;
    out->queued_bytes = s->q.len - s->qhead;
    out->final_chunks = atomic_load(&s->final_chunks);
    out->acked_chunks = s->acked_chunks;
    out->acked_instructions = s->acked_instructions;
    out->acks = s->nacks;
    out->dropped = s->dropped;
    pthread_mutex_unlock(&s->mu);
}

const char *rec_stream_error(const rec_stream *s) { return s->error; }

void rec_stream_free(rec_stream *s)
{
    if (!s)
        return;
    if (s->final_w)
        rnr_writer_abandon(s->final_w);
    s->final_w = NULL;
    stop_stitcher(s);
    release_held(s, 0);
    free(s->held);
    adaptive_planner_free(s->planner);
    free(s->ph_start);
    free(s->ph_format);
    pthread_mutex_destroy(&s->ph_mu);
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    rnr_stream_parser_free(s->acks);
    free(s->q.data);
    free(s->pipe.data);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->pipe.mu);
    pthread_cond_destroy(&s->pipe.cv);
    free(s);
}
