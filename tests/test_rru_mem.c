/* tests/test_rru_mem.c: guest memory: map/unmap/protect semantics, host
 * access across pages, free-range queries, the final-state digest, and
 * what a page costs the host. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rru/mem.h"
#include "tests/testutil.h"

#define P RRU_PAGE_SIZE

START_TEST(rru_mem_map_rejects_bad_ranges)
{
    rru_mem *m = rru_mem_new();
    ck_assert_int_eq(rru_mem_map(m, 0x1001, P, RRU_PROT_R), -1);
    ck_assert_int_eq(rru_mem_map(m, 0x1000, 100, RRU_PROT_R), -1);
    ck_assert_int_eq(rru_mem_map(m, 0x1000, 0, RRU_PROT_R), -1);
    ck_assert_int_eq(rru_mem_map(m, RRU_ADDR_LIMIT - P, 2 * P, RRU_PROT_R), -1);
    ck_assert_int_eq(rru_mem_map(m, RRU_ADDR_LIMIT - P, P, RRU_PROT_R), 0);
    ck_assert_uint_eq(rru_mem_pages(m), 1);
    ck_assert_int_eq(rru_mem_protect(m, 0x5000, P, RRU_PROT_R), -1);   /* unmapped */
    ck_assert_int_eq(rru_mem_unmap(m, 0x5000, P), 0);                  /* nothing there: fine */
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_mem_map_zero_fills_and_replaces)
{
    rru_mem *m = rru_mem_new();
    ck_assert_int_eq(rru_mem_map(m, 0x10000, 4 * P, RRU_PROT_R | RRU_PROT_W), 0);
    uint8_t buf[3 * P];
    memset(buf, 0xab, sizeof buf);
    ck_assert_int_eq(rru_mem_write(m, 0x10000 + 100, buf, sizeof buf), 0);
    uint8_t back[3 * P];
    ck_assert_int_eq(rru_mem_read(m, 0x10000 + 100, back, sizeof back), 0);
    ck_assert_int_eq(memcmp(buf, back, sizeof buf), 0);
    /* MAP_FIXED-like: a new mapping over the middle is zero again. */
    ck_assert_int_eq(rru_mem_map(m, 0x11000, P, RRU_PROT_R), 0);
    uint8_t z[P];
    ck_assert_int_eq(rru_mem_read(m, 0x11000, z, P), 0);
    for (size_t i = 0; i < P; i++)
        ck_assert_uint_eq(z[i], 0);
    ck_assert_int_eq(rru_mem_prot(m, 0x11000), RRU_PROT_R);
    ck_assert_int_eq(rru_mem_prot(m, 0x12000), RRU_PROT_R | RRU_PROT_W);
    /* W implies R. */
    ck_assert_int_eq(rru_mem_protect(m, 0x12000, P, RRU_PROT_W), 0);
    ck_assert_int_eq(rru_mem_prot(m, 0x12000), RRU_PROT_R | RRU_PROT_W);
    ck_assert_uint_eq(rru_mem_pages(m), 4);
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_mem_host_access_fails_on_holes_without_copying)
{
    rru_mem *m = rru_mem_new();
    rru_mem_map(m, 0x10000, P, RRU_PROT_R);
    rru_mem_map(m, 0x12000, P, RRU_PROT_R);
    uint8_t buf[2 * P];
    memset(buf, 0x5a, sizeof buf);
    ck_assert_int_eq(rru_mem_read(m, 0x10000 + P - 8, buf, 16), -1);
    ck_assert_uint_eq(buf[0], 0x5a);   /* nothing copied */
    ck_assert_int_eq(rru_mem_read(m, 0x11000, buf, 1), -1);
    ck_assert_int_eq(rru_mem_write(m, 0x11000, buf, 1), -1);
    ck_assert_int_eq(rru_mem_read(m, UINT64_MAX - 4, buf, 8), -1);
    ck_assert_int_eq(rru_mem_read(m, 0x10000, buf, 0), 0);
    char s[16];
    rru_mem_write(m, 0x10000, "hello", 6);
    ck_assert_int_eq(rru_mem_read_str(m, 0x10000, s, sizeof s), 5);
    ck_assert_str_eq(s, "hello");
    ck_assert_int_eq(rru_mem_read_str(m, 0x10000, s, 3), -1);          /* no NUL within 3 */
    memset(buf, 'x', P);
    rru_mem_write(m, 0x10000, buf, P);
    ck_assert_int_eq(rru_mem_read_str(m, 0x10000 + P - 2, s, sizeof s), -1);   /* runs off */
    rru_mem_free(m);
}
END_TEST

START_TEST(rru_mem_free_ranges_and_next_mapped)
{
    rru_mem *m = rru_mem_new();
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0), UINT64_MAX);
    rru_mem_map(m, 0x10000, 2 * P, RRU_PROT_R);
    rru_mem_map(m, 0x7ff000000000ull, P, RRU_PROT_R);
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0), 0x10000);
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0x10001), 0x11000);
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0x12000), 0x7ff000000000ull);
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0x7ff000001000ull), UINT64_MAX);
    ck_assert_int_eq(rru_mem_range_free(m, 0x12000, 100 * P), 1);
    ck_assert_int_eq(rru_mem_range_free(m, 0xf000, 2 * P), 0);
    ck_assert_int_eq(rru_mem_range_free(m, RRU_ADDR_LIMIT - P, 2 * P), 0);
    rru_mem_unmap(m, 0x10000, P);
    ck_assert_uint_eq(rru_mem_next_mapped(m, 0), 0x11000);
    ck_assert_uint_eq(rru_mem_pages(m), 2);
    /* Unmapping a huge sparse range is quick and complete. */
    ck_assert_int_eq(rru_mem_unmap(m, 0, RRU_ADDR_LIMIT), 0);
    ck_assert_uint_eq(rru_mem_pages(m), 0);
    rru_mem_free(m);
}
END_TEST

static void digest_of(rru_mem *m, uint8_t out[32]) { rru_mem_digest(m, out); }

START_TEST(rru_mem_digest_covers_address_permissions_and_bytes)
{
    uint8_t d1[32], d2[32];
    rru_mem *a = rru_mem_new(), *b = rru_mem_new();
    /* Same content mapped in different orders: equal digests. */
    rru_mem_map(a, 0x10000, P, RRU_PROT_R);
    rru_mem_map(a, 0x30000, P, RRU_PROT_R | RRU_PROT_W);
    rru_mem_map(b, 0x30000, P, RRU_PROT_R | RRU_PROT_W);
    rru_mem_map(b, 0x10000, P, RRU_PROT_R);
    digest_of(a, d1);
    digest_of(b, d2);
    ck_assert_int_eq(memcmp(d1, d2, 32), 0);
    /* One byte differs. */
    rru_mem_write(b, 0x30000 + 7, "x", 1);
    digest_of(b, d2);
    ck_assert_int_ne(memcmp(d1, d2, 32), 0);
    rru_mem_write(a, 0x30000 + 7, "x", 1);
    digest_of(a, d1);
    ck_assert_int_eq(memcmp(d1, d2, 32), 0);
    /* Permissions differ. */
    rru_mem_protect(b, 0x10000, P, RRU_PROT_R | RRU_PROT_X);
    digest_of(b, d2);
    ck_assert_int_ne(memcmp(d1, d2, 32), 0);
    rru_mem_protect(b, 0x10000, P, RRU_PROT_R);
    /* Same bytes at another address. */
    rru_mem_unmap(b, 0x10000, P);
    rru_mem_map(b, 0x20000, P, RRU_PROT_R);
    digest_of(b, d2);
    ck_assert_int_ne(memcmp(d1, d2, 32), 0);
    rru_mem_free(a);
    rru_mem_free(b);
}
END_TEST

/* Resident bytes of this process now (/proc/self/statm). */
static uint64_t resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    unsigned long long size, resident;
    ck_assert_int_eq(fscanf(f, "%llu %llu", &size, &resident), 2);
    fclose(f);
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

START_TEST(rru_mem_a_guest_page_costs_about_one_host_page)
{
    /* 64 MiB of pages, made and unmapped and made again (from the free
     * list): the process grows by the pages' data and little more (page
     * records; AddressSanitizer's shadow adds an eighth). Page data
     * allocated page by page cost twice that. Valgrind keeps memory of
     * its own. */
    if (tu_under_valgrind())
        return;
    const uint64_t len = 64ull << 20;
    rru_mem *m = rru_mem_new();
    uint64_t before = resident_bytes();
    ck_assert_int_eq(rru_mem_populate(m, 0x100000000ull, len, RRU_PROT_R | RRU_PROT_W), 0);
    ck_assert_int_eq(rru_mem_unmap(m, 0x100000000ull, len), 0);
    ck_assert_int_eq(rru_mem_populate(m, 0x200000000ull, len, RRU_PROT_R), 0);
    ck_assert_uint_eq(rru_mem_pages(m), len / P);
    uint64_t grown = resident_bytes() - before;
    ck_assert_msg(grown >= len && grown < len + len / 4, "%llu bytes for %llu of pages",
                  (unsigned long long)grown, (unsigned long long)len);
    rru_mem_free(m);
}
END_TEST

/* Memories that share pages (a fork's MAP_SHARED regions): random
 * stores, permission changes, unmaps and remaps through either memory,
 * against a model of two memories of 16 pages whose pages 4 to 7 start
 * shared. A store through one memory to a page still shared in both is in
 * the other's; permissions are each memory's own; a page unmapped (or
 * mapped over) in one memory is a new zero page there and leaves the
 * other's bytes alone, never handed out again as another page's. Freeing
 * the sharing memory leaves the first one's bytes (ASan watches). */
START_TEST(rru_mem_shared_pages_follow_a_model)
{
    enum { PAGES = 16, BASE = 0x10000 };
    static uint8_t model[2][PAGES][P];
    static uint8_t got[P];
    int shared[PAGES] = {0}, prot[2][PAGES];
    uint64_t seed = 0x5eedf00dull;
    rru_mem *m[2] = {rru_mem_new(), NULL};
    ck_assert_int_eq(rru_mem_map(m[0], BASE, PAGES * P, RRU_PROT_R | RRU_PROT_W), 0);
    for (int i = 0; i < PAGES; i++) {
        for (int k = 0; k < (int)P; k++)
            model[0][i][k] = (uint8_t)(i * 31 + k);
        ck_assert_int_eq(rru_mem_write(m[0], BASE + (uint64_t)i * P, model[0][i], P), 0);
        prot[0][i] = prot[1][i] = RRU_PROT_R | RRU_PROT_W;
    }
    m[1] = rru_mem_clone(m[0]);
    ck_assert_ptr_nonnull(m[1]);
    memcpy(model[1], model[0], sizeof model[0]);
    ck_assert_int_eq(rru_mem_share(m[1], m[0], BASE + 4 * P, 4 * P), 0);
    for (int i = 4; i < 8; i++)
        shared[i] = 1;
    for (int step = 0; step < 3000; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(seed >> 33);
        int w = (int)(r & 1), i = (int)((r >> 1) % PAGES), op = (int)((r >> 5) % 8);
        uint64_t a = BASE + (uint64_t)i * P;
        if (op <= 4) {                    /* a store */
            int k = (int)((r >> 8) % P);
            uint8_t v = (uint8_t)(r >> 20);
            ck_assert_int_eq(rru_mem_write(m[w], a + (uint64_t)k, &v, 1), 0);
            model[w][i][k] = v;
            if (shared[i])
                model[1 - w][i][k] = v;
        } else if (op == 5) {             /* permissions, this memory's */
            prot[w][i] = (r >> 9) & 1 ? RRU_PROT_R : RRU_PROT_R | RRU_PROT_W;
            ck_assert_int_eq(rru_mem_protect(m[w], a, P, (unsigned)prot[w][i]), 0);
        } else if (op == 6) {             /* unmapped and mapped again */
            ck_assert_int_eq(rru_mem_unmap(m[w], a, P), 0);
            ck_assert_int_eq(rru_mem_map(m[w], a, P, RRU_PROT_R | RRU_PROT_W), 0);
            memset(model[w][i], 0, P);
            prot[w][i] = RRU_PROT_R | RRU_PROT_W;
            shared[i] = 0;
        } else {                          /* mapped over in place */
            ck_assert_int_eq(rru_mem_map(m[w], a, P, RRU_PROT_R | RRU_PROT_W), 0);
            memset(model[w][i], 0, P);
            prot[w][i] = RRU_PROT_R | RRU_PROT_W;
            shared[i] = 0;
        }
        for (int x = 0; x < 2; x++) {
            if (rru_mem_read(m[x], a, got, P) != 0 || memcmp(got, model[x][i], P) != 0)
                ck_abort_msg("step %d: memory %d page %d differs from the model", step, x, i);
            if (rru_mem_prot(m[x], a) != prot[x][i])
                ck_abort_msg("step %d: memory %d page %d permissions %d, model %d", step, x, i,
                             rru_mem_prot(m[x], a), prot[x][i]);
        }
        if (rru_mem_shares(m[0], m[1], a) != shared[i])
            ck_abort_msg("step %d: page %d shared %d, model %d", step, i, rru_mem_shares(m[0], m[1], a),
                         shared[i]);
    }
    rru_mem_free(m[1]);
    for (int i = 0; i < PAGES; i++) {
        ck_assert_int_eq(rru_mem_read(m[0], BASE + (uint64_t)i * P, got, P), 0);
        ck_assert_int_eq(memcmp(got, model[0][i], P), 0);
    }
    rru_mem_free(m[0]);
}
END_TEST

TU_SUITE(rru_mem)
{
    Suite *s = suite_create("rru_mem");
    TCase *tc = tu_tcase(s, "mem", 30);
    tcase_add_test(tc, rru_mem_map_rejects_bad_ranges);
    tcase_add_test(tc, rru_mem_map_zero_fills_and_replaces);
    tcase_add_test(tc, rru_mem_host_access_fails_on_holes_without_copying);
    tcase_add_test(tc, rru_mem_free_ranges_and_next_mapped);
    tcase_add_test(tc, rru_mem_digest_covers_address_permissions_and_bytes);
    tcase_add_test(tc, rru_mem_a_guest_page_costs_about_one_host_page);
    tcase_add_test(tc, rru_mem_shared_pages_follow_a_model);
    return s;
}
