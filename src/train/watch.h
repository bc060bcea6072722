/* Watching attention learn to align (train/watch.c): at every dev evaluation
 * of a training run, the alignments of a few watched sentences appended to
 * DIR/watch.jsonl, and the alignment error rate (eval/aer.h) of the dev
 * pairs' forced alignments against gold links.
 *
 * watch.jsonl has one JSON object per line and per watched sentence, kind
 * and evaluation:
 *   {"step":120,"epoch":2,"sentence":0,"kind":"greedy","id":0,
 *    "source":[…,"</s>"],"target":[…,"</s>"],"alignment":[[…],…]}
 * step 0 is the untrained model (recorded when a run starts from step 0);
 * kind "greedy" is the greedy translation's alignment, "forced" the forced
 * alignment of the watched target; source, target and alignment are those of
 * eval/alignment.h's JSON record (rows: target tokens then </s>). A forced
 * record of a dev pair (no --watch file) has the pair's gold links too when
 * --dev-align gave them, before "id": "gold":{"sure":[[s,t],…],"possible":
 * [[s,t],…]}, source and target word indices from 0 as in Pharaoh's "s-t"
 * and "s?t" (the page draws them over the matrix). The records
 * of one evaluation are appended in one write, then synced; a reader takes
 * whole lines only (rs_watch_read). A resumed run drops the records after its
 * checkpoint's step (they are written again), as it does the log's rows. */
#ifndef RS_WATCH_H
#define RS_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "data/dataset.h"
#include "eval/aer.h"
#include "model/codec.h"
#include "model/model.h"
#include "train/train.h"

#define RS_WATCH_FILE "watch.jsonl"
#define RS_WATCH_DEFAULT_COUNT 3 /* dev pairs watched when no --watch file is given */

struct rs_watch {
    int count;             /* watched sentences */
    char **source;         /* [count] raw text, owned */
    char **target;         /* [count] raw text or NULL (no forced alignment), owned */
    const rs_codec *codec; /* the model's text settings; not owned */
    /* Gold links of the dev pairs (dev->line[k] indexes them), or NULL. */
    rs_gold_links *gold;
    int gold_count;
    float threshold; /* hard links: 0 = argmax, else weights >= threshold */
    int dev_pairs;   /* 1: watched sentence k is dev pair k (its gold links, k's) */
};

/* The watched sentences of a file: lines "SOURCE" or "SOURCE<TAB>TARGET";
 * empty lines are skipped; errors name the file and line. */
int rs_watch_read_file(rs_watch *w, const char *path, rs_error *err);

/* The first `count` pairs (or fewer) of dev as watched sentences. */
int rs_watch_from_pairs(rs_watch *w, char *const *src, char *const *tgt, int n, int count,
                        rs_error *err);

/* Gold links, one Pharaoh line per dev pair (`pairs` of them); errors name
 * the file and line, and a count that differs from the dev set's. */
int rs_watch_read_gold(rs_watch *w, const char *path, int pairs, rs_error *err);

void rs_watch_free(rs_watch *w);

/* At the start of rs_train: drops the records after `step` (a torn last line
 * too), and when step is 0 records the untrained model's alignments. w may be
 * NULL (nothing watched: only the file is tidied). */
int rs_watch_start(const rs_watch *w, const rs_model *model, const char *dir, int64_t step,
                   rs_error *err);

/* At a dev evaluation (ev->step, ev->epoch): ev->aer, align_precision and
 * align_recall (NAN unless gold links are given), then the records appended.
 * w may be NULL. */
int rs_watch_evaluate(const rs_watch *w, const rs_model *model, const rs_dataset *dev,
                      const char *dir, rs_train_event *ev, rs_error *err);

/* Whole lines of a watch file (or any line-oriented file being appended to)
 * from byte `offset`: *data (malloc'd, NUL-terminated) holds *len bytes that
 * end with a newline, at most max_bytes unless one line is longer (then that
 * line whole); *next is offset + *len. A line still being written (no newline
 * yet) is left for a later call. A missing file reads as empty. */
int rs_watch_read(const char *path, uint64_t offset, size_t max_bytes, char **data, size_t *len,
                  uint64_t *next, rs_error *err);

#endif
