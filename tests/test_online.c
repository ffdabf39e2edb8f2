/* tests/test_online.c: `rnr record --stream` and `rnr follow` end to end,
 * on loopback and through a pipe: the follower's verdict and output
 * against the recording's, its bundle replayed and verified; a primary
 * killed, a follower killed or too slow, a stream that is garbage, of
 * another version or tampered with, a second primary. Every process runs
 * under timeout(1), so each case ends by itself. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "formats/stream.h"
#include "tests/testutil.h"

/* The shell's helpers: R the rnr binary, G the guests, T a scratch folder;
 * follow_bg starts a follower listening on a free port (its output in
 * $T/f.out, $T/f.err, its status in $T/f.rc) and sets PORT. */
static const char prelude[] =
    "set -u\n"
    "TO=$((60 * ${CK_TIMEOUT_MULTIPLIER:-1}))\n"
    "WD=\n"
    "trap '[ -n \"$WD\" ] && kill $WD 2>/dev/null' EXIT\n"
    "follow_bg() {\n"
    "  ( sh -c 'echo $$ >\"$T/f.pid\"; exec \"$0\" \"$@\"' \"$R\" follow --listen 127.0.0.1:0 \"$@\" "
    ">\"$T/f.out\" 2>\"$T/f.err\"; echo $? >\"$T/f.rc\" ) &\n"
    "  FSH=$!\n"
    "  i=0; while ! grep -q 'listening on' \"$T/f.err\" 2>/dev/null; do\n"
    "    i=$((i+1)); [ $i -gt 400 ] && { echo 'no listening line'; exit 1; }; sleep 0.05; done\n"
    "  FPID=$(cat \"$T/f.pid\")\n"
    "  [ -n \"$FPID\" ] || { echo 'no follower pid'; exit 1; }\n"
    "  ( sleep $TO; kill -KILL $FPID ) >/dev/null 2>&1 &\n"
    "  WD=$!\n"
    "  PORT=$(sed -n 's/.*listening on 127.0.0.1:\\([0-9]*\\)$/\\1/p' \"$T/f.err\")\n"
    "}\n";

/* Runs SCRIPT (after the prelude) with sh in scratch folder T. */
static void sh(tu_output *o, const char *t, const char *script)
{
    size_t n = strlen(prelude) + strlen(script) + 1;
    char *all = malloc(n);
    snprintf(all, n, "%s%s", prelude, script);
    char r[4200], g[4200], tt[4200];
    snprintf(r, sizeof r, "R=%s", tu_rnr_bin());
    snprintf(g, sizeof g, "G=%s", tu_env("RNR_GUEST_DIR"));
    snprintf(tt, sizeof tt, "T=%s", t);
    const char *argv[] = { "/usr/bin/env", r, g, tt, "/bin/sh", "-c", all, NULL };
    tu_run(argv, NULL, o);
    free(all);
}

static char *slurp(const char *t, const char *name)
{
    size_t n;
    return (char *)tu_read_file(tu_path(t, name), &n);
}

static int file_status(const char *t, const char *name)
{
    char *s = slurp(t, name);
    int v = atoi(s);
    free(s);
    return v;
}

/* The bundle DIR replays (FORMAT) and verifies. */
static void replays_and_verifies(const char *dir, const char *format)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){ "replay", "-j", "2", "--quiet", "--format", format, dir, NULL });
    ck_assert_msg(o.status == 0, "replay %s %s: %d %s", dir, format, o.status, o.err);
    tu_output_free(&o);
    tu_rnr(&o, (const char *[]){ "verify", dir, format, NULL });
    ck_assert_msg(o.status == 0, "verify %s %s: %d %s", dir, format, o.status, o.err);
    tu_output_free(&o);
}

START_TEST(online_follower_replays_maxpar_and_stitched_over_tcp_on_1_and_2_workers)
{
    static const struct { const char *format, *workers, *prog; } cases[] = {
        { "maxpar", "1", "racy" }, { "maxpar", "2", "racy" },
        { "stitched", "1", "parloop" }, { "stitched", "2", "racy" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = tu_tmpdir();
        char script[2048];
        snprintf(script, sizeof script,
                 "follow_bg -j %s -o \"$T/f\"\n"
                 "timeout $TO \"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT --stream-format %s "
                 "-o \"$T/p\" -- \"$G/%s\" >\"$T/p.out\" 2>\"$T/p.err\"; echo \"record $?\"\n"
                 "wait $FSH\n",
                 cases[i].workers, cases[i].format, cases[i].prog);
        tu_output o;
        sh(&o, t, script);
        char *ferr = slurp(t, "f.err");
        ck_assert_msg(strstr(o.out, "record 0") && file_status(t, "f.rc") == 0,
                      "case %zu: %s\nfollower: %s", i, o.out, ferr);
        char want[64];
        snprintf(want, sizeof want, "verified: %s log, %s worker", cases[i].format, cases[i].workers);
        ck_assert_msg(strstr(ferr, want), "case %zu: '%s' lacks '%s'", i, ferr, want);
        ck_assert_msg(strstr(ferr, ": complete"), "case %zu: %s", i, ferr);
        /* The replay's stdout is the recording's, byte for byte. */
        size_t a, b;
        uint8_t *fo = tu_read_file(tu_path(t, "f.out"), &a);
        uint8_t *po = tu_read_file(tu_path(t, "p/stdout"), &b);
        ck_assert_msg(a == b && a > 0 && memcmp(fo, po, a) == 0, "case %zu: stdout differs", i);
        free(fo);
        free(po);
        /* The received bundle stands on its own. */
        replays_and_verifies(tu_path(t, "f"), cases[i].format);
        free(ferr);
        tu_output_free(&o);
        tu_rmtree(t);
        free(t);
    }
}
END_TEST

START_TEST(online_follower_replays_a_stream_through_a_pipe)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "timeout $TO \"$R\" record -n 4 --quiet --stream - -o \"$T/p\" -- \"$G/racy\" 2>\"$T/p.err\" | "
       "timeout $TO \"$R\" follow -j 2 -o \"$T/f\" - >\"$T/f.out\" 2>\"$T/f.err\"; echo \"follow $?\"\n");
    char *ferr = slurp(t, "f.err");
    ck_assert_msg(strstr(o.out, "follow 0") && strstr(ferr, "verified: maxpar log"), "%s %s", o.out,
                  ferr);
    size_t a, b;
    uint8_t *fo = tu_read_file(tu_path(t, "f.out"), &a);
    uint8_t *po = tu_read_file(tu_path(t, "p/stdout"), &b);
    ck_assert_msg(a == b && a > 0 && memcmp(fo, po, a) == 0, "stdout differs");
    free(fo);
    free(po);
    replays_and_verifies(tu_path(t, "f"), "maxpar");
    free(ferr);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* execer executes itself twice, then a copy of argenv: the stream brings
 * argenv's bytes before the replay needs them, the follower replays every
 * execve while the primary records, and its bundle packs argenv as the
 * primary's does (programs/HASH), so that it replays with the copy gone.
 * Through a pipe without -o, execer threaded: the scratch files go. */
START_TEST(online_follower_replays_execve_while_the_primary_records)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "cp \"$G/argenv\" \"$T/argenv\" && mkdir \"$T/tmp\" || exit 1\n"
       "follow_bg -j 2 -o \"$T/f\"\n"
       "timeout $TO \"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT -o \"$T/p\" -- \"$G/execer\" 2 "
       "\"$T/argenv\" a >\"$T/p.out\" 2>\"$T/p.err\"; echo \"record $?\"\n"
       "wait $FSH\n"
       "echo \"packed: $(ls \"$T/f/programs\" | wc -l)\"\n"
       "rm \"$T/argenv\"\n"
       "timeout $TO \"$R\" record -n 4 --quiet --stream - -o \"$T/q\" -- \"$G/execer\" threaded 2>/dev/null | "
       "TMPDIR=\"$T/tmp\" timeout $TO \"$R\" follow - >\"$T/g.out\" 2>\"$T/g.err\"; echo \"pipe $?\"\n"
       "echo \"left: $(ls -A \"$T/tmp\")\"\n");
    char *ferr = slurp(t, "f.err"), *gerr = slurp(t, "g.err");
    ck_assert_msg(strstr(o.out, "record 0") && strstr(o.out, "packed: 1\n") && file_status(t, "f.rc") == 0 &&
                  strstr(ferr, "verified: maxpar log"), "%s\nfollower: %s", o.out, ferr);
    ck_assert_msg(strstr(o.out, "pipe 0") && strstr(gerr, "verified: maxpar log") && strstr(o.out, "left: \n"),
                  "%s\nfollower through the pipe: %s", o.out, gerr);
    size_t a, b;
    uint8_t *fo = tu_read_file(tu_path(t, "f.out"), &a);
    uint8_t *po = tu_read_file(tu_path(t, "p/stdout"), &b);
    ck_assert_msg(a == b && a > 0 && memcmp(fo, po, a) == 0, "stdout differs");
    ck_assert_msg(strstr((char *)po, "argv[1] 'a'") != NULL, "%s", (char *)po);
    free(fo);
    free(po);
    char *pf = tu_manifest_value(tu_path(t, "p"), "exec.2.file");
    char *ff = tu_manifest_value(tu_path(t, "f"), "exec.2.file");
    ck_assert_msg(pf && ff && strncmp(ff, "programs/", 9) == 0 && strcmp(pf, ff) == 0, "%s %s", pf, ff);
    char packed[4200];
    snprintf(packed, sizeof packed, "%s/%s", tu_path(t, "f"), ff);
    ck_assert_msg(access(packed, F_OK) == 0, "%s", packed);
    replays_and_verifies(tu_path(t, "f"), "maxpar");
    free(pf);
    free(ff);
    free(ferr);
    free(gerr);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* Processes live: forker's workers, killed child and posix_spawn, and a
 * child killed by SIGSEGV (its end applied from the mark after the last
 * chunk), followed through a pipe: verified, the primary's stdout. */
START_TEST(online_follower_replays_processes_while_the_primary_records)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "for m in 3 segv; do\n"
       "  timeout $TO \"$R\" record -n 4 --quiet --stream - -o \"$T/p$m\" -- \"$G/forker\" $m 2>/dev/null | "
       "timeout $TO \"$R\" follow - >\"$T/g$m.out\" 2>\"$T/g$m.err\"; echo \"$m $?\"\n"
       "  cmp -s \"$T/g$m.out\" \"$T/p$m/stdout\" && echo \"$m same\"\n"
       "  grep -q 'verified: maxpar log' \"$T/g$m.err\" && echo \"$m verified\"\n"
       "done\n");
    ck_assert_msg(strstr(o.out, "3 0\n3 same\n3 verified\nsegv 0\nsegv same\nsegv verified\n"), "%s%s",
                  o.out, o.err);
    size_t n;
    uint8_t *out = tu_read_file(tu_path(t, "psegv/stdout"), &n);
    ck_assert_msg(n > 0 && strstr((char *)out, "child: signaled 1, signal 11"), "%.*s", (int)n, (char *)out);
    free(out);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

START_TEST(online_follower_stops_soon_after_the_primary_is_killed)
{
    char *t = tu_tmpdir();
    tu_output o;
    /* endless runs for ever: only the kill ends the primary. */
    sh(&o, t,
       "follow_bg -j 2 -o \"$T/f\"\n"
       "\"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT -o \"$T/p\" -- "
       "\"$G/endless\" 2 0 >/dev/null 2>&1 &\n"
       "RP=$!\n"
       "sleep 1\n"
       "kill -KILL $RP; t0=$(date +%s%N)\n"
       "wait $FSH; t1=$(date +%s%N)\n"
       "echo \"stopped after $(( (t1 - t0) / 1000000 )) ms\"\n");
    char *ferr = slurp(t, "f.err");
    ck_assert_msg(file_status(t, "f.rc") == 1, "%s %s", o.out, ferr);
    ck_assert_msg(strstr(ferr, "the stream ended before the recording did") &&
                  strstr(ferr, "last chunk replayed: cpu "), "%s", ferr);
    const char *ms = strstr(o.out, "stopped after ");
    const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
    long bound = 10000 * (mult && atol(mult) > 0 ? atol(mult) : 1);
    ck_assert_msg(ms && atol(ms + 14) < bound, "%s (more than %ld ms)", o.out, bound);
    /* The prefix: status incomplete, readable by rnr info and rnr dump. */
    char *status = tu_manifest_value(tu_path(t, "f"), "status");
    ck_assert_msg(status && strncmp(status, "incomplete: ", 12) == 0, "%s", status);
    free(status);
    tu_output i;
    tu_rnr(&i, (const char *[]){ "info", tu_path(t, "f"), NULL });
    ck_assert_msg(i.status == 0 && strstr(i.out, "incomplete"), "%d %s %s", i.status, i.out, i.err);
    tu_output_free(&i);
    tu_rnr(&i, (const char *[]){ "dump", tu_path(t, "f/maxpar.log"), NULL });
    ck_assert_msg(tu_count_lines(i.out) > 10, "%s", i.err);
    tu_output_free(&i);
    free(ferr);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

START_TEST(online_primary_finishes_its_bundle_when_the_follower_is_killed)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "mkdir \"$T/ft\"; TMPDIR=\"$T/ft\" follow_bg -j 1 --quiet\n"
       "timeout $TO \"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT --backend -o \"$T/p\" -- "
       "\"$G/endless\" 2 0.1 >/dev/null 2>\"$T/p.err\" &\n"
       "RP=$!\n"
       /* Killed at the start: once the program has begun to come. */
       "i=0; until [ -n \"$(find \"$T/ft\" -name '.program.*' -size +0 2>/dev/null)\" ]; do\n"
       "  i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.02; done\n"
       "kill -KILL $FPID\n"
       "wait $RP; echo \"record $?\"; wait $FSH\n");
    char *perr = slurp(t, "p.err");
    ck_assert_msg(strstr(o.out, "record 0"), "%s %s", o.out, perr);
    ck_assert_msg(file_status(t, "f.rc") == 128 + 9, "the follower was not killed: %s", o.out);
    ck_assert_msg(strstr(perr, "warning: the stream's follower") && strstr(perr, "dropped"), "%s", perr);
    replays_and_verifies(tu_path(t, "p"), "maxpar");
    free(perr);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

START_TEST(online_primary_drops_the_stream_of_a_follower_that_does_not_read)
{
    /* A listener that never accepts nor reads, with a tiny receive buffer. */
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(l, 1), 0);
    socklen_t sl = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &sl);
    char *t = tu_tmpdir();
    char where[64];
    snprintf(where, sizeof where, "127.0.0.1:%u", ntohs(a.sin_port));
    tu_output o;
    tu_rnr(&o, (const char *[]){ "record", "-n", "4", "--quiet", "--backend", "--stream", where,
                                 "--stream-buffer", "64K", "-o", tu_path(t, "p"), "--",
                                 tu_path(tu_env("RNR_GUEST_DIR"), "racy"), NULL });
    ck_assert_msg(o.status == 0, "%d %s", o.status, o.err);
    ck_assert_msg(strstr(o.err, "fell more than 65536 bytes behind") &&
                  strstr(o.err, "the local bundle is written in full"), "%s", o.err);
    tu_output_free(&o);
    replays_and_verifies(tu_path(t, "p"), "maxpar");
    close(l);
    tu_rmtree(t);
    free(t);
}
END_TEST

START_TEST(online_follower_refuses_garbage_another_version_and_a_second_primary)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "head -c 3000 /dev/urandom | sed '1s/^/x/' | timeout $TO \"$R\" follow - 2>\"$T/g.err\"; "
       "echo \"garbage $?\"\n"
       "printf '\\211RNRSTR\\n\\001\\000\\000\\000\\000\\000\\000\\000' | "
       "timeout $TO \"$R\" follow - 2>\"$T/v.err\"; echo \"version $?\"\n"
       "follow_bg -j 1 --quiet\n"
       "timeout $TO \"$R\" record -n 2 --quiet --stream 127.0.0.1:$PORT -o \"$T/p1\" -- "
       "\"$G/endless\" 2 0.05 >/dev/null 2>&1 &\n"
       "RP=$!\n"
       "sleep 0.5\n"
       "timeout $TO \"$R\" record -n 2 --quiet --stream 127.0.0.1:$PORT -o \"$T/p2\" -- "
       "\"$G/racy\" >/dev/null 2>\"$T/s.err\"; echo \"second $?\"\n"
       "[ -e \"$T/p2\" ] && echo 'p2 exists'\n"
       "wait $RP; echo \"first $?\"; wait $FSH\n");
    ck_assert_msg(strstr(o.out, "garbage 2") && strstr(o.out, "version 2") &&
                  strstr(o.out, "second 2") && strstr(o.out, "first 0") &&
                  !strstr(o.out, "p2 exists"), "%s", o.out);
    char *g = slurp(t, "g.err"), *v = slurp(t, "v.err"), *s = slurp(t, "s.err");
    ck_assert_msg(strstr(g, "not an rnr stream"), "%s", g);
    ck_assert_msg(strstr(v, "stream version 1, this rnr reads version 2"), "%s", v);
    ck_assert_msg(strstr(s, "cannot connect"), "%s", s);
    ck_assert_msg(file_status(t, "f.rc") == 0, "the first primary's follower: %s", o.out);
    free(g);
    free(v);
    free(s);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* Rewrites the stream file PATH with the first block of TYPE past SKIP
 * others changed (its first byte flipped), or with every block of TYPE
 * left out (DROP), framed again with a valid CRC. */
typedef struct retype {
    rnr_membuf out;
    uint32_t type;
    int done;
    int skip, drop;
} retype;

static int rewrite(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    retype *r = ctx;
    if (type == r->type && r->drop) {
        r->done = 1;
        return 0;
    }
    uint8_t *c = malloc(len + 1);
    memcpy(c, p, len);
    if (type == r->type && len && !r->done && r->skip-- == 0) {
        c[0] ^= 1;
        r->done = 1;
    }
    rnr_stream_put_block(&r->out, type, c, len);
    free(c);
    return 0;
}

/* rnr follow --quiet of the stream file T/NAME, and, for the untouched
 * stream T/s, its verdict required good (the damage's check is then the
 * damage's). */
static void follow_file(const char *t, const char *name, tu_output *o)
{
    tu_run((const char *[]){ tu_rnr_bin(), "follow", "--quiet", "-", NULL }, tu_path(t, name), o);
}

static void untouched_stream_verifies(const char *t)
{
    tu_output o;
    follow_file(t, "s", &o);
    ck_assert_msg(o.status == 0, "%d %s", o.status, o.err);
    tu_output_free(&o);
}

/* The stream file T/s rewritten as R says into T/bad. */
static void rewrite_stream(const char *t, retype *r)
{
    size_t n;
    uint8_t *s = tu_read_file(tu_path(t, "s"), &n);
    rnr_stream_put_header(&r->out);
    rnr_stream_parser *p = rnr_stream_parser_new("s", 1);
    ck_assert_int_eq(rnr_stream_feed(p, s, n, rewrite, r), 0);
    ck_assert(r->done);
    rnr_stream_parser_free(p);
    tu_write_file(tu_path(t, "bad"), r->out.data, r->out.len);
    free(r->out.data);
    free(s);
}

START_TEST(online_follower_finds_a_tampered_stream)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "timeout $TO \"$R\" record -n 4 --quiet --stream - -o \"$T/p\" -- \"$G/racy\" >\"$T/s\" "
       "2>/dev/null; echo \"record $?\"\n");
    ck_assert_msg(strstr(o.out, "record 0"), "%s", o.out);
    tu_output_free(&o);
    retype r = { { NULL, 0, 0 }, RNR_ST_STDOUT, 0, 0, 0 };
    rewrite_stream(t, &r);
    /* A recorded stdout that is not what the replay prints: verdict 1. */
    follow_file(t, "bad", &o);
    ck_assert_msg(o.status == 1 && strstr(o.err, "stdout") && strstr(o.err, "differs"), "%d %s",
                  o.status, o.err);
    tu_output_free(&o);
    untouched_stream_verifies(t);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* The exec blocks of execer's stream damaged: a mention of a program the
 * stream never carried, a program whose bytes are not its hash (exit 2,
 * a stream that is not one), and a stream without them (the replay
 * cannot go on at the first execve: exit 1, named). */
START_TEST(online_follower_refuses_damaged_exec_blocks)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "cp \"$G/argenv\" \"$T/argenv\" || exit 1\n"
       "timeout $TO \"$R\" record -n 2 --quiet --stream - -o \"$T/p\" -- \"$G/execer\" 2 \"$T/argenv\" a "
       ">\"$T/s\" 2>/dev/null; echo \"record $?\"\n");
    ck_assert_msg(strstr(o.out, "record 0"), "%s", o.out);
    tu_output_free(&o);
    static const struct { int skip, drop, status; const char *want; } cases[] = {
        { 0, 0, 2, "names a program the stream did not carry" },
        { 2, 0, 2, "came with another SHA-256" },
        { 0, 1, 1, "the stream ended before it brought the program that execve loaded" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        retype r = { { NULL, 0, 0 }, RNR_ST_EXEC, 0, cases[i].skip, cases[i].drop };
        rewrite_stream(t, &r);
        follow_file(t, "bad", &o);
        ck_assert_msg(o.status == cases[i].status && strstr(o.err, cases[i].want), "case %zu: %d %s", i,
                      o.status, o.err);
        tu_output_free(&o);
    }
    untouched_stream_verifies(t);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* The blocks of channel TYPE of a stream, framed, in order. */
typedef struct pick {
    rnr_membuf out;
    uint32_t type;
    int keep;               /* 1: keep TYPE only; 0: all but TYPE, B's TYPE blocks at the first */
    const rnr_membuf *other;
    int placed;
} pick;

static int pick_block(void *ctx, uint32_t type, const uint8_t *p, size_t len)
{
    pick *k = ctx;
    if (k->keep) {
        if (type == k->type)
            rnr_stream_put_block(&k->out, type, p, len);
    } else if (type != k->type) {
        rnr_stream_put_block(&k->out, type, p, len);
    } else if (!k->placed) {
        size_t at = k->out.len;
        k->out.len += k->other->len;
        k->out.data = realloc(k->out.data, k->out.len);
        k->out.cap = k->out.len;
        memcpy(k->out.data + at, k->other->data, k->other->len);
        k->placed = 1;
    }
    return 0;
}

START_TEST(online_follower_stops_at_the_first_chunk_that_diverges)
{
    char *t = tu_tmpdir();
    tu_output o;
    sh(&o, t,
       "for s in 1 2; do timeout $TO \"$R\" record -n 4 --seed $s --check-every chunk --quiet "
       "--stream - -o \"$T/p$s\" -- "
       "\"$G/racy\" >\"$T/s$s\" 2>/dev/null || echo failed; done\n");
    ck_assert_msg(!strstr(o.out, "failed"), "%s", o.out);
    tu_output_free(&o);
    /* (Checks at every chunk end, so that the first chunk is named.)
     * Seed 1's stream with seed 2's input log: another interleaving's
     * inputs and chunk checks under seed 1's chunks. */
    size_t n1, n2;
    uint8_t *s1 = tu_read_file(tu_path(t, "s1"), &n1), *s2 = tu_read_file(tu_path(t, "s2"), &n2);
    pick in2 = { { NULL, 0, 0 }, RNR_ST_INPUT, 1, NULL, 0 };
    rnr_stream_parser *p = rnr_stream_parser_new("s2", 1);
    ck_assert_int_eq(rnr_stream_feed(p, s2, n2, pick_block, &in2), 0);
    rnr_stream_parser_free(p);
    pick mix = { { NULL, 0, 0 }, RNR_ST_INPUT, 0, &in2.out, 0 };
    rnr_stream_put_header(&mix.out);
    p = rnr_stream_parser_new("s1", 1);
    ck_assert_int_eq(rnr_stream_feed(p, s1, n1, pick_block, &mix), 0);
    rnr_stream_parser_free(p);
    tu_write_file(tu_path(t, "mix"), mix.out.data, mix.out.len);
    free(mix.out.data);
    free(in2.out.data);
    free(s1);
    free(s2);
    tu_run((const char *[]){ tu_rnr_bin(), "follow", "-j", "2", "--quiet", "-", NULL },
           tu_path(t, "mix"), &o);
    ck_assert_msg(o.status == 1 && strstr(o.err, "replay diverged at cpu "), "%d %s", o.status, o.err);
    tu_output_free(&o);
    tu_rmtree(t);
    free(t);
}
END_TEST

/* The phases of the adaptive log in bundle DIR, as `rnr stats` lists them:
 * counts of MaxPar and Stitched phases. */
static void phase_formats(const char *dir, int *maxpar, int *stitched)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){ "stats", dir, NULL });
    ck_assert_msg(o.status == 0, "stats %s: %s", dir, o.err);
    *maxpar = *stitched = 0;
    const char *p = strstr(o.out, "adaptive phases");
    ck_assert_msg(p != NULL, "no phases in: %s", o.out);
    for (p = strchr(p, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        char idx[32], fmt[32];
        if (sscanf(p + 1, "%31s %31s", idx, fmt) == 2 && idx[0] >= '0' && idx[0] <= '9') {
            *maxpar += strcmp(fmt, "maxpar") == 0;
            *stitched += strcmp(fmt, "stitched") == 0;
        }
    }
    tu_output_free(&o);
}

/* An adaptive log made on the fly by a policy that does not depend on
 * timing (a phases file switching three times, bandwidth budgets that
 * every phase, no phase and some phases fit) holds the records `rnr
 * backend --adaptive` makes of the same recording (their compressed
 * blocks may be cut elsewhere: the stream flushes as it goes); the
 * follower verifies it, prints the recording's output, and its bundle
 * replays and verifies; taskq's middle budget switches hundreds of times.
 * (The recorder holds a bandwidth phase's chunks until it is decided; the
 * MaxPar writer's buffering usually delays them as long, so this test does
 * not force the race a missing hold would lose.) */
START_TEST(online_adaptive_stream_is_the_offline_adaptive_log)
{
    char *t = tu_tmpdir();
    char phases[4200], pol_phases[4300];
    snprintf(phases, sizeof phases, "%s/phases", t);
    /* racy's first chunk is its start, about 21,000 instructions; the
     * chunks after it are short, so each range below holds some. */
    static const char ranges[] = "0-25000 maxpar\n25000-35000 stitched\n35000-45000 maxpar\n";
    tu_write_file(phases, ranges, sizeof ranges - 1);
    snprintf(pol_phases, sizeof pol_phases, "phases:%s", phases);
    const char *policies[] = { pol_phases, "bandwidth:1000000000000:4096", "bandwidth:1000:4096",
                               "bandwidth:50000000:4096" };
    const char *programs[] = { "racy 4 300", "racy 4 300", "racy 4 300", "suite/taskq -s small -t 4" };
    for (size_t i = 0; i < 4; i++) {
        char script[8192];
        snprintf(script, sizeof script,
                 "rm -rf \"$T/p\" \"$T/f\"\n"
                 "timeout $TO \"$R\" record -n 4 --quiet --stream - --stream-format adaptive "
                 "--adaptive '%s' -o \"$T/p\" -- \"$G\"/%s 2>\"$T/p.err\" | timeout $TO \"$R\" "
                 "follow -j %d -o \"$T/f\" - >\"$T/f.out\" 2>\"$T/f.err\"; echo \"follow $?\"\n"
                 "timeout $TO \"$R\" backend --adaptive '%s' \"$T/p\" >/dev/null 2>\"$T/b.err\"; "
                 "echo \"backend $?\"\n"
                 "\"$R\" dump \"$T/p/adaptive.log\" >\"$T/p.dump\" && \"$R\" dump \"$T/f/adaptive.log\" "
                 ">\"$T/f.dump\" && cmp \"$T/p.dump\" \"$T/f.dump\" && echo same\n",
                 policies[i], programs[i], 1 + (int)(i % 2), policies[i]);
        tu_output o;
        sh(&o, t, script);
        char *ferr = slurp(t, "f.err");
        ck_assert_msg(strstr(o.out, "follow 0") && strstr(ferr, "verified: adaptive log"),
                      "%s: %s %s", policies[i], o.out, ferr);
        ck_assert_msg(strstr(o.out, "backend 0") && strstr(o.out, "same"),
                      "%s: the streamed log is not the off-line one: %s", policies[i], o.out);
        size_t a, b;
        uint8_t *fo = tu_read_file(tu_path(t, "f.out"), &a);
        uint8_t *po = tu_read_file(tu_path(t, "p/stdout"), &b);
        ck_assert_msg(a == b && a > 0 && memcmp(fo, po, a) == 0, "%s: stdout differs", policies[i]);
        free(fo);
        free(po);
        replays_and_verifies(tu_path(t, "f"), "adaptive");
        int mp, st;
        phase_formats(tu_path(t, "f"), &mp, &st);
        if (i == 0)   /* maxpar, stitched, maxpar, then stitched to the end */
            ck_assert_msg(mp == 2 && st == 2, "phases file: %d maxpar, %d stitched", mp, st);
        else if (i == 1)   /* a budget every phase fits */
            ck_assert_msg(mp == 1 && st == 0, "generous budget: %d maxpar, %d stitched", mp, st);
        else if (i == 2)   /* a budget no phase fits */
            ck_assert_msg(mp == 0 && st == 1, "tight budget: %d maxpar, %d stitched", mp, st);
        else   /* between: phases of both kinds, so held phases were released on both sides */
            ck_assert_msg(mp >= 1 && st >= 1, "middle budget: %d maxpar, %d stitched", mp, st);
        free(ferr);
        tu_output_free(&o);
    }
    tu_rmtree(t);
    free(t);
}
END_TEST

/* lag:CHUNKS over TCP: a limit no lag reaches gives one Stitched phase;
 * lag:0 with a follower stopped for a while (no acknowledgements) still
 * gives a log that verifies, in whatever phases the lag chose. A lag
 * policy on a pipe, which carries no acknowledgements, and --adaptive
 * without the adaptive format are refused. */
START_TEST(online_adaptive_lag_policy_follows_the_acknowledgements)
{
    const char *policies[] = { "lag:1000000000", "lag:0" };
    for (size_t i = 0; i < 2; i++) {
        char *t = tu_tmpdir();
        char script[4096];
        snprintf(script, sizeof script,
                 "follow_bg -j 2 -o \"$T/f\"\n"
                 "%s"
                 "timeout $TO \"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT --stream-format "
                 "adaptive --adaptive %s -o \"$T/p\" -- \"$G/suite/taskq\" -s small -t 4 >/dev/null "
                 "2>\"$T/p.err\" &\n"
                 "RP=$!\n"
                 "%s"
                 "wait $RP; echo \"record $?\"\n"
                 "wait $FSH\n",
                 i ? "kill -STOP $FPID\n" : "", policies[i], i ? "sleep 1; kill -CONT $FPID\n" : "");
        tu_output o;
        sh(&o, t, script);
        char *ferr = slurp(t, "f.err");
        ck_assert_msg(strstr(o.out, "record 0") && file_status(t, "f.rc") == 0 &&
                      strstr(ferr, "verified: adaptive log, 2 workers"),
                      "%s: %s\nfollower: %s", policies[i], o.out, ferr);
        replays_and_verifies(tu_path(t, "f"), "adaptive");
        int mp, st;
        phase_formats(tu_path(t, "f"), &mp, &st);
        if (i == 0)
            ck_assert_msg(mp == 0 && st == 1, "%s: %d maxpar, %d stitched", policies[i], mp, st);
        else
            ck_assert_msg(mp + st >= 1, "%s: no phase", policies[i]);
        free(ferr);
        tu_output_free(&o);
        tu_rmtree(t);
        free(t);
    }
}
END_TEST

/* Every bundled multithreaded workload (loop index), streamed in each
 * format (adaptive by bandwidth through a pipe and by the follower's lag
 * over TCP) to a follower on 1 and 2 workers, through a pipe and over
 * TCP: the follower verifies, prints the recording's stdout byte for
 * byte, and its bundle replays and verifies on its own. */
START_TEST(online_follower_replays_every_threaded_workload)
{
    static const struct { const char *format, *workers; int tcp; const char *adaptive; } ways[] = {
        { "maxpar", "1", 0, NULL }, { "maxpar", "2", 1, NULL }, { "stitched", "1", 1, NULL },
        { "stitched", "2", 0, NULL }, { "adaptive", "1", 0, "bandwidth:50000000:4096" },
        { "adaptive", "2", 1, "lag:0" },
    };
    const tu_workload *w = &tu_threaded[_i];
    char args[256] = "";
    for (size_t a = 0; a < 4 && w->args[a]; a++) {
        strcat(args, " ");
        strcat(args, w->args[a]);
    }
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        char *t = tu_tmpdir();
        char script[2048], format[128];
        if (ways[i].adaptive)
            snprintf(format, sizeof format, "adaptive --adaptive %s", ways[i].adaptive);
        else
            snprintf(format, sizeof format, "%s", ways[i].format);
        if (ways[i].tcp)
            snprintf(script, sizeof script,
                     "follow_bg -j %s -o \"$T/f\"\n"
                     "timeout $TO \"$R\" record -n 4 --quiet --stream 127.0.0.1:$PORT --stream-format %s "
                     "-o \"$T/p\" -- \"$G/%s\"%s >/dev/null 2>\"$T/p.err\"\n"
                     "wait $FSH\n",
                     ways[i].workers, format, w->name, args);
        else
            snprintf(script, sizeof script,
                     "timeout $TO \"$R\" record -n 4 --quiet --stream - --stream-format %s -o \"$T/p\" "
                     "-- \"$G/%s\"%s 2>\"$T/p.err\" | timeout $TO \"$R\" follow -j %s -o \"$T/f\" - "
                     ">\"$T/f.out\" 2>\"$T/f.err\"; echo $? >\"$T/f.rc\"\n",
                     format, w->name, args, ways[i].workers);
        tu_output o;
        sh(&o, t, script);
        char *ferr = slurp(t, "f.err");
        char want[64];
        snprintf(want, sizeof want, "verified: %s log, %s worker", ways[i].format, ways[i].workers);
        ck_assert_msg(file_status(t, "f.rc") == 0 && strstr(ferr, want), "%s%s, %s on %s (%s): %s\n%s",
                      w->name, args, ways[i].format, ways[i].workers, ways[i].tcp ? "tcp" : "pipe", o.out,
                      ferr);
        size_t a, b;
        uint8_t *fo = tu_read_file(tu_path(t, "f.out"), &a);
        uint8_t *po = tu_read_file(tu_path(t, "p/stdout"), &b);
        ck_assert_msg(a == b && memcmp(fo, po, a) == 0, "%s%s, %s: the follower's stdout differs", w->name,
                      args, ways[i].format);
        free(fo);
        free(po);
        if (ways[i].workers[0] == '2')
            replays_and_verifies(tu_path(t, "f"), ways[i].format);
        free(ferr);
        tu_output_free(&o);
        tu_rmtree(t);
        free(t);
    }
}
END_TEST

START_TEST(online_commands_have_help_and_reject_bad_usage)
{
    tu_output o;
    tu_rnr(&o, (const char *[]){ "follow", "--help", NULL });
    ck_assert_msg(o.status == 0 && strstr(o.out, "usage: rnr follow"), "%s", o.out);
    tu_output_free(&o);
    char racy[4200];
    snprintf(racy, sizeof racy, "%s/racy", tu_env("RNR_GUEST_DIR"));
    struct { const char *args[10]; const char *want; } cases[] = {
        { { "follow", NULL }, "missing --listen" },
        { { "follow", "--listen", "0", "-", NULL }, "both name" },
        { { "follow", "--listen", "x:99999", NULL }, "not a port number" },
        { { "follow", "--timeout", "0", "-", NULL }, "--timeout" },
        { { "record", "--stream-format", "adaptive", "--stream", "-", "--", "x", NULL },
          "needs --adaptive POLICY" },
        { { "record", "--adaptive", "bandwidth:1000", "--stream", "-", "--", "x", NULL },
          "needs --stream HOST:PORT|- --stream-format adaptive" },
        { { "record", "--adaptive", "lag:5", "--stream", "-", "--stream-format", "adaptive", "--",
            "x", NULL }, "a pipe (--stream -) does not carry" },
        { { "record", "--adaptive", "speed:5", "--stream", "-", "--stream-format", "adaptive", "--",
            "x", NULL }, "unknown policy" },
        { { "record", "--stream-format", "serial", "--stream", "-", "--", "x", NULL },
          "wants maxpar, stitched or adaptive" },
        { { "record", "--stream-format", "maxpar", "--", "x", NULL }, "need --stream" },
        { { "record", "--stream", "nocolon", "--", racy, NULL }, "not HOST:PORT" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_rnr(&o, cases[i].args);
        ck_assert_msg(o.status == 2 && strstr(o.err, cases[i].want), "case %zu: %d '%s' lacks '%s'",
                      i, o.status, o.err, cases[i].want);
        tu_output_free(&o);
    }
}
END_TEST

TU_SUITE(online)
{
    Suite *s = suite_create("online");
    TCase *tc = tu_tcase(s, "online", 120);
    tcase_add_test(tc, online_commands_have_help_and_reject_bad_usage);
    tcase_add_test(tc, online_follower_replays_maxpar_and_stitched_over_tcp_on_1_and_2_workers);
    tcase_add_test(tc, online_follower_replays_a_stream_through_a_pipe);
    tcase_add_test(tc, online_follower_replays_execve_while_the_primary_records);
    tcase_add_test(tc, online_follower_replays_processes_while_the_primary_records);
    tcase_add_test(tc, online_follower_refuses_damaged_exec_blocks);
    tcase_add_test(tc, online_follower_finds_a_tampered_stream);
    tcase_add_test(tc, online_follower_stops_at_the_first_chunk_that_diverges);
    tcase_add_test(tc, online_follower_stops_soon_after_the_primary_is_killed);
    tcase_add_test(tc, online_primary_finishes_its_bundle_when_the_follower_is_killed);
    tcase_add_test(tc, online_primary_drops_the_stream_of_a_follower_that_does_not_read);
    tcase_add_test(tc, online_follower_refuses_garbage_another_version_and_a_second_primary);
    tcase_add_test(tc, online_adaptive_stream_is_the_offline_adaptive_log);
    tcase_add_test(tc, online_adaptive_lag_policy_follows_the_acknowledgements);
    tc = tu_tcase(s, "workloads", 120);
    tcase_add_loop_test(tc, online_follower_replays_every_threaded_workload, 0, (int)tu_threaded_count);
    return s;
}
