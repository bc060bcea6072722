#include <math.h>

#include "model/describe.h"
#include "text/text.h"

static void describe_tensors(FILE *out, const rs_model *m)
{
    fprintf(out, "# parameters (rows x cols; tensors of size 0 are absent)\n");
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &m->layout.info[i];
        if (!t->size && t->shares >= 0)
            fprintf(out, "#   %-10s is %s (tied: no parameters of its own)\n", t->name,
                    m->layout.info[t->shares].name);
        if (!t->size)
            continue;
        char shape[48];
        if (t->cols)
            snprintf(shape, sizeof shape, "%d x %d", t->rows, t->cols);
        else
            snprintf(shape, sizeof shape, "%d", t->rows);
        fprintf(out, "#   %-10s %14s %12zu\n", t->name, shape, t->size);
    }
    fprintf(out, "#   %-10s %14s %12zu (%.1f MB as float32)\n", "total", "", m->layout.total,
            (double)m->layout.total * 4 / 1e6);
}

static void describe_training(FILE *out, const rs_train_state *s)
{
    /* A fresh state (step 0, epoch 0) is what loading gives a weights-only file. */
    if (s->step == 0 && s->epoch == 0) {
        fprintf(out, "# training: no training state (weights only)\n");
        return;
    }
    fprintf(out, "# training: step %lld, epoch %d", (long long)s->step, (int)s->epoch);
    if (s->batches_done)
        fprintf(out, " (+%lld batches)", (long long)s->batches_done);
    if (isfinite(s->best_dev_loss))
        fprintf(out, ", best dev loss %.4f (ppl %.2f)", (double)s->best_dev_loss,
                exp((double)s->best_dev_loss));
    else
        fprintf(out, ", best dev loss none");
    if (s->best_dev_bleu >= 0)
        fprintf(out, ", best dev BLEU %.2f", (double)s->best_dev_bleu);
    else
        fprintf(out, ", best dev BLEU none");
    fprintf(out, ", %d evaluation%s without improvement, lr scale %g\n", (int)s->bad_evals,
            RS_S(s->bad_evals), (double)s->lr_scale);
}

void rs_model_describe(FILE *out, const rs_model *m, const rs_train_state *state)
{
    describe_tensors(out, m);
    fprintf(out, "# vocabularies: source %d tokens, target %d tokens\n", m->src_vocab.size,
            m->tgt_vocab.size);
    fprintf(out, "# text: tokenizer %s, lowercase %s", rs_tokenizer_names[m->cfg.tokenizer],
            m->cfg.lowercase ? "yes" : "no");
    if (m->spm_src_len || m->spm_tgt_len)
        fprintf(out, ", SentencePiece models of %zu and %zu bytes (%d subwords)", m->spm_src_len,
                m->spm_tgt_len, m->cfg.subwords);
    if (m->cfg.post_process != RS_POST_NONE)
        fprintf(out, ", output post-processed: %s", rs_post_process_names[m->cfg.post_process]);
    fprintf(out, "\n");
    describe_training(out, state);
}
