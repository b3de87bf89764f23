/*
 * chrome-trace.h - the pieces of Chrome trace JSON (format/chrome-trace.c)
 * that a writer of whole events from other files shares: merge
 * (read/merge-trace.c) copies each rank's events as written but opens the
 * document and names and places the processes it makes with these, so
 * the format is written in one place.
 */
#ifndef KSCOPE_CHROME_TRACE_H
#define KSCOPE_CHROME_TRACE_H

#include "format/jsonw.h"

#include <stdint.h>

/* The document's head, {"displayTimeUnit":"us","traceEvents":[ : the
 * events follow, then the caller closes the array and the object. */
void kscope__chrome_trace_head(kscope__jsonw *w);

/* A metadata ("M") event `name` of process pid, and of track *tid unless
 * tid is NULL, whose args hold the one member key: a string, or an
 * integer. */
void kscope__chrome_meta_str(kscope__jsonw *w, const char *name, int64_t pid, const uint64_t *tid,
                             const char *key, const char *value);
void kscope__chrome_meta_int(kscope__jsonw *w, const char *name, int64_t pid, const uint64_t *tid,
                             const char *key, int64_t value);

#endif
