/* tests/test_driver_vm.c: the address space (driver/vm.c) against a fake
 * page store: mmap address choice, MAP_FIXED, munmap/mprotect/madvise
 * splitting and errno values, brk, mremap, the memory limit, and
 * randomized comparisons with a page-level model, with and without a
 * limit. */
#include <stdlib.h>
#include <string.h>

#include "driver/linux_abi.h"
#include "driver/vm.h"
#include "tests/testutil.h"

/* ---- a fake page store: what the backend was told, page by page ---- */

typedef struct fpage {
    uint64_t addr;
    int prot;
    uint8_t *data;          /* NULL = all zero */
} fpage;

typedef struct fake {
    fpage *p;
    size_t n, cap;
    unsigned maps, unmaps, protects, fills;
} fake;

static fpage *fk_find(fake *f, uint64_t addr)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->p[i].addr == addr)
            return &f->p[i];
    return NULL;
}

static void fk_drop(fake *f, uint64_t addr)
{
    fpage *pg = fk_find(f, addr);
    if (!pg)
        return;
    free(pg->data);
    *pg = f->p[--f->n];
}

static int fk_map(void *ctx, uint64_t addr, uint64_t len, int prot)
{
    fake *f = ctx;
    f->maps++;
    for (uint64_t a = addr; a < addr + len; a += LX_PAGE_SIZE) {
        fk_drop(f, a);
        if (f->n == f->cap) {
            f->cap = f->cap ? 2 * f->cap : 64;
            f->p = realloc(f->p, f->cap * sizeof *f->p);
        }
        f->p[f->n++] = (fpage){a, prot, NULL};
    }
    return 0;
}

static void fk_unmap(void *ctx, uint64_t addr, uint64_t len)
{
    fake *f = ctx;
    f->unmaps++;
    for (uint64_t a = addr; a < addr + len; a += LX_PAGE_SIZE)
        fk_drop(f, a);
}

static void fk_protect(void *ctx, uint64_t addr, uint64_t len, int prot)
{
    fake *f = ctx;
    f->protects++;
    for (uint64_t a = addr; a < addr + len; a += LX_PAGE_SIZE) {
        fpage *pg = fk_find(f, a);
        ck_assert_msg(pg != NULL, "protect of an unmapped page 0x%llx", (unsigned long long)a);
        pg->prot = prot;
    }
}

static int fk_fill(void *ctx, uint64_t addr, const uint8_t *data, uint64_t len)
{
    fake *f = ctx;
    f->fills++;
    for (uint64_t i = 0; i < len; i++) {
        fpage *pg = fk_find(f, (addr + i) & ~LX_PAGE_MASK);
        ck_assert_msg(pg != NULL, "fill of an unmapped page");
        if (!pg->data)
            pg->data = calloc(1, LX_PAGE_SIZE);
        pg->data[(addr + i) & LX_PAGE_MASK] = data ? data[i] : 0;
    }
    return 0;
}

static uint8_t fk_byte(fake *f, uint64_t addr)
{
    fpage *pg = fk_find(f, addr & ~LX_PAGE_MASK);
    ck_assert_msg(pg != NULL, "read of an unmapped page");
    return pg->data ? pg->data[addr & LX_PAGE_MASK] : 0;
}

static void fk_free(fake *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->p[i].data);
    free(f->p);
}

static vm *new_vm(fake *f)
{
    memset(f, 0, sizeof *f);
    vm_backend be = {f, fk_map, fk_unmap, fk_protect, fk_fill};
    vm *v = vm_new(&be);
    ck_assert_ptr_nonnull(v);
    return v;
}

#define PG LX_PAGE_SIZE
#define RW (LX_PROT_READ | LX_PROT_WRITE)
#define ANON (LX_MAP_PRIVATE | LX_MAP_ANONYMOUS)

/* Every region is page aligned, non-empty, sorted and disjoint, and the
 * fake store holds exactly the pages of regions that are accessible. */
static void check_invariants(vm *v, fake *f)
{
    uint64_t prev_end = 0, pages = 0;
    for (size_t i = 0; i < vm_count(v); i++) {
        const vm_region *r = vm_region_at(v, i);
        ck_assert_uint_eq(r->start & LX_PAGE_MASK, 0);
        ck_assert_uint_eq(r->end & LX_PAGE_MASK, 0);
        ck_assert_uint_lt(r->start, r->end);
        ck_assert_uint_ge(r->start, prev_end);
        prev_end = r->end;
        for (uint64_t a = r->start; a < r->end; a += PG) {
            fpage *pg = fk_find(f, a);
            ck_assert_msg(pg != NULL, "region page 0x%llx missing in the store",
                          (unsigned long long)a);
            ck_assert_int_eq(pg->prot, r->prot);
            pages++;
        }
    }
    ck_assert_uint_eq(pages, f->n);
}

START_TEST(vm_mmap_chooses_top_down_below_the_stack_gap)
{
    fake f;
    vm *v = new_vm(&f);
    int64_t a = vm_mmap(v, 0, 3 * PG, RW, ANON, 0, NULL, 0, 0);
    int64_t b = vm_mmap(v, 0, 5000, RW, ANON, 0, NULL, 0, 0);
    ck_assert_int_eq(a, (int64_t)(VM_MMAP_BASE - 3 * PG));
    ck_assert_int_eq(b, a - 2 * PG);            /* 5000 bytes round up to two pages */
    ck_assert(vm_accessible(v, (uint64_t)b, 5 * PG, RW));
    ck_assert(!vm_accessible(v, (uint64_t)b - PG, PG, LX_PROT_READ));
    /* A freed hole is reused first (the highest gap that fits). */
    ck_assert_int_eq(vm_munmap(v, (uint64_t)a, PG), 0);
    ck_assert_int_eq(vm_mmap(v, 0, PG, RW, ANON, 0, NULL, 0, 0), a);
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_mmap_rejects_bad_arguments_with_linux_errno)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0, 0, RW, ANON, 0, NULL, 0, 0), -LX_EINVAL);
    ck_assert_int_eq(vm_mmap(v, 0, PG, RW, LX_MAP_ANONYMOUS, 0, NULL, 0, 0), -LX_EINVAL);
    ck_assert_int_eq(vm_mmap(v, 0, PG, RW, ANON, 1, NULL, 0, 100), -LX_EINVAL);
    ck_assert_int_eq(vm_mmap(v, 0x100001, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), -LX_EINVAL);
    ck_assert_int_eq(vm_mmap(v, 0x1000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), -LX_EPERM);
    ck_assert_int_eq(vm_mmap(v, 0, UINT64_MAX - 10, RW, ANON, 0, NULL, 0, 0), -LX_ENOMEM);
    ck_assert_int_eq(vm_mmap(v, VM_USER_TOP - PG, 2 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0),
                     -LX_ENOMEM);
    ck_assert_int_eq(vm_mmap(v, 0x200000, 2 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x200000);
    ck_assert_int_eq(vm_mmap(v, 0x201000, PG, RW, ANON | LX_MAP_FIXED_NOREPLACE, 0, NULL, 0, 0),
                     -LX_EEXIST);
    ck_assert_int_eq(vm_count(v), 1);
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_map_fixed_replaces_and_zeroes_what_was_there)
{
    fake f;
    vm *v = new_vm(&f);
    const uint8_t data[3] = {7, 8, 9};
    ck_assert_int_eq(vm_mmap(v, 0x400000, 4 * PG, LX_PROT_READ, LX_MAP_PRIVATE | LX_MAP_FIXED, 1,
                             data, 3, 0), 0x400000);
    ck_assert_uint_eq(fk_byte(&f, 0x400001), 8);
    ck_assert_int_eq(vm_mmap(v, 0x401000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x401000);
    ck_assert_uint_eq(vm_count(v), 3);          /* file | anon | file */
    ck_assert_int_eq(vm_find(v, 0x401000)->kind, VM_ANON);
    ck_assert_int_eq(vm_find(v, 0x402000)->kind, VM_FILE);
    ck_assert_uint_eq(fk_byte(&f, 0x400001), 8);
    /* The old pages were unmapped: the new one reads zero. */
    ck_assert_int_eq(vm_mmap(v, 0x400000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x400000);
    ck_assert_uint_eq(fk_byte(&f, 0x400001), 0);
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_mmap_hint_is_used_when_free)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0x50000000, PG, RW, ANON, 0, NULL, 0, 0), 0x50000000);
    /* Occupied: the hint is ignored, not an error. */
    int64_t b = vm_mmap(v, 0x50000000, PG, RW, ANON, 0, NULL, 0, 0);
    ck_assert_int_ne(b, 0x50000000);
    ck_assert_int_gt(b, 0);
    /* An unaligned hint is rounded up. */
    ck_assert_int_eq(vm_mmap(v, 0x60000123, PG, RW, ANON, 0, NULL, 0, 0), 0x60001000);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_munmap_splits_and_checks_alignment)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0x300000, 8 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x300000);
    ck_assert_int_eq(vm_munmap(v, 0x302000, 2 * PG), 0);
    ck_assert_uint_eq(vm_count(v), 2);
    ck_assert(vm_accessible(v, 0x300000, 2 * PG, RW));
    ck_assert(!vm_accessible(v, 0x302000, 1, LX_PROT_READ));
    ck_assert(vm_accessible(v, 0x304000, 4 * PG, RW));
    ck_assert_int_eq(vm_munmap(v, 0x300001, PG), -LX_EINVAL);
    ck_assert_int_eq(vm_munmap(v, 0x300000, 0), -LX_EINVAL);
    ck_assert_int_eq(vm_munmap(v, VM_USER_TOP - PG, 2 * PG), -LX_EINVAL);
    ck_assert_int_eq(vm_munmap(v, 0x900000, 4 * PG), 0);   /* nothing there: fine */
    /* A partial last page unmaps the whole page. */
    ck_assert_int_eq(vm_munmap(v, 0x304000, 1), 0);
    ck_assert(!vm_accessible(v, 0x304000, 1, LX_PROT_READ));
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_mprotect_splits_merges_and_reports_holes)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0x300000, 6 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x300000);
    ck_assert_int_eq(vm_mprotect(v, 0x301000, 2 * PG, LX_PROT_READ), 0);
    ck_assert_uint_eq(vm_count(v), 3);
    ck_assert(!vm_accessible(v, 0x301000, 1, LX_PROT_WRITE));
    ck_assert(vm_accessible(v, 0x301000, 2 * PG, LX_PROT_READ));
    check_invariants(v, &f);
    /* Back to RW: the three regions merge again. */
    ck_assert_int_eq(vm_mprotect(v, 0x301000, 2 * PG, RW), 0);
    ck_assert_uint_eq(vm_count(v), 1);
    ck_assert_int_eq(vm_mprotect(v, 0x300001, PG, RW), -LX_EINVAL);
    ck_assert_int_eq(vm_mprotect(v, 0x300000, PG, 0x40), -LX_EINVAL);
    ck_assert_int_eq(vm_mprotect(v, 0x300000, 0, RW), 0);
    ck_assert_int_eq(vm_mprotect(v, 0x900000, PG, RW), -LX_ENOMEM);
    /* A hole: the part before it changes, then ENOMEM (as Linux). */
    ck_assert_int_eq(vm_mmap(v, 0x308000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x308000);
    ck_assert_int_eq(vm_mprotect(v, 0x300000, 9 * PG, LX_PROT_READ), -LX_ENOMEM);
    ck_assert(!vm_accessible(v, 0x305000, 1, LX_PROT_WRITE));
    ck_assert(vm_accessible(v, 0x308000, PG, RW));
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_madvise_dontneed_zeroes_anonymous_and_restores_file_pages)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0x300000, 2 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x300000);
    uint8_t x = 0x5a;
    fk_fill(&f, 0x300010, &x, 1);
    fk_fill(&f, 0x301010, &x, 1);
    ck_assert_int_eq(vm_madvise(v, 0x300000, PG, LX_MADV_DONTNEED), 0);
    ck_assert_uint_eq(fk_byte(&f, 0x300010), 0);
    ck_assert_uint_eq(fk_byte(&f, 0x301010), 0x5a);   /* outside the range */
    uint8_t data[PG + 8];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 3 + 1);
    ck_assert_int_eq(vm_mmap(v, 0x500000, 2 * PG, RW, LX_MAP_PRIVATE | LX_MAP_FIXED, 1, data,
                             sizeof data, 0x3000), 0x500000);
    uint8_t y = 0xee;
    fk_fill(&f, 0x501002, &y, 1);
    fk_fill(&f, 0x501100, &y, 1);
    ck_assert_int_eq(vm_madvise(v, 0x501000, PG, LX_MADV_DONTNEED), 0);
    ck_assert_uint_eq(fk_byte(&f, 0x501002), data[PG + 2]);   /* the file's byte again */
    ck_assert_uint_eq(fk_byte(&f, 0x501100), 0);              /* past end of file: zero */
    ck_assert_int_eq(vm_madvise(v, 0x300000, PG, 77), -LX_EINVAL);
    ck_assert_int_eq(vm_madvise(v, 0x300001, PG, LX_MADV_DONTNEED), -LX_EINVAL);
    ck_assert_int_eq(vm_madvise(v, 0x300000, 3 * PG, LX_MADV_DONTNEED), -LX_ENOMEM);
    ck_assert_int_eq(vm_madvise(v, 0x300000, 2 * PG, LX_MADV_WILLNEED), 0);
    /* A hole in the middle: ENOMEM, and the regions after it are still advised. */
    fk_fill(&f, 0x501002, &y, 1);
    ck_assert_int_eq(vm_madvise(v, 0x301000, 0x502000 - 0x301000, LX_MADV_DONTNEED), -LX_ENOMEM);
    ck_assert_uint_eq(fk_byte(&f, 0x501002), data[PG + 2]);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_brk_grows_shrinks_and_refuses_collisions)
{
    fake f;
    vm *v = new_vm(&f);
    vm_set_brk_start(v, 0x80123);
    ck_assert_uint_eq(vm_brk_current(v), 0x81000);
    ck_assert_uint_eq(vm_brk(v, 0), 0x81000);
    ck_assert_uint_eq(vm_brk(v, 0x81b10), 0x81b10);     /* exact, not page aligned */
    ck_assert(vm_accessible(v, 0x81000, PG, RW));
    ck_assert_uint_eq(vm_brk(v, 0xa6b10), 0xa6b10);
    ck_assert(vm_accessible(v, 0x81000, 0xa6b10 - 0x81000, RW));
    ck_assert_uint_eq(vm_count(v), 1);
    ck_assert_uint_eq(vm_brk(v, 0x90000), 0x90000);
    ck_assert(!vm_accessible(v, 0x90000, 1, LX_PROT_READ));
    /* Something mapped above: brk cannot grow over it. */
    ck_assert_int_eq(vm_mmap(v, 0xa0000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0xa0000);
    ck_assert_uint_eq(vm_brk(v, 0xb0000), 0x90000);
    ck_assert_uint_eq(vm_brk(v, 0x1000), 0x90000);       /* below the start */
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_maps_text_is_what_linux_prints)
{
    fake f;
    vm *v = new_vm(&f);
    static const uint8_t code[16] = {1};
    ck_assert_int_eq(vm_map_image(v, 0x10000, 2 * PG, LX_PROT_READ | LX_PROT_EXEC, 0x10000, code,
                                  sizeof code), 0);
    ck_assert_int_eq(vm_map_image(v, 0x12000, PG, RW, 0x12000, code, sizeof code), 0);
    vm_set_brk_start(v, 0x13000);
    ck_assert_uint_eq(vm_brk(v, 0x15000), 0x15000);
    ck_assert_int_eq(vm_map_fixed(v, VM_STACK_TOP - 2 * PG, 2 * PG, RW, VM_STACK), 0);
    int64_t a = vm_mmap(v, 0, 3 * PG, RW, ANON, 0, NULL, 0, 0);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)a + PG, PG, 0), 0);
    int64_t fm = vm_mmap(v, 0, PG, LX_PROT_READ, LX_MAP_PRIVATE, 1, code, sizeof code, 0x3000);
    ck_assert_int_eq(fm, a - PG);
    size_t len = 0;
    char *text = vm_maps_text(v, "/bin/prog", &len);
    ck_assert_ptr_nonnull(text);
    /* Name at column 73, after the padding; a line without a name ends
     * with a space; an anonymous range split by mprotect is three lines. */
    const char *want =
        "00010000-00012000 r-xp 00000000 00:00 0                                  /bin/prog\n"
        "00012000-00013000 rw-p 00000000 00:00 0                                  /bin/prog\n"
        "00013000-00015000 rw-p 00000000 00:00 0                                  [heap]\n"
        "3ff7ffc000-3ff7ffd000 r--p 00003000 00:00 0 \n"
        "3ff7ffd000-3ff7ffe000 rw-p 00000000 00:00 0 \n"
        "3ff7ffe000-3ff7fff000 ---p 00000000 00:00 0 \n"
        "3ff7fff000-3ff8000000 rw-p 00000000 00:00 0 \n"
        "3fffffe000-4000000000 rw-p 00000000 00:00 0                              [stack]\n";
    ck_assert_str_eq(text, want);
    ck_assert_uint_eq(len, strlen(want));
    free(text);
    vm_free(v);
    fk_free(&f);
}
END_TEST

START_TEST(vm_mremap_shrinks_and_grows_in_place_only)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_int_eq(vm_mmap(v, 0x300000, 4 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x300000);
    ck_assert_int_eq(vm_mremap(v, 0x300000, 4 * PG, 2 * PG, 0), 0x300000);
    ck_assert(!vm_accessible(v, 0x302000, 1, LX_PROT_READ));
    ck_assert_int_eq(vm_mremap(v, 0x300000, 2 * PG, 6 * PG, 1), 0x300000);
    ck_assert(vm_accessible(v, 0x300000, 6 * PG, RW));
    ck_assert_int_eq(vm_mmap(v, 0x306000, PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), 0x306000);
    ck_assert_int_eq(vm_mremap(v, 0x300000, 6 * PG, 8 * PG, 1), -LX_ENOMEM);
    ck_assert_int_eq(vm_mremap(v, 0x300001, PG, PG, 0), -LX_EINVAL);
    ck_assert_int_eq(vm_mremap(v, 0x700000, PG, 2 * PG, 1), -LX_EFAULT);
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

/* Random MAP_FIXED / munmap / mprotect on a window of pages under a
 * limit of LIMIT_PAGES committed pages, compared page by page (protection
 * and whether the page counts against the limit) with a plain array
 * model of the rules of vm.h. */
static void page_model(uint64_t seed, uint64_t limit_pages)
{
    uint64_t st = seed;
    enum { PAGES = 96 };
    const uint64_t base = 0x10000000;
    int model[PAGES];          /* -1 unmapped, else prot */
    int commit[PAGES];         /* counts against the limit */
    uint64_t refused = 0;
    for (int i = 0; i < PAGES; i++) {
        model[i] = -1;
        commit[i] = 0;
    }
    fake f;
    vm *v = new_vm(&f);
    if (limit_pages != UINT64_MAX)
        vm_set_limit(v, limit_pages * PG);
    for (int step = 0; step < 3000; step++) {
        uint64_t first = tu_below(&st, PAGES), n = 1 + tu_below(&st, 12);
        if (first + n > PAGES)
            n = PAGES - first;
        int prot = (int)tu_below(&st, 4) & RW;
        uint64_t a = base + first * PG;
        uint64_t total = 0, inside = 0;
        for (int i = 0; i < PAGES; i++) {
            total += (uint64_t)commit[i];
            inside += (uint64_t)commit[i] && (uint64_t)i >= first && (uint64_t)i < first + n;
        }
        switch (tu_below(&st, 3)) {
        case 0: {
            /* An anonymous PROT_NONE mapping is a reservation. */
            int64_t expect = prot && total - inside + n > limit_pages ? -LX_ENOMEM : (int64_t)a;
            ck_assert_msg(vm_mmap(v, a, n * PG, prot, ANON | LX_MAP_FIXED, 0, NULL, 0, 0) == expect,
                          "seed %llu step %d", (unsigned long long)seed, step);
            for (uint64_t i = first; i < first + n && expect >= 0; i++) {
                model[i] = prot;
                commit[i] = prot != 0;
            }
            refused += expect < 0;
            break;
        }
        case 1:
            ck_assert_int_eq(vm_munmap(v, a, n * PG), 0);
            for (uint64_t i = first; i < first + n; i++) {
                model[i] = -1;
                commit[i] = 0;
            }
            break;
        default: {
            /* The pages up to the first hole change; making a reservation
             * accessible commits it, unless that would pass the limit. */
            uint64_t end = first, grow = 0;
            for (; model[first] >= 0 && end < first + n && model[end] >= 0; end++)
                grow += prot && !commit[end];
            int64_t expect = end == first ? -LX_ENOMEM : 0;
            if (end > first && total + grow > limit_pages) {
                expect = -LX_ENOMEM;
                refused++;
            } else if (end > first) {
                for (uint64_t i = first; i < end; i++) {
                    model[i] = prot;
                    commit[i] |= prot != 0;
                }
                if (end < first + n)
                    expect = -LX_ENOMEM;
            }
            ck_assert_msg(vm_mprotect(v, a, n * PG, prot) == expect, "seed %llu step %d",
                          (unsigned long long)seed, step);
            break;
        }
        }
        total = 0;
        for (int i = 0; i < PAGES; i++) {
            const vm_region *r = vm_find(v, base + (uint64_t)i * PG);
            ck_assert_msg((r ? r->prot : -1) == model[i] && (r ? r->committed : 0) == commit[i],
                          "seed %llu step %d page %d", (unsigned long long)seed, step, i);
            total += (uint64_t)commit[i];
        }
        ck_assert_uint_eq(vm_committed_bytes(v), total * PG);
        ck_assert_uint_le(total, limit_pages);
        if (step % 100 == 0)
            check_invariants(v, &f);
    }
    check_invariants(v, &f);
    /* The limit was hit often enough to matter (or there was none). */
    ck_assert_msg(limit_pages == UINT64_MAX ? refused == 0 : refused > 100,
                  "seed %llu: %llu refusals", (unsigned long long)seed, (unsigned long long)refused);
    vm_free(v);
    fk_free(&f);
}

START_TEST(vm_matches_a_page_model_under_random_operations)
{
    page_model(tu_seed(0xfeed5), UINT64_MAX);
}
END_TEST

START_TEST(vm_matches_a_page_model_under_a_limit)
{
    page_model(tu_seed(0x11417), 40);
}
END_TEST

START_TEST(vm_limit_refuses_what_would_commit_too_much)
{
    fake f;
    vm *v = new_vm(&f);
    ck_assert_uint_eq(vm_limit(v), VM_NO_LIMIT);
    vm_set_limit(v, 10 * PG + PG / 2);                   /* rounded down: 10 pages */
    ck_assert_uint_eq(vm_limit(v), 10 * PG + PG / 2);
    int64_t a = vm_mmap(v, 0, 6 * PG, RW, ANON, 0, NULL, 0, 0);
    ck_assert_int_gt(a, 0);
    ck_assert_int_eq(vm_mmap(v, 0, 5 * PG, RW, ANON, 0, NULL, 0, 0), -LX_ENOMEM);
    ck_assert_int_eq(vm_mmap(v, 0, 5 * PG, LX_PROT_READ, ANON, 0, NULL, 0, 0), -LX_ENOMEM);
    int64_t b = vm_mmap(v, 0, 4 * PG, RW, ANON, 0, NULL, 0, 0);   /* up to the limit exactly */
    ck_assert_int_eq(b, a - 4 * (int64_t)PG);
    ck_assert_uint_eq(vm_committed_bytes(v), 10 * PG);
    ck_assert_int_eq(vm_mmap(v, 0, PG, RW, ANON, 0, NULL, 0, 0), -LX_ENOMEM);
    /* A file mapping counts whatever its protection (its bytes are kept). */
    static const uint8_t data[8] = {7};
    ck_assert_int_eq(vm_mmap(v, 0, PG, 0, LX_MAP_PRIVATE, 1, data, sizeof data, 0), -LX_ENOMEM);
    /* A reservation costs nothing until made accessible; a refused
     * mprotect changes nothing. */
    int64_t r = vm_mmap(v, 0, 100 * PG, 0, ANON, 0, NULL, 0, 0);
    ck_assert_int_eq(r, b - 100 * (int64_t)PG);
    ck_assert_uint_eq(vm_committed_bytes(v), 10 * PG);
    ck_assert_uint_eq(vm_mapped_bytes(v), 110 * PG);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)r, PG, RW), -LX_ENOMEM);
    ck_assert_int_eq(vm_find(v, (uint64_t)r)->prot, 0);
    ck_assert_uint_eq(vm_count(v), 2);
    /* Unmapping gives room back; a page made accessible once stays
     * committed when made PROT_NONE again. */
    ck_assert_int_eq(vm_munmap(v, (uint64_t)a, 2 * PG), 0);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)r, 2 * PG, RW), 0);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)r, 2 * PG, 0), 0);
    ck_assert_uint_eq(vm_committed_bytes(v), 10 * PG);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)r + 2 * PG, PG, LX_PROT_READ), -LX_ENOMEM);
    ck_assert_int_eq(vm_mprotect(v, (uint64_t)r, 2 * PG, LX_PROT_READ), 0);
    /* MAP_FIXED: committed pages it replaces are not new; a refused call
     * leaves what was there; PROT_NONE over committed pages frees them. */
    ck_assert_int_eq(vm_mmap(v, (uint64_t)b, 4 * PG, LX_PROT_READ, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), b);
    ck_assert_int_eq(vm_mmap(v, (uint64_t)r + PG, 2 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0),
                     -LX_ENOMEM);
    ck_assert_int_eq(vm_find(v, (uint64_t)r + PG)->prot, LX_PROT_READ);
    ck_assert_int_eq(vm_find(v, (uint64_t)r + 2 * PG)->prot, 0);
    ck_assert_int_eq(vm_mmap(v, (uint64_t)b, PG, 0, ANON | LX_MAP_FIXED, 0, NULL, 0, 0), b);
    ck_assert_uint_eq(vm_committed_bytes(v), 9 * PG);
    ck_assert_int_eq(vm_mmap(v, (uint64_t)r + PG, 2 * PG, RW, ANON | LX_MAP_FIXED, 0, NULL, 0, 0),
                     r + (int64_t)PG);
    ck_assert_uint_eq(vm_committed_bytes(v), 10 * PG);
    /* brk: refused growth keeps the break. */
    ck_assert_int_eq(vm_munmap(v, (uint64_t)b + PG, 2 * PG), 0);
    vm_set_brk_start(v, 0x80000);
    ck_assert_uint_eq(vm_brk(v, 0x80000 + 3 * PG), 0x80000);
    ck_assert_uint_eq(vm_brk(v, 0x80000 + PG + 1), 0x80000 + PG + 1);
    ck_assert_uint_eq(vm_committed_bytes(v), 10 * PG);
    /* mremap: growing in place commits; shrinking gives back. */
    uint64_t rest = (uint64_t)a + 2 * PG;                /* 4 pages, up to VM_MMAP_BASE */
    ck_assert_int_eq(vm_mremap(v, rest, 4 * PG, 5 * PG, 0), -LX_ENOMEM);
    ck_assert_int_eq(vm_mremap(v, rest, 4 * PG, 3 * PG, 0), (int64_t)rest);
    ck_assert_int_eq(vm_mremap(v, rest, 3 * PG, 4 * PG, 0), (int64_t)rest);
    ck_assert_int_eq(vm_mremap(v, rest, 4 * PG, 5 * PG, 0), -LX_ENOMEM);
    /* A limit below what is committed stops growth only. */
    vm_set_limit(v, 0);
    ck_assert_int_gt(vm_mmap(v, 0, PG, 0, ANON, 0, NULL, 0, 0), 0);
    ck_assert_int_eq(vm_mmap(v, 0, PG, LX_PROT_READ, ANON, 0, NULL, 0, 0), -LX_ENOMEM);
    ck_assert_int_eq(vm_map_fixed(v, 0x40000000, PG, RW, VM_STACK), -LX_ENOMEM);
    ck_assert_int_eq(vm_map_image(v, 0x50000000, PG, LX_PROT_READ, 0x50000000, data, sizeof data),
                     -LX_ENOMEM);
    ck_assert_int_eq(vm_munmap(v, rest, 4 * PG), 0);
    ck_assert_uint_eq(vm_committed_bytes(v), 6 * PG);
    vm_set_limit(v, VM_NO_LIMIT);
    ck_assert_int_eq(vm_map_fixed(v, 0x40000000, PG, RW, VM_STACK), 0);
    check_invariants(v, &f);
    vm_free(v);
    fk_free(&f);
}
END_TEST

TU_SUITE(driver_vm)
{
    Suite *s = suite_create("driver_vm");
    TCase *tc = tu_tcase(s, "vm", 30);
    tcase_add_test(tc, vm_mmap_chooses_top_down_below_the_stack_gap);
    tcase_add_test(tc, vm_mmap_rejects_bad_arguments_with_linux_errno);
    tcase_add_test(tc, vm_map_fixed_replaces_and_zeroes_what_was_there);
    tcase_add_test(tc, vm_mmap_hint_is_used_when_free);
    tcase_add_test(tc, vm_munmap_splits_and_checks_alignment);
    tcase_add_test(tc, vm_mprotect_splits_merges_and_reports_holes);
    tcase_add_test(tc, vm_madvise_dontneed_zeroes_anonymous_and_restores_file_pages);
    tcase_add_test(tc, vm_brk_grows_shrinks_and_refuses_collisions);
    tcase_add_test(tc, vm_mremap_shrinks_and_grows_in_place_only);
    tcase_add_test(tc, vm_maps_text_is_what_linux_prints);
    tcase_add_test(tc, vm_matches_a_page_model_under_random_operations);
    tcase_add_test(tc, vm_matches_a_page_model_under_a_limit);
    tcase_add_test(tc, vm_limit_refuses_what_would_commit_too_much);
    return s;
}
