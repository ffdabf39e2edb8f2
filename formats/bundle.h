/* formats/bundle.h: the recording bundle, owned by this one module: its
 * file names, the manifest's schema and checks, exclusive creation, atomic
 * writes and the status (docs/formats.md, "Bundle"). Every reader and
 * writer of a bundle goes through it. */
#ifndef RNR_FORMATS_BUNDLE_H
#define RNR_FORMATS_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/manifest.h"

/* The files a bundle may hold besides its manifest. */
typedef enum rnr_bundle_file {
    RNR_BF_PROGRAM,
    RNR_BF_INITIAL,
    RNR_BF_INPUT,
    RNR_BF_STDOUT,
    RNR_BF_STDERR,
    RNR_BF_TRUTH,
    RNR_BF_MAXPAR,
    RNR_BF_STITCHED,
    RNR_BF_SERIAL,
    RNR_BF_STSERIAL,
    RNR_BF_ADAPTIVE,
    RNR_BF_COUNT
} rnr_bundle_file;

/* "initial.log", "program", ...; the name inside the bundle directory. */
const char *rnr_bundle_file_name(rnr_bundle_file f);
/* The bundle file holding a log of KIND (RNR_LOG_*), or -1. */
int rnr_bundle_file_of_kind(uint32_t kind);
/* DIR/NAME into out; 0, or -1 (with a message in err) if it does not fit. */
int rnr_bundle_path(const char *dir, const char *name, char *out, size_t len, char *err,
                    size_t errlen);

/* The status values (the manifest's `status`); a final status is set only
 * once every file the manifest names is in place. */
#define RNR_BUNDLE_RECORDING "recording"
#define RNR_BUNDLE_COMPLETE "complete"
#define RNR_BUNDLE_INTERRUPTED "interrupted"   /* "interrupted: REASON" */
#define RNR_BUNDLE_INCOMPLETE "incomplete"     /* "incomplete: REASON" (the recorder failed) */
#define RNR_BUNDLE_ABANDONED "abandoned"       /* "abandoned: REASON" */

/* ---- the default place ----
 * `rnr record` without -o writes its bundle to HOME/PROG-N (N the next free
 * number for that program) and points the symlink HOME/latest at it. HOME
 * is $RNR_BUNDLE_DIR when set and not empty, else ./rnr-bundles. */
#define RNR_BUNDLE_HOME_DEFAULT "rnr-bundles"
#define RNR_BUNDLE_HOME_ENV "RNR_BUNDLE_DIR"
#define RNR_BUNDLE_LATEST "latest"

/* HOME (static storage or the environment's string). */
const char *rnr_bundle_home(void);
/* The name HOME/latest points at ("racy-3") into OUT; 0, or -1 (errno
 * set: ENOENT when there is no link yet). */
int rnr_bundle_latest(const char *home, char *out, size_t len);
/* 1 if DIR holds a manifest (is a bundle, maybe a damaged one), else 0. */
int rnr_bundle_is_bundle(const char *dir);
/* The bundle a user's NAME means: "latest" is the target of HOME/latest
 * (HOME/PROG-N), anything else itself. 0 with the path in OUT, or -1 with
 * a message (no recording yet, path too long). */
int rnr_bundle_resolve(const char *name, char *out, size_t len, char *err, size_t errlen);

typedef struct rnr_bundle rnr_bundle;

/* ---- writing a new bundle ---- */

/* Creates bundle DIR exclusively: DIR must not exist or be an empty
 * directory, and of several processes creating it at once exactly one
 * succeeds (the manifest, status `recording`, is created with O_EXCL).
 * KIND is the manifest's kind ("recording", "synthetic"). NULL with a
 * message naming DIR; then nothing in DIR was touched. */
rnr_bundle *rnr_bundle_create(const char *dir, const char *kind, char *err, size_t errlen);

/* Creates a new bundle HOME/BASE-N, N the smallest number above every
 * BASE-M in HOME (HOME is created if missing), like rnr_bundle_create; of
 * concurrent creators each gets its own N (mkdir decides). Then HOME/latest
 * is pointed at it (a symlink renamed into place, so a reader sees the old
 * link or the new). NULL with a message. */
rnr_bundle *rnr_bundle_create_next(const char *home, const char *base, const char *kind,
                                   char *err, size_t errlen);

/* The manifest in memory; the bundle owns it. Keys are set by the writer
 * and saved by rnr_bundle_save. */
rnr_manifest *rnr_bundle_manifest(rnr_bundle *b);
const char *rnr_bundle_dir(const rnr_bundle *b);

/* The temporary path at which file F is written until it is committed
 * (DIR/.NAME.PID.part); valid while the bundle is open. */
const char *rnr_bundle_tmp_path(rnr_bundle *b, rnr_bundle_file f);
/* Puts F in place: fsyncs its temporary file, renames it to DIR/NAME and
 * records its size and SHA-256 (file.NAME.bytes, file.NAME.sha256) in the
 * manifest in memory. 0, or -1 with err. */
int rnr_bundle_commit(rnr_bundle *b, rnr_bundle_file f, char *err, size_t errlen);
/* 1 if this process wrote F to its temporary path and has not committed it. */
int rnr_bundle_written(const rnr_bundle *b, rnr_bundle_file f);
/* Where F is now: its temporary path if this process wrote it and has not
 * committed it yet, else DIR/NAME. 0, or -1 with err if it does not fit. */
int rnr_bundle_current_path(const rnr_bundle *b, rnr_bundle_file f, char *out, size_t len,
                            char *err, size_t errlen);
#define RNR_BUNDLE_PROGRAMS "programs"
/* Programs an execve loaded are packed by content: DIR/programs/HASH,
 * HASH the SHA-256 (64 lowercase hex digits) of the file's bytes, which
 * the manifest's exec.N.file names ("programs/HASH"), or the bundle's
 * "program" when that is the same file (packed, same hash). Writes N
 * bytes DATA there (a temporary file, fsynced and renamed into place;
 * nothing if the file is there already: the same program again). 0, or
 * -1 with err. */
int rnr_bundle_put_program(rnr_bundle *b, const char *sha_hex, const void *data, size_t n,
                           char *err, size_t errlen);
/* The name exec.N.file gives the packed program with SHA_HEX, into OUT
 * (at least sizeof RNR_BUNDLE_PROGRAMS + RNR_SHA256_HEX bytes). */
void rnr_bundle_program_name(const rnr_bundle *b, const char *sha_hex, char *out, size_t len);
/* Removes F's temporary file, if any. */
void rnr_bundle_discard(rnr_bundle *b, rnr_bundle_file f);
/* Writes the manifest atomically with STATUS ("complete", "interrupted:
 * SIGTERM", ...). 0, or -1 with err. */
int rnr_bundle_save(rnr_bundle *b, const char *status, char *err, size_t errlen);
/* Frees B (temporary files not committed are removed). */
void rnr_bundle_close(rnr_bundle *b);

/* ---- reading and updating a bundle ---- */

enum {
    RNR_BUNDLE_ANY = 0,          /* any status (rnr info, rnr stats) */
    RNR_BUNDLE_FINISHED = 1,     /* complete or interrupted: replayable */
    RNR_BUNDLE_UPDATE = 2,       /* also: the caller will commit files (rnr backend) */
};

/* Opens bundle DIR (resolved by rnr_bundle_resolve: "latest" is the
 * default place's latest recording; rnr_bundle_dir gives the path): loads the manifest (checksum, version), checks every
 * key of its schema (present, well formed, consistent) and, with
 * RNR_BUNDLE_FINISHED, that the status is final and replayable. A shared
 * lock on DIR is held until rnr_bundle_unlock or close, so that files the
 * caller opens meanwhile are the ones the manifest names. NULL with a
 * message naming the key or file. */
rnr_bundle *rnr_bundle_open(const char *dir, unsigned flags, char *err, size_t errlen);
/* Ends the shared lock (the files opened so far stay valid). */
void rnr_bundle_unlock(rnr_bundle *b);
const rnr_manifest *rnr_bundle_get(const rnr_bundle *b);
/* The manifest's `kind` and `status`. */
const char *rnr_bundle_kind(const rnr_bundle *b);
const char *rnr_bundle_status(const rnr_bundle *b);
/* 1 if the manifest names file F. */
int rnr_bundle_has(const rnr_bundle *b, rnr_bundle_file f);
/* Checks that F is named by the manifest and that DIR/NAME has its size and
 * SHA-256; its path into PATH. 0, or -1 with err naming the file and both
 * whole digests. */
int rnr_bundle_check_file(const rnr_bundle *b, rnr_bundle_file f, char *path, size_t len,
                          char *err, size_t errlen);
/* The same for a file outside the bundle that must equal F (a program not
 * packed): size and digest of PATH against F's keys. */
int rnr_bundle_check_copy(const rnr_bundle *b, rnr_bundle_file f, const char *path, char *err,
                          size_t errlen);
/* The path of the packed program with SHA-256 SHA_HEX (DIR/programs/HASH,
 * or DIR/program) into PATH, after checking that its bytes have that hash. 0, or -1 with
 * err naming the file (missing, or not the recorded program). */
int rnr_bundle_check_program(const rnr_bundle *b, const char *sha_hex, char *path, size_t len,
                             char *err, size_t errlen);
/* The manifest's u64 KEY, which the schema checked: aborts if absent. */
uint64_t rnr_bundle_u64(const rnr_bundle *b, const char *key);
/* The manifest's string KEY, which the schema checked: aborts if absent. */
const char *rnr_bundle_str(const rnr_bundle *b, const char *key);

/* Updating (opened with RNR_BUNDLE_UPDATE): files go to their temporary
 * paths (rnr_bundle_tmp_path), then rnr_bundle_publish takes the exclusive
 * lock, renames every file written, adds their keys and saves the manifest
 * in one step, so that a concurrent reader sees the old files or the new,
 * never a mix. 0, or -1 with err. */
int rnr_bundle_publish(rnr_bundle *b, char *err, size_t errlen);

#endif
