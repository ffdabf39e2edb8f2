/* formats/io.h: byte streams for logs (files, pipes, stdin/stdout, memory)
 * behind one small vtable, with a sticky error that keeps its first message. */
#ifndef RNR_FORMATS_IO_H
#define RNR_FORMATS_IO_H

#include <stddef.h>
#include <stdint.h>

typedef struct rnr_io rnr_io;

/* One backend of a stream. Each returns the byte count (read: 0 at end of
 * input) or -1 with errno set. flush and close may be NULL. */
typedef struct rnr_io_ops {
    long (*read)(void *ctx, void *buf, size_t n);
    long (*write)(void *ctx, const void *buf, size_t n);
    int (*flush)(void *ctx);
    int (*close)(void *ctx);
} rnr_io_ops;

/* Opens PATH for reading (write=0) or writing (write=1, created or
 * truncated); "-" is stdin or stdout. NULL on failure with a one-line
 * message "PATH: reason" in err. The caller frees with rnr_io_close. */
rnr_io *rnr_io_open(const char *path, int write, char *err, size_t errlen);

/* Wraps an open descriptor; own=1 closes it in rnr_io_close. NAME is the
 * name used in messages. Never fails short of memory exhaustion (aborts). */
rnr_io *rnr_io_from_fd(int fd, const char *name, int write, int own);

/* A stream over LEN bytes at BUF (not copied: BUF must outlive the stream). */
rnr_io *rnr_io_mem_reader(const void *buf, size_t len, const char *name);

/* Bytes written to a memory stream; they belong to the caller, who frees
 * `data`, and outlive the stream. */
typedef struct rnr_membuf {
    uint8_t *data;
    size_t len, cap;
} rnr_membuf;

/* A stream appending to *OUT (which must outlive the stream). */
rnr_io *rnr_io_mem_writer(rnr_membuf *out, const char *name);

/* A stream over caller-supplied ops and context (ctx is not freed). */
rnr_io *rnr_io_custom(const rnr_io_ops *ops, void *ctx, const char *name, int write);

/* Reads up to N bytes, looping over short reads; returns the count read,
 * less than N only at end of input or on error (see rnr_io_failed). */
size_t rnr_io_read(rnr_io *io, void *buf, size_t n);
/* Writes all N bytes (buffered); 0 on success, -1 on error (sticky). */
int rnr_io_write(rnr_io *io, const void *buf, size_t n);
/* Pushes buffered bytes to the backend; 0 or -1 (sticky). */
int rnr_io_flush(rnr_io *io);
/* Flushes (when writing), closes and frees; 0, or -1 if the stream had
 * failed at any point (the message was available from rnr_io_error). */
int rnr_io_close(rnr_io *io);

int rnr_io_failed(const rnr_io *io);
const char *rnr_io_error(const rnr_io *io);      /* first error, or "" */
const char *rnr_io_name(const rnr_io *io);
uint64_t rnr_io_offset(const rnr_io *io);         /* bytes read or written */
/* Total size when the stream is a regular file being read, else -1. */
int64_t rnr_io_size(const rnr_io *io);
/* Records an error (first one wins); printf-style, without the name. */
void rnr_io_set_error(rnr_io *io, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes all N bytes to FD (retrying short writes and EINTR); 0, or -1
 * with errno. */
int rnr_write_full(int fd, const void *p, size_t n);

#endif
