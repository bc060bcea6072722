/* Dev evaluation: greedy translations of the dev set through the
 * translation pipeline, their exact-match rate and BLEU (evaluate.h). */
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "search/translate.h"
#include "train/evaluate.h"

/* One dev sentence's BLEU statistics. The hypothesis is the text translate
 * gives (detokenized, then post-processed as the model's post_process says:
 * "@@ " pieces joined, SentencePiece pieces decoded); the reference, a line
 * of the same pre-segmented data, is post-processed the same way, so BLEU
 * scores the words a reader gets, not the subword pieces. */
static int add_sentence(rs_bleu_stats *stats, const rs_codec *codec, const char *hyp,
                        const char *raw_ref, rs_error *err)
{
    char *ref;
    if (rs_codec_post_process(codec, -1, raw_ref, &ref, err))
        return -1;
    const char *refs[1] = {ref};
    int rc = rs_bleu_stats_add(stats, hyp, refs, 1, NULL, err);
    free(ref);
    return rc;
}

int rs_dev_translate(const rs_model *model, const rs_dataset *dev, const rs_train_options *options,
                     int batch_size, double *exact, double *bleu, rs_error *err)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.batch_size = batch_size;
    const int with_bleu = options->codec && options->dev_refs;
    rs_translator tr;
    const rs_ready plain = rs_ready_plain(model), *members[1] = {&plain};
    rs_source *sources = rs_calloc((size_t)dev->count + 1, sizeof *sources, err);
    rs_translated *out = rs_calloc((size_t)dev->count + 1, sizeof *out, err);
    if (!sources || !out ||
        rs_translator_init(&tr, members, 1, with_bleu ? options->codec : NULL, &opt, err)) {
        free(sources);
        free(out);
        return -1;
    }
    for (int i = 0; i < dev->count; i++)
        sources[i] = (rs_source){dev->src[i], dev->src_len[i]};
    int status = rs_translate_sources(&tr, dev->count, sources, out, err);
    rs_bleu_stats stats;
    rs_bleu_stats_init(&stats);
    int correct = 0;
    for (int i = 0; i < dev->count && status == 0; i++) {
        const rs_hypothesis *h = &out[i].hyps[0];
        correct += h->count == dev->tgt_len[i] &&
                   (h->count == 0 || !memcmp(h->ids, dev->tgt[i], sizeof(int) * (size_t)h->count));
        if (with_bleu && add_sentence(&stats, options->codec, h->text ? h->text : "",
                                      options->dev_refs[dev->line[i]], err))
            status = -1;
    }
    for (int i = 0; i < dev->count; i++)
        rs_translated_free(&out[i]);
    *exact = dev->count ? (double)correct / dev->count : 0.0;
    *bleu = -1.0;
    if (with_bleu) {
        rs_bleu_result result;
        rs_bleu_compute(&stats, &result);
        *bleu = result.score;
    }
    free(sources);
    free(out);
    rs_translator_free(&tr);
    return status;
}
