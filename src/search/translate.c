/* The translation pipeline (see translate.h): text to ids through the
 * model's codec, greedy or beam search, ids back to text, with <unk>
 * replacement, BPE joining and the alignment on request, under the one
 * length rule. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "search/beam.h"
#include "search/decode.h"
#include "search/translate.h"

struct rs_search {
    int max_S; /* 0: nothing allocated yet */
    int max_B; /* sentences decoded together, at most the options' batch_size */
    rs_decoder greedy;
    rs_beam_search beam;
    rs_hypothesis *found; /* [batch_size · n_best] */
};

void rs_translate_options_default(rs_translate_options *opt)
{
    *opt = (rs_translate_options){.beam = 1,
                                  .n_best = 1,
                                  .length_penalty = 1.0f,
                                  .max_src_len = RS_MAX_SRC_LEN,
                                  .batch_size = 32,
                                  .post_process = -1};
}

void rs_translated_free(rs_translated *t)
{
    for (int i = 0; t->source_tokens && i < t->source_count; i++)
        free(t->source_tokens[i]);
    free(t->source_tokens);
    for (int i = 0; t->hyps && i < (t->count > 0 ? t->count : 1); i++)
        rs_hypothesis_free(&t->hyps[i]);
    free(t->hyps);
    memset(t, 0, sizeof *t);
}

static int same_vocab(const rs_vocab *a, const rs_vocab *b)
{
    if (a->size != b->size)
        return 0;
    for (int i = 0; i < a->size; i++)
        if (strcmp(a->tokens[i], b->tokens[i]))
            return 0;
    return 1;
}

int rs_translator_init(rs_translator *tr, const rs_ready *const *models, int n_models,
                       const rs_codec *codec, const rs_translate_options *opt, rs_error *err)
{
    memset(tr, 0, sizeof *tr);
    if (rs_ensemble_check(models, n_models, err))
        return -1;
    for (int k = 1; k < n_models; k++) {
        if (!same_vocab(&models[k]->model->src_vocab, &models[0]->model->src_vocab))
            return rs_fail(err,
                           "model %d has another source vocabulary than model 1: an "
                           "ensemble reads one source vocabulary",
                           k + 1);
        const rs_model_config *a = &models[0]->model->cfg, *b = &models[k]->model->cfg;
        if (a->lowercase != b->lowercase || a->tokenizer != b->tokenizer)
            return rs_fail(err,
                           "model %d prepares text otherwise than model 1 (lowercase, "
                           "tokenizer): an ensemble needs one text pipeline",
                           k + 1);
    }
    if ((opt->want_alignment && rs_alignment_check(models, n_models, "alignment", err)) ||
        (opt->replace_unk && rs_alignment_check(models, n_models, "replacing <unk>", err)))
        return -1;
    if (opt->beam < 1 || opt->n_best < 1 || opt->n_best > opt->beam || opt->batch_size < 1 ||
        opt->max_len < 0 || opt->max_src_len < 0)
        return rs_fail(err, "translation options out of range (beam %d, n-best %d, batch %d)",
                       opt->beam, opt->n_best, opt->batch_size);
    if (opt->weights && rs_ensemble_weights_check(opt->weights, n_models, err))
        return -1;
    tr->models = models;
    tr->n_models = n_models;
    tr->codec = codec;
    tr->opt = *opt;
    if (!tr->opt.max_src_len)
        tr->opt.max_src_len = RS_MAX_SRC_LEN;
    tr->search = rs_calloc(1, sizeof *tr->search, err);
    return tr->search ? 0 : -1;
}

static void search_release(rs_search *s)
{
    if (s->max_S) {
        rs_decoder_free(&s->greedy);
        rs_beam_free(&s->beam);
    }
    free(s->found);
    s->found = NULL;
    s->max_S = 0;
    s->max_B = 0;
}

void rs_translator_free(rs_translator *tr)
{
    if (tr->search) {
        search_release(tr->search);
        free(tr->search);
    }
    memset(tr, 0, sizeof *tr);
}

/* The rounding of a reservation's source length: a multiple of this many
 * positions, so a run of batches of slowly growing lengths (they come sorted)
 * reallocates now and then, not at every batch, and pads little. */
#define RS_RESERVE_S_STEP 8

/* Workspaces for a batch of need_B sentences of up to need_S − 1 tokens.
 * They are sized by that batch (its sentences and its longest source), not
 * by the options' batch_size times the longest source of the call: a batch
 * of 100 000 short dates and one long line after them asked for 100 000 rows
 * of the long line's length, 67 GB for a model of 3 MB (issue 42). A
 * reservation that holds the batch is kept. One that does not is replaced:
 * by one holding both it and the batch when that costs at most twice the
 * batch's own (so calls that alternate long and short batches, as serve's
 * can, do not reallocate each time), else by the batch's own. Memory thus
 * stays within about twice what the largest batch actually decoded holds
 * (sentences rounded up to a power of two, positions to RS_RESERVE_S_STEP). */
static int search_reserve(rs_translator *tr, int need_S, int need_B, rs_error *err)
{
    rs_search *s = tr->search;
    if (need_S <= s->max_S && need_B <= s->max_B)
        return 0;
    int max_S = (need_S + RS_RESERVE_S_STEP - 1) / RS_RESERVE_S_STEP * RS_RESERVE_S_STEP;
    int max_B = 1;
    while (max_B < need_B && max_B < tr->opt.batch_size)
        max_B = max_B > tr->opt.batch_size / 2 ? tr->opt.batch_size : 2 * max_B;
    const int union_S = s->max_S > max_S ? s->max_S : max_S;
    const int union_B = s->max_B > max_B ? s->max_B : max_B;
    if ((double)union_S * union_B <= 2.0 * max_S * max_B) {
        max_S = union_S;
        max_B = union_B;
    }
    search_release(s);
    const size_t slots = (size_t)max_B * tr->opt.n_best;
    s->found = rs_calloc(slots, sizeof *s->found, err);
    if (!s->found)
        return -1;
    memset(&s->greedy, 0, sizeof s->greedy);
    memset(&s->beam, 0, sizeof s->beam);
    /* A failed init leaves nothing reserved, so the next call tries again. */
    rs_error inner;
    if (tr->opt.beam == 1
            ? rs_decoder_init(&s->greedy, tr->models, tr->n_models, max_B, 1, max_S, &inner)
            : rs_beam_init(&s->beam, tr->models, tr->n_models, max_B, tr->opt.beam, max_S,
                           &inner)) {
        search_release(s);
        tr->batch_too_large = 1;
        const double bytes = rs_decoder_bytes(tr->models, tr->n_models, max_B, tr->opt.beam, max_S);
        return rs_fail(err,
                       "decoding %d sentence%s of up to %d tokens together (batch size %d, "
                       "beam %d) takes about %.1f GB of memory: %s",
                       need_B, RS_S(need_B), need_S - 1, tr->opt.batch_size, tr->opt.beam,
                       bytes / 1e9, inner.msg);
    }
    s->max_S = max_S;
    s->max_B = max_B;
    rs_decoder *dec = tr->opt.beam == 1 ? &s->greedy : &s->beam.dec;
    s->greedy.scores = !tr->opt.skip_scores;
    if (rs_decoder_weigh(dec, tr->opt.weights, err) ||
        (tr->opt.shortlist.lex && rs_decoder_use_shortlist(dec, &tr->opt.shortlist, err))) {
        search_release(s);
        return -1;
    }
    return 0;
}

/* Whether a token is only punctuation, symbols and the tokenizers' markers
 * (a <unk> is never replaced by one: "She <unk>." must not become "She..").  */
static int is_punctuation(const char *token)
{
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)token;
    utf8proc_int32_t cp;
    int any = 0;
    for (utf8proc_ssize_t k; *s; s += k) {
        k = utf8proc_iterate(s, -1, &cp);
        if (k <= 0)
            return 0;
        if (cp == 0xFFED || cp == 0x2581)
            continue;
        switch (utf8proc_category(cp)) {
        case UTF8PROC_CATEGORY_PC:
        case UTF8PROC_CATEGORY_PD:
        case UTF8PROC_CATEGORY_PS:
        case UTF8PROC_CATEGORY_PE:
        case UTF8PROC_CATEGORY_PI:
        case UTF8PROC_CATEGORY_PF:
        case UTF8PROC_CATEGORY_PO:
        case UTF8PROC_CATEGORY_SM:
        case UTF8PROC_CATEGORY_SC:
        case UTF8PROC_CATEGORY_SK:
        case UTF8PROC_CATEGORY_SO: any = 1; break;
        default: return 0;
        }
    }
    return any;
}

/* Names a search result's ids: tokens, <unk> replaced by the source token of
 * largest weight that is not punctuation (the </s> column excluded); the
 * alignment, there for that, is dropped unless asked for; then the text. */
static int name_tokens(rs_translator *tr, const rs_translated *source, rs_hypothesis *h,
                       rs_error *err)
{
    const rs_vocab *vocab = &tr->models[0]->model->tgt_vocab;
    h->tokens = rs_calloc((size_t)h->count + 1, sizeof(char *), err);
    if (!h->tokens)
        return -1;
    for (int i = 0; i < h->count; i++) {
        const char *word = vocab->tokens[h->ids[i]];
        const float *row = h->alignment;
        if (h->ids[i] == RS_UNK && tr->opt.replace_unk && row) {
            row += (size_t)i * (source->source_count + 1);
            int best = -1;
            for (int j = 0; j < source->source_count; j++)
                if (!is_punctuation(source->source_tokens[j]) && (best < 0 || row[j] > row[best]))
                    best = j;
            if (best >= 0)
                word = source->source_tokens[best];
        }
        if (!(h->tokens[i] = rs_strdup(word, err)))
            return -1;
    }
    if (!tr->opt.want_alignment) {
        free(h->alignment);
        h->alignment = NULL;
    }
    if (!tr->codec)
        return 0;
    if (rs_codec_text(tr->codec, RS_SIDE_TGT, (const char *const *)h->tokens, h->count, &h->text,
                      err))
        return -1;
    char *joined;
    if (rs_codec_post_process(tr->codec, tr->opt.post_process, h->text, &joined, err))
        return -1;
    free(h->text);
    h->text = joined;
    if (!tr->opt.remove_bpe)
        return 0;
    if (rs_remove_bpe(h->text, tr->opt.remove_bpe, &joined, err))
        return -1;
    free(h->text);
    h->text = joined;
    return 0;
}

/* Decodes the non-empty sentences of out[0..count) (their source_tokens set),
 * whose ids are ids[i][0..len[i]). */
static int decode_all(rs_translator *tr, int count, const int *const *ids, const int *len,
                      rs_translated *out, rs_error *err)
{
    const rs_translate_options *o = &tr->opt;
    const int nbest = o->n_best, want = o->want_alignment || o->replace_unk;
    int *which = rs_calloc((size_t)o->batch_size, sizeof(int), err);
    const int **batch_ids = rs_calloc((size_t)o->batch_size, sizeof(int *), err);
    int *batch_len = rs_calloc((size_t)o->batch_size, sizeof(int), err);
    int *order = NULL, status = -1;
    if (!which || !batch_ids || !batch_len)
        goto done;
    rs_search *s = tr->search;
    tr->batch_too_large = 0;
    /* Sentences of similar length decode together (less padding); each
     * sentence's result does not depend on its batch. */
    if (!(order = rs_calloc((size_t)count + 1, sizeof(int), err)) ||
        rs_batch_length_order(count, len, order, err))
        goto done;
    int first = 0; /* the empty sentences sort first and are not decoded */
    while (first < count && len[order[first]] <= 0)
        first++;
    for (int from = first; from < count; from += o->batch_size) {
        const int B = count - from < o->batch_size ? count - from : o->batch_size;
        int longest = 0;
        for (int b = 0; b < B; b++) {
            const int i = order[from + b];
            which[b] = i;
            batch_ids[b] = ids[i];
            batch_len[b] = len[i];
            longest = len[i] > longest ? len[i] : longest;
        }
        /* This batch's room, before its steps (</s> is a source position). */
        if (search_reserve(tr, longest + 1, B, err))
            goto done;
        int rc;
        if (o->beam == 1) {
            rc = rs_greedy(&s->greedy, B, batch_ids, batch_len, o->max_len, want, s->found, err);
        } else {
            rs_beam_options bo = {.beam = o->beam,
                                  .length_penalty = o->length_penalty,
                                  .n_best = nbest,
                                  .max_len = o->max_len,
                                  .want_alignment = want};
            rc = rs_beam_translate(&s->beam, B, batch_ids, batch_len, &bo, s->found, err);
        }
        if (rc)
            goto done;
        /* The found hypotheses move into out; the rest (n-best slots the
         * beam did not fill) are freed. */
        for (int b = 0; b < B && rc == 0; b++) {
            rs_translated *t = &out[which[b]];
            for (int r = 0; r < nbest; r++) {
                rs_hypothesis *f = &s->found[b * nbest + r];
                if (f->ids && rc == 0) {
                    t->hyps[t->count] = *f;
                    memset(f, 0, sizeof *f);
                    rc = name_tokens(tr, t, &t->hyps[t->count++], err);
                }
            }
        }
        for (int k = 0; k < B * nbest; k++)
            rs_hypothesis_free(&s->found[k]);
        if (rc)
            goto done;
    }
    status = 0;
done:
    free(order);
    free(which);
    free(batch_ids);
    free(batch_len);
    return status;
}

/* out[i]'s source tokens, hypothesis slots and truncation; the empty line's
 * empty translation. */
static int prepare(rs_translator *tr, rs_translated *t, int *len, rs_error *err)
{
    if (*len > tr->opt.max_src_len) {
        t->truncated = *len - tr->opt.max_src_len;
        *len = tr->opt.max_src_len;
    }
    t->hyps = rs_calloc((size_t)tr->opt.n_best, sizeof *t->hyps, err);
    if (!t->hyps)
        return -1;
    if (*len == 0 && tr->codec && !(t->hyps[0].text = rs_strdup("", err)))
        return -1;
    return 0;
}

int rs_translate_sources(rs_translator *tr, int count, const rs_source *sources, rs_translated *out,
                         rs_error *err)
{
    const rs_vocab *vocab = &tr->models[0]->model->src_vocab;
    memset(out, 0, sizeof *out * (size_t)count);
    const int **ids = rs_calloc((size_t)count + 1, sizeof(int *), err);
    int *len = rs_calloc((size_t)count + 1, sizeof(int), err);
    int status = -1;
    if (!ids || !len)
        goto done;
    for (int i = 0; i < count; i++) {
        ids[i] = sources[i].ids;
        len[i] = sources[i].len;
        if (prepare(tr, &out[i], &len[i], err))
            goto done;
        out[i].source_tokens = rs_calloc((size_t)len[i] + 1, sizeof(char *), err);
        if (!out[i].source_tokens)
            goto done;
        for (int k = 0; k < len[i]; k++, out[i].source_count++)
            if (!(out[i].source_tokens[k] = rs_strdup(vocab->tokens[ids[i][k]], err)))
                goto done;
    }
    status = decode_all(tr, count, ids, len, out, err);
done:
    if (status)
        for (int i = 0; i < count; i++)
            rs_translated_free(&out[i]);
    free(ids);
    free(len);
    return status;
}

int rs_translate_lines(rs_translator *tr, int count, const char *const *lines, rs_translated *out,
                       rs_error *err)
{
    const rs_vocab *vocab = &tr->models[0]->model->src_vocab;
    memset(out, 0, sizeof *out * (size_t)count);
    int **ids = rs_calloc((size_t)count + 1, sizeof(int *), err);
    int *len = rs_calloc((size_t)count + 1, sizeof(int), err);
    rs_tokens tokens = {0};
    int status = -1;
    if (!ids || !len)
        goto done;
    if (!tr->codec) {
        rs_fail(err, "translating text needs the model's text codec");
        goto done;
    }
    for (int i = 0; i < count; i++) {
        rs_error inner;
        if (rs_codec_tokens(tr->codec, RS_SIDE_SRC, lines[i], &tokens, &inner)) {
            rs_fail(err, "sentence %d: %s", i + 1, inner.msg);
            goto done;
        }
        len[i] = tokens.count;
        if (prepare(tr, &out[i], &len[i], err))
            goto done;
        /* The tokens become the result's; those past the limit are dropped. */
        for (int k = len[i]; k < tokens.count; k++)
            free(tokens.tokens[k]);
        out[i].source_tokens = tokens.tokens;
        out[i].source_count = len[i];
        memset(&tokens, 0, sizeof tokens);
        if (!(ids[i] = rs_calloc((size_t)len[i] + 1, sizeof(int), err)))
            goto done;
        for (int k = 0; k < len[i]; k++)
            ids[i][k] = rs_vocab_id(vocab, out[i].source_tokens[k]);
    }
    status = decode_all(tr, count, (const int *const *)ids, len, out, err);
done:
    rs_tokens_free(&tokens);
    if (status)
        for (int i = 0; i < count; i++)
            rs_translated_free(&out[i]);
    for (int i = 0; ids && i < count; i++)
        free(ids[i]);
    free(ids);
    free(len);
    return status;
}
