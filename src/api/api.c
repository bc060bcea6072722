/* The public C API (api/rnnsearch.h) over the library's own pipeline: models
 * load as -m resolves them (model/locate.c), translation is
 * search/translate.c, forced decoding search/forced.c, tokens model/codec.c.
 * What is here only moves results into the public structures and copies
 * error messages out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "model/locate.h"
#include "search/forced.h"
#include "search/translate.h"

_Static_assert(sizeof(((rnnsearch_error *)0)->message) == sizeof(((rs_error *)0)->msg),
               "rnnsearch_error and rs_error hold messages of one size");

struct rnnsearch_model {
    rs_model model;
    rs_codec codec;
    char checkpoint[4096];
};

struct rnnsearch_translator {
    const rs_model *member; /* the translator's models array: &model->model */
    rs_translator tr;
};

/* Copies an internal message out (err may be NULL); returns -1. */
static int fail_with(rnnsearch_error *err, const rs_error *e)
{
    if (err)
        memcpy(err->message, e->msg, sizeof err->message);
    return -1;
}

static int fail_msg(rnnsearch_error *err, const char *msg)
{
    rs_error e;
    rs_fail(&e, "%s", msg);
    return fail_with(err, &e);
}

const char *rnnsearch_version(void)
{
    return RNNSEARCH_VERSION;
}

int rnnsearch_model_load(const char *path_or_name, rnnsearch_model **model, rnnsearch_error *err)
{
    rs_error e;
    if (!model)
        return fail_msg(err, "rnnsearch_model_load: no place for the model (NULL)");
    *model = NULL;
    if (!path_or_name || !*path_or_name)
        return fail_msg(err, "no model given (an empty path or name)");
    rnnsearch_model *m = rs_calloc(1, sizeof *m, &e);
    if (!m)
        return fail_with(err, &e);
    if (rs_model_locate(path_or_name, m->checkpoint, sizeof m->checkpoint, &e) ||
        rs_checkpoint_load(m->checkpoint, &m->model, NULL, &e)) {
        free(m);
        return fail_with(err, &e);
    }
    if (rs_codec_for_model(&m->codec, &m->model, &e)) {
        rs_model_free(&m->model);
        free(m);
        return fail_with(err, &e);
    }
    *model = m;
    return 0;
}

void rnnsearch_model_free(rnnsearch_model *model)
{
    if (!model)
        return;
    rs_codec_free(&model->codec);
    rs_model_free(&model->model);
    free(model);
}

const char *rnnsearch_model_checkpoint(const rnnsearch_model *model)
{
    return model->checkpoint;
}

/* ---- Tokens ------------------------------------------------------------- */

static void free_strings(char **s, int count)
{
    for (int i = 0; s && i < count; i++)
        free(s[i]);
    free(s);
}

void rnnsearch_tokens_free(rnnsearch_tokens *tokens)
{
    if (!tokens)
        return;
    free_strings(tokens->tokens, tokens->count);
    memset(tokens, 0, sizeof *tokens);
}

static int check_side(int side, rnnsearch_error *err)
{
    if (side != RNNSEARCH_SOURCE && side != RNNSEARCH_TARGET)
        return fail_msg(err, "side must be RNNSEARCH_SOURCE (0) or RNNSEARCH_TARGET (1)");
    return 0;
}

int rnnsearch_tokenize(const rnnsearch_model *model, int side, const char *text,
                       rnnsearch_tokens *out, rnnsearch_error *err)
{
    rs_error e;
    rs_tokens tok = {0};
    if (check_side(side, err))
        return -1;
    if (!text)
        return fail_msg(err, "rnnsearch_tokenize: no text (NULL)");
    if (rs_codec_tokens(&model->codec, side == RNNSEARCH_SOURCE ? RS_SIDE_SRC : RS_SIDE_TGT, text,
                        &tok, &e)) {
        rs_tokens_free(&tok);
        return fail_with(err, &e);
    }
    /* rs_tokens owns [cap] strings of which count are live; the public
     * struct takes the array as it is. */
    out->count = tok.count;
    out->tokens = tok.tokens;
    return 0;
}

int rnnsearch_detokenize(const rnnsearch_model *model, int side, const char *const *tokens,
                         int count, char **text, rnnsearch_error *err)
{
    rs_error e;
    if (check_side(side, err))
        return -1;
    if (count < 0 || (count > 0 && !tokens))
        return fail_msg(err, "rnnsearch_detokenize: no tokens (NULL) or a negative count");
    for (int i = 0; i < count; i++)
        if (!tokens[i])
            return fail_msg(err, "rnnsearch_detokenize: a token is NULL");
    if (rs_codec_text(&model->codec, side == RNNSEARCH_SOURCE ? RS_SIDE_SRC : RS_SIDE_TGT, tokens,
                      count, text, &e))
        return fail_with(err, &e);
    return 0;
}

void rnnsearch_string_free(char *s)
{
    free(s);
}

/* ---- Translation -------------------------------------------------------- */

void rnnsearch_options_default(rnnsearch_options *opt)
{
    rs_translate_options d;
    rs_translate_options_default(&d);
    *opt = (rnnsearch_options){.beam = d.beam,
                               .n_best = d.n_best,
                               .length_penalty = d.length_penalty,
                               .max_len = d.max_len,
                               .max_src_len = d.max_src_len,
                               .batch_size = d.batch_size,
                               .alignment = d.want_alignment,
                               .replace_unk = d.replace_unk};
}

int rnnsearch_translator_new(const rnnsearch_model *model, const rnnsearch_options *opt,
                             rnnsearch_translator **tr, rnnsearch_error *err)
{
    rs_error e;
    if (!tr || !model)
        return fail_msg(err, "rnnsearch_translator_new: no model or no place for the translator");
    *tr = NULL;
    rnnsearch_options o;
    if (opt)
        o = *opt;
    else
        rnnsearch_options_default(&o);
    if (!isfinite(o.length_penalty))
        return fail_msg(err, "the length penalty is not a finite number");
    rs_translate_options topt = {.beam = o.beam,
                                 .n_best = o.n_best,
                                 .length_penalty = o.length_penalty,
                                 .max_len = o.max_len,
                                 .max_src_len = o.max_src_len,
                                 .batch_size = o.batch_size,
                                 .want_alignment = o.alignment != 0,
                                 .replace_unk = o.replace_unk != 0};
    rnnsearch_translator *t = rs_calloc(1, sizeof *t, &e);
    if (!t)
        return fail_with(err, &e);
    t->member = &model->model;
    if (rs_translator_init(&t->tr, &t->member, 1, &model->codec, &topt, &e)) {
        free(t);
        return fail_with(err, &e);
    }
    *tr = t;
    return 0;
}

void rnnsearch_translator_free(rnnsearch_translator *tr)
{
    if (!tr)
        return;
    rs_translator_free(&tr->tr);
    free(tr);
}

void rnnsearch_translation_free(rnnsearch_translation *t)
{
    if (!t)
        return;
    free_strings(t->source_tokens, t->source_count);
    for (int r = 0; t->hyps && r < t->count; r++) {
        rnnsearch_hypothesis *h = &t->hyps[r];
        free(h->text);
        free_strings(h->tokens, h->count);
        free(h->alignment);
    }
    free(t->hyps);
    memset(t, 0, sizeof *t);
}

/* Moves the pipeline's result into the public structure; src is left to
 * rs_translated_free, which frees what was not moved. An empty line (n = 0)
 * becomes one hypothesis with empty text. */
static int take_translation(rs_translated *src, rnnsearch_translation *dst, rs_error *e)
{
    const int n = src->n > 0 ? src->n : 1;
    memset(dst, 0, sizeof *dst);
    dst->hyps = rs_calloc((size_t)n, sizeof *dst->hyps, e);
    if (!dst->hyps)
        return -1;
    dst->count = n;
    dst->source_count = src->src_count;
    dst->source_tokens = src->src_tokens;
    dst->truncated = src->truncated;
    src->src_tokens = NULL;
    src->src_count = 0;
    for (int r = 0; r < n; r++) {
        rs_hypothesis *h = &src->hyp[r];
        rnnsearch_hypothesis *p = &dst->hyps[r];
        p->count = h->len;
        p->tokens = h->tokens;
        p->logprob = h->logprob;
        p->score = h->score;
        p->finished = h->finished;
        p->alignment = h->alignment;
        p->text = h->text;
        h->tokens = NULL;
        h->len = 0;
        h->alignment = NULL;
        h->text = NULL;
        if (!p->text && !(p->text = rs_strdup("", e)))
            return -1;
    }
    return 0;
}

int rnnsearch_translate(rnnsearch_translator *tr, int count, const char *const *sources,
                        rnnsearch_translation *out, rnnsearch_error *err)
{
    rs_error e;
    if (!tr || count < 0 || (count > 0 && (!sources || !out)))
        return fail_msg(err, "rnnsearch_translate: no translator, sources or output");
    for (int i = 0; i < count; i++)
        if (!sources[i])
            return fail_msg(err, "rnnsearch_translate: a source is NULL");
    if (count == 0)
        return 0;
    rs_translated *got = rs_calloc((size_t)count, sizeof *got, &e);
    if (!got)
        return fail_with(err, &e);
    int status = rs_translate_lines(&tr->tr, count, sources, got, &e);
    for (int i = 0; status == 0 && i < count; i++)
        if (take_translation(&got[i], &out[i], &e)) {
            for (int k = 0; k <= i; k++)
                rnnsearch_translation_free(&out[k]);
            status = -1;
        }
    for (int i = 0; i < count; i++)
        rs_translated_free(&got[i]);
    free(got);
    return status ? fail_with(err, &e) : 0;
}

/* ---- Forced decoding ---------------------------------------------------- */

void rnnsearch_forced_free(rnnsearch_forced *f)
{
    if (!f)
        return;
    free_strings(f->source_tokens, f->source_count);
    free_strings(f->target_tokens, f->target_count);
    free(f->token_logprobs);
    free(f->alignment);
    memset(f, 0, sizeof *f);
}

int rnnsearch_force(const rnnsearch_model *model, const char *source, const char *target,
                    rnnsearch_forced *out, rnnsearch_error *err)
{
    rs_error e;
    if (!model || !source || !target || !out)
        return fail_msg(err, "rnnsearch_force: no model, source, target or output");
    const rs_model *member = &model->model;
    const rs_forced_pair pair = {.source = source,
                                 .target = target,
                                 .max_src_len = RS_MAX_SRC_LEN,
                                 .want = RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    rs_forced f;
    rs_tokens src, tgt;
    int cut = 0;
    if (rs_forced_text(&member, 1, &model->codec, &pair, &f, &src, &tgt, &cut, &e))
        return fail_with(err, &e);
    *out = (rnnsearch_forced){.source_count = src.count,
                              .target_count = tgt.count,
                              .source_tokens = src.tokens,
                              .target_tokens = tgt.tokens,
                              .truncated = cut,
                              .logprob = f.logprob,
                              .token_logprobs = f.token_logprobs,
                              .alignment = f.alignment};
    return 0;
}
