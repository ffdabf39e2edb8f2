/* tests/test_cli.c: the rnr front end as a user meets it: help for every
 * command, exit statuses, one clear line for bad input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/log.h"
#include "formats/manifest.h"
#include "tests/testutil.h"

static const char *const command_names[] = {
#define CMD(name, args, summary) #name,
#include "tools/commands.def"
#undef CMD
};
#define NCOMMANDS (sizeof command_names / sizeof command_names[0])

START_TEST(cli_help_lists_every_command)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){ "--help", NULL });
    ck_assert_int_eq(o.status, 0);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n  %s ", command_names[i]);
        ck_assert_msg(strstr(o.out, want), "rnr --help does not list '%s'", command_names[i]);
    }
    tu_output_free(&o);
}
END_TEST

START_TEST(cli_every_command_has_help)
{
    const char *name = command_names[_i];
    tu_output o;
    tu_rnr(&o, (const char *[]){ name, "--help", NULL });
    ck_assert_msg(o.status == 0, "rnr %s --help exited %d", name, o.status);
    char want[64];
    snprintf(want, sizeof want, "usage: rnr %s", name);
    ck_assert_msg(strncmp(o.out, want, strlen(want)) == 0, "rnr %s --help starts '%.40s'", name, o.out);
    ck_assert_uint_eq(o.err_len, 0);
    tu_output_free(&o);
}
END_TEST

START_TEST(cli_bad_usage_exits_2)
{
    const char *const *cases[] = {
        (const char *[]){ NULL },
        (const char *[]){ "frobnicate", NULL },
        (const char *[]){ "dump", NULL },
        (const char *[]){ "dump", "a", "b", NULL },
        (const char *[]){ "dump", "--bogus", NULL },
        (const char *[]){ "stats", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_output o;
        tu_rnr(&o, cases[i]);
        ck_assert_msg(o.status == 2, "case %zu exited %d", i, o.status);
        ck_assert_msg(o.err_len > 0 && o.out_len == 0, "case %zu: stdout '%s' stderr '%s'", i, o.out, o.err);
        tu_output_free(&o);
    }
}
END_TEST

/* dump and stats on a missing file, an empty file, random bytes, a folder
 * and a truncated log: exit 2 and exactly one line that names the file. */
START_TEST(cli_bad_input_gives_one_line_naming_the_file)
{
    const char *cmd = _i ? "stats" : "dump";
    char *dir = tu_tmpdir();
    char missing[4096], empty[4096], noise[4096], sub[4096];
    snprintf(missing, sizeof missing, "%s/missing.log", dir);
    snprintf(empty, sizeof empty, "%s/empty.log", dir);
    snprintf(noise, sizeof noise, "%s/noise.log", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    tu_write_file(empty, "", 0);
    uint64_t rng = 7;
    uint8_t junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)tu_rand(&rng);
    tu_write_file(noise, junk, sizeof junk);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    const char *paths[] = { missing, empty, noise };
    const char *reasons[] = { "No such file", "empty file", "bad magic" };
    for (size_t i = 0; i < 3; i++) {
        tu_output o;
        tu_rnr(&o, (const char *[]){ cmd, paths[i], NULL });
        ck_assert_msg(o.status == 2, "%s %s exited %d", cmd, paths[i], o.status);
        ck_assert_msg(tu_count_lines(o.err) == 1 && strstr(o.err, paths[i]) && strstr(o.err, reasons[i]),
                      "%s %s: stderr '%s'", cmd, paths[i], o.err);
        tu_output_free(&o);
    }
    /* A folder: dump refuses it; stats treats it as a bundle with no manifest. */
    tu_output o;
    tu_rnr(&o, (const char *[]){ cmd, sub, NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(tu_count_lines(o.err) == 1 && strstr(o.err, sub), "stderr '%s'", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

static void write_serial_log(const char *path, int records, int finish)
{
    rnr_log_header h = { .kind = RNR_LOG_SERIAL, .cpus = 2 };
    rnr_writer_opts opts = { 16, 0 };
    char err[RNR_ERR_MAX];
    rnr_writer *w = rnr_writer_open(path, &h, &opts, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    for (int i = 0; i < records; i++) {
        rnr_final_chunk c = { .tid = 10 + (uint32_t)(i % 3), .cs = 100 + (uint64_t)i };
        ck_assert_int_eq(rnr_writer_put_final(w, &c), 0);
    }
    if (finish)
        ck_assert_int_eq(rnr_writer_close(w, err, sizeof err), 0);
    else {
        ck_assert_int_eq(rnr_writer_flush(w), 0);
        rnr_writer_abandon(w);
    }
}

START_TEST(cli_dump_prints_header_and_one_line_per_record)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "s.log");
    write_serial_log(path, 5, 1);
    tu_output o;
    tu_rnr(&o, (const char *[]){ "dump", path, NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.out, "# rnr serial log, format 4, cpus 2, msp 0, program unknown\n"
                            "0 tid 10 cs 100\n1 tid 11 cs 101\n2 tid 12 cs 102\n"
                            "3 tid 10 cs 103\n4 tid 11 cs 104\n");
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A log whose writer never finished (a killed recording): the complete
 * prefix, a warning naming the truncation, exit 0. */
START_TEST(cli_dump_of_unfinished_log_prints_prefix_with_a_warning)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "cut.log");
    write_serial_log(path, 40, 0);
    tu_output o;
    tu_rnr(&o, (const char *[]){ "dump", path, NULL });
    ck_assert_int_eq(o.status, 0);
    ck_assert_uint_eq(tu_count_lines(o.out), 41);
    ck_assert_msg(tu_count_lines(o.err) == 1 && strstr(o.err, "truncated") && strstr(o.err, path),
                  "stderr '%s'", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_stats_reports_sizes_of_file_and_bundle)
{
    char *dir = tu_tmpdir();
    write_serial_log(tu_path(dir, "serial.log"), 30, 1);
    tu_output o;
    tu_rnr(&o, (const char *[]){ "stats", tu_path(dir, "serial.log"), NULL });
    ck_assert_int_eq(o.status, 0);
    /* 30 chunks of 100..129 instructions. */
    ck_assert_ptr_nonnull(strstr(o.out, "records: 30\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "instructions: 3435\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "threads: 3\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "bits_per_kinstr.raw: "));
    tu_output_free(&o);

    /* A bundle (a synthetic one) holding that serial log: the bundle's
     * instruction count from its manifest, the log's line. */
    char *bdir = strdup(tu_path(dir, "b"));
    tu_rnr(&o, (const char *[]){ "synth", "-n", "3", "--insns", "3000", "-o", bdir, NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    write_serial_log(tu_path(bdir, "serial.log"), 30, 1);
    tu_bundle_resign(bdir, NULL, NULL);
    char err[RNR_ERR_MAX];
    rnr_manifest *m = rnr_manifest_load(tu_path(bdir, "manifest"), err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    char want[64];
    snprintf(want, sizeof want, "instructions: %s\n", rnr_manifest_get(m, "instructions"));
    rnr_manifest_free(m);
    tu_rnr(&o, (const char *[]){ "stats", bdir, NULL });
    ck_assert_msg(o.status == 0, "stderr '%s'", o.err);
    ck_assert_msg(strstr(o.out, want) && strstr(o.out, "\nserial ") && strstr(o.out, "\ninitial "),
                  "%s", o.out);
    tu_output_free(&o);
    /* The serial log changed after the fact: named. */
    write_serial_log(tu_path(bdir, "serial.log"), 31, 1);
    tu_rnr(&o, (const char *[]){ "stats", bdir, NULL });
    ck_assert_msg(o.status == 2 && strstr(o.err, "serial.log: not the recorded file"), "%s", o.err);
    tu_output_free(&o);
    free(bdir);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(cli)
{
    Suite *s = suite_create("cli");
    TCase *tc = tu_tcase(s, "cli", 30);
    tcase_add_test(tc, cli_help_lists_every_command);
    tcase_add_loop_test(tc, cli_every_command_has_help, 0, (int)NCOMMANDS);
    tcase_add_test(tc, cli_bad_usage_exits_2);
    tcase_add_loop_test(tc, cli_bad_input_gives_one_line_naming_the_file, 0, 2);
    tcase_add_test(tc, cli_dump_prints_header_and_one_line_per_record);
    tcase_add_test(tc, cli_dump_of_unfinished_log_prints_prefix_with_a_warning);
    tcase_add_test(tc, cli_stats_reports_sizes_of_file_and_bundle);
    return s;
}
