/* tools/out.h: the machine-readable output of rnr stats and rnr ls:
 * rows of name/value pairs collected while the text is printed, then
 * written as CSV (a header row of every name in order of first use) or
 * JSON (docs/formats.md, "Stats output"). */
#ifndef RNR_TOOLS_OUT_H
#define RNR_TOOLS_OUT_H

#include <inttypes.h>
#include <stdint.h>

enum { OUT_TEXT, OUT_CSV, OUT_JSON };

/* --format VALUE of command CMD: text, csv or json in any case (NULL: text).
 * 0, or -1 after a usage message. */
int out_set_format(const char *cmd, const char *value);
/* 1 while the format is text (out_add then prints 'name: value'). */
int out_is_text(void);

/* Starts a new row. */
void out_row_start(void);
/* Adds NAME = the formatted value to the current row (a row is started if
 * none is); IS_STRING: 1 quoted in JSON, 0 not, OUT_NULL_VALUE null. In text, prints 'NAME: value'. */
void out_add(const char *name, int is_string, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define OUT_U64(name, v) out_add(name, 0, "%" PRIu64, (uint64_t)(v))
#define OUT_F(name, prec, v) out_add(name, 0, "%." #prec "f", (double)(v))
#define OUT_S(name, s) out_add(name, 1, "%s", s)
/* A value that is not known: JSON null, an empty CSV field. */
#define OUT_NULL_VALUE 2
#define OUT_NULL(name) out_add(name, OUT_NULL_VALUE, "%s", "")

/* How out_flush shapes the rows. */
enum {
    OUT_ONE,      /* one object (JSON), one row (CSV) */
    OUT_BUNDLE,   /* rows[0] a bundle's fields, the others its logs: JSON
                     nests them as "logs", CSV repeats rows[0] in each row */
    OUT_LIST,     /* a JSON array of objects; CSV one row each */
};
/* Prints the rows collected (nothing in text) and frees them. A CSV row
 * without a name of the header leaves its field empty. */
void out_flush(int shape);
/* Frees the rows without printing. */
void out_free(void);

#endif
