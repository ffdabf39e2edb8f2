/* driver/shmap.c: writable shared mappings of files (MAP_SHARED with
 * PROT_WRITE of a file open for reading and writing).
 *
 * The mapping is ordinary guest memory: its pages are filled from the file
 * at mmap (the bytes go to the input log like a private file mapping's),
 * and every guest access to them is a simulated access like any other,
 * seen by coherence and the RRU. What makes it shared is the way back:
 * the driver writes the mapping's pages to the file at msync, at munmap
 * (and when a MAP_FIXED mapping replaces them), before the file is read
 * through a descriptor (Linux's page cache shows a read() the stores made
 * through a mapping at once), and when the process ends. Only pages the
 * guest or the kernel touched are written; a page never touched still
 * holds the file's bytes. Nothing past the file's end is written (Linux
 * drops those bytes too).
 *
 * A replay keeps the same list of mappings (the address, the length: what
 * madvise and mremap decide by) but never touches a host file: every byte
 * the guest sees comes from guest memory or the input log.
 *
 * Limits (docs/driver.md): a second writable shared mapping of file pages
 * already mapped so is refused with ENODEV, since the two would be two
 * copies and the RRU tracks lines by guest address; mremap of such a
 * mapping is refused (EINVAL). A write() to the file shows
 * (shmap_file_written), and so does a truncation (shmap_file_resized). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/internal.h"

struct shared_map {
    uint64_t addr, len;          /* guest pages [addr, addr + len) */
    uint64_t off;                /* file offset of addr */
    uint64_t dev, ino;           /* the file (0, 0 in a replay) */
    int fd;                      /* a host descriptor of it; -1 in a replay */
};

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/* Writes the guest pages of [lo, hi) of mapping M to its file. */
static void write_back(drv_proc *p, const shared_map *m, uint64_t lo, uint64_t hi)
{
    struct stat st;
    if (m->fd < 0 || fstat(m->fd, &st) != 0)
        return;
    uint8_t page[LX_PAGE_SIZE];
    for (uint64_t a = lo; a < hi; a += LX_PAGE_SIZE) {
        uint64_t fo = m->off + (a - m->addr);
        if (fo >= (uint64_t)st.st_size)
            break;
        /* A page never touched holds the file's bytes already. */
        if (rru_mem_prot(p->cur->mem, a) < 0 || rru_mem_read(p->cur->mem, a, page, sizeof page) < 0)
            continue;
        uint64_t n = (uint64_t)st.st_size - fo < sizeof page ? (uint64_t)st.st_size - fo : sizeof page;
        for (uint64_t done = 0; done < n;) {
            ssize_t w = pwrite(m->fd, page + done, n - done, (off_t)(fo + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            done += (uint64_t)w;
        }
    }
}

void shmap_sync(drv_proc *p, uint64_t addr, uint64_t len)
{
    for (size_t i = 0; i < p->cur->nshmaps; i++) {
        const shared_map *m = &p->cur->shmaps[i];
        if (!overlaps(m->addr, m->len, addr, len))
            continue;
        uint64_t lo = addr > m->addr ? addr : m->addr;
        uint64_t hi = addr + len < m->addr + m->len ? addr + len : m->addr + m->len;
        write_back(p, m, lo & ~(uint64_t)LX_PAGE_MASK, hi);
    }
}

void shmap_sync_file(drv_proc *p, int host_fd)
{
    /* Every process's mappings of the file: the caller reads what they
     * hold (its read's bytes are logged, so a replay needs none of this). */
    struct stat st;
    if (fstat(host_fd, &st) != 0)
        return;
    process *self = p->cur;
    for (size_t k = 0; k < p->nprocs; k++) {
        p->cur = p->procs[k];
        for (size_t i = 0; i < p->cur->nshmaps && !p->cur->ended; i++) {
            const shared_map *m = &p->cur->shmaps[i];
            if (m->fd >= 0 && m->dev == (uint64_t)st.st_dev && m->ino == (uint64_t)st.st_ino)
                write_back(p, m, m->addr, m->addr + m->len);
        }
    }
    p->cur = self;
}

/* 1 if a live process other than the current one maps the file (DEV, INO)
 * writable and shared in pages of its own, not the current process's
 * (a mapping both have since a fork is one set of pages). Recording and
 * run: a replay keeps no files. */
static int mapped_elsewhere(const drv_proc *p, uint64_t dev, uint64_t ino)
{
    for (size_t k = 0; k < p->nprocs; k++) {
        const process *pr = p->procs[k];
        for (size_t i = 0; pr != p->cur && !pr->ended && i < pr->nshmaps; i++) {
            const shared_map *m = &pr->shmaps[i];
            if (m->fd >= 0 && m->dev == dev && m->ino == ino &&
                !rru_mem_shares(pr->mem, p->cur->mem, m->addr))
                return 1;
        }
    }
    return 0;
}

/* A write or a size change of a file another process maps: its mapping
 * does not show it (a limit, said once). */
static void warn_elsewhere(drv_proc *p, uint64_t dev, uint64_t ino)
{
    if (mapped_elsewhere(p, dev, ino))
        proc_warn_once(p, WARN_SHMAP_ELSEWHERE, "a file mapped writable and shared by another "
                       "process was written or resized: that process's mapping does not show it");
}

/* Linux's page cache is what a shared mapping shows, so bytes written to
 * the file through a descriptor are in every shared mapping of it at once.
 * They are copied into the mapped guest pages as the calling core's stores
 * (coherence and the RRU order them against the other cores' accesses,
 * like the bytes of a read()) and logged as the call's memory records,
 * which a replay applies after the call. The mapping covers whole pages:
 * bytes past its length inside its last page show too. A page the guest
 * made read-only with mprotect since is not updated (a limit). */
void shmap_file_written(drv_proc *p, int host_fd, uint64_t off, const uint8_t *data, uint64_t n)
{
    struct stat st;
    if (n == 0 || fstat(host_fd, &st) != 0)
        return;
    warn_elsewhere(p, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
    for (size_t i = 0; i < p->cur->nshmaps; i++) {
        const shared_map *m = &p->cur->shmaps[i];
        if (m->fd < 0 || m->dev != (uint64_t)st.st_dev || m->ino != (uint64_t)st.st_ino)
            continue;
        uint64_t end = m->off + ((m->len + LX_PAGE_MASK) & ~(uint64_t)LX_PAGE_MASK);
        uint64_t lo = off > m->off ? off : m->off, hi = off + n < end ? off + n : end;
        for (uint64_t at = lo; at < hi;) {
            /* A page at a time: one the guest cannot write is skipped. */
            uint64_t next = (at | LX_PAGE_MASK) + 1;
            uint64_t k = (next < hi ? next : hi) - at;
            (void)guest_write_logged(p, m->addr + (at - m->off), data + (at - off), k);
            at += k;
        }
    }
}

/* The file (DEV, INO) was truncated or extended; FROM is the smaller of
 * its old and new sizes. The mapped bytes at file offsets from FROM on
 * become zeros, as in Linux: a shrink drops the page cache past the new
 * end (zeroing the tail of the last page), and an extension reads as
 * zeros. They are stored as the calling core's stores and logged, as in
 * shmap_file_written; a page present and all zeros is left alone. (Linux
 * also makes whole pages past a new end fault with SIGBUS until the file
 * grows again; here they read as zeros.) */
void shmap_file_resized(drv_proc *p, uint64_t dev, uint64_t ino, uint64_t from)
{
    static const uint8_t zeros[LX_PAGE_SIZE];
    uint8_t page[LX_PAGE_SIZE];
    warn_elsewhere(p, dev, ino);
    for (size_t i = 0; i < p->cur->nshmaps; i++) {
        const shared_map *m = &p->cur->shmaps[i];
        if (m->fd < 0 || m->dev != dev || m->ino != ino)
            continue;
        uint64_t end = m->off + ((m->len + LX_PAGE_MASK) & ~(uint64_t)LX_PAGE_MASK);
        for (uint64_t at = from > m->off ? from : m->off; at < end;) {
            uint64_t next = (at | LX_PAGE_MASK) + 1, k = next - at;
            uint64_t addr = m->addr + (at - m->off);
            /* An absent page would come in with the bytes mmap read. */
            if (rru_mem_read(p->cur->mem, addr, page, k) != 0 || memcmp(page, zeros, k) != 0)
                (void)guest_write_logged(p, addr, zeros, k);
            at = next;
        }
    }
}

int shmap_overlaps(const drv_proc *p, uint64_t addr, uint64_t len)
{
    for (size_t i = 0; i < p->cur->nshmaps; i++)
        if (overlaps(p->cur->shmaps[i].addr, p->cur->shmaps[i].len, addr, len))
            return 1;
    return 0;
}

static void add(drv_proc *p, const shared_map *m)
{
    if (p->cur->nshmaps == p->cur->cap_shmaps) {
        size_t cap = p->cur->cap_shmaps ? 2 * p->cur->cap_shmaps : 8;
        shared_map *n = realloc(p->cur->shmaps, cap * sizeof *n);
        if (!n)
            return;   /* out of memory: the mapping stays private */
        p->cur->shmaps = n;
        p->cur->cap_shmaps = cap;
    }
    p->cur->shmaps[p->cur->nshmaps++] = *m;
}

void shmap_fork(drv_proc *p, process *child)
{
    process *self = p->cur;
    for (size_t i = 0; i < self->nshmaps; i++) {
        shared_map m = self->shmaps[i];
        if (m.fd >= 0)
            m.fd = dup(m.fd);   /* the child's mapping writes back on its own */
        p->cur = child;
        add(p, &m);
        p->cur = self;
    }
}

void shmap_drop(drv_proc *p, uint64_t addr, uint64_t len)
{
    shmap_sync(p, addr, len);
    for (size_t i = 0; i < p->cur->nshmaps;) {
        shared_map *m = &p->cur->shmaps[i];
        if (!overlaps(m->addr, m->len, addr, len)) {
            i++;
            continue;
        }
        shared_map keep = *m;
        uint64_t end = m->addr + m->len, cut_end = addr + len;
        /* What stays: the part before the hole and the part after it. */
        int before = m->addr < addr, after = end > cut_end;
        if (before) {
            m->len = addr - m->addr;
            i++;
        }
        if (after) {
            shared_map tail = keep;
            tail.addr = cut_end;
            tail.len = end - cut_end;
            tail.off = keep.off + (cut_end - keep.addr);
            if (before && keep.fd >= 0)
                tail.fd = dup(keep.fd);
            if (!before) {
                *m = tail;
                i++;
            } else {
                add(p, &tail);   /* may move the array: M is not used after */
            }
        }
        if (!before && !after) {
            if (keep.fd >= 0)
                close(keep.fd);
            p->cur->shmaps[i] = p->cur->shmaps[--p->cur->nshmaps];
        }
    }
}

int64_t shmap_check(drv_proc *p, int host_fd, uint64_t off, uint64_t len)
{
    struct stat st;
    if (fstat(host_fd, &st) != 0)
        return -(int64_t)errno;
    for (size_t i = 0; i < p->cur->nshmaps; i++) {
        const shared_map *m = &p->cur->shmaps[i];
        if (m->fd >= 0 && m->dev == (uint64_t)st.st_dev && m->ino == (uint64_t)st.st_ino &&
            overlaps(m->off, m->len, off, len)) {
            proc_warn_once(p, WARN_MMAP_SHARED, "a second writable shared mapping of file pages "
                           "already mapped so is not supported: ENODEV");
            return -LX_ENODEV;
        }
    }
    /* Another process's mapping of the file would not share its pages
     * with this one: refused too. */
    if (mapped_elsewhere(p, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
        proc_warn_once(p, WARN_MMAP_SHARED, "a writable shared mapping of a file another process "
                       "maps so is not supported: ENODEV");
        return -LX_ENODEV;
    }
    return 0;
}

void shmap_add(drv_proc *p, uint64_t addr, uint64_t len, int host_fd, uint64_t off)
{
    shared_map m = { addr, (len + LX_PAGE_MASK) & ~(uint64_t)LX_PAGE_MASK, off, 0, 0, -1 };
    struct stat st;
    if (host_fd >= 0 && fstat(host_fd, &st) == 0) {
        m.dev = (uint64_t)st.st_dev;
        m.ino = (uint64_t)st.st_ino;
        m.fd = dup(host_fd);   /* the mapping outlives the descriptor, as in Linux */
    }
    add(p, &m);
}

void shmap_end(drv_proc *p)
{
    for (size_t i = 0; i < p->cur->nshmaps; i++) {
        write_back(p, &p->cur->shmaps[i], p->cur->shmaps[i].addr, p->cur->shmaps[i].addr + p->cur->shmaps[i].len);
        if (p->cur->shmaps[i].fd >= 0)
            close(p->cur->shmaps[i].fd);
    }
    free(p->cur->shmaps);
    p->cur->shmaps = NULL;
    p->cur->nshmaps = p->cur->cap_shmaps = 0;
}
