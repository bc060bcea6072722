/* A training run's model directory as JSON, for the explorer's training view
 * (serve's GET /api/run and GET /api/run/watch, and the replay page of
 * `rnnsearch align --replay`); formats in docs/serve.md. Both read whole
 * lines only, so a training appending meanwhile is never seen half-written. */
#ifndef RS_SERVE_RUN_H
#define RS_SERVE_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

/* {"dir":…,"columns":[…],"rows":[[…],…],"watch_bytes":N}: train.log.tsv
 * (numbers as numbers, empty cells null, other cells strings; no log: no
 * columns and no rows) and the size of watch.jsonl's whole lines. A malloc'd
 * JSON text of at most cap bytes, or NULL with err filled. */
char *rs_run_log_json(const char *dir, size_t cap, size_t *len, rs_error *err);

/* {"from":F,"next":N,"size":S,"records":[…]}: the watch.jsonl records in
 * bytes [F, N) (as many whole lines as fit in about cap bytes; N = F when
 * there are none yet), S the file's size now (S < F: the file was truncated
 * by a resumed run; read again from 0). Lines that are not JSON objects are
 * left out. */
char *rs_run_watch_json(const char *dir, uint64_t from, size_t cap, size_t *len, rs_error *err);

/* The replay page of a finished run: the explorer page (serve_page.html)
 * with {"log": rs_run_log_json, "watch": rs_run_watch_json from 0} embedded,
 * which it shows instead of asking a server; one self-contained HTML file.
 * A directory without watch.jsonl fails, naming it. */
int rs_run_write_replay(FILE *out, const char *dir, rs_error *err);

#endif
