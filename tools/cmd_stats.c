/* tools/cmd_stats.c: `rnr stats FILE|DIR`, sizes and counts of a log or of
 * every log in a recording bundle. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "backend/adaptive.h"
#include "backend/maxpar.h"
#include "backend/metrics.h"
#include "formats/dump.h"
#include "formats/bundle.h"
#include "backend/oracle.h"
#include "rru/alloc.h"
#include "tools/cli.h"
#include "tools/out.h"

const char cmd_stats_help[] =
    "usage: rnr stats [--format text|csv|json] [--token-latency CYCLES] [--cpus LIST]\n"
    "                 FILE|DIR\n"
    "DIR 'latest' is the latest recording of `rnr record` without -o (the\n"
    "link latest in $RNR_BUNDLE_DIR, default ./rnr-bundles).\n"
    "For a log FILE: its kind, records, threads, instructions, bytes (file,\n"
    "raw records, records compressed with zlib) and bits per kilo-instruction,\n"
    "one 'name: value' per line. For a recording bundle DIR: one row per log\n"
    "in it. Bits per kilo-instruction are 8000 x bytes / instructions, with\n"
    "the instructions of all threads (from the chunks themselves, or for the\n"
    "input log from the bundle's manifest). Definitions: docs/formats.md.\n"
    "Final logs (maxpar, stitched, serial, stserial) also get: entries, tokens,\n"
    "critical path (instructions on the longest path of the replay DAG), replay\n"
    "parallelism (instructions / critical path), and the simulated replay time in\n"
    "cycles on W = 1, 2, 4, ... up to the recorded CPU count replay CPUs at 1 IPC,\n"
    "a token taking --token-latency cycles (default 100) from sender to receiver\n"
    "(docs/backend.md, \"Metrics\"). --cpus LIST simulates on the replay CPU\n"
    "counts of LIST instead: numbers and ranges, e.g. 3 or 1,2,8 or 1-8 (each\n"
    "1..64, at most 16 in all), printed in that order as replay.cycles.wN (for a\n"
    "bundle: columns cycles.wN of the table).\n"
    "Logs that carry each chunk's recorded duration (format 4 on) also get the\n"
    "same simulation on the recorded timing, each chunk lasting as long as it\n"
    "took when recorded: critical_path.recorded (recorded cycles on the longest\n"
    "path) and replay.recorded.cycles.wN; for a bundle also the ratios to the\n"
    "recorded cycles, replay.ratio.wN (1 IPC) and replay.recorded.ratio.wN, in a\n"
    "table after the first. The durations' own bytes are bytes.duration, not\n"
    "part of bytes.raw or bytes.zlib.\n"
    "--format csv or json (any case; default text) prints the same figures under\n"
    "stable names, valid CSV with a header row or valid JSON: docs/formats.md,\n"
    "\"Stats output\". FILE may be '-' for standard input.\n"
    "Initial logs also get: chunks and instructions per CPU, the mean chunk\n"
    "size, the count of each termination reason, SV entries per chunk, and what\n"
    "MaxPar makes of the dependences (run in memory): tokens, Early ones (sent\n"
    "through the Early Token Vector), Unrelated ones discarded (their CPU never\n"
    "dumps a later chunk), ones dropped as implied by another, merged chunks.\n"
    "Adaptive logs (rnr backend --adaptive) get the final logs' figures and their\n"
    "phases: per phase K\n"
    "phase.K.format, .start (instructions before it in the replay order),\n"
    ".entries, .instructions, .tokens, .bytes.raw, .recorded_cycles, and\n"
    ".critical_path and .parallelism within the phase; for a bundle, a table.\n"
    "Input logs also get, per record type (syscall, mem, csr, start, sc, check):\n"
    "input.TYPE.records, input.TYPE.bytes.raw (the type's encoded records: the\n"
    "types add up to bytes.raw) and input.TYPE.bytes.zlib (the type's records\n"
    "compressed alone: an estimate of its cost, not a share of bytes.zlib); in\n"
    "a bundle also their bits per kilo-instruction, a table after the logs'.\n";

static uint64_t token_latency = 100;
/* --cpus: the replay CPU counts of the simulated replay (0 of them: the default list). */
static uint32_t sim_cpus[METRICS_MAX_W];
static uint32_t sim_ncpus;


static int is_final(uint32_t kind)
{
    return rnr_log_kind_is_chunks(kind) && kind != RNR_LOG_INITIAL;
}

static int final_metrics(const char *path, dag_metrics *m, char *err, size_t errlen)
{
    return metrics_compute_file(path, token_latency, METRICS_WINDOW, sim_cpus, sim_ncpus, m, err, errlen);
}

static void print_cycles(const dag_metrics *m)
{
    for (uint32_t i = 0; i < m->nw; i++) {
        char name[64];
        snprintf(name, sizeof name, "replay.cycles.w%u", m->workers[i]);
        OUT_U64(name, m->makespan[i]);
    }
}

/* The recorded-timing figures (logs with durations), and with the
 * bundle's RECORDED cycles (0: a lone file) the ratios of both models. */
static void print_recorded(const dag_metrics *m, uint64_t recorded)
{
    char name[64];
    if (recorded)
        for (uint32_t i = 0; i < m->nw; i++) {
            snprintf(name, sizeof name, "replay.ratio.w%u", m->workers[i]);
            OUT_F(name, 3, (double)m->makespan[i] / (double)recorded);
        }
    if (!m->recorded)
        return;
    OUT_U64("critical_path.recorded", m->critical_path_recorded);
    for (uint32_t i = 0; i < m->nw; i++) {
        snprintf(name, sizeof name, "replay.recorded.cycles.w%u", m->workers[i]);
        OUT_U64(name, m->makespan_recorded[i]);
    }
    if (recorded)
        for (uint32_t i = 0; i < m->nw; i++) {
            snprintf(name, sizeof name, "replay.recorded.ratio.w%u", m->workers[i]);
            OUT_F(name, 3, (double)m->makespan_recorded[i] / (double)recorded);
        }
}

static void print_metrics(const dag_metrics *m)
{
    OUT_U64("entries", m->chunks);
    OUT_U64("critical_path", m->critical_path);
    OUT_F("parallelism", 3, m->parallelism);
    OUT_U64("replay.token_latency", m->token_latency);
    print_cycles(m);
    print_recorded(m, 0);
}

static double bits_per_kinstr(uint64_t bytes, uint64_t instructions)
{
    return instructions ? 8000.0 * (double)bytes / (double)instructions : 0.0;
}

/* An input log's records by type: input.TYPE.records, .bytes.raw (the
 * encoded records: they add up to bytes.raw), .bytes.zlib (the type's
 * records compressed alone: an estimate of its part of bytes.zlib, not a
 * share of it) and, given the instructions N, bits per kilo-instruction. */
static void print_input_types(const rnr_log_summary *s, uint64_t n)
{
    char name[64];
    for (uint32_t t = 1; t <= RNR_IN_TYPE_MAX; t++) {
        const char *k = rnr_input_type_name(t);
        snprintf(name, sizeof name, "input.%s.records", k);
        OUT_U64(name, s->in_records[t]);
        snprintf(name, sizeof name, "input.%s.bytes.raw", k);
        OUT_U64(name, s->in_raw[t]);
        snprintf(name, sizeof name, "input.%s.bytes.zlib", k);
        OUT_U64(name, s->in_zlib[t]);
        if (n) {
            snprintf(name, sizeof name, "input.%s.bits_per_kinstr.raw", k);
            OUT_F(name, 3, bits_per_kinstr(s->in_raw[t], n));
            snprintf(name, sizeof name, "input.%s.bits_per_kinstr.zlib", k);
            OUT_F(name, 3, bits_per_kinstr(s->in_zlib[t], n));
        }
    }
}

/* The text of print_input_types: a table, one row per type. */
static void print_input_table(const rnr_log_summary *s, uint64_t n)
{
    printf("record types of the input log (bytes.zlib: each type's records compressed alone)\n");
    printf("%-10s %10s %12s %8s %12s %10s %10s\n", "type", "records", "bytes.raw", "raw.%",
           "bytes.zlib", "bpki.raw", "bpki.zlib");
    for (uint32_t t = 1; t <= RNR_IN_TYPE_MAX; t++)
        printf("%-10s %10" PRIu64 " %12" PRIu64 " %8.1f %12" PRIu64 " %10.3f %10.3f\n",
               rnr_input_type_name(t), s->in_records[t], s->in_raw[t],
               s->counts.raw_bytes ? 100.0 * (double)s->in_raw[t] / (double)s->counts.raw_bytes : 0.0,
               s->in_zlib[t], bits_per_kinstr(s->in_raw[t], n), bits_per_kinstr(s->in_zlib[t], n));
}

static void print_file(const char *path, const rnr_log_summary *s)
{
    uint32_t kind = s->header.kind;
    OUT_S("file", path);
    OUT_S("kind", rnr_log_kind_name(kind));
    OUT_U64("cpus", s->header.cpus);
    OUT_U64("msp", s->header.msp);
    OUT_U64("records", s->counts.records);
    OUT_U64("threads", s->threads);
    if (rnr_log_kind_is_chunks(kind))
        OUT_U64("instructions", s->instructions);
    OUT_U64("blocks", s->counts.blocks);
    OUT_U64("bytes.file", s->counts.stored_bytes);
    OUT_U64("bytes.raw", s->counts.raw_bytes);
    OUT_U64("bytes.zlib", s->zlib_bytes);
    if (s->counts.duration_bytes)
        OUT_U64("bytes.duration", s->counts.duration_bytes);
    if (rnr_log_kind_is_chunks(kind)) {
        OUT_F("bits_per_kinstr.raw", 3, bits_per_kinstr(s->counts.raw_bytes, s->instructions));
        OUT_F("bits_per_kinstr.zlib", 3, bits_per_kinstr(s->zlib_bytes, s->instructions));
    }
    if (kind == RNR_LOG_INITIAL)
        OUT_U64("sv_entries", s->sv_entries);
    if (rnr_log_kind_has_tokens(kind)) {
        OUT_U64("tokens", s->tokens);
        OUT_U64("tokens_awaited", s->tokens_awaited);
    }
    if (kind == RNR_LOG_INPUT) {
        OUT_U64("mem_bytes", s->mem_bytes);
        print_input_types(s, 0);
    }
}

static int discard_chunk(void *ctx, const rnr_final_chunk *c)
{
    (void)ctx;
    (void)c;
    return 0;
}

/* For an initial log: chunks and instructions per CPU, the mean chunk size,
 * the termination reasons, successor-vector entries, and what MaxPar (run
 * in memory, its output dropped) makes of the dependences. */
static int print_initial_details(const char *path, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return -1;
    const rnr_log_header *h = rnr_reader_header(r);
    uint32_t cpus = h->cpus;
    uint64_t *chunks = calloc(cpus, sizeof *chunks), *insns = calloc(cpus, sizeof *insns);
    uint64_t *busy = calloc(cpus, sizeof *busy);
    int durs = rnr_reader_has_durations(r);
    uint64_t reasons[RNR_END_REASON_COUNT] = {0}, total = 0, n = 0, sv = 0;
    maxpar *m = maxpar_new(cpus, h->msp, discard_chunk, NULL);
    rnr_initial_chunk c;
    int rc, failed = !chunks || !insns || !busy;
    while (!failed && (rc = rnr_reader_next_initial(r, &c)) == 1) {
        chunks[c.cpu]++;
        insns[c.cpu] += c.cs;
        busy[c.cpu] += c.dur;
        reasons[c.reason]++;
        total += c.cs;
        sv += c.nsv;
        n++;
        if (maxpar_add(m, &c) < 0) {
            snprintf(err, errlen, "%s: %s", path, maxpar_error(m));
            failed = 1;
        }
    }
    if (!failed && rc < 0 && !rnr_reader_truncated(r)) {
        snprintf(err, errlen, "%s", rnr_reader_error(r));
        failed = 1;
    }
    if (!failed && maxpar_finish(m) < 0) {
        snprintf(err, errlen, "%s: %s", path, maxpar_error(m));
        failed = 1;
    }
    if (!failed) {
        char name[64];
        for (uint32_t q = 0; q < cpus; q++) {
            if (out_is_text()) {
                printf("cpu.%u: %" PRIu64 " chunks, %" PRIu64 " instructions\n", q, chunks[q],
                       insns[q]);
                if (durs)
                    printf("cpu.%u.recorded_cycles: %" PRIu64 "\n", q, busy[q]);
                continue;
            }
            snprintf(name, sizeof name, "cpu.%u.chunks", q);
            OUT_U64(name, chunks[q]);
            snprintf(name, sizeof name, "cpu.%u.instructions", q);
            OUT_U64(name, insns[q]);
            if (durs) {
                snprintf(name, sizeof name, "cpu.%u.recorded_cycles", q);
                OUT_U64(name, busy[q]);
            }
        }
        OUT_F("mean_chunk_size", 1, n ? (double)total / (double)n : 0.0);
        for (uint32_t k = 0; k < RNR_END_REASON_COUNT; k++) {
            snprintf(name, sizeof name, "end.%s", rnr_reason_name(k));
            OUT_U64(name, reasons[k]);
        }
        OUT_F("sv_entries_per_chunk", 3, n ? (double)sv / (double)n : 0.0);
        const maxpar_stats *ms = maxpar_get_stats(m);
        /* Early: deferred to the destination cpu's next chunk; Unrelated:
         * that cpu never dumped a later chunk (discarded at the end, or an
         * Early token nobody awaits). */
        OUT_U64("maxpar.dependences", ms->dependences);
        OUT_U64("maxpar.tokens", ms->tokens);
        OUT_U64("maxpar.early", ms->early_tokens - ms->early_unclaimed);
        OUT_U64("maxpar.unrelated", ms->discarded + ms->early_unclaimed);
        OUT_U64("maxpar.dropped_implied", ms->dropped_later + ms->dropped_same);
        OUT_U64("maxpar.merged", ms->merged);
    }
    maxpar_free(m);
    free(chunks);
    free(insns);
    free(busy);
    rnr_reader_close(r);
    return failed ? -1 : 0;
}

/* An adaptive log's phases: for a file, phase.K.* names (K from 0); for a
 * bundle's text, a table after the others. */
static int print_phases(const char *path, int table, char *err, size_t errlen)
{
    rnr_reader *r = rnr_reader_open(path, err, errlen);
    if (!r)
        return -1;
    adaptive_phase_report *ph;
    size_t n;
    int rc = adaptive_measure(r, &ph, &n, err, errlen);
    rnr_reader_close(r);
    if (rc < 0)
        return -1;
    if (table)
        printf("adaptive phases (from instruction START of the replay order; crit.path: the "
               "longest path within the phase)\n%-6s %-9s %14s %10s %12s %10s %12s %12s %9s\n",
               "phase", "format", "start", "entries", "instructions", "tokens", "bytes.raw",
               "crit.path", "parallel");
    else
        OUT_U64("phases", n);
    for (size_t k = 0; k < n; k++) {
        const adaptive_phase_report *p = &ph[k];
        double par = p->critical_path ? (double)p->instructions / (double)p->critical_path : 0.0;
        if (table) {
            printf("%-6zu %-9s %14" PRIu64 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64
                   " %12" PRIu64 " %9.3f\n", k, rnr_phase_format_name(p->format), p->start,
                   p->entries, p->instructions, p->tokens, p->bytes, p->critical_path, par);
            continue;
        }
        char name[64];
#define PH(field) (snprintf(name, sizeof name, "phase.%zu." field, k), name)
        OUT_S(PH("format"), rnr_phase_format_name(p->format));
        OUT_U64(PH("start"), p->start);
        OUT_U64(PH("entries"), p->entries);
        OUT_U64(PH("instructions"), p->instructions);
        OUT_U64(PH("tokens"), p->tokens);
        OUT_U64(PH("bytes.raw"), p->bytes);
        if (p->cycles)
            OUT_U64(PH("recorded_cycles"), p->cycles);
        OUT_U64(PH("critical_path"), p->critical_path);
        OUT_F(PH("parallelism"), 3, par);
#undef PH
    }
    free(ph);
    return 0;
}

static const rnr_bundle_file bundle_logs[] = {
    RNR_BF_INITIAL, RNR_BF_INPUT, RNR_BF_MAXPAR, RNR_BF_STITCHED, RNR_BF_SERIAL, RNR_BF_STSERIAL,
    RNR_BF_ADAPTIVE,
};

static int stats_dir(const char *dir)
{
    char path[4096], err[RNR_ERR_MAX];
    rnr_bundle *b = rnr_bundle_open(dir, RNR_BUNDLE_FINISHED, err, sizeof err);
    if (!b)
        return cli_bad_input("stats", "%s", err);
    char resolved[4096];   /* "latest" resolved; DIR outlives the bundle handle */
    snprintf(resolved, sizeof resolved, "%s", rnr_bundle_dir(b));
    dir = resolved;
    rnr_bundle_unlock(b);
    uint64_t insns = rnr_bundle_u64(b, "instructions");
    int text = out_is_text();
    if (text) {
        printf("bundle: %s\nprogram: %s\ninstructions: %" PRIu64 "\n", dir,
               rnr_bundle_str(b, "program"), insns);
        printf("recorded cycles: %" PRIu64 " (compare: rnr stats on a final log, replay.cycles.wN)\n",
               rnr_bundle_u64(b, "cycles"));
        printf("%-10s %10s %8s %12s %12s %12s %10s %10s %12s %9s", "log", "records", "threads",
               "instructions", "bytes.raw", "bytes.zlib", "bpki.raw", "bpki.zlib", "crit.path",
               "parallel");
        /* --cpus: the simulated replay cycles on those CPU counts. */
        for (uint32_t k = 0; k < sim_ncpus; k++) {
            char col[32];
            snprintf(col, sizeof col, "cycles.w%u", sim_cpus[k]);
            printf(" %12s", col);
        }
        printf("\n");
    } else {
        out_row_start();
        OUT_S("bundle", dir);
        OUT_S("program", rnr_bundle_str(b, "program"));
        OUT_U64("instructions", insns);
        OUT_U64("recorded_cycles", rnr_bundle_u64(b, "cycles"));
    }
    int rc = RNR_EXIT_OK, found = 0;
    uint64_t recorded = rnr_bundle_u64(b, "cycles");
    /* The text's second table: each final log's simulated replay in both models. */
    struct { uint32_t kind; dag_metrics dm; } sims[5];
    uint32_t nsims = 0;
    rnr_log_summary input_summary;
    memset(&input_summary, 0, sizeof input_summary);
    int has_input = 0;
    for (size_t i = 0; i < sizeof bundle_logs / sizeof bundle_logs[0]; i++) {
        if (!rnr_bundle_has(b, bundle_logs[i]))
            continue;
        found++;
        if (rnr_bundle_check_file(b, bundle_logs[i], path, sizeof path, err, sizeof err) < 0) {
            rc = cli_bad_input("stats", "%s", err);
            continue;
        }
        rnr_log_summary s;
        int sr = rnr_log_summarize(path, &s, err, sizeof err);
        if (sr < 0) {
            rc = cli_bad_input("stats", "%s", err);
            continue;
        }
        if (sr > 0)
            fprintf(stderr, "rnr stats: warning: %s (the complete prefix is counted)\n", err);
        uint64_t n = rnr_log_kind_is_chunks(s.header.kind) ? s.instructions : insns;
        if (text) {
            printf("%-10s %10" PRIu64 " %8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64
                   " %10.3f %10.3f",
                   rnr_log_kind_name(s.header.kind), s.counts.records, s.threads, n,
                   s.counts.raw_bytes, s.zlib_bytes, bits_per_kinstr(s.counts.raw_bytes, n),
                   bits_per_kinstr(s.zlib_bytes, n));
        } else {
            out_row_start();
            OUT_S("log", rnr_log_kind_name(s.header.kind));
            OUT_U64("records", s.counts.records);
            OUT_U64("threads", s.threads);
            OUT_U64("instructions", n);
            OUT_U64("bytes.raw", s.counts.raw_bytes);
            OUT_U64("bytes.zlib", s.zlib_bytes);
            if (s.counts.duration_bytes)
                OUT_U64("bytes.duration", s.counts.duration_bytes);
            OUT_F("bits_per_kinstr.raw", 3, bits_per_kinstr(s.counts.raw_bytes, n));
            OUT_F("bits_per_kinstr.zlib", 3, bits_per_kinstr(s.zlib_bytes, n));
            if (s.header.kind == RNR_LOG_INPUT)
                print_input_types(&s, n);
        }
        if (s.header.kind == RNR_LOG_INPUT) {
            input_summary = s;
            has_input = 1;
        }
        dag_metrics dm;
        if (!is_final(s.header.kind)) {
            if (text) {
                printf(" %12s %9s", "-", "-");
                for (uint32_t k = 0; k < sim_ncpus; k++)
                    printf(" %12s", "-");
                printf("\n");
            }
        } else if (final_metrics(path, &dm, err, sizeof err) < 0) {
            if (text)
                printf("\n");
            rc = cli_bad_input("stats", "%s", err);
        } else if (text) {
            printf(" %12" PRIu64 " %9.3f", dm.critical_path, dm.parallelism);
            for (uint32_t k = 0; k < sim_ncpus && k < dm.nw; k++)
                printf(" %12" PRIu64, dm.makespan[k]);
            printf("\n");
            if (nsims < 5) {
                sims[nsims].kind = s.header.kind;
                sims[nsims++].dm = dm;
            }
        } else {
            OUT_U64("critical_path", dm.critical_path);
            OUT_F("parallelism", 3, dm.parallelism);
            OUT_U64("replay.token_latency", dm.token_latency);
            print_cycles(&dm);
            print_recorded(&dm, recorded);
        }
    }
    if (text && has_input)
        print_input_table(&input_summary, insns);
    if (text && nsims) {
        printf("simulated replay on W CPUs, token latency %" PRIu64 " cycles: instruction-count "
               "model (1 IPC) and recorded timing (chunks last their recorded cycles); ratio = "
               "replay cycles / recorded cycles\n", sims[0].dm.token_latency);
        printf("%-14s %14s %9s %14s %9s %14s\n", "log.wW", "cycles.1ipc", "ratio", "cycles.rec",
               "ratio.rec", "crit.path.rec");
        for (uint32_t i = 0; i < nsims; i++) {
            const dag_metrics *m = &sims[i].dm;
            for (uint32_t k = 0; k < m->nw; k++) {
                char label[32];
                snprintf(label, sizeof label, "%s.w%u", rnr_log_kind_name(sims[i].kind), m->workers[k]);
                printf("%-14s %14" PRIu64 " %9.3f", label, m->makespan[k],
                       recorded ? (double)m->makespan[k] / (double)recorded : 0.0);
                if (m->recorded)
                    printf(" %14" PRIu64 " %9.3f %14" PRIu64 "\n", m->makespan_recorded[k],
                           recorded ? (double)m->makespan_recorded[k] / (double)recorded : 0.0,
                           m->critical_path_recorded);
                else
                    printf(" %14s %9s %14s\n", "-", "-", "-");
            }
        }
    }
    if (text && rnr_bundle_has(b, RNR_BF_ADAPTIVE) &&
        (rnr_bundle_check_file(b, RNR_BF_ADAPTIVE, path, sizeof path, err, sizeof err) < 0 ||
         print_phases(path, 1, err, sizeof err) < 0))
        rc = cli_bad_input("stats", "%s", err);
    /* With the recorder's truth: the two upper bounds beside the formats. */
    char ipath[4096];
    if (rnr_bundle_has(b, RNR_BF_TRUTH) &&
        rnr_bundle_check_file(b, RNR_BF_TRUTH, path, sizeof path, err, sizeof err) < 0) {
        rc = cli_bad_input("stats", "%s", err);
    } else if (rnr_bundle_has(b, RNR_BF_TRUTH) &&
               rnr_bundle_path(dir, rnr_bundle_file_name(RNR_BF_INITIAL), ipath, sizeof ipath, err,
                               sizeof err) == 0) {
        oracle_bounds ob;
        if (oracle_compute_file(ipath, path, ORACLE_WINDOW, ORACLE_HOLD_MSP, &ob, err, sizeof err) < 0) {
            rc = cli_bad_input("stats", "%s", err);
        } else {
            if (text) {
                printf("%-10s %10" PRIu64 " %8s %12" PRIu64 " %12s %12s %10s %10s %12" PRIu64
                       " %9.3f", "oracle.ch", ob.chunks, "-", ob.instructions, "-", "-", "-", "-",
                       ob.chunk_critical_path, ob.chunk_parallelism);
                for (uint32_t k = 0; k < sim_ncpus; k++)
                    printf(" %12s", "-");
                printf("\n%-10s %10" PRIu64 " %8s %12" PRIu64 " %12s %12s %10s %10s %12" PRIu64
                       " %9.3f", "oracle.in", ob.segments, "-", ob.instructions, "-", "-", "-", "-",
                       ob.insn_critical_path, ob.insn_parallelism);
                for (uint32_t k = 0; k < sim_ncpus; k++)
                    printf(" %12s", "-");
                printf("\noracle.ch: the initial log's chunks with only the %" PRIu64
                       " true dependences (truth.deps); oracle.in: instructions cut exactly at them\n",
                       ob.deps);
                if (ob.window_given_up)
                    printf("oracle: held whole (%s; window %u chunks)\n", ob.why, ORACLE_WINDOW);
            } else {
                out_row_start();
                OUT_S("log", "oracle.ch");
                OUT_U64("records", ob.chunks);
                OUT_U64("instructions", ob.instructions);
                OUT_U64("critical_path", ob.chunk_critical_path);
                OUT_F("parallelism", 3, ob.chunk_parallelism);
                OUT_U64("true_dependences", ob.deps);
                out_row_start();
                OUT_S("log", "oracle.in");
                OUT_U64("records", ob.segments);
                OUT_U64("instructions", ob.instructions);
                OUT_U64("critical_path", ob.insn_critical_path);
                OUT_F("parallelism", 3, ob.insn_parallelism);
                OUT_U64("true_dependences", ob.deps);
            }
        }
    }
    rnr_bundle_close(b);
    if (found)
        out_flush(OUT_BUNDLE);
    else
        out_free();
    if (!found)
        return cli_bad_input("stats", "%s: no logs in this bundle", dir);
    return rc;
}

/* Parses the --cpus LIST ("3", "1,2,8", "1-8", "1-4,8") into sim_cpus. */
static int parse_cpus(const char *list)
{
    sim_ncpus = 0;
    const char *p = list;
    for (;;) {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (end == p || *p == '-' || *p == '+')
            return cli_usage("stats", "--cpus: '%s' is not a list like 1,2,8 or 1-8", list);
        if (*end == '-') {
            const char *q = end + 1;
            b = strtoul(q, &end, 10);
            if (end == q || *q == '-' || *q == '+')
                return cli_usage("stats", "--cpus: '%s' is not a list like 1,2,8 or 1-8", list);
        }
        if (a < 1 || b > 64 || a > b)
            return cli_usage("stats", "--cpus: '%s': each count must be 1..64, ranges ascending", list);
        for (unsigned long w = a; w <= b; w++) {
            if (sim_ncpus == METRICS_MAX_W)
                return cli_usage("stats", "--cpus: '%s': more than %d counts", list, METRICS_MAX_W);
            sim_cpus[sim_ncpus++] = (uint32_t)w;
        }
        if (*end == '\0')
            return 0;
        if (*end != ',')
            return cli_usage("stats", "--cpus: '%s' is not a list like 1,2,8 or 1-8", list);
        p = end + 1;
    }
}

int cmd_stats(int argc, char **argv)
{
    const char *path = NULL;
    int options = 1;
    static const char *const valued[] = {"--token-latency", "--cpus", "--format", NULL};
    cli_normalize(valued, 0, &argc, &argv);
    out_set_format("stats", NULL);
    for (int i = 1; i < argc; i++) {
        if (!options || argv[i][0] != '-' || !argv[i][1]) {
            if (path)
                return cli_usage("stats", "too many arguments");
            path = argv[i];
        } else if (strcmp(argv[i], "--") == 0) {
            options = 0;
        } else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 >= argc)
                return cli_usage("stats", "--format needs a value");
            if (out_set_format("stats", argv[++i]) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(argv[i], "--token-latency") == 0) {
            if (i + 1 >= argc)
                return cli_usage("stats", "--token-latency needs a value");
            if (cli_parse_u64("stats", "--token-latency", argv[++i], 0, 1ull << 40, &token_latency) < 0)
                return RNR_EXIT_USAGE;
        } else if (strcmp(argv[i], "--cpus") == 0) {
            if (i + 1 >= argc)
                return cli_usage("stats", "--cpus needs a value");
            if (parse_cpus(argv[++i]) != 0)
                return RNR_EXIT_USAGE;
        } else {
            return cli_usage("stats", "unknown option '%s'", argv[i]);
        }
    }
    if (!path)
        return cli_usage("stats", "missing FILE or DIR");
    struct stat st;
    if (strcmp(path, RNR_BUNDLE_LATEST) == 0)
        return stats_dir(path);
    if (strcmp(path, "-") != 0 && stat(path, &st) != 0)
        return cli_bad_input("stats", "%s: %s", path, strerror(errno));
    if (strcmp(path, "-") != 0 && S_ISDIR(st.st_mode))
        return stats_dir(path);
    rnr_log_summary s;
    char err[RNR_ERR_MAX];
    int sr = rnr_log_summarize(path, &s, err, sizeof err);
    if (sr < 0)
        return cli_bad_input("stats", "%s", err);
    if (sr > 0)
        fprintf(stderr, "rnr stats: warning: %s (the complete prefix is counted)\n", err);
    if (is_final(s.header.kind) && strcmp(path, "-") == 0)
        return cli_bad_input("stats", "<stdin>: the metrics of a final log need a file, not a pipe");
    dag_metrics dm;
    if (is_final(s.header.kind) && final_metrics(path, &dm, err, sizeof err) < 0)
        return cli_bad_input("stats", "%s", err);
    print_file(path, &s);
    if (is_final(s.header.kind))
        print_metrics(&dm);
    if (s.header.kind == RNR_LOG_ADAPTIVE && print_phases(path, 0, err, sizeof err) < 0) {
        out_flush(OUT_ONE);
        return cli_bad_input("stats", "%s", err);
    }
    if (s.header.kind == RNR_LOG_INITIAL && strcmp(path, "-") != 0 &&
        print_initial_details(path, err, sizeof err) < 0) {
        out_flush(OUT_ONE);
        return cli_bad_input("stats", "%s", err);
    }
    out_flush(OUT_ONE);
    return RNR_EXIT_OK;
}
