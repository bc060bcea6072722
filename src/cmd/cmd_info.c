/* rnnsearch info: what a checkpoint holds, for people: the stored
 * configuration, the parameter tensors, the vocabularies, the text settings
 * and the training counters. */
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

#include "model/checkpoint.h"
#include "cmd/cli.h"
#include "cmd/commands.h"

#define PROG "rnnsearch info"

static void usage(FILE *out)
{
    fputs("usage: rnnsearch info -m MODEL\n"
          "Prints what a checkpoint holds: its configuration as 'key = value' lines,\n"
          "then, as '#' comment lines, the size of every parameter tensor and their\n"
          "total, the vocabulary sizes, the text settings and the training counters\n"
          "(step, epoch, best dev loss and BLEU) when the checkpoint has them.\n"
          "\n"
          "  -m, --model MODEL   a checkpoint file, or a model directory (models/NAME)\n"
          "                      whose best.ckpt, else last.ckpt, is used (required)\n"
          "  -h, --help          show this help\n",
          out);
}

static void print_tensors(const rs_model *m)
{
    printf("# parameters (rows x cols; tensors of size 0 are absent)\n");
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &m->layout.info[i];
        if (!t->size && t->shares >= 0)
            printf("#   %-10s is %s (tied: no parameters of its own)\n", t->name,
                   m->layout.info[t->shares].name);
        if (!t->size)
            continue;
        char shape[48];
        if (t->cols)
            snprintf(shape, sizeof shape, "%d x %d", t->rows, t->cols);
        else
            snprintf(shape, sizeof shape, "%d", t->rows);
        printf("#   %-10s %14s %12zu\n", t->name, shape, t->size);
    }
    printf("#   %-10s %14s %12zu (%.1f MB as float32)\n", "total", "", m->layout.total,
           (double)m->layout.total * 4 / 1e6);
}

static void print_training(const rs_train_state *s)
{
    /* A fresh state (step 0, epoch 0) is what loading gives a weights-only file. */
    if (s->step == 0 && s->epoch == 0) {
        printf("# training: no training state (weights only)\n");
        return;
    }
    printf("# training: step %lld, epoch %d", (long long)s->step, (int)s->epoch);
    if (s->batches_done)
        printf(" (+%lld batches)", (long long)s->batches_done);
    if (isfinite(s->best_dev_loss))
        printf(", best dev loss %.4f (ppl %.2f)", (double)s->best_dev_loss,
               exp((double)s->best_dev_loss));
    else
        printf(", best dev loss none");
    if (s->best_dev_bleu >= 0)
        printf(", best dev BLEU %.2f", (double)s->best_dev_bleu);
    else
        printf(", best dev BLEU none");
    printf(", %d evaluations without improvement, lr scale %g\n", (int)s->bad_evals,
           (double)s->lr_scale);
}

int cmd_info(int argc, char **argv)
{
    const char *model_arg;
    int status = rs_cli_one_option(PROG, argc, argv, 'm', &model_arg, usage);
    if (status >= 0)
        return status;
    if (!model_arg)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);

    rs_error err;
    char path[4096];
    rs_model model;
    rs_train_state state;
    if (rs_model_locate(model_arg, path, sizeof path, &err) ||
        rs_checkpoint_load(path, &model, &state, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return RS_EXIT_FAIL;
    }
    struct stat st;
    printf("# %s", path);
    if (!stat(path, &st))
        printf(" (%lld bytes)", (long long)st.st_size);
    printf("\n# configuration\n");
    rs_cli_print_config(stdout, &model.cfg);
    print_tensors(&model);
    printf("# vocabularies: source %d tokens, target %d tokens\n", model.src_vocab.size,
           model.tgt_vocab.size);
    printf("# text: tokenizer %s, lowercase %s", rs_tokenizer_names[model.cfg.tokenizer],
           model.cfg.lowercase ? "yes" : "no");
    if (model.spm_src_len || model.spm_tgt_len)
        printf(", SentencePiece models of %zu and %zu bytes (%d subwords)", model.spm_src_len,
               model.spm_tgt_len, model.cfg.subwords);
    printf("\n");
    print_training(&state);
    rs_train_state_free(&state);
    rs_model_free(&model);
    if (fflush(stdout)) {
        fprintf(stderr, PROG ": cannot write the output\n");
        return RS_EXIT_FAIL;
    }
    return RS_EXIT_OK;
}
