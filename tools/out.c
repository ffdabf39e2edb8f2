/* tools/out.c: rows of name/value pairs printed as CSV or JSON (tools/out.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rru/alloc.h"
#include "tools/cli.h"
#include "tools/out.h"

static int out_format = OUT_TEXT;

typedef struct out_pair {
    char *name, *value;
    int is_string;
} out_pair;

typedef struct out_row {
    out_pair *p;
    size_t n, cap;
} out_row;

/* OUT_ONE: rows[0]; OUT_BUNDLE: rows[0] the bundle's own fields, then one
 * per log; OUT_LIST: one per item. */
static out_row *rows;
static size_t nrows;

void out_row_start(void)
{
    rows = xrealloc(rows, (nrows + 1) * sizeof *rows);
    memset(&rows[nrows++], 0, sizeof *rows);
}

void out_add(const char *name, int is_string, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (out_format == OUT_TEXT) {
        printf("%s: %s\n", name, buf);
        return;
    }
    if (nrows == 0)
        out_row_start();
    out_row *r = &rows[nrows - 1];
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->p = xrealloc(r->p, r->cap * sizeof *r->p);
    }
    r->p[r->n++] = (out_pair){ xoom(strdup(name)), xoom(strdup(buf)), is_string };
}


static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_object(const out_row *r, const char *indent)
{
    printf("{");
    for (size_t i = 0; i < r->n; i++) {
        printf("%s\n%s  ", i ? "," : "", indent);
        json_string(r->p[i].name);
        printf(": ");
        if (r->p[i].is_string == OUT_NULL_VALUE)
            fputs("null", stdout);
        else if (r->p[i].is_string)
            json_string(r->p[i].value);
        else
            fputs(r->p[i].value, stdout);
    }
    printf("\n%s}", indent);
}

static void csv_field(const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static const char *row_get(const out_row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->p[i].name, name) == 0)
            return r->p[i].value;
    return NULL;
}

void out_flush(int shape)
{
    int bundle = shape == OUT_BUNDLE;
    if (out_format == OUT_JSON) {
        if (shape == OUT_LIST) {
            printf("[");
            for (size_t k = 0; k < nrows; k++) {
                printf("%s\n  ", k ? "," : "");
                json_object(&rows[k], "  ");
            }
            printf("\n]\n");
        } else if (!bundle) {
            if (nrows)
                json_object(&rows[0], "");
            printf("\n");
        } else {
            out_row top = nrows ? rows[0] : (out_row){ NULL, 0, 0 };
            printf("{");
            for (size_t i = 0; i < top.n; i++) {
                printf("\n  ");
                json_string(top.p[i].name);
                printf(": ");
                if (top.p[i].is_string == OUT_NULL_VALUE)
                    fputs("null", stdout);
                else if (top.p[i].is_string)
                    json_string(top.p[i].value);
                else
                    fputs(top.p[i].value, stdout);
                printf(",");
            }
            printf("\n  \"logs\": [");
            for (size_t k = 1; k < nrows; k++) {
                printf("%s\n    ", k > 1 ? "," : "");
                json_object(&rows[k], "    ");
            }
            printf("\n  ]\n}\n");
        }
    } else if (out_format == OUT_CSV) {
        size_t first = bundle ? 1 : 0, ncols = 0;
        const char **cols = NULL;
        for (size_t k = bundle ? 0 : first; k < nrows; k++)
            for (size_t i = 0; i < rows[k].n; i++) {
                size_t c = 0;
                while (c < ncols && strcmp(cols[c], rows[k].p[i].name) != 0)
                    c++;
                if (c == ncols) {
                    cols = xrealloc(cols, (ncols + 1) * sizeof *cols);
                    cols[ncols++] = rows[k].p[i].name;
                }
            }
        for (size_t c = 0; c < ncols; c++) {
            if (c)
                putchar(',');
            csv_field(cols[c]);
        }
        putchar('\n');
        for (size_t k = first; k < nrows; k++) {
            for (size_t c = 0; c < ncols; c++) {
                const char *v = row_get(&rows[k], cols[c]);
                if (!v && bundle)
                    v = row_get(&rows[0], cols[c]);
                if (c)
                    putchar(',');
                csv_field(v ? v : "");
            }
            putchar('\n');
        }
        free(cols);
    }
    out_free();
}

void out_free(void)
{
    for (size_t k = 0; k < nrows; k++) {
        for (size_t i = 0; i < rows[k].n; i++) {
            free(rows[k].p[i].name);
            free(rows[k].p[i].value);
        }
        free(rows[k].p);
    }
    free(rows);
    rows = NULL;
    nrows = 0;
}

int out_set_format(const char *cmd, const char *value)
{
    if (!value || strcasecmp(value, "text") == 0)
        out_format = OUT_TEXT;
    else if (strcasecmp(value, "csv") == 0)
        out_format = OUT_CSV;
    else if (strcasecmp(value, "json") == 0)
        out_format = OUT_JSON;
    else {
        cli_usage(cmd, "--format wants text, csv or json, not '%s'", value);
        return -1;
    }
    return 0;
}

int out_is_text(void) { return out_format == OUT_TEXT; }
