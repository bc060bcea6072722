/* The one rule for every file a command writes, and -o FILE replaced whole or
 * not at all. Every command that writes a file (translate, align, its
 * --replay, plot, export, import, average) checks it here before writing:
 *
 * - never one of its own inputs (device and inode: links, hard links and
 *   standard input included), given as rs_output_add_input/_model;
 * - never a checkpoint (its magic number), nor a new file under a .ckpt name,
 *   unless the output is a checkpoint itself (average, import), which may
 *   replace a checkpoint but no other file;
 * - nothing in a training run's directory (train/rundir.h rs_rundir_is_run)
 *   but the one name the command owns there (plot's train.svg, the replay's
 *   replay.html), or, for a rule with beside_run (average), a checkpoint
 *   under a name training does not write there;
 * - not a file the user may not write (read-only), which a rename would
 *   replace all the same.
 *
 * A file is written beside its name and renamed over it once complete
 * (common/fileio.h rs_atomic_*): an error, a full disk, SIGINT, SIGTERM or
 * SIGHUP leave the old file as it was and no temporary file (the first check
 * installs handlers that remove it and end the program by the same signal).
 * "-" (or no name) is standard output, and an existing FIFO or character
 * device (/dev/null, a process substitution) is written to as the shell would:
 * there is nothing there to keep. */
#ifndef RS_OUTPUT_H
#define RS_OUTPUT_H

#include <stdio.h>

#include "common/error.h"
#include "common/fileio.h"

typedef enum {
    RS_OUTPUT_TEXT,       /* text: standard output, a stream, or a file in an existing directory */
    RS_OUTPUT_BINARY,     /* a binary file (safetensors); missing directories are made */
    RS_OUTPUT_CHECKPOINT, /* a checkpoint; missing directories are made */
} rs_output_kind;

/* What a command writes and what it reads. */
typedef struct {
    rs_output_kind kind;
    const char *owns; /* the one file name it may write in a run's directory, or NULL */
    /* A checkpoint written beside a run's own (average's, as other toolkits
     * write theirs next to the checkpoints averaged): any name in a run's
     * directory that training does not write (rs_rundir_is_training_name). */
    int beside_run;
    char **inputs; /* copies of the input names ("-": standard input) */
    int count, cap;
} rs_output_rule;

void rs_output_rule_init(rs_output_rule *rule, rs_output_kind kind, const char *owns);
void rs_output_rule_free(rs_output_rule *rule);

/* An input of the command (a NULL path is skipped). */
int rs_output_add_input(rs_output_rule *rule, const char *path, rs_error *err);

/* The checkpoint a -m argument resolves to (a file, or a model directory's
 * best.ckpt/last.ckpt); one that does not resolve is skipped (its loading
 * reports it). */
int rs_output_add_model(rs_output_rule *rule, const char *model_arg, rs_error *err);

/* Fails, naming path and why, when the rule forbids writing it; a NULL path
 * or "-" passes. From the first call on, SIGINT, SIGTERM and SIGHUP (unless
 * ignored) remove the temporary files of outputs being written before they
 * end the program. Commands whose writer takes a path (rs_checkpoint_save,
 * rs_safetensors_export) call it before writing; rs_output_open calls it. */
int rs_output_check(const rs_output_rule *rule, const char *path, rs_error *err);

/* An output being written: f is standard output, a stream, or a temporary
 * file that becomes path on rs_output_commit. */
typedef struct {
    FILE *f;
    const char *name; /* the path, or "standard output" */
    int atomic;       /* af is open */
    int stream;       /* f is a FIFO or device opened by name */
    rs_atomic_file af;
} rs_output;

/* Checks path by the rule (rs_output_check) and opens it (NULL or "-":
 * standard output). */
int rs_output_open(rs_output *out, const rs_output_rule *rule, const char *path, rs_error *err);

/* Flushes what was written so far (a pipe's reader sees each batch); -1
 * naming the file on a write error (then rs_output_abort). */
int rs_output_flush(rs_output *out, rs_error *err);

/* Finishes the output: flush, sync and rename into place (a stream: flush and
 * close); -1 naming the file on any error, the old file left as it was. */
int rs_output_commit(rs_output *out, rs_error *err);

/* Gives the output up: a temporary file is removed, the old file stays. Safe
 * after rs_output_commit and on an output never opened (zeroed). */
void rs_output_abort(rs_output *out);

/* Writes text[size], read from the file `from`, to path as every text output
 * is written: by the rule of one whose input is `from` and that owns the name
 * `owns` in a run's directory. */
int rs_output_copy(const char *text, size_t size, const char *from, const char *path,
                   const char *owns, rs_error *err);

#endif
