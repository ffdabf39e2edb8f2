/* driver/vm.c: the address space: a sorted array of regions (few dozen in
 * practice), split and merged as Linux splits and merges its VMAs, with the
 * argument checks of mm/mmap.c, mm/mprotect.c and mm/madvise.c, and the
 * memory limit (vm_set_limit). */
#include "driver/vm.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/linux_abi.h"

struct vm_blob {
    unsigned refs;
    uint64_t off;            /* file offset (or image offset) of data[0] */
    uint64_t len;
    uint8_t data[];
};

struct vm {
    vm_backend be;
    vm_region *r;            /* sorted by start, disjoint */
    size_t n, cap;
    uint64_t brk_start, brk;
    uint64_t limit;          /* on the committed bytes (VM_NO_LIMIT: none) */
};

#define PAGE_UP(x) (((x) + LX_PAGE_MASK) & ~LX_PAGE_MASK)

static vm_blob *blob_new(const uint8_t *data, uint64_t len, uint64_t off)
{
    vm_blob *b = malloc(sizeof *b + (len ? len : 1));
    if (!b)
        return NULL;
    b->refs = 1;
    b->off = off;
    b->len = len;
    if (len)
        memcpy(b->data, data, len);
    return b;
}

static vm_blob *blob_ref(vm_blob *b)
{
    if (b)
        b->refs++;
    return b;
}

static void blob_unref(vm_blob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

vm *vm_new(const vm_backend *backend)
{
    vm *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->be = *backend;
    v->limit = VM_NO_LIMIT;
    return v;
}

vm *vm_clone(const vm *v)
{
    vm *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *v;
    c->r = malloc((v->cap ? v->cap : 1) * sizeof *c->r);
    if (!c->r) {
        free(c);
        return NULL;
    }
    if (v->n)
        memcpy(c->r, v->r, v->n * sizeof *c->r);
    for (size_t i = 0; i < c->n; i++)
        if (c->r[i].blob)
            c->r[i].blob->refs++;
    return c;
}

void vm_forget_regions(vm *v)
{
    for (size_t i = 0; i < v->n; i++)
        blob_unref(v->r[i].blob);
    v->n = 0;
    v->brk_start = v->brk = 0;
}

void vm_free(vm *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        blob_unref(v->r[i].blob);
    free(v->r);
    free(v);
}

size_t vm_count(const vm *v) { return v->n; }
const vm_region *vm_region_at(const vm *v, size_t i) { return i < v->n ? &v->r[i] : NULL; }
uint64_t vm_brk_current(const vm *v) { return v->brk; }

uint64_t vm_mapped_bytes(const vm *v)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < v->n; i++)
        sum += v->r[i].end - v->r[i].start;
    return sum;
}

uint64_t vm_committed_bytes(const vm *v)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->r[i].committed)
            sum += v->r[i].end - v->r[i].start;
    return sum;
}

void vm_set_limit(vm *v, uint64_t limit) { v->limit = limit; }
uint64_t vm_limit(const vm *v) { return v->limit; }

#define PROT_RWX (LX_PROT_READ | LX_PROT_WRITE | LX_PROT_EXEC)

/* Whether a new region counts against the limit: all but anonymous
 * reservations (PROT_NONE), which cost nothing until made accessible. */
static int commits(vm_kind kind, int prot)
{
    return (prot & PROT_RWX) != 0 || kind == VM_FILE || kind == VM_IMAGE;
}

/* Linux's may_expand_vm for RLIMIT_AS: 1 if ADD more committed bytes (page
 * multiples) keep the committed pages within the limit's pages. */
static int may_expand(const vm *v, uint64_t add)
{
    uint64_t have = vm_committed_bytes(v) / LX_PAGE_SIZE, more = add / LX_PAGE_SIZE,
             max = v->limit / LX_PAGE_SIZE;
    return more <= max && have <= max - more;
}

/* Index of the first region whose end is above ADDR (n if none). */
static size_t first_ending_above(const vm *v, uint64_t addr)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->r[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const vm_region *vm_find(const vm *v, uint64_t addr)
{
    size_t i = first_ending_above(v, addr);
    return i < v->n && v->r[i].start <= addr ? &v->r[i] : NULL;
}

/* One line per region (regions are already merged as Linux merges VMAs),
 * as the kernel prints it: range, rwxp, offset, device, inode, a space,
 * then, padded to 72 columns, a space and the name (a line without a name
 * ends with the space after the inode). Device and inode are 0 (the simulated system has no file system
 * of its own), and so is the offset of the program's segments. */
char *vm_maps_text(const vm *v, const char *image_path, size_t *len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    for (size_t i = 0; i < v->n; i++) {
        const vm_region *r = &v->r[i];
        const char *name = r->kind == VM_IMAGE ? image_path : r->kind == VM_STACK ? "[stack]"
                           : r->kind == VM_BRK ? "[heap]" : NULL;
        int n = fprintf(f, "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64 " 00:00 0 ", r->start, r->end,
                        (r->prot & LX_PROT_READ) ? 'r' : '-', (r->prot & LX_PROT_WRITE) ? 'w' : '-',
                        (r->prot & LX_PROT_EXEC) ? 'x' : '-', r->shared ? 's' : 'p',
                        r->kind == VM_FILE ? r->blob_off : 0);
        if (name)
            fprintf(f, "%*s %s", n < 72 ? 72 - n : 0, "", name);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    *len = size;
    return text;
}

static int insert_at(vm *v, size_t i, const vm_region *reg)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        vm_region *r = realloc(v->r, cap * sizeof *r);
        if (!r)
            return -1;
        v->r = r;
        v->cap = cap;
    }
    memmove(&v->r[i + 1], &v->r[i], (v->n - i) * sizeof *v->r);
    v->r[i] = *reg;
    v->n++;
    return 0;
}

static void remove_at(vm *v, size_t i)
{
    blob_unref(v->r[i].blob);
    memmove(&v->r[i], &v->r[i + 1], (v->n - i - 1) * sizeof *v->r);
    v->n--;
}

/* Makes ADDR a region boundary (splitting the region that spans it). */
static int split_at(vm *v, uint64_t addr)
{
    size_t i = first_ending_above(v, addr);
    if (i == v->n || v->r[i].start >= addr)
        return 0;
    vm_region hi = v->r[i];
    hi.start = addr;
    hi.blob_off += addr - v->r[i].start;
    blob_ref(hi.blob);
    if (insert_at(v, i + 1, &hi) < 0) {
        blob_unref(hi.blob);
        return -1;
    }
    v->r[i].end = addr;
    return 0;
}

static int same_kind(const vm_region *a, const vm_region *b)
{
    return a->end == b->start && a->prot == b->prot && a->kind == b->kind &&
           a->committed == b->committed && a->shared == b->shared && a->blob == b->blob &&
           (!a->blob || a->blob_off + (a->end - a->start) == b->blob_off);
}

/* Merges neighbours that Linux would merge (same protection, origin and
 * accounting). */
static void merge_around(vm *v, uint64_t lo, uint64_t hi)
{
    size_t i = first_ending_above(v, lo);
    if (i > 0)
        i--;
    while (i + 1 < v->n && v->r[i].start <= hi) {
        if (same_kind(&v->r[i], &v->r[i + 1])) {
            v->r[i].end = v->r[i + 1].end;
            remove_at(v, i + 1);
        } else {
            i++;
        }
    }
}

/* Removes [lo, hi) from the list and from the backend. */
static int carve(vm *v, uint64_t lo, uint64_t hi)
{
    if (split_at(v, lo) < 0 || split_at(v, hi) < 0)
        return -1;
    size_t i = first_ending_above(v, lo);
    while (i < v->n && v->r[i].start < hi) {
        v->be.unmap(v->be.ctx, v->r[i].start, v->r[i].end - v->r[i].start);
        remove_at(v, i);
    }
    return 0;
}

static int range_free(const vm *v, uint64_t lo, uint64_t hi)
{
    size_t i = first_ending_above(v, lo);
    return i == v->n || v->r[i].start >= hi;
}

/* Bytes of [lo, hi) in committed regions. */
static uint64_t committed_in(const vm *v, uint64_t lo, uint64_t hi)
{
    uint64_t sum = 0;
    for (size_t i = first_ending_above(v, lo); i < v->n && v->r[i].start < hi; i++)
        if (v->r[i].committed)
            sum += (v->r[i].end < hi ? v->r[i].end : hi) - (v->r[i].start > lo ? v->r[i].start : lo);
    return sum;
}

/* Maps the region REG (free, page aligned) and fills it with DATA_LEN
 * bytes of DATA at FILL_ADDR; the blob that keeps the bytes for madvise
 * re-reads starts at "file offset" BLOB_OFF. The region is in the list
 * before the backend fills it, so that the backend can find its protection.
 * 0 or -errno (-ENOMEM beyond the limit). */
static int map_region(vm *v, vm_region reg, const uint8_t *data, uint64_t data_len,
                      uint64_t blob_off, uint64_t fill_addr)
{
    uint64_t len = reg.end - reg.start;
    if (reg.committed && !may_expand(v, len))
        return -LX_ENOMEM;
    if (data_len) {
        reg.blob = blob_new(data, data_len, blob_off);
        if (!reg.blob)
            return -LX_ENOMEM;
    }
    if (v->be.map(v->be.ctx, reg.start, len, reg.prot) < 0) {
        blob_unref(reg.blob);
        return -LX_ENOMEM;
    }
    if (insert_at(v, first_ending_above(v, reg.start), &reg) < 0) {
        v->be.unmap(v->be.ctx, reg.start, len);
        blob_unref(reg.blob);
        return -LX_ENOMEM;
    }
    if (data_len && v->be.fill(v->be.ctx, fill_addr, data, data_len) < 0) {
        carve(v, reg.start, reg.end);
        return -LX_ENOMEM;
    }
    return 0;
}

/* Maps a new region [addr, addr+len) (free, page aligned), committed or
 * not, fills it with the first DATA_LEN bytes (at most len) of DATA read at
 * file offset OFF, and merges it with like neighbours. Returns addr or
 * -errno. */
static int64_t map_new(vm *v, uint64_t addr, uint64_t len, int prot, vm_kind kind,
                       const uint8_t *data, uint64_t data_len, uint64_t off, int committed,
                       int shared)
{
    vm_region reg = {addr, addr + len, prot & PROT_RWX, kind, NULL, off, committed, shared};
    if (data && data_len > len)
        data_len = len;
    int rc = map_region(v, reg, data, data ? data_len : 0, off, addr);
    if (rc < 0)
        return rc;
    merge_around(v, addr, addr + len);
    return (int64_t)addr;
}

int vm_map_fixed(vm *v, uint64_t addr, uint64_t len, int prot, vm_kind kind)
{
    if ((addr | len) & LX_PAGE_MASK || len == 0 || addr < VM_MIN_ADDR || addr > VM_USER_TOP ||
        len > VM_USER_TOP - addr)
        return -LX_EINVAL;
    if (!range_free(v, addr, addr + len))
        return -LX_EEXIST;
    int64_t r = map_new(v, addr, len, prot, kind, NULL, 0, 0, commits(kind, prot), 0);
    return r < 0 ? (int)r : 0;
}

int vm_map_image(vm *v, uint64_t addr, uint64_t len, int prot, uint64_t data_addr,
                 const uint8_t *data, uint64_t data_len)
{
    if ((addr | len) & LX_PAGE_MASK || len == 0 || addr < VM_MIN_ADDR || addr > VM_USER_TOP ||
        len > VM_USER_TOP - addr || data_addr < addr || data_len > addr + len - data_addr)
        return -LX_EINVAL;
    if (!range_free(v, addr, addr + len))
        return -LX_EEXIST;
    /* The blob's "file offset" is the guest address of its first byte, so
     * that region offsets (blob_off = region start) line up with it. */
    vm_region reg = {addr, addr + len, prot & PROT_RWX, VM_IMAGE, NULL, addr, 1, 0};
    return map_region(v, reg, data, data_len, data_addr, data_addr);
}

void vm_set_brk_start(vm *v, uint64_t start)
{
    v->brk_start = v->brk = PAGE_UP(start);
}

/* Top-down first fit: the highest gap below VM_MMAP_BASE that holds LEN. */
static uint64_t find_gap(const vm *v, uint64_t len)
{
    uint64_t ceiling = VM_MMAP_BASE;
    size_t i = first_ending_above(v, ceiling);
    /* Walk the regions below the ceiling from the highest down. */
    for (;;) {
        uint64_t floor = VM_MIN_ADDR;
        size_t below = i;
        while (below > 0 && v->r[below - 1].start >= ceiling)
            below--;
        if (below > 0 && v->r[below - 1].end > floor)
            floor = v->r[below - 1].end;
        if (ceiling >= floor && ceiling - floor >= len)
            return ceiling - len;
        if (below == 0)
            return 0;
        ceiling = v->r[below - 1].start;
        i = below - 1;
        if (ceiling < VM_MIN_ADDR + len)
            return 0;
    }
}

int64_t vm_mmap(vm *v, uint64_t addr, uint64_t len, int prot, int flags, int is_file,
                const uint8_t *data, uint64_t data_len, uint64_t off)
{
    int type = flags & LX_MAP_TYPE;
    if (type != LX_MAP_SHARED && type != LX_MAP_PRIVATE && type != LX_MAP_SHARED_VALIDATE)
        return -LX_EINVAL;
    if (len == 0 || (off & LX_PAGE_MASK))
        return -LX_EINVAL;
    if (flags & LX_MAP_HUGETLB)
        return -LX_EINVAL;
    uint64_t plen = PAGE_UP(len);
    if (plen < len || plen > VM_USER_TOP - VM_MIN_ADDR)
        return -LX_ENOMEM;
    if (is_file && off + plen < off)
        return -LX_EOVERFLOW;
    vm_kind kind = is_file ? VM_FILE : (flags & LX_MAP_STACK) ? VM_STACK : VM_ANON;
    int shared = type != LX_MAP_PRIVATE;
    if (flags & (LX_MAP_FIXED | LX_MAP_FIXED_NOREPLACE)) {
        if (addr & LX_PAGE_MASK)
            return -LX_EINVAL;
        if (addr > VM_USER_TOP || plen > VM_USER_TOP - addr)
            return -LX_ENOMEM;
        if (addr < VM_MIN_ADDR)
            return -LX_EPERM;
        if (!range_free(v, addr, addr + plen)) {
            if (!(flags & LX_MAP_FIXED))
                return -LX_EEXIST;
            /* The limit before the old pages go: a refused call changes
             * nothing. Committed pages replaced are not new. */
            if (commits(kind, prot) && !may_expand(v, plen - committed_in(v, addr, addr + plen)))
                return -LX_ENOMEM;
            if (carve(v, addr, addr + plen) < 0)
                return -LX_ENOMEM;
        }
        return map_new(v, addr, plen, prot, kind, is_file ? data : NULL, data_len, off,
                       commits(kind, prot), shared);
    }
    if (addr) {
        uint64_t hint = PAGE_UP(addr);
        if (hint >= VM_MIN_ADDR && hint <= VM_USER_TOP && plen <= VM_USER_TOP - hint &&
            range_free(v, hint, hint + plen) && !(hint < v->brk && hint + plen > v->brk_start))
            return map_new(v, hint, plen, prot, kind, is_file ? data : NULL, data_len, off,
                           commits(kind, prot), shared);
    }
    uint64_t at = find_gap(v, plen);
    if (!at)
        return -LX_ENOMEM;
    return map_new(v, at, plen, prot, kind, is_file ? data : NULL, data_len, off,
                   commits(kind, prot), shared);
}

int64_t vm_munmap(vm *v, uint64_t addr, uint64_t len)
{
    if ((addr & LX_PAGE_MASK) || len == 0)
        return -LX_EINVAL;
    uint64_t plen = PAGE_UP(len);
    if (plen < len || addr > VM_USER_TOP || plen > VM_USER_TOP - addr)
        return -LX_EINVAL;
    return carve(v, addr, addr + plen) < 0 ? -LX_ENOMEM : 0;
}

int64_t vm_mprotect(vm *v, uint64_t addr, uint64_t len, int prot)
{
    if (addr & LX_PAGE_MASK)
        return -LX_EINVAL;
    if (prot & ~(LX_PROT_READ | LX_PROT_WRITE | LX_PROT_EXEC | LX_PROT_GROWSDOWN | LX_PROT_GROWSUP))
        return -LX_EINVAL;
    if ((prot & LX_PROT_GROWSDOWN) && (prot & LX_PROT_GROWSUP))
        return -LX_EINVAL;
    uint64_t plen = PAGE_UP(len);
    if (plen < len)
        return -LX_ENOMEM;
    if (len == 0)
        return 0;
    uint64_t end = addr + plen;
    if (end < addr)
        return -LX_ENOMEM;
    prot &= LX_PROT_READ | LX_PROT_WRITE | LX_PROT_EXEC;
    /* As Linux: nothing changes if ADDR itself is unmapped; otherwise the
     * regions up to the first hole change and the hole gives ENOMEM. */
    const vm_region *first = vm_find(v, addr);
    if (!first)
        return -LX_ENOMEM;
    if (prot) {
        /* Reservations made accessible commit their pages: the limit is
         * checked first (over the regions that will change), so that a
         * refused call changes nothing. */
        uint64_t grow = 0, to = addr;
        for (size_t k = first_ending_above(v, addr); k < v->n && v->r[k].start <= to && to < end; k++) {
            uint64_t hi = v->r[k].end < end ? v->r[k].end : end;
            if (!v->r[k].committed)
                grow += hi - to;
            to = hi;
        }
        if (grow && !may_expand(v, grow))
            return -LX_ENOMEM;
    }
    if (split_at(v, addr) < 0 || split_at(v, end) < 0)
        return -LX_ENOMEM;
    uint64_t at = addr;
    size_t i = first_ending_above(v, addr);
    int64_t rc = 0;
    while (at < end) {
        if (i == v->n || v->r[i].start != at) {
            rc = -LX_ENOMEM;
            break;
        }
        if (v->r[i].prot != prot) {
            v->r[i].prot = prot;
            v->be.protect(v->be.ctx, v->r[i].start, v->r[i].end - v->r[i].start, prot);
        }
        if (prot)
            v->r[i].committed = 1;
        at = v->r[i].end;
        i++;
    }
    merge_around(v, addr, at);
    return rc;
}

static int advice_known(int advice)
{
    switch (advice) {
    case LX_MADV_NORMAL: case LX_MADV_RANDOM: case LX_MADV_SEQUENTIAL: case LX_MADV_WILLNEED:
    case LX_MADV_DONTNEED: case LX_MADV_FREE: case LX_MADV_REMOVE: case LX_MADV_DONTFORK:
    case LX_MADV_DOFORK: case LX_MADV_MERGEABLE: case LX_MADV_UNMERGEABLE:
    case LX_MADV_HUGEPAGE: case LX_MADV_NOHUGEPAGE: case LX_MADV_DONTDUMP: case LX_MADV_DODUMP:
    case LX_MADV_WIPEONFORK: case LX_MADV_KEEPONFORK: case LX_MADV_COLD: case LX_MADV_PAGEOUT:
        return 1;
    default:
        return 0;
    }
}

/* MADV_DONTNEED on [lo, hi) of region R: the pages read as they were
 * mapped: zero, or the file's bytes for a file mapping. */
static int refill(vm *v, const vm_region *r, uint64_t lo, uint64_t hi)
{
    if (v->be.fill(v->be.ctx, lo, NULL, hi - lo) < 0)
        return -1;
    if (!r->blob)
        return 0;
    uint64_t off = r->blob_off + (lo - r->start);        /* file offset of lo */
    uint64_t b_lo = r->blob->off, b_hi = r->blob->off + r->blob->len;
    uint64_t f_lo = off > b_lo ? off : b_lo, f_hi = off + (hi - lo) < b_hi ? off + (hi - lo) : b_hi;
    if (f_lo >= f_hi)
        return 0;
    return v->be.fill(v->be.ctx, lo + (f_lo - off), r->blob->data + (f_lo - b_lo), f_hi - f_lo);
}

int64_t vm_madvise(vm *v, uint64_t addr, uint64_t len, int advice)
{
    if ((addr & LX_PAGE_MASK) || !advice_known(advice))
        return -LX_EINVAL;
    uint64_t plen = PAGE_UP(len);
    if (plen < len)
        return -LX_EINVAL;
    if (len == 0)
        return 0;
    uint64_t end = addr + plen;
    if (end < addr)
        return -LX_EINVAL;
    int64_t rc = 0;
    uint64_t at = addr;
    for (size_t i = first_ending_above(v, addr); at < end; i++) {
        if (i == v->n || v->r[i].start >= end) {
            rc = -LX_ENOMEM;
            break;
        }
        const vm_region *r = &v->r[i];
        if (r->start > at)
            rc = -LX_ENOMEM;     /* a hole: the rest is still advised */
        uint64_t lo = r->start > addr ? r->start : addr, hi = r->end < end ? r->end : end;
        if (advice == LX_MADV_DONTNEED && refill(v, r, lo, hi) < 0)
            return -LX_ENOMEM;
        at = hi;
    }
    return rc;
}

int64_t vm_mremap(vm *v, uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags)
{
    const int maymove = 1, fixed = 2, dontunmap = 4;
    if ((old_addr & LX_PAGE_MASK) || (flags & ~(maymove | fixed | dontunmap)))
        return -LX_EINVAL;
    if ((flags & fixed) && !(flags & maymove))
        return -LX_EINVAL;
    uint64_t olen = PAGE_UP(old_len), nlen = PAGE_UP(new_len);
    if (nlen == 0 || nlen < new_len || olen < old_len)
        return -LX_EINVAL;
    if (flags & (fixed | dontunmap))
        return -LX_ENOMEM;
    const vm_region *r = vm_find(v, old_addr);
    if (!r || olen == 0 || old_addr + olen > r->end)
        return -LX_EFAULT;
    if (nlen <= olen) {
        if (nlen < olen && carve(v, old_addr + nlen, old_addr + olen) < 0)
            return -LX_ENOMEM;
        return (int64_t)old_addr;
    }
    if (old_addr + olen != r->end || r->kind == VM_FILE || r->kind == VM_IMAGE || r->blob)
        return -LX_ENOMEM;
    uint64_t lo = old_addr + olen, hi = old_addr + nlen;
    if (hi < lo || hi > VM_USER_TOP || !range_free(v, lo, hi) || (lo < v->brk && hi > v->brk_start))
        return -LX_ENOMEM;
    int64_t rc = map_new(v, lo, hi - lo, r->prot, r->kind, NULL, 0, 0, r->committed, r->shared);
    return rc < 0 ? rc : (int64_t)old_addr;
}

uint64_t vm_brk(vm *v, uint64_t addr)
{
    if (addr < v->brk_start || addr > VM_MMAP_BASE)
        return v->brk;
    uint64_t old_end = PAGE_UP(v->brk), new_end = PAGE_UP(addr);
    if (new_end > old_end) {
        if (!range_free(v, old_end, new_end))
            return v->brk;
        if (map_new(v, old_end, new_end - old_end, LX_PROT_READ | LX_PROT_WRITE, VM_BRK, NULL, 0,
                    0, 1, 0) < 0)
            return v->brk;
    } else if (new_end < old_end) {
        if (carve(v, new_end, old_end) < 0)
            return v->brk;
    }
    v->brk = addr;
    return v->brk;
}

int vm_accessible(const vm *v, uint64_t addr, uint64_t len, int prot)
{
    if (len == 0)
        return 1;
    uint64_t end = addr + len;
    if (end < addr)
        return 0;
    for (size_t i = first_ending_above(v, addr); addr < end; i++) {
        if (i == v->n || v->r[i].start > addr || (v->r[i].prot & prot) != prot)
            return 0;
        addr = v->r[i].end;
    }
    return 1;
}
