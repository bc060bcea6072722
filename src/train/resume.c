/* Continuing a training run from its last.ckpt: the checkpoint taken as a
 * run's, the settings given again, the data against its fingerprint. */
#include "train/resume.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/checkpoint.h"
#include "train/dist.h"
#include "train/fingerprint.h"

void rs_resume_changeable(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; rs_config_resumable[i] && used < size; i++) {
        const char *sep = i == 0 ? "" : rs_config_resumable[i + 1] ? ", " : " and ";
        used += (size_t)snprintf(buf + used, size - used, "%s--%s", sep, rs_config_resumable[i]);
    }
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
}

int rs_resume_apply(rs_config *cfg, const rs_resume_given *given, rs_error *err)
{
    for (int i = 0; i < given->count; i++) {
        const char *key = given->keys[i], *value = given->values[i];
        rs_config asked = *cfg;
        if (value ? rs_config_set_option(&asked, key, value, err)
                  : rs_config_set(&asked, key, "1", err))
            return RS_TRAIN_REFUSED;
        if (rs_config_may_change_on_resume(key)) {
            *cfg = asked;
            continue;
        }
        char was[RS_STR_MAX], now[RS_STR_MAX], changeable[256];
        rs_config_format(cfg, key, was, sizeof was);
        rs_config_format(&asked, key, now, sizeof now);
        rs_resume_changeable(changeable, sizeof changeable);
        if (strcmp(was, now)) {
            rs_fail(err,
                    "--resume: the checkpoint was trained with %s=%s, not %s; only %s may change "
                    "on resume",
                    key, was, now, changeable);
            return RS_TRAIN_REFUSED;
        }
    }
    return 0;
}

int rs_resume_load(rs_train_run *run, const char *ckpt, const rs_resume_given *given, int has_dev,
                   rs_error *err)
{
    /* Every rank reads the checkpoint (rs_train checks that they agree). */
    if (rs_dist_check(rs_checkpoint_load(ckpt, &run->model, &run->state, err), err))
        return -1;
    if (!run->state.from_checkpoint) {
        /* Weights only (average, import): resuming would restart at step 0
         * and rewrite this run's log and best.ckpt. */
        rs_fail(err,
                "--resume: %s holds weights only, no training state (step, Adam moments, data "
                "position), as `average` and `import` write; nothing was changed. Resume from "
                "the run's own last.ckpt, or train a new model in another directory",
                ckpt);
        return RS_TRAIN_REFUSED;
    }
    /* Only training keys may change (rs_config_resumable): the model's stay. */
    rs_config settings = rs_model_settings(&run->model);
    const int applied = rs_resume_apply(&settings, given, err);
    if (applied)
        return applied;
    run->model.train = settings.train;
    const char *needs = rs_train_needs_dev_set(&run->model.train);
    if (!has_dev && needs) {
        rs_fail(err,
                "the checkpoint was trained with %s, which needs the dev set: give it again "
                "with --dev or --dev-src/--dev-tgt",
                needs);
        return RS_TRAIN_REFUSED;
    }
    return 0;
}

/* How the set given now differs from the checkpoint's: `sides` 1 source,
 * 2 target, 3 both; pair counts 0 for no set. */
static void describe_change(char *buf, size_t size, const rs_data_given *g, int sides,
                            unsigned pairs_then, unsigned pairs_now)
{
    const char *option = g->tsv ? g->tsv_option : g->src_option;
    const char *file = g->tsv ? g->tsv : g->src;
    if (pairs_then == 0) {
        snprintf(buf, size, "it was trained without a %s set, and %s %s gives one now", g->what,
                 option, file);
        return;
    }
    if (pairs_now == 0) {
        snprintf(buf, size, "it was trained with a %s set of %u pairs, and none is given now",
                 g->what, pairs_then);
        return;
    }
    const char *side = sides == 1   ? "the source side"
                       : sides == 2 ? "the target side"
                                    : "both sides";
    if (g->tsv || sides != 3)
        snprintf(buf, size, "the %s data differs from %s %s (%s; %u pairs now, %u then)", g->what,
                 g->tsv || sides == 1 ? option : g->tgt_option,
                 g->tsv || sides == 1 ? file : g->tgt, side, pairs_now, pairs_then);
    else
        snprintf(buf, size, "the %s data differs from %s %s and %s %s (%s; %u pairs now, %u then)",
                 g->what, g->src_option, g->src, g->tgt_option, g->tgt, side, pairs_now,
                 pairs_then);
}

/* Appends a note (when there is room: there are never more than two). */
static void add_note(rs_resume_notes *notes, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_note(rs_resume_notes *notes, const char *fmt, ...)
{
    if (notes->count == RS_RESUME_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes->text[notes->count++], sizeof notes->text[0], fmt, ap);
    va_end(ap);
}

/* Other training data: its epoch starts from the beginning, with no loss
 * summed yet. */
static void restart_epoch(rs_train_state *state)
{
    state->batches_done = 0;
    state->epoch_loss = 0.0;
    state->epoch_tokens = 0;
}

/* --new-data: the position in an epoch of other training data, and the
 * records of another dev set, start anew. */
static void accept_new_data(const char *ckpt, rs_train_state *state, int train_sides, int dev_sides,
                            rs_resume_notes *notes)
{
    if (train_sides) {
        add_note(notes, "--new-data: continuing %s on other training data%s", ckpt,
                 state->batches_done ? ", from the beginning of an epoch" : "");
        restart_epoch(state);
    }
    if (dev_sides) {
        add_note(notes,
                 "--new-data: continuing %s with another dev set; best.ckpt is chosen anew "
                 "on it",
                 ckpt);
        state->best_dev_loss = INFINITY;
        state->best_dev_bleu = -1.0f;
        state->bad_evals = 0;
    }
}

int rs_resume_check_data(const char *ckpt, rs_train_state *state, const rs_data_fingerprint *now,
                         const rs_data_given given[2], int new_data, rs_resume_notes *notes,
                         rs_error *err)
{
    notes->count = 0;
    if (!state->data.known) {
        add_note(notes,
                 "note: %s records no fingerprint of its data (written by an older rnnsearch), "
                 "so the data given now cannot be checked",
                 ckpt);
        if (new_data) /* taken at its word: the data is other */
            restart_epoch(state);
        return 0;
    }
    const rs_data_fingerprint *then = &state->data;
    const int differ = rs_data_fingerprint_compare(then, now);
    /* 1 source, 2 target, 3 both */
    const int train_sides =
        (differ & RS_DATA_TRAIN_SRC ? 1 : 0) | (differ & RS_DATA_TRAIN_TGT ? 2 : 0);
    const int dev_sides = (differ & RS_DATA_DEV_SRC ? 1 : 0) | (differ & RS_DATA_DEV_TGT ? 2 : 0);
    if (!differ)
        return 0;
    if (new_data) {
        accept_new_data(ckpt, state, train_sides, dev_sides, notes);
        return 0;
    }
    char clause[2][sizeof err->msg] = {"", ""};
    if (train_sides)
        describe_change(clause[0], sizeof clause[0], &given[0], train_sides, then->train_pairs,
                        now->train_pairs);
    if (dev_sides)
        describe_change(clause[1], sizeof clause[1], &given[1], dev_sides, then->dev_pairs,
                        now->dev_pairs);
    rs_fail(err,
            "--resume: %s was trained on other data: %s%s%s. Resuming would not continue "
            "that run (its epoch order and step counts refer to its data): give the data it "
            "was trained on, or --new-data to continue training on this data (e.g. to "
            "fine-tune)",
            ckpt, clause[0], clause[0][0] && clause[1][0] ? "; " : "", clause[1]);
    return RS_TRAIN_REFUSED;
}
