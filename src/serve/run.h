/* A training run's model directory as JSON, for the explorer's training view
 * (serve's GET /api/run and GET /api/run/watch, and the replay page of
 * `rnnsearch align --replay`); formats in docs/serve.md. Both read whole
 * lines only, so a training appending meanwhile is never seen half-written.
 *
 * Every read is bounded and never blocks: a run file (train.log.tsv,
 * watch.jsonl) is read only when it is a regular file that, every symbolic
 * link resolved, lies inside the run directory (checked before it is opened
 * and again on the opened descriptor); it is opened non-blocking; and one
 * call reads about `cap` bytes at most, plus a bounded scan past a line too
 * long to send. A failure sets *status: 403 for a file refused by these
 * rules, 500 for any other error. */
#ifndef RS_SERVE_RUN_H
#define RS_SERVE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

/* Rows of train.log.tsv one answer holds at most (fewer when they would not
 * fit in its cap): the first and the last row and rows evenly between. */
#define RS_RUN_MAX_ROWS 2000

/* {"dir":…,"columns":[…],"rows":[[…],…],"log_rows":N,"log_rows_exact":B,
 * "thinned":B,"log_bytes":N,"watch_bytes":N}: train.log.tsv (numbers as
 * numbers, empty cells null, other cells strings; no log: no columns and no
 * rows). A log of more rows than fit is thinned: a log of at most cap bytes
 * is read whole and log_rows counts it; a longer one is sampled at evenly
 * spaced offsets (rows longer than 4 KiB are then left out) and log_rows is
 * an estimate. watch_bytes: watch.jsonl's size (null when it is refused);
 * no_alignment, only for a run whose train.log shows attention=none: why
 * there are no watched alignments.
 * A malloc'd JSON text of at most cap bytes, or NULL with err and *status. */
char *rs_run_log_json(const char *dir, size_t cap, size_t *len, int *status, rs_error *err);

/* {"from":F,"next":N,"size":S,"records":[…],"skipped":K,"skipped_bytes":B,
 * "unreadable":U}: the watch.jsonl records in bytes [F, N) (as many whole
 * lines as fit in about cap bytes; N = F when there are none yet), S the
 * file's size now (S < F: the file was truncated by a resumed run; read again
 * from 0). A record too long for an answer is skipped (K counts those that
 * start in [F, N), B the bytes passed over, including the rest of one
 * skipped before F); lines that are not JSON objects are left out (U). F
 * inside a line reads from the next one. */
char *rs_run_watch_json(const char *dir, uint64_t from, size_t cap, size_t *len, int *status,
                        rs_error *err);

/* The replay page of a finished run: the explorer page (serve_page.html)
 * with {"log": rs_run_log_json, "watch": rs_run_watch_json from 0} embedded,
 * which it shows instead of asking a server; one self-contained HTML file.
 * A directory without watch.jsonl fails, naming it (and, for a model with
 * --attention none, saying it has no alignment). */
int rs_run_write_replay(FILE *out, const char *dir, rs_error *err);

/* The run directory serve shows for a model argument (-m MODEL,
 * model/locate.h): the directory of the checkpoint it names, into dir[size],
 * when that holds a training log or watch file. A directory anyone may write
 * to (/tmp, for -m /tmp/x.ckpt) is left out, named in shared[size]: anyone
 * could put there the files the page shows. Without one neither is written. */
void rs_run_dir_of_model(const char *model_arg, char *dir, size_t size, char *shared);

#endif
