/* formats/manifest.h: the recording bundle's manifest, an ordered list of
 * `key = value` text lines (docs/formats.md, "Bundle manifest"). */
#ifndef RNR_FORMATS_MANIFEST_H
#define RNR_FORMATS_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

/* Bump when a manifest key changes meaning; readers reject other versions.
 * 2: a checksum line ends the file; files are named by file.NAME.* keys. */
#define RNR_MANIFEST_VERSION 2u
#define RNR_MANIFEST_VERSION_STR "2"
/* The last line: the SHA-256 of every byte of the file before it. */
#define RNR_MANIFEST_SUM_KEY "manifest.sha256"

typedef struct rnr_manifest rnr_manifest;

rnr_manifest *rnr_manifest_new(void);          /* empty; aborts on no memory */
void rnr_manifest_free(rnr_manifest *m);

/* Parses PATH; NULL with "PATH: line N: problem" in err. A missing or
 * other version line, or a checksum line that is missing, not last or does
 * not match, is an error. */
rnr_manifest *rnr_manifest_load(const char *path, char *err, size_t errlen);
/* Parses LEN bytes of manifest text (NAME is used in messages), as
 * rnr_manifest_load does for a file. */
rnr_manifest *rnr_manifest_parse(const char *text, size_t len, const char *name, char *err,
                                 size_t errlen);
/* The file's text, ending in the checksum line; *LEN its length. The
 * caller frees it. */
char *rnr_manifest_format(const rnr_manifest *m, size_t *len);
/* Writes PATH atomically (temporary file, fsync, rename); 0 or -1 with err. */
int rnr_manifest_save(const rnr_manifest *m, const char *path, char *err, size_t errlen);

/* Value of KEY or NULL; the string belongs to the manifest. */
const char *rnr_manifest_get(const rnr_manifest *m, const char *key);
/* Parses KEY's value as an unsigned decimal; 0, or -1 if absent or invalid. */
int rnr_manifest_get_u64(const rnr_manifest *m, const char *key, uint64_t *out);
/* Sets KEY (replacing, keeping its place) to a copy of VALUE. Keys are
 * [A-Za-z0-9_.-]+; values any bytes but NUL (escaped on disk). */
void rnr_manifest_set(rnr_manifest *m, const char *key, const char *value);
void rnr_manifest_set_u64(rnr_manifest *m, const char *key, uint64_t value);

size_t rnr_manifest_count(const rnr_manifest *m);
const char *rnr_manifest_key(const rnr_manifest *m, size_t i);
const char *rnr_manifest_value(const rnr_manifest *m, size_t i);

#endif
