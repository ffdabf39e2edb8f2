/* rru/mem.h: guest memory: a sparse 48-bit address space of 4 KiB pages with
 * R/W/X permissions, host-side access for the loader and the syscall shim,
 * and a digest of everything mapped. docs/machine.md describes the model.
 *
 * Threads: any number of harts may execute on one rru_mem concurrently
 * (guest accesses, rru_mem_read/write). Changing the map (map, unmap,
 * protect) must not run concurrently with execution or with each other;
 * executors notice a change when they next enter rru_hart_execute or
 * rru_machine_run. */
#ifndef RNR_RRU_MEM_H
#define RNR_RRU_MEM_H

#include <stddef.h>
#include <stdint.h>

#define RRU_PAGE_SHIFT 12
#define RRU_PAGE_SIZE (1ull << RRU_PAGE_SHIFT)
#define RRU_LINE_SHIFT 6
#define RRU_LINE_SIZE (1ull << RRU_LINE_SHIFT)     /* coherence granule */
#define RRU_ADDR_LIMIT (1ull << 48)                 /* guest addresses are below */

/* Page permissions (combine with |). W implies R: RISC-V has no write-only
 * pages, so map/protect add R to W. */
enum {
    RRU_PROT_NONE = 0,
    RRU_PROT_R = 1,
    RRU_PROT_W = 2,
    RRU_PROT_X = 4,
};

typedef struct rru_mem rru_mem;

/* A new, empty address space; NULL only if memory is exhausted. */
rru_mem *rru_mem_new(void);
/* Frees the address space and every page (NULL is fine). No hart or machine
 * may still use it. */
void rru_mem_free(rru_mem *m);

/* Maps [addr, addr+len) as zero-filled pages with PROT, replacing whatever
 * was mapped there (like MAP_FIXED). addr and len must be page-aligned,
 * len > 0, and the range below RRU_ADDR_LIMIT; otherwise -1 and nothing
 * changes. -1 also if host memory runs out (pages mapped so far stay). */
int rru_mem_map(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot);
/* Maps the pages of [addr, addr+len) that are not mapped yet, zero-filled
 * with PROT; mapped pages stay as they are. Unlike the other changes of the
 * map, it may run while harts execute (demand paging during a parallel
 * replay), one populate at a time: a hart sees a new page whole or not at
 * all. Alignment as for map; -1 if broken or host memory runs out. */
int rru_mem_populate(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot);
/* Unmaps every page of the range (pages not mapped are skipped). Alignment
 * rules as for map; -1 if they are broken. */
int rru_mem_unmap(rru_mem *m, uint64_t addr, uint64_t len);
/* Changes the permissions of every page of the range; -1 (and no change) if
 * the range is misaligned or any page of it is not mapped (Linux: ENOMEM). */
int rru_mem_protect(rru_mem *m, uint64_t addr, uint64_t len, unsigned prot);

/* Permissions of the page holding ADDR, or -1 if it is not mapped. */
int rru_mem_prot(const rru_mem *m, uint64_t addr);
/* 1 if no page of [addr, addr+len) is mapped, else 0 (ranges reaching past
 * RRU_ADDR_LIMIT are never free). For the driver's choice of mmap addresses. */
int rru_mem_range_free(const rru_mem *m, uint64_t addr, uint64_t len);
/* Lowest mapped page address >= ADDR, or UINT64_MAX if none. */
uint64_t rru_mem_next_mapped(const rru_mem *m, uint64_t addr);
/* Number of mapped pages. */
uint64_t rru_mem_pages(const rru_mem *m);
/* A new address space holding a copy of every page of M (permissions and
 * bytes): fork's. NULL if host memory runs out. */
rru_mem *rru_mem_clone(const rru_mem *m);
/* The pages SRC has in [addr, addr+len) become DST's too, at the same
 * addresses: one memory's stores are the other's loads (a shared mapping
 * across a fork). Each memory keeps its own permissions for them; what DST
 * had there goes. Pages SRC lacks are left as DST has them (the caller
 * makes them present first). A shared page is never reused for another
 * page, by either memory; its data lives as long as SRC, which must
 * outlive DST's use of it. Decoded code is each memory's own: a store
 * through one does not make the other's harts decode again (shared pages
 * hold data). Alignment as for map; -1 if broken or host memory runs out. */
int rru_mem_share(rru_mem *dst, rru_mem *src, uint64_t addr, uint64_t len);
/* 1 if A and B both have a page at ADDR and it is one page's data. */
int rru_mem_shares(const rru_mem *a, const rru_mem *b, uint64_t addr);

/* Host-side copies that ignore permissions (the loader writes read-only
 * code this way). 0, or -1 if any byte is unmapped (then nothing is copied
 * for read; for write, bytes before the first hole may have been written).
 * Writes invalidate decoded instructions of the pages they touch. These are
 * not guest accesses: no coherence, no RRU. Syscall effects of a running
 * guest go through rru_machine_read/write instead. */
int rru_mem_read(const rru_mem *m, uint64_t addr, void *buf, size_t n);
int rru_mem_write(rru_mem *m, uint64_t addr, const void *buf, size_t n);
/* Copies a NUL-terminated string of at most max bytes (NUL included) into
 * buf; returns its length, or -1 if unmapped memory or no NUL within max. */
long rru_mem_read_str(const rru_mem *m, uint64_t addr, char *buf, size_t max);

/* Declares that instruction bytes in [addr, addr+len) may have changed
 * (riscv_flush_icache): every hart drops its decoded instructions when it
 * next enters execution. Guest stores into pages that held decoded code do
 * this by themselves. */
void rru_mem_invalidate_code(rru_mem *m, uint64_t addr, uint64_t len);

/* SHA-256 over every mapped page in ascending address order, each as
 * (address: 8 bytes little-endian, permissions: 1 byte, 4096 data bytes). */
void rru_mem_digest(const rru_mem *m, uint8_t out[32]);

#endif
