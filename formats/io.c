/* formats/io.c: buffered byte streams over descriptors and memory. */
#include "formats/io.h"
#include "formats/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IO_BUF_SIZE (64u * 1024u)

struct rnr_io {
    const rnr_io_ops *ops;
    void *ctx;
    char *name;
    int writing;
    int failed;
    char error[256];
    uint64_t offset;
    int64_t size;
    /* Read or write buffer for descriptor streams (NULL for memory). */
    uint8_t *buf;
    size_t buf_len, buf_pos;
    int fd, own_fd;   /* descriptor streams only */
    /* Memory streams. */
    const uint8_t *mem_in;
    size_t mem_len, mem_pos;
    rnr_membuf *mem_out;
};


void rnr_io_set_error(rnr_io *io, const char *fmt, ...)
{
    if (io->failed)
        return;
    io->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(io->error, sizeof io->error, fmt, ap);
    va_end(ap);
}

/* ---- descriptor backend ---- */

static long fd_read(void *ctx, void *buf, size_t n)
{
    rnr_io *io = ctx;
    for (;;) {
        ssize_t r = read(io->fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return (long)r;
    }
}

static long fd_write(void *ctx, const void *buf, size_t n)
{
    rnr_io *io = ctx;
    for (;;) {
        ssize_t r = write(io->fd, buf, n);
        if (r >= 0 || errno != EINTR)
            return (long)r;
    }
}

static int fd_close(void *ctx)
{
    rnr_io *io = ctx;
    return io->own_fd ? close(io->fd) : 0;
}

static const rnr_io_ops fd_ops = { fd_read, fd_write, NULL, fd_close };

/* ---- memory backends ---- */

static long mem_read(void *ctx, void *buf, size_t n)
{
    rnr_io *io = ctx;
    size_t left = io->mem_len - io->mem_pos;
    if (n > left)
        n = left;
    memcpy(buf, io->mem_in + io->mem_pos, n);
    io->mem_pos += n;
    return (long)n;
}

static long mem_write(void *ctx, const void *buf, size_t n)
{
    rnr_membuf *m = ((rnr_io *)ctx)->mem_out;
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < m->len + n)
            cap *= 2;
        uint8_t *p = realloc(m->data, cap);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        m->data = p;
        m->cap = cap;
    }
    memcpy(m->data + m->len, buf, n);
    m->len += n;
    return (long)n;
}

static const rnr_io_ops mem_read_ops = { mem_read, NULL, NULL, NULL };
static const rnr_io_ops mem_write_ops = { NULL, mem_write, NULL, NULL };

/* ---- construction ---- */

static rnr_io *io_new(const rnr_io_ops *ops, const char *name, int writing)
{
    rnr_io *io = rnr_xrealloc(NULL, sizeof *io);
    memset(io, 0, sizeof *io);
    io->ops = ops;
    io->ctx = io;
    io->name = rnr_xstrdup(name);
    io->writing = writing;
    io->size = -1;
    io->fd = -1;
    return io;
}

rnr_io *rnr_io_from_fd(int fd, const char *name, int write, int own)
{
    rnr_io *io = io_new(&fd_ops, name, write);
    io->fd = fd;
    io->own_fd = own;
    io->buf = rnr_xrealloc(NULL, IO_BUF_SIZE);
    struct stat st;
    if (!write && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        io->size = (int64_t)st.st_size;
    return io;
}

rnr_io *rnr_io_open(const char *path, int write, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return rnr_io_from_fd(write ? STDOUT_FILENO : STDIN_FILENO,
                              write ? "<stdout>" : "<stdin>", write, 0);
    int fd = write ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                   : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!write) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a directory", path);
            close(fd);
            return NULL;
        }
    }
    return rnr_io_from_fd(fd, path, write, 1);
}

rnr_io *rnr_io_mem_reader(const void *buf, size_t len, const char *name)
{
    rnr_io *io = io_new(&mem_read_ops, name, 0);
    io->mem_in = buf;
    io->mem_len = len;
    io->size = (int64_t)len;
    return io;
}

rnr_io *rnr_io_mem_writer(rnr_membuf *out, const char *name)
{
    rnr_io *io = io_new(&mem_write_ops, name, 1);
    io->mem_out = out;
    return io;
}

rnr_io *rnr_io_custom(const rnr_io_ops *ops, void *ctx, const char *name, int write)
{
    rnr_io *io = io_new(ops, name, write);
    io->ctx = ctx;
    return io;
}

/* ---- operations ---- */

static long backend_read(rnr_io *io, void *buf, size_t n)
{
    long r = io->ops->read(io->ctx, buf, n);
    if (r < 0)
        rnr_io_set_error(io, "read error: %s", strerror(errno));
    return r;
}

size_t rnr_io_read(rnr_io *io, void *buf, size_t n)
{
    uint8_t *out = buf;
    size_t got = 0;
    if (io->failed || io->writing || !io->ops->read)
        return 0;
    while (got < n) {
        if (io->buf) {
            if (io->buf_pos == io->buf_len) {
                /* Large requests bypass the buffer. */
                if (n - got >= IO_BUF_SIZE) {
                    long r = backend_read(io, out + got, n - got);
                    if (r <= 0)
                        break;
                    got += (size_t)r;
                    continue;
                }
                long r = backend_read(io, io->buf, IO_BUF_SIZE);
                if (r <= 0)
                    break;
                io->buf_len = (size_t)r;
                io->buf_pos = 0;
            }
            size_t k = io->buf_len - io->buf_pos;
            if (k > n - got)
                k = n - got;
            memcpy(out + got, io->buf + io->buf_pos, k);
            io->buf_pos += k;
            got += k;
        } else {
            long r = backend_read(io, out + got, n - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
    }
    io->offset += got;
    return got;
}

static int backend_write_all(rnr_io *io, const uint8_t *p, size_t n)
{
    while (n > 0) {
        long r = io->ops->write(io->ctx, p, n);
        if (r <= 0) {
            rnr_io_set_error(io, "write error: %s", r < 0 ? strerror(errno) : "no progress");
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int drain(rnr_io *io)
{
    if (io->buf && io->buf_len > 0) {
        size_t n = io->buf_len;
        io->buf_len = 0;
        return backend_write_all(io, io->buf, n);
    }
    return 0;
}

int rnr_io_write(rnr_io *io, const void *data, size_t n)
{
    const uint8_t *p = data;
    if (io->failed)
        return -1;
    if (!io->writing || !io->ops->write) {
        rnr_io_set_error(io, "stream is not open for writing");
        return -1;
    }
    io->offset += n;
    if (!io->buf)
        return backend_write_all(io, p, n);
    if (io->buf_len + n > IO_BUF_SIZE) {
        if (drain(io) < 0)
            return -1;
        if (n >= IO_BUF_SIZE)
            return backend_write_all(io, p, n);
    }
    memcpy(io->buf + io->buf_len, p, n);
    io->buf_len += n;
    return 0;
}

int rnr_io_flush(rnr_io *io)
{
    if (io->failed)
        return -1;
    if (!io->writing)
        return 0;
    if (drain(io) < 0)
        return -1;
    if (io->ops->flush && io->ops->flush(io->ctx) < 0) {
        rnr_io_set_error(io, "flush error: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int rnr_io_close(rnr_io *io)
{
    if (!io)
        return 0;
    if (io->writing)
        rnr_io_flush(io);
    if (io->ops->close && io->ops->close(io->ctx) < 0)
        rnr_io_set_error(io, "close error: %s", strerror(errno));
    int rc = io->failed ? -1 : 0;
    free(io->buf);
    free(io->name);
    free(io);
    return rc;
}

int rnr_io_failed(const rnr_io *io) { return io->failed; }
const char *rnr_io_error(const rnr_io *io) { return io->error; }
const char *rnr_io_name(const rnr_io *io) { return io->name; }
uint64_t rnr_io_offset(const rnr_io *io) { return io->offset; }
int64_t rnr_io_size(const rnr_io *io) { return io->size; }
