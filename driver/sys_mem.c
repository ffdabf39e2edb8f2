/* driver/sys_mem.c: the address-space system calls over driver/vm.c. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver/internal.h"

int64_t sc_brk(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return (int64_t)vm_brk(p->cur->vm, a[0]);
}

int64_t sc_mmap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint64_t addr = a[0], len = a[1], off = a[5];
    int prot = (int)a[2], flags = (int)a[3];
    int64_t fd = (int64_t)(int32_t)a[4];
    /* A mapping that replaces pages of a shared one: those go back first. */
    if ((flags & LX_MAP_FIXED) && !(addr & LX_PAGE_MASK) && len && len <= VM_USER_TOP)
        shmap_drop(p, addr, len);
    if (flags & LX_MAP_ANONYMOUS)
        return vm_mmap(p->cur->vm, addr, len, prot, flags, 0, NULL, 0, off);
    file_obj *f = files_get(p, fd);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST)
        return -LX_ENODEV;
    if ((f->flags & LX_O_ACCMODE) == LX_O_WRONLY)
        return -LX_EACCES;
    int type = flags & LX_MAP_TYPE;
    int shared = (type == LX_MAP_SHARED || type == LX_MAP_SHARED_VALIDATE) && (prot & LX_PROT_WRITE);
    if (shared && (f->flags & LX_O_ACCMODE) != LX_O_RDWR)
        return -LX_EACCES;
    if (len == 0 || (off & LX_PAGE_MASK) || len > VM_USER_TOP)
        return vm_mmap(p->cur->vm, addr, len, prot, flags, 1, NULL, 0, off); /* its errno */
    if (shared) {
        int64_t rc = shmap_check(p, f->host_fd, off, (len + LX_PAGE_MASK) & ~LX_PAGE_MASK);
        if (rc < 0)
            return rc;
    }
    /* The file's bytes as they are now, stores through shared mappings included. */
    shmap_sync_file(p, f->host_fd);
    /* The file's bytes for the mapping (short at end of file). */
    uint64_t want = (len + LX_PAGE_MASK) & ~LX_PAGE_MASK;
    uint8_t *buf = malloc(want ? want : 1);
    if (!buf)
        return -LX_ENOMEM;
    uint64_t got = 0;
    while (got < want) {
        ssize_t r = pread(f->host_fd, buf + got, want - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return e == ESPIPE ? -LX_ENODEV : -e;
        }
        if (r == 0)
            break;
        got += (uint64_t)r;
    }
    int64_t rc = vm_mmap(p->cur->vm, addr, len, prot, flags, 1, buf, got, off);
    free(buf);
    if (shared && rc >= 0)
        shmap_add(p, (uint64_t)rc, len, f->host_fd, off);
    return rc;
}

int64_t sc_munmap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (!(a[0] & LX_PAGE_MASK) && a[1] && a[1] <= VM_USER_TOP)
        shmap_drop(p, a[0], (a[1] + LX_PAGE_MASK) & ~LX_PAGE_MASK);
    return vm_munmap(p->cur->vm, a[0], a[1]);
}

int64_t sc_mprotect(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return vm_mprotect(p->cur->vm, a[0], a[1], (int)a[2]);
}

int64_t sc_madvise(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    /* MADV_DONTNEED on a shared mapping drops nothing Linux would not
     * read back from the page cache, which holds the stores: the pages
     * keep their bytes (the whole range is only checked then). */
    if ((int)a[2] == LX_MADV_DONTNEED && shmap_overlaps(p, a[0], a[1]))
        return vm_madvise(p->cur->vm, a[0], a[1], LX_MADV_NORMAL);
    return vm_madvise(p->cur->vm, a[0], a[1], (int)a[2]);
}

int64_t sc_mremap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (shmap_overlaps(p, a[0], a[1] ? a[1] : 1)) {
        proc_warn_once(p, WARN_MMAP_SHARED, "mremap of a writable shared file mapping is not "
                       "supported: EINVAL");
        return -LX_EINVAL;
    }
    return vm_mremap(p->cur->vm, a[0], a[1], a[2], (int)a[3]);
}

int64_t sc_riscv_flush_icache(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (a[2] & ~1ull)
        return -LX_EINVAL;
    if (a[1] > a[0])
        rru_mem_invalidate_code(p->cur->mem, a[0], a[1] - a[0]);
    return 0;
}

/* ---- calls about pages that need little change here ----
 *
 * The simulated system never swaps, so locking pages only checks its
 * arguments as Linux does: mapped or ENOMEM. Locked pages are not counted
 * against RLIMIT_MEMLOCK. msync writes the writable shared file mappings
 * of the range to their files (shmap.c), MS_ASYNC as MS_SYNC. */

/* [ADDR, ADDR+LEN) rounded out to pages: 0 if all mapped, else -ENOMEM
 * (or -EINVAL if ALIGNED asks for a page-aligned ADDR it lacks). */
static int64_t pages_mapped(drv_proc *p, uint64_t addr, uint64_t len, int aligned)
{
    if (aligned && (addr & LX_PAGE_MASK))
        return -LX_EINVAL;
    uint64_t lo = addr & ~(uint64_t)LX_PAGE_MASK, end = addr + len;
    if (end < addr)
        return -LX_ENOMEM;
    if (len == 0)
        return 0;
    uint64_t hi = (end + LX_PAGE_MASK) & ~(uint64_t)LX_PAGE_MASK;
    return hi > lo && vm_accessible(p->cur->vm, lo, hi - lo, 0) ? 0 : -LX_ENOMEM;
}

int64_t sc_msync(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t flags = (int64_t)(int32_t)a[2];
    const int64_t ms_async = 1, ms_invalidate = 2, ms_sync = 4;
    if ((flags & ~(ms_async | ms_invalidate | ms_sync)) || ((flags & ms_async) && (flags & ms_sync)))
        return -LX_EINVAL;
    int64_t rc = pages_mapped(p, a[0], a[1], 1);
    if (rc == 0 && a[1])
        shmap_sync(p, a[0], a[1]);
    return rc;
}

int64_t sc_mlock(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return pages_mapped(p, a[0], a[1], 0);
}

int64_t sc_munlock(drv_proc *p, thread *t, const uint64_t a[6]) { return sc_mlock(p, t, a); }

int64_t sc_mlockall(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    int64_t flags = (int64_t)(int32_t)a[0];
    const int64_t mcl_current = 1, mcl_future = 2, mcl_onfault = 4;
    if (!flags || (flags & ~(mcl_current | mcl_future | mcl_onfault)) || flags == mcl_onfault)
        return -LX_EINVAL;
    return 0;
}

int64_t sc_munlockall(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)p;
    (void)t;
    (void)a;
    return 0;
}

/* One byte per page, 1 if the page is in the machine's memory (demand
 * paging made it: touched, or written by the kernel). Which pages those
 * are depends on the run, so the vector is logged. */
int64_t sc_mincore(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    int64_t rc = pages_mapped(p, a[0], a[1], 1);
    if (rc < 0 || a[1] == 0)
        return rc;
    uint64_t pages = (a[1] + LX_PAGE_MASK) / LX_PAGE_SIZE;
    uint8_t chunk[512];
    for (uint64_t done = 0; done < pages;) {
        uint64_t n = pages - done < sizeof chunk ? pages - done : sizeof chunk;
        for (uint64_t i = 0; i < n; i++)
            chunk[i] = rru_mem_prot(p->cur->mem, a[0] + (done + i) * LX_PAGE_SIZE) >= 0;
        if ((rc = guest_write(p, a[2] + done, chunk, (size_t)n)) < 0)
            return rc;
        done += n;
    }
    return 0;
}
