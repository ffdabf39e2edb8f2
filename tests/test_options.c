/* tests/test_options.c: the option spellings every command reads (a value
 * attached, --opt=VALUE, '--', format names in any case) give what the
 * canonical spelling gives on a real recording; the guest's own arguments
 * are never read; rnr stats in CSV and JSON; one line for a mistyped
 * command; no "1 workers" in messages. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

#define PYTHON "/usr/bin/python3"

/* A recording of racy on 4 CPUs with every final log (one per test). */
static char *record_racy(void)
{
    char *dir = tu_tmpdir();
    tu_output o;
    tu_rnr(&o, (const char *[]){ "record", "-n", "4", "--backend", "--quiet", "-o",
                                 tu_path(dir, "b"), "--",
                                 tu_path(tu_env("RNR_GUEST_DIR"), "racy"), NULL });
    ck_assert_msg(o.status == 0, "record exited %d: %s", o.status, o.err);
    tu_output_free(&o);
    return dir;
}

/* The replay summary without what the host's timing changes: up to the
 * instruction count ("...: verified: maxpar log, 2 workers, N chunks, M
 * instructions"). */
static char *summary_head(const char *err)
{
    const char *v = strstr(err, ": verified: ");
    ck_assert_msg(v != NULL, "no summary in '%s'", err);
    const char *end = strstr(v, " instructions, ");
    ck_assert_msg(end != NULL, "summary '%s'", v);
    return strndup(err, (size_t)(end - err));
}

static void expect_same_replay(const char *const *canonical, const char *const *other,
                               const char *want)
{
    tu_output a, b;
    tu_rnr(&a, canonical);
    tu_rnr(&b, other);
    ck_assert_msg(a.status == 0, "canonical spelling exited %d: %s", a.status, a.err);
    ck_assert_msg(b.status == 0, "other spelling exited %d: %s", b.status, b.err);
    ck_assert_str_eq(a.out, b.out);
    char *ha = summary_head(a.err), *hb = summary_head(b.err);
    ck_assert_str_eq(ha, hb);
    ck_assert_msg(strstr(hb, want), "'%s' not in '%s'", want, hb);
    free(ha);
    free(hb);
    tu_output_free(&a);
    tu_output_free(&b);
}

static void expect_same_output(const char *const *canonical, const char *const *other)
{
    tu_output a, b;
    tu_rnr(&a, canonical);
    tu_rnr(&b, other);
    ck_assert_msg(a.status == 0, "canonical spelling exited %d: %s", a.status, a.err);
    ck_assert_int_eq(b.status, a.status);
    ck_assert_str_eq(a.out, b.out);
    tu_output_free(&a);
    tu_output_free(&b);
}

START_TEST(options_attached_and_equals_spellings_replay_like_the_canonical_one)
{
    char *dir = record_racy();
    const char *b = tu_path(dir, "b");
    expect_same_replay((const char *[]){ "replay", "-j", "2", "--format", "maxpar", b, NULL },
                       (const char *[]){ "replay", "-j2", "--format=maxpar", b, NULL },
                       "maxpar log, 2 workers");
    expect_same_replay((const char *[]){ "replay", "-j", "2", "--format", "maxpar", b, NULL },
                       (const char *[]){ "replay", "--format=MaxPar", "-j2", "--", b, NULL },
                       "maxpar log, 2 workers");
    expect_same_replay((const char *[]){ "replay", "-j", "1", "--format", "stserial", b, NULL },
                       (const char *[]){ "replay", "--format", "STSERIAL", "-j1", b, NULL },
                       "stserial log, 1 worker,");
    expect_same_replay((const char *[]){ "replay", "-j", "1", "--window", "8", b, NULL },
                       (const char *[]){ "replay", "-j1", "--window=8", b, NULL }, "maxpar log");
    expect_same_replay((const char *[]){ "replay", "-j", "2", "--handoff", "1", b, NULL },
                       (const char *[]){ "replay", "-j2", "--handoff=1", b, NULL }, "maxpar log, 2 workers");
    /* A threshold of 0 is no threshold: refused, with the range. */
    tu_output o;
    tu_rnr(&o, (const char *[]){ "replay", "--handoff", "0", b, NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(strstr(o.err, "--handoff wants a number from 1"), "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(options_attached_and_equals_spellings_in_stats_verify_and_run)
{
    char *dir = record_racy();
    const char *b = tu_path(dir, "b");
    char *log = strdup(tu_path(b, "maxpar.log"));
    expect_same_output((const char *[]){ "stats", "--cpus", "1,3", "--token-latency", "50", b, NULL },
                       (const char *[]){ "stats", "--cpus=1,3", "--token-latency=50", b, NULL });
    expect_same_output((const char *[]){ "stats", "--cpus", "1,3", "--token-latency", "50", log, NULL },
                       (const char *[]){ "stats", "--token-latency=50", "--cpus=1,3", "--", log, NULL });
    expect_same_output((const char *[]){ "stats", "--format", "json", log, NULL },
                       (const char *[]){ "stats", "--format=JSON", log, NULL });
    expect_same_output((const char *[]){ "verify", b, "stitched", NULL },
                       (const char *[]){ "verify", b, "Stitched", NULL });
    expect_same_output((const char *[]){ "verify", b, "maxpar", NULL },
                       (const char *[]){ "verify", "--", b, "MAXPAR", NULL });
    /* run: the same cores and seed give the same digest. */
    const char *racy = tu_path(tu_env("RNR_GUEST_DIR"), "racy");
    tu_output a, c;
    tu_rnr(&a, (const char *[]){ "run", "--stats", "-n", "3", "--seed", "5", "--", racy, NULL });
    tu_rnr(&c, (const char *[]){ "run", "--stats", "-n3", "--seed=5", racy, NULL });
    ck_assert_msg(a.status == 0 && c.status == 0, "%s / %s", a.err, c.err);
    ck_assert_str_eq(a.out, c.out);
    ck_assert_msg(strstr(c.err, "cores: 3\n"), "-n3 not read: %s", c.err);
    const char *da = strstr(a.err, "digest: "), *dc = strstr(c.err, "digest: ");
    ck_assert_msg(da && dc && strncmp(da, dc, 72) == 0, "digests differ:\n%s\n%s", a.err, c.err);
    tu_output_free(&a);
    tu_output_free(&c);
    /* record -oDIR */
    char *odir = strdup(tu_path(dir, "attached"));
    char oarg[4200];
    snprintf(oarg, sizeof oarg, "-o%s", odir);
    tu_rnr(&a, (const char *[]){ "record", "--quiet", "-n2", oarg, racy, NULL });
    ck_assert_msg(a.status == 0, "%s", a.err);
    char *cores = tu_manifest_value(odir, "cpus");
    ck_assert_str_eq(cores, "2");
    free(cores);
    tu_output_free(&a);
    free(odir);
    free(log);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* What argenv prints for its arguments ARGS (argv[1] on). */
static void expect_guest_args(const char *out, const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    char want[256];
    snprintf(want, sizeof want, "argc %zu\n", n + 1);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "want '%s' in:\n%s", want, out);
    for (size_t i = 0; i < n; i++) {
        snprintf(want, sizeof want, "\nargv[%zu] '%s' (%zu)\n", i + 1, args[i], strlen(args[i]));
        ck_assert_msg(strstr(out, want), "want '%s' in:\n%s", want, out);
    }
}

START_TEST(options_after_the_program_are_the_guests)
{
    const char *argenv = tu_path(tu_env("RNR_GUEST_DIR"), "argenv");
    const char *guest[] = { "-j2", "--format=MaxPar", "-n8", "--", "--help", "-oX", NULL };
    tu_output o;
    /* rnr run: the program ends the options, with or without "--". */
    tu_rnr(&o, (const char *[]){ "run", "-n2", argenv, "-j2", "--format=MaxPar", "-n8", "--",
                                 "--help", "-oX", NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_guest_args(o.out, guest);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "run", "--seed=2", "--", argenv, "-j2", "--format=MaxPar", "-n8",
                                 "--", "--help", "-oX", NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_guest_args(o.out, guest);
    tu_output_free(&o);
    /* rnr record, and the replay of what it recorded. */
    char *dir = tu_tmpdir();
    char oarg[4200];
    snprintf(oarg, sizeof oarg, "-o%s", tu_path(dir, "b"));
    tu_rnr(&o, (const char *[]){ "record", "--quiet", "--backend", "-n2", oarg, argenv, "-j2", "--format=MaxPar",
                                 "-n8", "--", "--help", "-oX", NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    expect_guest_args(o.out, guest);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "replay", "-j1", "--quiet", tu_path(dir, "b"), NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(options_double_dash_ends_the_options)
{
    tu_output o;
    /* After "--", "--quiet" is the DIR operand, not the option. */
    tu_rnr(&o, (const char *[]){ "replay", "-j1", "--", "--quiet", NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(!strstr(o.err, "unknown option") && strstr(o.err, "--quiet"), "%s", o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "stats", "--", "--cpus", NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(!strstr(o.err, "needs a value") && strstr(o.err, "--cpus"), "%s", o.err);
    tu_output_free(&o);
}
END_TEST

/* Runs python3 CODE with ARGS (at most 6); fails with its stderr unless it exits 0. */
static void python(const char *code, const char *const *args)
{
    const char *argv[10] = { PYTHON, "-c", code };
    size_t n = 3;
    for (size_t i = 0; args[i] && n < 9; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    tu_output o;
    tu_run(argv, NULL, &o);
    ck_assert_msg(o.status == 0, "python check exited %d:\n%s%s", o.status, o.out, o.err);
    tu_output_free(&o);
}

static char *save(const char *dir, const char *name, const char *const *args, const char *stdin_path)
{
    tu_output o;
    if (stdin_path) {
        const char *argv[12] = { tu_rnr_bin() };
        size_t n = 1;
        for (size_t i = 0; args[i] && n < 11; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        tu_run(argv, stdin_path, &o);
    } else {
        tu_rnr(&o, args);
    }
    ck_assert_msg(o.status == 0, "rnr %s %s exited %d: %s", args[0], args[1], o.status, o.err);
    char *path = strdup(tu_path(dir, name));
    tu_write_file(path, o.out, o.out_len);
    tu_output_free(&o);
    return path;
}

/* For a log file: every 'name: value' line of the text has the same value
 * under the same name in JSON and in CSV (the cpu.N lines split in two). */
static const char file_check[] =
    "import csv, json, sys\n"
    "text, js, cs = (open(p).read() for p in sys.argv[1:4])\n"
    "j = json.loads(js)\n"
    "rows = list(csv.DictReader(cs.splitlines()))\n"
    "assert len(rows) == 1, rows\n"
    "c = rows[0]\n"
    "assert list(c.keys()) == list(j.keys()), (list(c.keys()), list(j.keys()))\n"
    "n = 0\n"
    "for line in text.splitlines():\n"
    "    k, v = line.split(': ', 1)\n"
    "    if k.startswith('cpu.') and k.count('.') == 1:\n"
    "        ch, ins = v.replace(' chunks', '').replace(' instructions', '').split(', ')\n"
    "        pairs = [(k + '.chunks', ch), (k + '.instructions', ins)]\n"
    "    else:\n"
    "        pairs = [(k, v)]\n"
    "    for k, v in pairs:\n"
    "        n += 1\n"
    "        assert c[k] == v, (k, c[k], v)\n"
    "        if isinstance(j[k], str):\n"
    "            assert j[k] == v, (k, j[k], v)\n"
    "        else:\n"
    "            assert float(j[k]) == float(v), (k, j[k], v)\n"
    "assert n == len(j), (n, len(j))\n"
    "want = sys.argv[4].split(',')\n"
    "assert all(w in j for w in want), (want, list(j))\n";

START_TEST(stats_csv_and_json_of_a_log_file_carry_the_texts_figures)
{
    char *dir = record_racy();
    char *b = strdup(tu_path(dir, "b"));
    static const struct {
        const char *log, *keys;
    } logs[] = {
        { "maxpar.log", "file,kind,records,instructions,bytes.raw,bytes.zlib,bits_per_kinstr.zlib,"
                        "critical_path,parallelism,replay.cycles.w1,tokens,critical_path.recorded,"
                        "replay.recorded.cycles.w1" },
        { "initial.log", "kind,records,sv_entries,cpu.0.chunks,cpu.3.instructions,cpu.3.recorded_cycles,"
                         "bytes.duration,end.conflict,maxpar.tokens,mean_chunk_size" },
        { "input.log", "kind,records,bytes.raw,mem_bytes" },
        { "stserial.log", "kind,critical_path,replay.token_latency" },
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        char *log = strdup(tu_path(b, logs[i].log));
        char *t = save(dir, "t", (const char *[]){ "stats", log, NULL }, NULL);
        char *j = save(dir, "j", (const char *[]){ "stats", "--format", "json", log, NULL }, NULL);
        char *c = save(dir, "c", (const char *[]){ "stats", "--format=csv", log, NULL }, NULL);
        python(file_check, (const char *[]){ t, j, c, logs[i].keys, NULL });
        free(t);
        free(j);
        free(c);
        free(log);
    }
    /* Standard input. */
    char *in = strdup(tu_path(b, "input.log"));
    char *t = save(dir, "t", (const char *[]){ "stats", "-", NULL }, in);
    char *j = save(dir, "j", (const char *[]){ "stats", "--format", "json", "-", NULL }, in);
    char *c = save(dir, "c", (const char *[]){ "stats", "--format", "csv", "-", NULL }, in);
    python(file_check, (const char *[]){ t, j, c, "file,kind,records,mem_bytes", NULL });
    free(t);
    free(j);
    free(c);
    free(in);
    free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* For a bundle: the table's rows again in CSV and JSON, with the header's
 * names; a bundle path with a quote, a backslash and a comma survives both. */
static const char bundle_check[] =
    "import csv, json, sys\n"
    "text, js, cs = (open(p).read() for p in sys.argv[1:4])\n"
    "path = sys.argv[4]\n"
    "j = json.loads(js)\n"
    "assert j['bundle'] == path, j['bundle']\n"
    "rows = list(csv.DictReader(cs.splitlines()))\n"
    "hdr = cs.splitlines()[0].split(',')\n"
    "for k in ['bundle', 'program', 'recorded_cycles', 'log', 'records', 'threads', 'instructions',\n"
    "          'bytes.raw', 'bytes.zlib', 'bits_per_kinstr.raw', 'bits_per_kinstr.zlib',\n"
    "          'critical_path', 'parallelism']:\n"
    "    assert k in hdr, (k, hdr)\n"
    "lines = text.splitlines()\n"
    "i = [n for n, l in enumerate(lines) if l.startswith('log ')][0]\n"
    "table = [l.split() for l in lines[i + 1:] if l.split() and l.split()[0] in\n"
    "         ('initial', 'input', 'maxpar', 'stitched', 'serial', 'stserial')]\n"
    "assert len(table) == 6 == len(rows) == len(j['logs']), (table, rows)\n"
    "for t, c, o in zip(table, rows, j['logs']):\n"
    "    assert c['bundle'] == path, c['bundle']\n"
    "    assert t[0] == c['log'] == o['log'], (t, c, o)\n"
    "    for col, k in ((1, 'records'), (2, 'threads'), (3, 'instructions'), (4, 'bytes.raw'),\n"
    "                   (5, 'bytes.zlib'), (6, 'bits_per_kinstr.raw'), (7, 'bits_per_kinstr.zlib'),\n"
    "                   (8, 'critical_path'), (9, 'parallelism')):\n"
    "        if t[col] == '-':\n"
    "            assert c[k] == '' and k not in o, (k, c, o)\n"
    "        else:\n"
    "            assert c[k] == t[col] and float(o[k]) == float(t[col]), (k, t, c, o)\n"
    "by_log = {c['log']: c for c in rows}\n"
    "sims = [l.split() for l in lines if l.split() and '.w' in l.split()[0] and\n"
    "        l.split()[0].split('.w')[0] in ('maxpar', 'stitched', 'serial', 'stserial')]\n"
    "assert len(sims) == 4 * len([k for k in hdr if k.startswith('replay.cycles.w')]), sims\n"
    "for s in sims:\n"
    "    fmt, w = s[0].split('.w')\n"
    "    c = by_log[fmt]\n"
    "    for col, k in ((1, 'replay.cycles.w'), (2, 'replay.ratio.w'), (3, 'replay.recorded.cycles.w'),\n"
    "                   (4, 'replay.recorded.ratio.w')):\n"
    "        assert c[k + w] == s[col], (k + w, c[k + w], s)\n"
    "    assert c['critical_path.recorded'] == s[5], (c, s)\n";

START_TEST(stats_csv_and_json_of_a_bundle_carry_the_tables_rows)
{
    char *dir = tu_tmpdir();
    char *b = strdup(tu_path(dir, "we\"ird,na\\me"));
    tu_output o;
    tu_rnr(&o, (const char *[]){ "record", "-n", "4", "--backend", "--quiet", "-o", b, "--",
                                 tu_path(tu_env("RNR_GUEST_DIR"), "racy"), NULL });
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    char *t = save(dir, "t", (const char *[]){ "stats", b, NULL }, NULL);
    char *j = save(dir, "j", (const char *[]){ "stats", "--format", "Json", b, NULL }, NULL);
    char *c = save(dir, "c", (const char *[]){ "stats", "--format", "csv", b, NULL }, NULL);
    python(bundle_check, (const char *[]){ t, j, c, b, NULL });
    free(t);
    free(j);
    free(c);
    free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* --cpus on a bundle: the table gains the simulated cycles on those counts,
 * the same figures rnr stats --cpus prints for each final log. */
static const char cpus_check[] =
    "import sys\n"
    "table = open(sys.argv[1]).read().splitlines()\n"
    "hdr = [l for l in table if l.startswith('log ')][0].split()\n"
    "assert hdr[-2:] == ['cycles.w1', 'cycles.w3'], hdr\n"
    "row = [l.split() for l in table if l.startswith('maxpar ')][0]\n"
    "f = dict(l.split(': ', 1) for l in open(sys.argv[2]).read().splitlines())\n"
    "assert row[-2] == f['replay.cycles.w1'] and row[-1] == f['replay.cycles.w3'], (row, f)\n"
    "assert 'replay.cycles.w2' not in f\n";

START_TEST(stats_cpus_applies_to_a_bundle)
{
    char *dir = record_racy();
    char *b = strdup(tu_path(dir, "b"));
    char *log = strdup(tu_path(b, "maxpar.log"));
    char *t = save(dir, "t", (const char *[]){ "stats", "--cpus", "1,3", b, NULL }, NULL);
    char *f = save(dir, "f", (const char *[]){ "stats", "--cpus", "1,3", log, NULL }, NULL);
    python(cpus_check, (const char *[]){ t, f, NULL });
    char *j = save(dir, "j", (const char *[]){ "stats", "--cpus", "3", "--format", "json", b, NULL },
                   NULL);
    python("import json, sys\n"
           "j = json.load(open(sys.argv[1]))\n"
           "m = [o for o in j['logs'] if o['log'] == 'maxpar'][0]\n"
           "assert 'replay.cycles.w3' in m and 'replay.cycles.w1' not in m, m\n",
           (const char *[]){ j, NULL });
    free(t);
    free(f);
    free(j);
    free(log);
    free(b);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* rnr record --check-every: a number of instructions (0 to 2^40) or
 * 'chunk' (= 0), attached or apart, written to the manifest; anything
 * else, or no value, is exit 2 naming the option, with nothing recorded. */
START_TEST(record_check_every_takes_a_count_or_chunk)
{
    char *dir = tu_tmpdir();
    char *prog = strdup(tu_path(tu_env("RNR_GUEST_DIR"), "racy"));
    static const char *const bad[] = {"x", "-1", "1099511627777", "", "5k", "0x10", " 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_output o;
        char *b = strdup(tu_path(dir, "bad"));
        tu_rnr(&o, (const char *[]){"record", "--quiet", "--check-every", bad[i], "-o", b, "--", prog, NULL});
        ck_assert_msg(o.status == 2 && strstr(o.err, "--check-every") && tu_count_lines(o.err) <= 2,
                      "'%s': exit %d: %s", bad[i], o.status, o.err);
        ck_assert_msg(access(tu_path(b, "manifest"), F_OK) != 0, "'%s' left a bundle", bad[i]);
        tu_output_free(&o);
        free(b);
    }
    tu_output o;
    tu_rnr(&o, (const char *[]){"record", "--quiet", "--check-every", NULL});
    ck_assert_msg(o.status == 2 && strstr(o.err, "--check-every"), "no value: %d %s", o.status, o.err);
    tu_output_free(&o);
    static const struct { const char *opt, *value, *want; } good[] = {
        {"--check-every", "chunk", "0"}, {"--check-every=0", NULL, "0"}, {"--check-every=777", NULL, "777"},
        {"--check-every", "1099511627776", "1099511627776"}, {NULL, NULL, "100000"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "g%zu", i);
        char *b = strdup(tu_path(dir, name));
        const char *args[10] = {"record", "--quiet", "-n", "2"};
        int k = 4;
        if (good[i].opt)
            args[k++] = good[i].opt;
        if (good[i].value)
            args[k++] = good[i].value;
        args[k++] = "-o";
        args[k++] = b;
        args[k++] = prog;
        args[k] = NULL;
        tu_rnr(&o, args);
        ck_assert_msg(o.status == 0, "%s: %s", good[i].want, o.err);
        tu_output_free(&o);
        char *v = tu_manifest_value(b, "check-every");
        ck_assert_msg(v && strcmp(v, good[i].want) == 0, "want %s, manifest has %s", good[i].want, v);
        free(v);
        free(b);
    }
    free(prog);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_unknown_command_is_one_line_naming_the_closest)
{
    static const struct {
        const char *typed, *want;
    } cases[] = {
        { "replya", "rnr: unknown command 'replya' (did you mean 'replay'?)\n" },
        { "stast", "rnr: unknown command 'stast' (did you mean 'stats'?)\n" },
        { "recrod", "rnr: unknown command 'recrod' (did you mean 'record'?)\n" },
        { "verfy", "rnr: unknown command 'verfy' (did you mean 'verify'?)\n" },
        { "rnu", "rnr: unknown command 'rnu' (did you mean 'run'?)\n" },
        { "dupm", "rnr: unknown command 'dupm' (did you mean 'dump'?)\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_output o;
        tu_rnr(&o, (const char *[]){ cases[i].typed, NULL });
        ck_assert_int_eq(o.status, 2);
        ck_assert_uint_eq(o.out_len, 0);
        ck_assert_str_eq(o.err, cases[i].want);
        tu_output_free(&o);
    }
    tu_output o;
    tu_rnr(&o, (const char *[]){ "frobnicate", NULL });
    ck_assert_int_eq(o.status, 2);
    ck_assert_uint_eq(tu_count_lines(o.err), 1);
    ck_assert_msg(!strstr(o.err, "did you mean"), "%s", o.err);
    tu_output_free(&o);
}
END_TEST

/* "1 workers", "1 threads": a count of one followed by a plural noun. */
static const char *wrong_plural(const char *s)
{
    for (const char *p = s; (p = strstr(p, "1 ")) != NULL; p++) {
        if (p > s && (p[-1] >= '0' && p[-1] <= '9'))
            continue;
        if (p > s && (p[-1] == '.' || p[-1] == ','))
            continue;
        const char *w = p + 2;
        size_t n = 0;
        while ((w[n] >= 'a' && w[n] <= 'z') || (w[n] >= 'A' && w[n] <= 'Z'))
            n++;
        if (n >= 3 && w[n - 1] == 's' && w[n - 2] != 's')
            return p;
    }
    return NULL;
}

START_TEST(cli_messages_and_help_have_no_plural_after_one)
{
    char *dir = tu_tmpdir();
    const char *argenv = tu_path(tu_env("RNR_GUEST_DIR"), "argenv");
    const char *b = tu_path(dir, "b");
    const char *const *runs[] = {
        (const char *[]){ "--help", NULL },
        (const char *[]){ "record", "-n", "1", "--backend", "-o", b, "--", argenv, NULL },
        (const char *[]){ "replay", "-j", "1", b, NULL },
        (const char *[]){ "replay", "-j", "2", b, NULL },
        (const char *[]){ "verify", b, NULL },
        (const char *[]){ "stats", b, NULL },
        (const char *[]){ "run", "-n", "1", "--stats", "--", argenv, NULL },
    };
    int summary_seen = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        tu_output o;
        tu_rnr(&o, runs[i]);
        ck_assert_msg(o.status == 0, "rnr %s exited %d: %s", runs[i][0], o.status, o.err);
        const char *bad = wrong_plural(o.err);
        ck_assert_msg(!bad, "rnr %s: '%.40s' in:\n%s", runs[i][0], bad ? bad : "", o.err);
        if (strcmp(runs[i][0], "replay") == 0) {
            ck_assert_msg(strstr(o.err, ", 1 worker,") && strstr(o.err, " concurrency ") &&
                              !strstr(o.err, "parallelism"),
                          "replay summary: %s", o.err);
            summary_seen++;
        }
        tu_output_free(&o);
    }
    ck_assert_int_eq(summary_seen, 2);
    static const char *const helps[] = {
#define CMD(name, args, summary) #name,
#include "tools/commands.def"
#undef CMD
    };
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        tu_output o;
        tu_rnr(&o, (const char *[]){ helps[i], "--help", NULL });
        const char *bad = wrong_plural(o.out);
        ck_assert_msg(!bad, "rnr %s --help: '%.40s'", helps[i], bad ? bad : "");
        tu_output_free(&o);
    }
    tu_rmtree(dir);
    free(dir);
}
END_TEST

TU_SUITE(options)
{
    Suite *s = suite_create("options");
    TCase *tc = tu_tcase(s, "options", 120);
    tcase_add_test(tc, options_attached_and_equals_spellings_replay_like_the_canonical_one);
    tcase_add_test(tc, options_attached_and_equals_spellings_in_stats_verify_and_run);
    tcase_add_test(tc, options_after_the_program_are_the_guests);
    tcase_add_test(tc, options_double_dash_ends_the_options);
    tcase_add_test(tc, stats_csv_and_json_of_a_log_file_carry_the_texts_figures);
    tcase_add_test(tc, stats_csv_and_json_of_a_bundle_carry_the_tables_rows);
    tcase_add_test(tc, stats_cpus_applies_to_a_bundle);
    tcase_add_test(tc, record_check_every_takes_a_count_or_chunk);
    tcase_add_test(tc, cli_unknown_command_is_one_line_naming_the_closest);
    tcase_add_test(tc, cli_messages_and_help_have_no_plural_after_one);
    return s;
}
