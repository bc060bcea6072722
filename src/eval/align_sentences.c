#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "eval/align_sentences.h"
#include "search/forced.h"

int rs_align_emit(const rs_align_emitter *em, const char *const *tgt, int tgt_count,
                  const char *const *src, int src_count, const float *w, int id, rs_error *err)
{
    rs_alignment given, merged;
    if (rs_alignment_make(&given, tgt, tgt_count, src, src_count, w, err))
        return -1;
    const rs_alignment *a = &given;
    if (em->words || em->bpe) {
        if (em->words ? rs_alignment_to_words(&given, &merged, err)
                      : rs_alignment_join_bpe(&given, em->bpe, &merged, err)) {
            rs_alignment_free(&given);
            return -1;
        }
        a = &merged;
    }
    const int rc = em->sink(em->ctx, a, id, err);
    if (a == &merged)
        rs_alignment_free(&merged);
    rs_alignment_free(&given);
    return rc;
}

int rs_align_translations(const rs_ready *model, const rs_codec *codec, const rs_lines *lines,
                          const rs_translate_options *opt, const rs_align_emitter *em,
                          rs_error *err)
{
    rs_translator tr;
    if (rs_translator_init(&tr, &model, 1, codec, opt, err))
        return -1;
    const int count = lines->count;
    rs_translated *out = rs_calloc((size_t)opt->batch_size, sizeof *out, err);
    int status = out ? 0 : -1;
    for (int from = 0; from < count && status == 0; from += opt->batch_size) {
        const int B = count - from < opt->batch_size ? count - from : opt->batch_size;
        if (rs_translate_lines(&tr, B, (const char *const *)lines->lines + from, out, err)) {
            status = -1;
            break;
        }
        for (int b = 0; b < B; b++) {
            const rs_translated *t = &out[b];
            if (t->truncated && em->warn)
                fprintf(em->warn, "%s: line %d: source cut to its first %d tokens (%d more)\n",
                        em->prog, from + b + 1, t->source_count, t->truncated);
            if (status == 0 && t->source_count > 0)
                status = rs_align_emit(em, (const char *const *)t->hyps[0].tokens, t->hyps[0].count,
                                       (const char *const *)t->source_tokens, t->source_count,
                                       t->hyps[0].alignment, from + b + 1, err);
        }
        for (int b = 0; b < B; b++)
            rs_translated_free(&out[b]);
    }
    free(out);
    rs_translator_free(&tr);
    return status;
}

int rs_align_pairs(const rs_ready *model, const rs_tokenized *tok, int batch_size,
                   const rs_align_emitter *em, rs_error *err)
{
    rs_dataset data = {0};
    rs_forced *f = NULL;
    int status = -1;
    if (rs_dataset_build(&data, tok, &model->model->src_vocab, &model->model->tgt_vocab, 0, NULL,
                         err))
        return -1;
    if (!(f = rs_calloc((size_t)(data.count ? data.count : 1), sizeof *f, err)) ||
        rs_forced_decode(&model, 1, &data, batch_size, RS_FORCED_ALIGNMENT, f, err))
        goto done;
    for (int i = 0; i < data.count; i++)
        if (rs_align_emit(em, (const char *const *)tok->tgt[i].tokens, tok->tgt[i].count,
                          (const char *const *)tok->src[i].tokens, tok->src[i].count,
                          f[i].alignment, (int)tok->first + i + 1, err))
            goto done;
    status = 0;
done:
    rs_forced_free_all(f, data.count);
    rs_dataset_free(&data);
    return status;
}

/* The next chunk of pairs into in->tok: their count, 0 at the end, or -1. */
static int next_pairs(rs_align_input *in, rs_error *err)
{
    rs_tokenized_free(&in->tok);
    rs_pairs_free(&in->pairs);
    const char *name = strcmp(in->path, "-") ? in->path : "<stdin>";
    const int n = rs_pair_reader_chunk(&in->reader, in->chunk, &in->pairs, err);
    if (n <= 0)
        return n;
    if (rs_tokenize_pairs(&in->tok, &in->pairs, in->ids.codec, name, err) ||
        rs_pairs_cut_sources(&in->tok, in->path, &in->ids, err))
        return -1;
    in->count = in->tok.count;
    return n;
}

int rs_align_input_open(rs_align_input *in, const char *path, int pairs, int swap, int whole,
                        const rs_ready *used, const rs_pairs_ids *ids, rs_error *err)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->used = used;
    in->ids = *ids;
    if (!pairs) {
        if (rs_lines_read(path, &in->lines, err))
            return -1;
        in->count = in->lines.count;
    } else {
        if (rs_pair_reader_open_tsv(&in->reader, path, swap, 0, err))
            return -1;
        in->reader_open = 1;
        in->chunk = whole ? INT_MAX : RS_ALIGN_CHUNK;
        if (next_pairs(in, err) < 0)
            return -1;
    }
    if (in->count == 0)
        rs_note_empty(ids->warn, ids->prog, path, pairs ? "pairs" : "sentences", "aligned");
    return 0;
}

int rs_align_input_run(rs_align_input *in, const rs_translate_options *opt,
                       const rs_align_emitter *em, rs_error *err)
{
    if (!in->reader_open)
        return rs_align_translations(in->used, in->ids.codec, &in->lines, opt, em, err);
    for (int n = in->count; n > 0;)
        if (rs_align_pairs(in->used, &in->tok, opt->batch_size, em, err) ||
            (n = next_pairs(in, err)) < 0)
            return -1;
    return 0;
}

void rs_align_input_free(rs_align_input *in)
{
    rs_tokenized_free(&in->tok);
    rs_pairs_free(&in->pairs);
    rs_lines_free(&in->lines);
    if (in->reader_open)
        rs_pair_reader_close(&in->reader);
    in->reader_open = 0;
}
