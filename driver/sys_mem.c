/* driver/sys_mem.c: the address-space system calls over driver/vm.c. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver/internal.h"

int64_t sc_brk(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return (int64_t)vm_brk(p->vm, a[0]);
}

int64_t sc_mmap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    uint64_t addr = a[0], len = a[1], off = a[5];
    int prot = (int)a[2], flags = (int)a[3];
    int64_t fd = (int64_t)(int32_t)a[4];
    if (flags & LX_MAP_ANONYMOUS)
        return vm_mmap(p->vm, addr, len, prot, flags, 0, NULL, 0, off);
    file_obj *f = files_get(p, fd);
    if (!f)
        return -LX_EBADF;
    if (f->kind != FILE_HOST)
        return -LX_ENODEV;
    if ((f->flags & LX_O_ACCMODE) == LX_O_WRONLY)
        return -LX_EACCES;
    int type = flags & LX_MAP_TYPE;
    if ((type == LX_MAP_SHARED || type == LX_MAP_SHARED_VALIDATE) && (prot & LX_PROT_WRITE)) {
        if ((f->flags & LX_O_ACCMODE) != LX_O_RDWR)
            return -LX_EACCES;
        proc_warn_once(p, WARN_MMAP_SHARED, "writable shared file mappings are not supported: ENODEV");
        return -LX_ENODEV;
    }
    if (len == 0 || (off & LX_PAGE_MASK) || len > VM_USER_TOP)
        return vm_mmap(p->vm, addr, len, prot, flags, 1, NULL, 0, off); /* its errno */
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
    int64_t rc = vm_mmap(p->vm, addr, len, prot, flags, 1, buf, got, off);
    free(buf);
    return rc;
}

int64_t sc_munmap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return vm_munmap(p->vm, a[0], a[1]);
}

int64_t sc_mprotect(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return vm_mprotect(p->vm, a[0], a[1], (int)a[2]);
}

int64_t sc_madvise(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return vm_madvise(p->vm, a[0], a[1], (int)a[2]);
}

int64_t sc_mremap(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    return vm_mremap(p->vm, a[0], a[1], a[2], (int)a[3]);
}

int64_t sc_riscv_flush_icache(drv_proc *p, thread *t, const uint64_t a[6])
{
    (void)t;
    if (a[2] & ~1ull)
        return -LX_EINVAL;
    if (a[1] > a[0])
        rru_mem_invalidate_code(p->mem, a[0], a[1] - a[0]);
    return 0;
}
