/* The options of the public API (rnnsearch_options, api/rnnsearch.h): their
 * defaults, checks and setters (api/options.c), shared with api/api.c. */
#ifndef RS_API_OPTIONS_H
#define RS_API_OPTIONS_H

#include "api/rnnsearch.h"

/* Marian's shortlist sizes, which 0 in the options stands for. */
#define RS_API_SHORTLIST_DEFAULT 100

/* Formats a message into err (which may be NULL); returns -1. */
int rs_api_fail(rnnsearch_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A copy of the caller's options (NULL: the defaults) in this library's
 * layout: its first size bytes over the defaults, after checking that size
 * is one rnnsearch_options_init wrote and that nothing this library does not
 * know is set. */
int rs_api_options_read(const rnnsearch_options *opt, rnnsearch_options *o, rnnsearch_error *err);

#endif
