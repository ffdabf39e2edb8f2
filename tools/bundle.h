/* tools/bundle.h: what the front end's commands share about a recording
 * bundle: the backend passes over it (rnr backend, rnr record --backend). */
#ifndef RNR_TOOLS_BUNDLE_H
#define RNR_TOOLS_BUNDLE_H

#include <stddef.h>
#include <stdio.h>

#include "backend/passes.h"

/* Runs the backend passes on bundle DIR: initial.log -> maxpar.log (unless
 * SKIP_MAXPAR: it exists already) -> stitched.log, serial.log, stserial.log.
 * One line per log on REPORT (NULL: silent). 0, or -1 with a one-line
 * message naming the file and the problem. */
int backend_bundle_passes(const char *dir, int skip_maxpar, const pass_options *opt, FILE *report,
                          char *err, size_t errlen);

#endif
