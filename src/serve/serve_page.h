/* The explorer page of `rnnsearch serve` (src/serve/serve_page.html), made into a
 * C array at build time by the Makefile (build/gen/serve_page.c). */
#ifndef RS_SERVE_PAGE_H
#define RS_SERVE_PAGE_H

extern const unsigned char rs_serve_page[];   /* [rs_serve_page_len + 1], NUL-terminated */
extern const unsigned long rs_serve_page_len; /* bytes, the NUL not included */

#endif
