/* tests/test_driver_inputlog.c: the input-log writer (driver/inputlog.c):
 * records come back in order, memory records follow their syscall, large
 * writes are split into pieces, errors are reported. */
#include <stdlib.h>
#include <string.h>

#include "driver/inputlog.h"
#include "formats/log.h"
#include "tests/testutil.h"

START_TEST(inputlog_keeps_order_and_splits_large_memory)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "input.log");
    char err[RNR_ERR_MAX];
    uint8_t sha[32] = {1, 2, 3};
    inlog *l = inlog_open(path, 4, sha, err, sizeof err);
    ck_assert_msg(l != NULL, "%s", err);
    size_t big = 2 * INLOG_MEM_PIECE + 1000;
    uint8_t *bytes = malloc(big);
    for (size_t i = 0; i < big; i++)
        bytes[i] = (uint8_t)(i * 7 + 3);
    ck_assert_int_eq(inlog_start(l, 1000, 0x3fff0000, bytes, 16), 0);
    /* A read(2) of thread 1001: pending memory first, logged after the result. */
    inlog_pending pend = {0};
    inlog_pending_add(&pend, 0x5000, "abc", 3);
    inlog_pending_add(&pend, 0x6000, bytes, big);
    ck_assert_int_eq(inlog_syscall(l, 1001, 63, (int64_t)big + 3), 0);
    ck_assert_int_eq(inlog_pending_flush(l, 1001, &pend), 0);
    ck_assert_uint_eq(pend.n, 0);
    ck_assert_int_eq(inlog_csr(l, 1000, 0xc01, 123456789), 0);
    ck_assert_int_eq(inlog_sc(l, 1002, 17, 1, 0x7000), 0);
    ck_assert_int_eq(inlog_syscall(l, 1000, 98, -110), 0);
    uint64_t records = inlog_records(l);
    ck_assert_uint_eq(records, 1 + 1 + 1 + 3 + 1 + 1 + 1);
    ck_assert_int_eq(inlog_close(l, err, sizeof err), 0);
    inlog_pending_free(&pend);

    rnr_reader *r = rnr_reader_open(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    ck_assert_uint_eq(rnr_reader_header(r)->kind, RNR_LOG_INPUT);
    ck_assert_uint_eq(rnr_reader_header(r)->cpus, 4);
    ck_assert_uint_eq(rnr_reader_header(r)->program_sha256[2], 3);
    rnr_input_record rec;
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_START && rec.tid == 1000 && rec.addr == 0x3fff0000 && rec.len == 16);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_SYSCALL && rec.tid == 1001 && rec.nr == 63);
    ck_assert_int_eq(rec.value, (int64_t)big + 3);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_MEM && rec.addr == 0x5000 && rec.len == 3);
    ck_assert_mem_eq(rec.data, "abc", 3);
    size_t got = 0;
    for (int piece = 0; piece < 3; piece++) {
        ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
        ck_assert(rec.type == RNR_IN_MEM && rec.tid == 1001);
        ck_assert_uint_eq(rec.addr, 0x6000 + got);
        ck_assert_uint_le(rec.len, INLOG_MEM_PIECE);
        ck_assert(memcmp(rec.data, bytes + got, rec.len) == 0);
        got += rec.len;
    }
    ck_assert_uint_eq(got, big);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_CSR && rec.nr == 0xc01 && rec.value == 123456789);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_SC && rec.tid == 1002 && rec.nr == 17 && rec.value == 1 &&
              rec.addr == 0x7000);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 1);
    ck_assert(rec.type == RNR_IN_SYSCALL && rec.nr == 98 && rec.value == -110);
    ck_assert_int_eq(rnr_reader_next_input(r, &rec), 0);
    rnr_reader_close(r);
    free(bytes);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(inputlog_reports_an_unwritable_path)
{
    char err[RNR_ERR_MAX];
    inlog *l = inlog_open("/nonexistent-dir/input.log", 1, NULL, err, sizeof err);
    ck_assert_ptr_null(l);
    ck_assert_msg(strstr(err, "/nonexistent-dir/input.log") != NULL, "%s", err);
}
END_TEST

TU_SUITE(driver_inputlog)
{
    Suite *s = suite_create("driver_inputlog");
    TCase *tc = tu_tcase(s, "inputlog", 30);
    tcase_add_test(tc, inputlog_keeps_order_and_splits_large_memory);
    tcase_add_test(tc, inputlog_reports_an_unwritable_path);
    return s;
}
