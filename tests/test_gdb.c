/* tests/test_gdb.c: the gdb server on a replay (debugger/), end to end:
 * the real gdb-multiarch in batch mode against `rnr debug` on a recording
 * of racy (threads incrementing a shared counter without a lock), for each
 * of the four formats: a breakpoint on a function and a global printed;
 * info threads listing the live threads with their cpu and chunk; a write
 * watchpoint stopping at each write with the writing thread named (the
 * thread the replay says runs); continuing to the end verifying the
 * replay. And the protocol alone, over a socket to `rnr replay --gdb
 * 127.0.0.1:0`: malformed, unknown, out-of-order and refused packets get
 * error or empty replies, the server never crashes or hangs, and a
 * detach ends it with status 0. Skipped, with a note, without
 * gdb-multiarch. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/testutil.h"

#define GDB "/usr/bin/gdb-multiarch"

static const char *const formats[] = {"maxpar", "stitched", "serial", "stserial"};

static int have_gdb(void)
{
    if (access(GDB, X_OK) == 0)
        return 1;
    fprintf(stderr, "test_gdb: skipped: %s is not installed (tools/install-deps installs it)\n", GDB);
    return 0;
}

/* racy (3 threads, 200 increments each) recorded once for the suite with
 * the four final logs (the sessions only read it): the bundle's path. */
static char *racy_tmp, *racy_dir;

static void record_racy(void)
{
    racy_tmp = tu_tmpdir();
    racy_dir = strdup(tu_path(racy_tmp, "b"));
    static const char *const opts[] = {"-n", "4", "--backend", NULL};
    static const char *const args[] = {"3", "200", NULL};
    tu_output o;
    tu_record(&o, racy_dir, "racy", opts, args);
    ck_assert_msg(o.status == 0, "record: %d %s", o.status, o.err);
    tu_output_free(&o);
}

static void remove_racy(void)
{
    if (racy_tmp)
        tu_rmtree(racy_tmp);
    free(racy_tmp);
    free(racy_dir);
    racy_tmp = racy_dir = NULL;
}

/* Runs rnr with ARGV (after "rnr") with its output in *O; the process and
 * what it execs end by SIGALRM after 120 s, gdb by the end of its
 * connection then. */
static void run_rnr(const char *const *argv, tu_output *o)
{
    char *tmp = tu_tmpdir();
    char outp[4096], errp[4096];
    snprintf(outp, sizeof outp, "%s/out", tmp);
    snprintf(errp, sizeof errp, "%s/err", tmp);
    const char *av[128];
    size_t n = 0;
    av[n++] = tu_rnr_bin();
    for (size_t i = 0; argv[i]; i++) {
        ck_assert_msg(n < 127, "too many arguments for rnr");
        av[n++] = argv[i];
    }
    av[n] = NULL;
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0)
            _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        alarm(120);
        execv(av[0], (char *const *)av);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    memset(o, 0, sizeof *o);
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    o->out = (char *)tu_read_file(outp, &o->out_len);
    o->err = (char *)tu_read_file(errp, &o->err_len);
    tu_rmtree(tmp);
    free(tmp);
}

/* rnr debug --format F [OPTS...] DIR -- -batch -nx -ex CMD... (OPTS and
 * CMDS NULL-terminated; OPTS may be NULL). */
static void debug_with(const char *dir, const char *format, const char *const *opts,
                       const char *const *cmds, tu_output *o)
{
    const char *av[80] = {"debug", "--format", format};
    size_t n = 3;
    for (size_t i = 0; opts && opts[i] && n < 10; i++)
        av[n++] = opts[i];
    av[n++] = dir;
    av[n++] = "--";
    av[n++] = "-batch";
    av[n++] = "-nx";
    for (size_t i = 0; cmds[i]; i++) {
        ck_assert_msg(n < 76, "too many gdb commands");
        av[n++] = "-ex";
        av[n++] = cmds[i];
    }
    av[n] = NULL;
    run_rnr(av, o);
}

static void debug(const char *dir, const char *format, const char *const *cmds, tu_output *o)
{
    debug_with(dir, format, NULL, cmds, o);
}

/* gdb prints the target's console output (monitor, the replay's verdict)
 * on stderr in batch mode: either stream will do. */
static void expect(const tu_output *o, const char *what, const char *format)
{
    ck_assert_msg(strstr(o->out, what) != NULL || strstr(o->err, what) != NULL, "%s: '%s' not in gdb's output:\n%s\nstderr:\n%s",
                  format, what, o->out, o->err);
}

START_TEST(gdb_breaks_on_a_function_and_prints_a_global)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    static const char *const cmds[] = {"break worker", "continue", "print iters", "print counter",
                                       "bt 1", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "hit Breakpoint 1, worker (", f);
    expect(&o, "$1 = 200", f);
    expect(&o, "$2 = 0", f);    /* no worker has run its loop yet */
    expect(&o, "#0  worker (", f);
    ck_assert_msg(o.status == 0, "%s: rnr debug exit %d: %s", f, o.status, o.err);
    tu_output_free(&o);
}
END_TEST

/* execer executes itself, then a copy of argenv: with a breakpoint on
 * main armed in memory across each execve, gdb is told of every exec,
 * loads the new program (the bundle's copy) and stops at each program's
 * main, argenv's with argenv's source; the breakpoints armed in the old
 * program go with it, and the replay verifies (written back into the new
 * program, they made the final state differ). Every format. */
START_TEST(gdb_follows_execve_into_the_new_program)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i];
    char *tmp = tu_tmpdir(), *dir = strdup(tu_path(tmp, "b")), *prog = strdup(tu_path(tmp, "argenv"));
    size_t n;
    uint8_t *bin = tu_read_file(tu_path(tu_env("RNR_GUEST_DIR"), "argenv"), &n);
    tu_write_file(prog, bin, n);
    free(bin);
    ck_assert_int_eq(chmod(prog, 0755), 0);
    static const char *const opts[] = {"-n", "2", "--backend", NULL};
    const char *args[] = {"1", prog, "a", NULL};
    tu_output o;
    tu_record(&o, dir, "execer", opts, args);
    ck_assert_msg(o.status == 0, "record: %d %s", o.status, o.err);
    tu_output_free(&o);
    static const char *const cmds[] = {"break main", "continue", "continue", "continue", "bt 1",
                                       "continue", "continue", NULL};
    debug(dir, f, cmds, &o);
    expect(&o, "is executing new program: ", f);
    expect(&o, "/programs/", f);
    expect(&o, "main (argc=2, argv=", f);
    expect(&o, "argenv.c:", f);
    expect(&o, "replay verified", f);
    ck_assert_msg(!strstr(o.out, "differs") && !strstr(o.err, "differs"), "%s: %s%s", f, o.out, o.err);
    ck_assert_msg(o.status == 0, "%s: rnr debug exit %d: %s", f, o.status, o.err);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
    free(prog);
}
END_TEST

START_TEST(gdb_info_threads_lists_the_live_threads_with_cpu_and_chunk)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* The third worker's start: the main thread and three workers live
     * (each worker runs 200 iterations of a dozen instructions, far
     * longer than the creation of the next). */
    static const char *const cmds[] = {"break worker", "ignore 1 2", "continue", "info threads",
                                       NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "hit Breakpoint 1, worker (", f);
    for (int t = 1000; t <= 1003; t++) {
        char want[64];
        snprintf(want, sizeof want, "Thread %d (cpu ", t);
        expect(&o, want, f);
    }
    expect(&o, " chunk ", f);
    ck_assert_msg(strstr(o.out, "Thread 1004") == NULL, "%s: a thread that never was:\n%s", f, o.out);
    tu_output_free(&o);
}
END_TEST

/* The tid in "thread TID" after AFTER in S, or -1. */
static long tid_after(const char *s, const char *after)
{
    const char *p = strstr(s, after);
    return p ? strtol(p + strlen(after), NULL, 10) : -1;
}

START_TEST(gdb_write_watchpoint_stops_at_each_write_naming_the_writer)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    static const char *const cmds[] = {
        "watch counter", "continue", "echo @first\\n", "thread", "monitor when",
        "continue", "echo @second\\n", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "Hardware watchpoint 1: counter", f);
    /* gdb reads the new value at the stop: the store had retired. */
    expect(&o, "Old value = 0\nNew value = 1", f);
    expect(&o, "Old value = 1\nNew value = 2", f);
    /* gdb's current thread is the one the replay ran when the store
     * retired, and a worker, not main. */
    const char *first = strstr(o.out, "@first");
    ck_assert_msg(first != NULL, "%s: %s", f, o.out);
    long gdb_tid = tid_after(first, "(Thread ");
    long rnr_tid = tid_after(o.err, "), thread ");   /* monitor when, on stderr */
    ck_assert_msg(gdb_tid > 1000 && gdb_tid == rnr_tid, "%s: gdb says thread %ld, the replay %ld:\n%s",
                  f, gdb_tid, rnr_tid, o.out);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_continue_to_the_end_verifies_the_replay)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* Reading state on the way (registers, memory, threads) changes
     * nothing the final checks compare. */
    static const char *const cmds[] = {"break worker", "continue", "info registers", "x/64xg $sp",
                                       "info threads", "delete", "continue", "echo @stop\n",
                                       "continue", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "rnr: replay verified", f);
    /* The first continue stops before the process exits (so that gdb can
     * go back from there), the second one ends it. */
    const char *mark = strstr(o.out, "@stop\n"), *hist = strstr(o.out, "No more reverse-execution history"),
               *exited = strstr(o.out, "exited normally");
    ck_assert_msg(mark && hist && hist < mark && exited > mark, "%s: %s\n%s", f, o.out, o.err);
    expect(&o, "racy: threads 3 counter", f);  /* the guest's stdout, as recorded */
    ck_assert_msg(strstr(o.err, "rnr debug: replay verified") != NULL, "%s: %s", f, o.err);
    ck_assert_msg(o.status == 0, "%s: exit %d", f, o.status);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_finish_steps_over_a_breakpoint_other_threads_also_hit)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* gdb steps over a breakpoint with only the stopped thread resumed;
     * the replay runs the other threads' chunks in between, and their hits
     * of the same breakpoint must not be reported to gdb then (it asserts). */
    static const char *const cmds[] = {"break racy.c:19 if v == 5", "continue", "print v",
                                       "finish", "delete", "continue", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "$1 = 5", f);    /* a local, as the condition saw it */
    expect(&o, "in start_thread ()", f);
    expect(&o, "Value returned is $2 = (void *) 0x0", f);
    ck_assert_msg(strstr(o.out, "internal-error") == NULL && strstr(o.err, "internal-error") == NULL,
                  "%s: %s\n%s", f, o.out, o.err);
    expect(&o, "rnr: replay verified", f);
    tu_output_free(&o);
}
END_TEST

/* The text between "@NAME\n" and the next '@' (or the end) in S (owned). */
static char *section(const char *s, const char *name)
{
    char mark[64];
    snprintf(mark, sizeof mark, "@%s\n", name);
    const char *p = strstr(s, mark);
    if (!p)
        return strdup("");
    p += strlen(mark);
    const char *e = strchr(p, '@');
    return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

/* The Nth "chunk C:I" of monitor when in S (into OUT). */
static void nth_chunk(const char *s, int n, char *out, size_t len)
{
    const char *p = s;
    out[0] = 0;
    for (int i = 0; i <= n && p; i++) {
        p = strstr(p, ", chunk ");
        if (!p)
            return;
        p += 8;
        if (i == n)
            snprintf(out, len, "%.*s", (int)strcspn(p, " "), p);
    }
}

START_TEST(gdb_reverse_stepi_lands_where_a_forward_replay_stopped)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* 120 instructions of the worker cross the end of its chunk (it has
     * about 80 left at the breakpoint); the registers after stepping back
     * over them are the ones a forward replay had there. */
    static const char *const cmds[] = {
        "break worker", "continue", "stepi 2", "monitor when", "echo @fwd\n", "info registers",
        "echo @x\n", "stepi 120", "monitor when", "reverse-stepi 120", "echo @back\n",
        "info registers", "echo @y\n", "monitor when", NULL};
    /* Checkpoints every 50 instructions (at chunk boundaries): going back
     * restores them, several times. */
    static const char *const opts[] = {"--checkpoint-interval", "50", NULL};
    tu_output o;
    debug_with(dir, f, opts, cmds, &o);
    char *fwd = section(o.out, "fwd"), *back = section(o.out, "back");
    ck_assert_msg(strstr(fwd, "pc ") && strstr(fwd, "a5 "), "%s: %s\n%s", f, o.out, o.err);
    ck_assert_msg(strcmp(fwd, back) == 0, "%s: forward:\n%s\nback:\n%s", f, fwd, back);
    char c0[32], c1[32], c2[32];
    nth_chunk(o.err, 0, c0, sizeof c0);
    nth_chunk(o.err, 1, c1, sizeof c1);
    nth_chunk(o.err, 2, c2, sizeof c2);
    ck_assert_msg(c0[0] && strcmp(c0, c1) != 0 && strcmp(c0, c2) == 0,
                  "%s: chunks %s, %s, %s: no chunk boundary crossed and back:\n%s", f, c0, c1, c2, o.err);
    free(fwd);
    free(back);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_reverse_continue_stops_at_the_last_write_and_who_wrote_agrees)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    static const char *const cmds[] = {
        "watch counter", "continue", "continue", "continue",
        "eval \"monitor who-wrote %p 8\", &counter",
        "reverse-continue", "echo @at\n", "x/i $pc", "print counter", "monitor when", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    expect(&o, "Old value = 2\nNew value = 3", f);
    /* Backwards, the third write is undone: gdb stops on it, where
     * monitor who-wrote said it was. */
    expect(&o, "Old value = 3\nNew value = 2", f);
    char *at = section(o.out, "at");
    ck_assert_msg(strstr(at, "\tsd\t") || strstr(at, "\tc.sd\t"), "%s: not at a store:\n%s", f, at);
    ck_assert_msg(strstr(at, "$1 = 2"), "%s: %s", f, at);
    long long who = -1;
    const char *w = strstr(o.err, "was last written before instruction");
    if (w) {
        const char *q = strstr(w, ", instruction ");
        who = q ? strtoll(q + 14, NULL, 10) : -1;
    }
    long long when;
    const char *lw = strstr(o.err, "\ninstruction ");
    for (const char *q = lw; q; q = strstr(q + 1, "\ninstruction "))
        lw = q;
    when = lw ? strtoll(lw + 13, NULL, 10) : -1;
    ck_assert_msg(who > 0 && who == when, "%s: who-wrote says %lld, the reverse stop is at %lld:\n%s",
                  f, who, when, o.err);
    free(at);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_reverse_continue_to_a_breakpoint_stops_at_its_previous_hit)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    static const char *const cmds[] = {
        "break worker", "continue", "continue", "monitor when", "continue", "monitor when",
        "reverse-continue", "monitor when", "continue", "monitor when", NULL};
    tu_output o;
    debug(dir, f, cmds, &o);
    /* The monitor lines: the second hit, the third, back to the second,
     * forward to the third again. */
    long long at[4] = {-1, -1, -1, -1};
    const char *p = o.err;
    for (int i = 0; i < 4 && p; i++) {
        p = strstr(p, "instruction ");
        while (p && p != o.err && p[-1] != '\n')
            p = strstr(p + 1, "instruction ");
        if (p) {
            at[i] = strtoll(p + 12, NULL, 10);
            p++;
        }
    }
    ck_assert_msg(at[0] > 0 && at[1] > at[0] && at[2] == at[0] && at[3] == at[1],
                  "%s: hits at %lld, %lld, back at %lld, forward at %lld:\n%s", f, at[0], at[1],
                  at[2], at[3], o.err);
    tu_output_free(&o);
}
END_TEST


/* The value of register NAME in gdb's "info registers" text S, or -1. */
static long long reg_value(const char *s, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(s, key);
    if (!p && strncmp(s, key + 1, strlen(key + 1)) == 0)
        p = s - 1;
    return p ? strtoll(p + strlen(key), NULL, 0) : -1;
}

START_TEST(gdb_reverse_stepi_across_a_system_call_lands_where_a_forward_replay_stopped)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* glibc's __brk: mv, li a7,214, then the ecall; 3 more cross the
     * call (its result in a0), 3 back must give the registers a forward
     * replay had before it. */
    static const char *const cmds[] = {
        "break *__brk", "continue", "stepi 2", "echo @fwd\n", "info registers", "echo @ecall\n",
        "x/i $pc", "echo @y\n", "stepi 3", "echo @mid\n", "info registers", "echo @z\n",
        "reverse-stepi 3", "echo @back\n", "info registers", "echo @w\n", NULL};
    static const char *const opts[] = {"--checkpoint-interval", "200", NULL};
    tu_output o;
    debug_with(dir, f, opts, cmds, &o);
    char *fwd = section(o.out, "fwd"), *back = section(o.out, "back"), *mid = section(o.out, "mid"),
         *ecall = section(o.out, "ecall");
    ck_assert_msg(strstr(ecall, "ecall"), "%s: not at the system call:\n%s\n%s", f, o.out, o.err);
    ck_assert_msg(reg_value(fwd, "a7") == 214 && reg_value(mid, "a0") != reg_value(fwd, "a0"),
                  "%s: the write's result not seen:\n%s\n%s", f, fwd, mid);
    ck_assert_msg(strcmp(fwd, back) == 0, "%s: forward:\n%s\nback:\n%s", f, fwd, back);
    free(fwd);
    free(back);
    free(mid);
    free(ecall);
    tu_output_free(&o);
}
END_TEST

/* The number after KEY in S (the last occurrence when LAST), or -1. */
static long long number_after(const char *s, const char *key, int last)
{
    const char *p = strstr(s, key), *q;
    while (last && p && (q = strstr(p + 1, key)))
        p = q;
    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

START_TEST(gdb_checkpoint_restore_equals_forward_state)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* A point K in a worker, reached forward: registers and the stack.
     * Then on to the end (past many checkpoints, thinned to 3) and back to
     * K with monitor goto, and to the manual checkpoint taken at K with
     * monitor restart: the same state each time, and the replay still
     * verified at its end. */
    static const char *const cmds[] = {
        "break racy.c:19 if v == 150", "continue", "monitor checkpoint", "echo @fwd\n",
        "info registers", "x/16xg $sp", "print counter", "echo @x\n", "monitor when", "delete",
        "continue", "monitor checkpoints", "eval \"monitor goto %lld\", $k",
        "maint flush register-cache", "echo @goto\n", "info registers", "x/16xg $sp",
        "print counter", "echo @y\n", "eval \"monitor restart %d\", $ck", "maint flush register-cache",
        "echo @restart\n", "info registers", "x/16xg $sp", "print counter", "echo @z\n",
        "continue", "continue", NULL};
    static const char *const opts[] = {"--checkpoint-interval", "1000", "--checkpoints", "3", NULL};
    /* gdb cannot read the monitor's answers into variables: a first run
     * finds K and the checkpoint's number, a second one uses them. */
    tu_output o0;
    static const char *const probe[] = {"break racy.c:19 if v == 150", "continue",
                                        "monitor checkpoint", "monitor when", NULL};
    debug_with(dir, f, opts, probe, &o0);
    long long k = number_after(o0.err, "\ninstruction ", 0);
    long long ck = number_after(o0.err, "checkpoint ", 0);
    ck_assert_msg(k > 0 && ck > 0, "%s: %s\n%s", f, o0.out, o0.err);
    tu_output_free(&o0);
    char setk[64], setck[64];
    snprintf(setk, sizeof setk, "set $k = %lld", k);
    snprintf(setck, sizeof setck, "set $ck = %lld", ck);
    const char *all[64] = {setk, setck};
    size_t n = 2;
    for (size_t i = 0; cmds[i]; i++)
        all[n++] = cmds[i];
    all[n] = NULL;
    tu_output o;
    debug_with(dir, f, opts, all, &o);
    char *fwd = section(o.out, "fwd"), *back = section(o.out, "goto"), *rs = section(o.out, "restart");
    ck_assert_msg(strstr(fwd, "pc ") && strstr(fwd, "$1 = "), "%s: %s\n%s", f, o.out, o.err);
    /* gdb numbers its values: drop "$N = " before comparing. */
    char *p;
    while ((p = strstr(back, "$2 = ")))
        p[1] = '1';
    while ((p = strstr(rs, "$3 = ")))
        p[1] = '1';
    ck_assert_msg(strcmp(fwd, back) == 0, "%s: forward:\n%s\nmonitor goto:\n%s", f, fwd, back);
    ck_assert_msg(strcmp(fwd, rs) == 0, "%s: forward:\n%s\nmonitor restart:\n%s", f, fwd, rs);
    /* Thinned: the start, the manual one and at most 3 automatic ones, of
     * the dozens taken. */
    long long listed;
    const char *l = strstr(o.err, " checkpoints (every 1000 instructions");
    while (l && l > o.err && l[-1] != '\n')
        l--;
    listed = l ? strtoll(l, NULL, 10) : -1;
    ck_assert_msg(listed >= 4 && listed <= 5, "%s: %lld checkpoints listed:\n%s", f, listed, o.err);
    expect(&o, "rnr: replay verified", f);
    expect(&o, "exited normally", f);
    /* The guest's output printed once, whatever ran again (or was forked
     * with it buffered). */
    int printed = 0;
    for (const char *q = o.out; (q = strstr(q, "racy: threads")); q++)
        printed++;
    ck_assert_msg(printed == 1, "%s: the guest's output printed %d times", f, printed);
    free(fwd);
    free(back);
    free(rs);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_goto_chunk_stands_at_the_chunks_first_instruction)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* monitor chunks names the chunk in progress at a breakpoint ("> ")
     * with its first instruction; after going on to the end, goto-chunk
     * of it stands there, none of it done. */
    static const char *const probe[] = {"break worker", "continue", "continue", "monitor chunks",
                                        NULL};
    tu_output o0;
    debug(dir, f, probe, &o0);
    const char *cur = strstr(o0.err, "\n> ");
    ck_assert_msg(cur != NULL, "%s: no chunk in progress listed:\n%s", f, o0.err);
    unsigned long long seq, idx, cs, first;
    unsigned cpu, tid;
    ck_assert_msg(sscanf(cur, "\n> %llu %u:%llu %u %llu %llu", &seq, &cpu, &idx, &tid, &cs,
                         &first) == 6, "%s: %s", f, cur);
    /* Its lane's previous chunk is its first predecessor. */
    char pred[64];
    snprintf(pred, sizeof pred, "%llu  %u:%llu", first, cpu, idx - 1);
    ck_assert_msg(idx == 0 || strstr(cur, pred) != NULL, "%s: '%s' not in\n%s", f, pred, cur);
    tu_output_free(&o0);
    char go[64], want[128];
    snprintf(go, sizeof go, "monitor goto-chunk %u:%llu", cpu, idx);
    snprintf(want, sizeof want, "instruction %llu, chunk %u:%llu (log chunk %llu, 0 of its %llu "
             "instructions done), thread %u", first, cpu, idx, seq, cs, tid);
    const char *cmds[] = {"delete", "continue", go, "monitor when", NULL};
    static const char *const opts[] = {"--checkpoint-interval", "1000", NULL};
    tu_output o;
    debug_with(dir, f, opts, cmds, &o);
    expect(&o, want, f);
    tu_output_free(&o);
}
END_TEST

START_TEST(gdb_reverse_continue_from_the_end_stops_at_the_last_write)
{
    if (!have_gdb())
        return;
    const char *f = formats[_i], *dir = racy_dir;
    /* From the end of the replay (verified), a watchpoint going back stops
     * on the last store to counter, which leaves the value the guest
     * printed, and where who-wrote (asked at the end) says. */
    static const char *const cmds[] = {
        "continue", "eval \"monitor who-wrote %p 8\", &counter", "watch counter",
        "reverse-continue", "echo @at\n", "x/i $pc", "echo @x\n", "monitor when", NULL};
    static const char *const opts[] = {"--checkpoint-interval", "1000", NULL};
    tu_output o;
    debug_with(dir, f, opts, cmds, &o);
    expect(&o, "rnr: replay verified", f);
    long long printed = number_after(o.out, "counter ", 0);
    char old[64];
    snprintf(old, sizeof old, "Old value = %lld\n", printed);
    ck_assert_msg(printed > 0 && strstr(o.out, old), "%s: '%s' not in\n%s", f, old, o.out);
    char *at = section(o.out, "at");
    ck_assert_msg(strstr(at, "\tsd\t") || strstr(at, "\tc.sd\t"), "%s: not at a store:\n%s", f, at);
    const char *w = strstr(o.err, "was last written before instruction");
    long long who = w ? number_after(w, ", instruction ", 0) : -1;
    long long when = number_after(o.err, "\ninstruction ", 1);
    ck_assert_msg(who > 0 && who == when, "%s: who-wrote says %lld, the reverse stop is at %lld:\n%s",
                  f, who, when, o.err);
    free(at);
    tu_output_free(&o);
}
END_TEST


START_TEST(gdb_watchpoint_sees_a_system_calls_write)
{
    if (!have_gdb())
        return;
    /* pipes: main reads what a writer thread sends into a stack buffer.
     * A watchpoint on its first byte stops right after the read's ecall
     * (forward), and going back from the second read stops at the ecall
     * of that read, where who-wrote (asked there) says. */
    char *tmp = tu_tmpdir();
    char *dir = strdup(tu_path(tmp, "p"));
    static const char *const ropts[] = {"-n", "2", "--backend", NULL};
    static const char *const rargs[] = {"20", NULL};
    tu_output r;
    tu_record(&r, dir, "pipes", ropts, rargs);
    ck_assert_msg(r.status == 0, "record: %d %s", r.status, r.err);
    tu_output_free(&r);
    static const char *const cmds[] = {
        "break pipes.c:50", "continue", "set $a = &buf[0]", "watch -l buf[0]", "continue",
        "echo @first\n", "x/i $pc-4", "echo @x\n", "continue", "echo @second\n", "x/i $pc-4",
        "eval \"monitor who-wrote %p 1\", $a", "echo @y\n", "reverse-continue", "echo @back\n",
        "x/i $pc", "echo @z\n", "monitor when", "delete", "continue", NULL};
    static const char *const opts[] = {"--checkpoint-interval", "100000", NULL};
    tu_output o;
    debug_with(dir, "stitched", opts, cmds, &o);
    char *first = section(o.out, "first"), *second = section(o.out, "second"),
         *back = section(o.out, "back");
    ck_assert_msg(strstr(first, "ecall") && strstr(second, "ecall") && strstr(back, "ecall"),
                  "not at the read's ecall:\n%s\n%s", o.out, o.err);
    /* The second read's write, undone backwards. */
    long long old2, new2;
    const char *sv = strstr(o.out, "@x\n");
    const char *ov = sv ? strstr(sv, "Old value = ") : NULL, *nv = sv ? strstr(sv, "New value = ") : NULL;
    old2 = ov ? strtoll(ov + 12, NULL, 10) : -1;
    new2 = nv ? strtoll(nv + 12, NULL, 10) : -1;
    const char *bv = strstr(o.out, "@y\n");
    const char *bo = bv ? strstr(bv, "Old value = ") : NULL, *bn = bv ? strstr(bv, "New value = ") : NULL;
    ck_assert_msg(ov && nv && bo && bn && old2 != new2 && strtoll(bo + 12, NULL, 10) == new2 &&
                  strtoll(bn + 12, NULL, 10) == old2, "values:\n%s", o.out);
    const char *w = strstr(o.err, "was last written before instruction");
    long long who = w ? number_after(w, ", instruction ", 0) : -1;
    long long when = number_after(o.err, "\ninstruction ", 0);
    if (when < 0 && strncmp(o.err, "instruction ", 12) == 0)
        when = strtoll(o.err + 12, NULL, 10);
    ck_assert_msg(who > 0 && who == when, "who-wrote says %lld, the reverse stop is at %lld:\n%s", who,
                  when, o.err);
    expect(&o, "rnr: replay verified", "stitched");
    free(first);
    free(second);
    free(back);
    tu_output_free(&o);
    tu_rmtree(tmp);
    free(tmp);
    free(dir);
}
END_TEST

START_TEST(gdb_monitor_diverge_is_refused_and_help_lists_the_commands)
{
    if (!have_gdb())
        return;
    static const char *const cmds[] = {"monitor diverge", "monitor help", "monitor restart 99",
                                       "continue", "continue", NULL};
    tu_output o;
    debug(racy_dir, "stitched", cmds, &o);
    expect(&o, "diverge: refused", "stitched");
    expect(&o, "goto-chunk CPU:N", "stitched");
    expect(&o, "usage: monitor restart N", "stitched");
    expect(&o, "rnr: replay verified", "stitched");
    tu_output_free(&o);
}
END_TEST

/* ---- the protocol, over a socket ---- */

typedef struct conn {
    int fd;
    char buf[70000];
    size_t n;
} conn;

static void send_raw(conn *c, const char *s, size_t n)
{
    ck_assert(send(c->fd, s, n, MSG_NOSIGNAL) == (ssize_t)n);
}

static void send_pkt(conn *c, const char *body)
{
    char frame[40000];
    unsigned sum = 0;
    for (const char *p = body; *p; p++)
        sum += (unsigned char)*p;
    int n = snprintf(frame, sizeof frame, "$%s#%02x", body, sum & 0xff);
    send_raw(c, frame, (size_t)n);
}

/* The next byte from the server; fails after 20 s of silence. */
static int next_byte(conn *c)
{
    struct pollfd pf = {c->fd, POLLIN, 0};
    ck_assert_msg(poll(&pf, 1, 20000) == 1, "the server did not answer within 20 s");
    char b;
    ssize_t k = recv(c->fd, &b, 1, 0);
    ck_assert_msg(k == 1, "the server closed the connection");
    return (unsigned char)b;
}

/* The next packet's body (acks before it skipped; '-' returned as "-"),
 * acknowledged when ACK. */
static const char *reply(conn *c, int ack)
{
    int b;
    while ((b = next_byte(c)) != '$')
        if (b == '-')
            return "-";
    c->n = 0;
    while ((b = next_byte(c)) != '#' && c->n + 1 < sizeof c->buf)
        c->buf[c->n++] = (char)b;
    c->buf[c->n] = 0;
    next_byte(c);
    next_byte(c);
    if (ack)
        send_raw(c, "+", 1);
    return c->buf;
}

/* A reply that is not console output ('O' and hex digits). */
static const char *answer(conn *c, int ack)
{
    const char *r;
    while ((r = reply(c, ack))[0] == 'O' && strcmp(r, "OK") != 0)
        ;
    return r;
}

/* Starts `rnr replay --gdb 127.0.0.1:0 --format maxpar` on the racy
 * bundle with its stderr on a pipe (*ERRFD, read end) and connects to the
 * port it prints; the server's pid in *PID. */
static conn *start_server(pid_t *pid, int *errfd)
{
    int errpipe[2];
    ck_assert(pipe(errpipe) == 0);
    *pid = fork();
    ck_assert(*pid >= 0);
    if (*pid == 0) {
        dup2(errpipe[1], 2);
        close(errpipe[0]);
        int fi = open("/dev/null", O_RDWR);
        dup2(fi, 0);
        dup2(fi, 1);
        alarm(60);
        execl(tu_rnr_bin(), tu_rnr_bin(), "replay", "--gdb", "127.0.0.1:0", "--format", "maxpar",
              racy_dir, (char *)NULL);
        _exit(127);
    }
    close(errpipe[1]);
    *errfd = errpipe[0];
    /* "rnr replay: listening for gdb on 127.0.0.1:PORT ..." */
    char line[4096];
    size_t n = 0;
    while (n + 1 < sizeof line) {
        struct pollfd pf = {errpipe[0], POLLIN, 0};
        ck_assert_msg(poll(&pf, 1, 20000) == 1, "no port printed");
        ssize_t k = read(errpipe[0], line + n, 1);
        ck_assert_msg(k == 1, "the server ended before listening");
        if (line[n++] == '\n')
            break;
    }
    line[n] = 0;
    const char *at = strstr(line, "127.0.0.1:");
    ck_assert_msg(at != NULL, "%s", line);
    int port = atoi(at + 10);
    ck_assert(port > 0);
    conn *c = calloc(1, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert(connect(c->fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    return c;
}

START_TEST(gdb_server_answers_bad_packets_with_errors_and_never_hangs)
{
    pid_t pid;
    int errfd;
    conn *c = start_server(&pid, &errfd);

    /* Noise between packets is ignored; a wrong checksum gets '-'. */
    send_raw(c, "xyz", 3);
    send_raw(c, "$g#00", 5);
    ck_assert_str_eq(reply(c, 1), "-");
    send_pkt(c, "?");
    ck_assert_str_eq(answer(c, 1), "T05thread:3e8;");
    /* Back from the start: the start. */
    send_pkt(c, "bs");
    ck_assert_str_eq(answer(c, 1), "T05replaylog:begin;thread:3e8;");
    /* Malformed known packets: E01. */
    static const char *const bad[] = {
        "mzz,4", "m100", "m10,", "Z9,100,4", "Z0,100", "z2,,4", "Hgxyz", "Hq1", "p", "p99999",
        "vCont;x", "vCont;s:zz", "vCont", "qRcmd,6", "qRcmd,zz", "qThreadExtraInfo,", "c100",
        "qXfer:features:read:target.xml:0", "Tzz", "?1", "gx",
        /* Writes: a replay refuses them. */
        "G00", "P1=00", "M1000,1:00", "X1000,0:",
        /* Threads that do not exist. */
        "Hg4d2", "T4d2",
        /* Registers that do not exist. */
        "p41", "p45",
        /* Not a reverse command. */
        "bx", "bcc",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        send_pkt(c, bad[i]);
        const char *r = answer(c, 1);
        ck_assert_msg(r[0] == 'E', "'%s' answered '%s'", bad[i], r);
    }
    /* Unmapped memory. */
    send_pkt(c, "mffffffffffff0000,10");
    ck_assert_str_eq(answer(c, 1), "E14");
    /* Unknown packets: empty. */
    send_pkt(c, "vMustReplyEmpty");
    ck_assert_str_eq(answer(c, 1), "");
    send_pkt(c, "qTStatus");
    ck_assert_str_eq(answer(c, 1), "");
    /* Too long: E01, and the server goes on. */
    char *big = malloc(20001);
    memset(big, 'a', 20000);
    big[0] = 'q';
    big[20000] = 0;
    send_pkt(c, big);
    free(big);
    ck_assert_str_eq(answer(c, 1), "E01");
    /* A packet cut by the next '$' is dropped. */
    send_raw(c, "$m0,", 4);
    send_pkt(c, "qC");
    ck_assert_str_eq(answer(c, 1), "QC3e8");
    /* What works. */
    send_pkt(c, "qSupported:multiprocess+;swbreak+");
    ck_assert(strstr(answer(c, 1), "qXfer:features:read+") != NULL);
    send_pkt(c, "qXfer:features:read:target.xml:0,3fff");
    const char *x = answer(c, 1);
    ck_assert_msg(x[0] == 'l' && strstr(x, "org.gnu.gdb.riscv.cpu") && strstr(x, "org.gnu.gdb.riscv.fpu"),
                  "%.200s", x);
    send_pkt(c, "qXfer:features:read:other.xml:0,100");
    ck_assert(answer(c, 1)[0] == 'E');
    send_pkt(c, "QStartNoAckMode");
    ck_assert_str_eq(answer(c, 1), "OK");
    send_pkt(c, "g");
    ck_assert_uint_eq(strlen(answer(c, 0)), 2 * (65 * 8 + 3 * 4));
    send_pkt(c, "qfThreadInfo");
    ck_assert_str_eq(answer(c, 0), "m3e8");
    send_pkt(c, "qsThreadInfo");
    ck_assert_str_eq(answer(c, 0), "l");
    send_pkt(c, "qRcmd,7768656e");   /* monitor when */
    ck_assert(reply(c, 0)[0] == 'O');
    ck_assert_str_eq(answer(c, 0), "OK");
    send_pkt(c, "qRcmd,6e6f7065");   /* monitor nope */
    ck_assert_str_eq(answer(c, 0), "OK");
    /* Watchpoints of no bytes are refused. */
    send_pkt(c, "Z2,1000,0");
    ck_assert_str_eq(answer(c, 0), "E01");
    /* Out of order: a removal of what was never inserted, then continue
     * to the end, then packets after the end. */
    send_pkt(c, "z0,1234,4");
    ck_assert_str_eq(answer(c, 0), "OK");
    send_pkt(c, "vCont;c");
    /* Stopped before the exit (the verdict known), then the exit. */
    ck_assert_msg(strncmp(answer(c, 0), "T05replaylog:end;", 17) == 0, "%s", c->buf);
    send_pkt(c, "c");
    ck_assert_str_eq(answer(c, 0), "W00");
    send_pkt(c, "c");
    ck_assert_str_eq(answer(c, 0), "W00");
    send_pkt(c, "?");
    ck_assert_str_eq(answer(c, 0), "W00");
    send_pkt(c, "s");
    ck_assert_str_eq(answer(c, 0), "W00");
    send_pkt(c, "D");
    ck_assert_str_eq(answer(c, 0), "OK");
    close(c->fd);
    free(c);
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server status 0x%x", st);
    /* Its messages: the malformed packets and the refused writes named. */
    char rest[65536];
    ssize_t k = read(errfd, rest, sizeof rest - 1);
    rest[k > 0 ? k : 0] = 0;
    ck_assert_msg(strstr(rest, "malformed packet") && strstr(rest, "cannot change what was recorded") &&
                  strstr(rest, "replay verified"), "%s", rest);
    close(errfd);
}
END_TEST

START_TEST(gdb_server_survives_a_vanished_client)
{
    pid_t pid;
    int errfd;
    conn *c = start_server(&pid, &errfd);
    /* Half a packet, then gone: the server ends, unfinished, status 0. */
    send_raw(c, "$qSupp", 6);
    close(c->fd);
    free(c);
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server status 0x%x", st);
    char rest[4096];
    ssize_t k = read(errfd, rest, sizeof rest - 1);
    rest[k > 0 ? k : 0] = 0;
    ck_assert_msg(strstr(rest, "the replay was not finished"), "%s", rest);
    close(errfd);
}
END_TEST

TU_SUITE(gdb)
{
    Suite *s = suite_create("gdb");
    int nf = (int)(sizeof formats / sizeof formats[0]);
    TCase *tc = tu_tcase(s, "gdb", 90);
    tcase_add_unchecked_fixture(tc, record_racy, remove_racy);
    tcase_add_loop_test(tc, gdb_breaks_on_a_function_and_prints_a_global, 0, nf);
    tcase_add_loop_test(tc, gdb_info_threads_lists_the_live_threads_with_cpu_and_chunk, 0, nf);
    tcase_add_loop_test(tc, gdb_write_watchpoint_stops_at_each_write_naming_the_writer, 0, nf);
    tcase_add_loop_test(tc, gdb_continue_to_the_end_verifies_the_replay, 0, nf);
    tcase_add_loop_test(tc, gdb_finish_steps_over_a_breakpoint_other_threads_also_hit, 0, nf);
    tcase_add_loop_test(tc, gdb_reverse_stepi_lands_where_a_forward_replay_stopped, 0, nf);
    tcase_add_loop_test(tc, gdb_reverse_continue_stops_at_the_last_write_and_who_wrote_agrees, 0, nf);
    tcase_add_loop_test(tc, gdb_reverse_continue_to_a_breakpoint_stops_at_its_previous_hit, 0, nf);
    tcase_add_loop_test(tc, gdb_reverse_stepi_across_a_system_call_lands_where_a_forward_replay_stopped,
                        0, nf);
    tcase_add_loop_test(tc, gdb_checkpoint_restore_equals_forward_state, 1, 3);
    tcase_add_loop_test(tc, gdb_goto_chunk_stands_at_the_chunks_first_instruction, 0, 2);
    tcase_add_loop_test(tc, gdb_reverse_continue_from_the_end_stops_at_the_last_write, 1, 2);
    tcase_add_test(tc, gdb_watchpoint_sees_a_system_calls_write);
    tcase_add_loop_test(tc, gdb_follows_execve_into_the_new_program, 0, nf);
    tcase_add_test(tc, gdb_monitor_diverge_is_refused_and_help_lists_the_commands);
    tcase_add_test(tc, gdb_server_answers_bad_packets_with_errors_and_never_hangs);
    tcase_add_test(tc, gdb_server_survives_a_vanished_client);
    return s;
}
