/* Errors: library functions return 0 on success or -1 on failure, with the
 * message in an rs_error that the caller owns. Only the command layer prints. */
#ifndef RS_ERROR_H
#define RS_ERROR_H

#include <stddef.h>

typedef struct {
    char msg[1024];
} rs_error;

/* Formats the message into err (if non-NULL) and returns -1. */
int rs_fail(rs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Turns the message into "path: message" unless it begins so already (for
 * readers of a file, whose every error must name it). */
void rs_error_name_file(rs_error *err, const char *path);

/* "out of memory allocating WHAT (SIZE)": WHAT formatted from fmt, SIZE
 * from bytes in bytes, KiB, MiB, GiB or TiB ("the training workspace for
 * 64 pairs … (412 MiB)"), so that a failed allocation says what it was for
 * and how big. Returns -1. */
int rs_fail_memory(rs_error *err, double bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checked allocation: returns NULL and fills err on failure. */
void *rs_calloc(size_t count, size_t size, rs_error *err);

/* The same for a large block read over and over (a model's weights): aligned
 * to 2 MB and, where the system lets a program ask (Linux's madvise), in huge
 * pages, so that streaming it takes one TLB entry per 2 MB instead of one per
 * 4 KB. Freed with free(). */
void *rs_calloc_large(size_t count, size_t size, rs_error *err);

/* A copy of the string s, allocated as by rs_calloc; NULL and err filled on failure. */
char *rs_strdup(const char *s, rs_error *err);

/* The plural ending of a count in a message: "%d sentence%s", n, RS_S(n)
 * prints "1 sentence" and "2 sentences". */
#define RS_S(n) ((n) == 1 ? "" : "s")

#endif
