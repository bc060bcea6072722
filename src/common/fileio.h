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
 * destroy it), creates parent directories and opens "path.tmp.<pid>" (created
 * exclusively, with the mode of the file it replaces, or 0666 less the umask
 * for a new one); write to af.f (a writer may record the errno of a failed
 * write in af.errnum); rs_atomic_commit checks for write errors, fflush +
 * fsync + fclose, checks the target again, renames over `path` and fsyncs the
 * directory. On failure of either (or by rs_atomic_abort) the temporary file
 * is removed. Both free af. While a temporary file exists its name is
 * recorded for rs_atomic_remove_temporaries. */
typedef struct {
    FILE *f;
    char *tmp;  /* temporary name, owned */
    char *path; /* final name, owned */
    int errnum; /* errno of the first failed write, -1 if unknown, 0 if none */
    int slot;   /* internal: 1 + its place among the recorded temporary files, 0 if none */
} rs_atomic_file;

int rs_atomic_open(rs_atomic_file *af, const char *path, rs_error *err);
int rs_atomic_commit(rs_atomic_file *af, rs_error *err);
void rs_atomic_abort(rs_atomic_file *af);

/* Fails, naming path and what it is, when path exists and is not a regular
 * file (a symbolic link, directory, FIFO, device or socket): what
 * rs_atomic_open refuses to replace. */
int rs_check_replaceable(const char *path, rs_error *err);

/* rs_atomic_open with flags: RS_ATOMIC_MAKE_DIRS creates missing parent
 * directories (rs_atomic_open's way); without it a missing directory is an
 * error, as the shell's "> FILE" makes it. */
enum { RS_ATOMIC_MAKE_DIRS = 1 };
int rs_atomic_open_with(rs_atomic_file *af, const char *path, int flags, rs_error *err);

/* Removes every temporary file of an atomic replacement under way. Async-signal-safe
 * (only unlink): for a handler of SIGINT or SIGTERM, so that a killed command
 * leaves the old file and nothing beside it. */
void rs_atomic_remove_temporaries(void);

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
