/* backend/passes.h: the backend passes as streams, from a log reader to a
 * log writer, with progress reports, and the input side that keeps a pass
 * usable on a pipe from a slow producer. */
#ifndef RNR_BACKEND_PASSES_H
#define RNR_BACKEND_PASSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/adaptive.h"
#include "backend/dag.h"
#include "backend/maxpar.h"
#include "backend/serial.h"
#include "backend/stitch.h"
#include "formats/bundle.h"
#include "formats/log.h"

/* Progress on stderr: one rewritten line at most twice a second, only when
 * enabled (the commands enable it for a terminal or --progress). */
typedef struct pass_progress {
    int on;
    const char *name;
    uint64_t next_check;
    double last;
    int printed;
} pass_progress;

void pass_progress_init(pass_progress *p, const char *name, int on);
void pass_progress_tick(pass_progress *p, uint64_t done);
void pass_progress_end(pass_progress *p, uint64_t done);

/* This process's peak resident memory in KiB (VmHWM), 0 if unknown. */
uint64_t pass_vm_hwm_kib(void);

/* Opens PATH ("-" = standard input) for reading as a log. Before a read
 * that would wait for the producer, calls IDLE(CTX) (to flush what the
 * pass wrote so far downstream). NULL with the reason in err. */
rnr_reader *pass_open_input(const char *path, void (*idle)(void *), void *ctx, char *err,
                            size_t errlen);

/* The header of a pass's output: the input's with another kind. */
void pass_output_header(const rnr_log_header *in, uint32_t kind, rnr_log_header *out);

/* Pass 1. The input must be an initial log. 0, or -1 with a one-line
 * message naming the file and the problem. */
int pass_maxpar(rnr_reader *in, rnr_writer *out, pass_progress *pr, maxpar_stats *st, char *err,
                size_t errlen);
/* Pass 2 (input: MaxPar). WINDOW: see stitch_new (0 = default). */
int pass_stitch(rnr_reader *in, rnr_writer *out, uint64_t window, pass_progress *pr,
                stitch_stats *st, dag_result *dr, char *err, size_t errlen);
/* MaxPar -> adaptive: pass 2 that stitches only inside the Stitched phases
 * of the N phases START/FORMAT (stitch_set_phases). */
int pass_adaptive(rnr_reader *in, rnr_writer *out, const uint64_t *start, const uint32_t *format,
                  size_t n, uint64_t window, pass_progress *pr, stitch_stats *st, dag_result *dr,
                  char *err, size_t errlen);
/* The same with the phases decided while the pass runs (a streaming
 * recorder: stitch_set_phase_source's contract). */
int pass_adaptive_online(rnr_reader *in, rnr_writer *out, stitch_phase_fn fn, void *ctx,
                         uint64_t window, stitch_stats *st, char *err, size_t errlen);
/* Pass 3 (input: MaxPar -> Serial, Stitched -> StSerial). */
int pass_serial(rnr_reader *in, rnr_writer *out, pass_progress *pr, serial_stats *st,
                dag_result *dr, char *err, size_t errlen);

/* The output kind of pass 3 for an input kind, or 0 if it takes no such input. */
uint32_t pass_serial_kind(uint32_t input_kind);

typedef enum pass_kind { PASS_MAXPAR = 0, PASS_STITCH = 1, PASS_SERIAL = 2 } pass_kind;

typedef struct pass_options {
    int progress;              /* report progress on stderr */
    int compress;              /* zlib level of the output blocks, 0 = none */
    uint64_t window;           /* stitch window (0 = default) */
} pass_options;

typedef struct pass_summary {
    uint32_t out_kind;
    rnr_log_counts in_counts, out_counts;
    maxpar_stats maxpar;
    stitch_stats stitch;
    serial_stats serial;
    dag_result dag;
} pass_summary;

/* Runs pass KIND from the log at IN_PATH to a new log at OUT_PATH (either
 * may be "-"). OPT and SUM may be NULL. 0, or -1 with a one-line message
 * naming the file and the problem; a failed output file is removed. */
int pass_run_files(pass_kind kind, const char *in_path, const char *out_path,
                   const pass_options *opt, pass_summary *sum, char *err, size_t errlen);

/* The adaptive log of POLICY from the MaxPar log at IN_PATH (a file: a
 * bandwidth policy reads it twice) to OUT_PATH; sum->out_kind is
 * RNR_LOG_ADAPTIVE, sum->stitch the pass's counters. As pass_run_files. */
int pass_run_adaptive(const adaptive_policy *policy, const char *in_path, const char *out_path,
                      const pass_options *opt, pass_summary *sum, char *err, size_t errlen);

/* The same between memory buffers: reads LEN bytes at IN, writes a new log
 * into *OUT (the caller frees out->data; empty on failure). */
int pass_run_memory(pass_kind kind, const void *in, size_t len, rnr_membuf *out,
                    const pass_options *opt, pass_summary *sum, char *err, size_t errlen);

/* Runs the backend passes on bundle B: initial.log -> maxpar.log (unless
 * SKIP_MAXPAR: this process wrote it already) -> stitched.log, serial.log,
 * stserial.log, each to its temporary path in B (the caller commits or
 * publishes them). A log B holds from before is checked against its digest
 * first. One line per log on REPORT (NULL: silent). 0, or -1 with a
 * one-line message naming the file and the problem. */
int pass_bundle(rnr_bundle *b, int skip_maxpar, const pass_options *opt, FILE *report, char *err,
                size_t errlen);

/* After pass_bundle: B's maxpar.log -> adaptive.log by POLICY, to its
 * temporary path; one line on REPORT. 0, or -1 as pass_bundle. */
int pass_bundle_adaptive(rnr_bundle *b, const adaptive_policy *policy, const pass_options *opt,
                         FILE *report, char *err, size_t errlen);

#endif
