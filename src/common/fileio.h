/* Files as rnnsearch writes and reads them: parent directories made on
 * demand, replacement that never leaves a half-written file, whole-file reads. */
#ifndef RS_FILEIO_H
#define RS_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

/* 1 when path names a directory (links followed), else 0. */
int rs_is_directory(const char *path);

/* Creates the directory holding `path` (and its parents) when missing. */
int rs_make_parent_dirs(const char *path, rs_error *err);

/* Replacing a file so that readers see the old or the new one, never a part:
 * rs_atomic_open refuses a target that exists and is not a regular file
 * (symbolic link, directory, FIFO, device, socket: renaming over it would
 * destroy it), creates parent directories and opens "path.tmp.<pid>";
 * write to af.f (a writer may record the errno of a failed write in
 * af.errnum); rs_atomic_commit checks for write errors, fflush + fsync +
 * fclose, checks the target again, renames over `path` and fsyncs the directory. On failure of either
 * (or by rs_atomic_abort) the temporary file is removed. Both free af. */
typedef struct {
    FILE *f;
    char *tmp;  /* temporary name, owned */
    char *path; /* final name, owned */
    int errnum; /* errno of the first failed write, -1 if unknown, 0 if none */
} rs_atomic_file;

int rs_atomic_open(rs_atomic_file *af, const char *path, rs_error *err);
int rs_atomic_commit(rs_atomic_file *af, rs_error *err);
void rs_atomic_abort(rs_atomic_file *af);

/* 1 when both names exist and are the same file (device and inode; links
 * followed), else 0. "-" stands for standard input. */
int rs_same_file(const char *path_a, const char *path_b);

/* Fails with "OUTPUT is the same file as INPUT" when writing
 * `output` would destroy `input`; a NULL or "-" output (standard output) and a
 * NULL input pass. For commands to call before they open the output. */
int rs_check_output_not_input(const char *output, const char *input, rs_error *err);

/* Opens a regular file for reading (anything else is refused without waiting,
 * a FIFO included); *size is its length. */
int rs_open_regular(const char *path, FILE **f, size_t *size, rs_error *err);

/* Reads exactly n bytes from f, or fails naming path. */
int rs_read_exact(FILE *f, void *buf, size_t n, const char *path, rs_error *err);

/* Reads a whole regular file into a new buffer (*size bytes, plus a NUL not
 * counted in *size). */
int rs_read_file(const char *path, unsigned char **data, size_t *size, rs_error *err);

#endif
