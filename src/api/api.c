/* The public C API (api/rnnsearch.h) over the library's own pipeline: models
 * load as -m resolves them (model/locate.c), translation is
 * search/translate.c, forced decoding search/forced.c, tokens model/codec.c.
 * What is here only moves results into the public structures and copies
 * error messages out. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "api/api_options.h"
#include "api/rnnsearch.h"
#include "data/dataset.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "model/locate.h"
#include "nn/network.h"
#include "search/decode.h"
#include "search/forced.h"
#include "search/ready.h"
#include "search/translate.h"
#include "text/corpus.h"
#include "text/text.h"

_Static_assert(sizeof(((rnnsearch_error *)0)->message) == sizeof(((rs_error *)0)->msg),
               "rnnsearch_error and rs_error hold messages of one size");
/* The public header states the limits for its users; they are the command
 * line's, defined once below the API. */
_Static_assert(RNNSEARCH_MAX_BEAM == RS_MAX_BEAM && RNNSEARCH_MAX_BATCH == RS_MAX_BATCH &&
                   RNNSEARCH_MAX_LENGTH == RS_MAX_LENGTH &&
                   RNNSEARCH_MAX_LENGTH_PENALTY == (int)RS_MAX_LENGTH_PENALTY &&
                   RNNSEARCH_MAX_TEXT == RS_LINE_MAX_BYTES,
               "rnnsearch.h's limits are the program's");

/* The model stays float for everyone: its int8 copies (options.int8) are
 * made once, under lock, beside it, and only translators that ask see them,
 * through a view of the model with those copies (search/ready.h). */
struct rnnsearch_model {
    rs_ready model; /* readied without int8 */
    rs_codec codec;
    char checkpoint[4096];
    pthread_mutex_t lock; /* guards int8 */
    rs_ready int8;        /* the view with int8 copies; accel NULL until a translator asks */
};

/* RNNSEARCH_MAX_MODELS is the command line's bound on -m (RS_MAX_MODELS,
 * search/models.h). */
struct rnnsearch_translator {
    /* the translator's models array: each model's own, or with int8 its
     * int8 view (the parameters, vocabularies and copies stay the model's) */
    const rs_ready *members[RNNSEARCH_MAX_MODELS];
    float weights[RNNSEARCH_MAX_MODELS]; /* the options' weights, copied */
    char *remove_bpe;                    /* the options' marker, copied, or NULL */
    rs_lexicon lexicon;                  /* the options' shortlist table, read */
    rs_translator tr;
};

/* Pairs scored together by rnnsearch_score: `rnnsearch score`'s default
 * --batch-size. */
#define SCORE_BATCH 64

/* Copies an internal message out (err may be NULL); returns -1. */
static int fail_with(rnnsearch_error *err, const rs_error *e)
{
    if (err)
        memcpy(err->message, e->msg, sizeof err->message);
    return -1;
}

/* A text as the program would read it in a line: present, at most
 * RNNSEARCH_MAX_TEXT bytes (strnlen: an endless string is not walked to its
 * end). UTF-8 is checked where it is tokenized. */
static int check_text(const char *text, const char *what, rnnsearch_error *err)
{
    if (!text)
        return rs_api_fail(err, "%s: no text (NULL)", what);
    if (strnlen(text, (size_t)RNNSEARCH_MAX_TEXT + 1) > RNNSEARCH_MAX_TEXT)
        return rs_api_fail(err, "%s: longer than %d bytes (the most a line may hold)", what,
                           RNNSEARCH_MAX_TEXT);
    return 0;
}

const char *rnnsearch_version(void)
{
    return RNNSEARCH_VERSION;
}

/* The GEMM road (accel/gemm_road.h), chosen once, when the first model
 * loads: before any product of the library runs. */
static pthread_once_t road_once = PTHREAD_ONCE_INIT;
static rs_error road_err;
static int road_status;

static void choose_road(void)
{
    road_status = rs_gemm_road_choose(NULL, &road_err);
}

int rnnsearch_model_load(const char *path_or_name, rnnsearch_model **model, rnnsearch_error *err)
{
    rs_error e;
    if (!model)
        return rs_api_fail(err, "rnnsearch_model_load: no place for the model (NULL)");
    *model = NULL;
    if (!path_or_name || !*path_or_name)
        return rs_api_fail(err, "no model given (an empty path or name)");
    pthread_once(&road_once, choose_road);
    if (road_status)
        return fail_with(err, &road_err);
    rnnsearch_model *m = rs_calloc(1, sizeof *m, &e);
    if (!m)
        return fail_with(err, &e);
    if (rs_ready_load(&m->model, path_or_name, NULL, &m->codec, m->checkpoint, sizeof m->checkpoint,
                      &e)) {
        free(m);
        return fail_with(err, &e);
    }
    if (pthread_mutex_init(&m->lock, NULL)) {
        rs_codec_free(&m->codec);
        rs_ready_free(&m->model);
        free(m);
        return rs_api_fail(err, "rnnsearch_model_load: could not make the model's lock");
    }
    *model = m;
    return 0;
}

void rnnsearch_model_free(rnnsearch_model *model)
{
    if (!model)
        return;
    rs_ready_view_free(&model->int8);
    pthread_mutex_destroy(&model->lock);
    rs_codec_free(&model->codec);
    rs_ready_free(&model->model);
    free(model);
}

const char *rnnsearch_model_checkpoint(const rnnsearch_model *model)
{
    return model ? model->checkpoint : NULL;
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
        return rs_api_fail(err, "side must be RNNSEARCH_SOURCE (0) or RNNSEARCH_TARGET (1)");
    return 0;
}

int rnnsearch_tokenize(const rnnsearch_model *model, int side, const char *text,
                       rnnsearch_tokens *out, rnnsearch_error *err)
{
    rs_error e;
    rs_tokens tok = {0};
    if (!model || !out)
        return rs_api_fail(err, "rnnsearch_tokenize: no model or no place for the tokens (NULL)");
    if (check_side(side, err) || check_text(text, "rnnsearch_tokenize", err))
        return -1;
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
    if (!model || !text)
        return rs_api_fail(err, "rnnsearch_detokenize: no model or no place for the text (NULL)");
    if (check_side(side, err))
        return -1;
    if (count < 0 || (count > 0 && !tokens))
        return rs_api_fail(err, "rnnsearch_detokenize: no tokens (NULL) or a negative count");
    /* The tokens of one line of `tokenize --detokenize`: together (with a
     * separator each) at most a line's bytes, each valid UTF-8, as the
     * program reads them. */
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        if (!tokens[i])
            return rs_api_fail(err, "rnnsearch_detokenize: token %d is NULL", i + 1);
        const size_t len = strnlen(tokens[i], (size_t)RNNSEARCH_MAX_TEXT + 1);
        total += len + 1;
        if (total > (size_t)RNNSEARCH_MAX_TEXT + 1)
            return rs_api_fail(err,
                               "rnnsearch_detokenize: the tokens hold more than %d bytes (the "
                               "most a line may hold)",
                               RNNSEARCH_MAX_TEXT);
        if (rs_utf8_validate(tokens[i], len, &e))
            return rs_api_fail(err, "rnnsearch_detokenize: token %d: %s", i + 1, e.msg);
    }
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

/* The members of an ensemble, as the pipeline takes them (&model->model). */
static int ensemble_members(const rnnsearch_model *const *models, int count,
                            const rs_ready **members, const char *fn, rnnsearch_error *err)
{
    if (!models || count < 1 || count > RNNSEARCH_MAX_MODELS)
        return rs_api_fail(err, "%s: %d models (or a NULL array): an ensemble has 1 to %d", fn,
                           count, RNNSEARCH_MAX_MODELS);
    for (int k = 0; k < count; k++) {
        if (!models[k])
            return rs_api_fail(err, "%s: model %d is NULL", fn, k + 1);
        members[k] = &models[k]->model;
    }
    return 0;
}

int rnnsearch_translator_new(const rnnsearch_model *model, const rnnsearch_options *opt,
                             rnnsearch_translator **tr, rnnsearch_error *err)
{
    if (tr)
        *tr = NULL;
    if (!tr || !model)
        return rs_api_fail(err,
                           "rnnsearch_translator_new: no model or no place for the translator");
    return rnnsearch_translator_new_ensemble(&model, 1, opt, tr, err);
}

/* The model's int8 copies, made on first use under its lock: a model is
 * shared by translators in several threads, and the copies are the one thing
 * about it that changes after loading (they are never freed before the
 * model). The model itself stays float: the copies are made through a view
 * of it, and handed out the same way. */
static int model_int8(rnnsearch_model *m, const rs_ready **view, rs_error *e)
{
    int status = 0;
    pthread_mutex_lock(&m->lock);
    if (!m->int8.accel)
        status = rs_ready_view(&m->model, &(rs_ready_options){.int8 = 1}, &m->int8, e);
    *view = &m->int8;
    pthread_mutex_unlock(&m->lock);
    return status;
}

/* What the options add to a translator beyond rs_translate_options' plain
 * fields: the weights (one per model), the models' int8 views, the
 * shortlist's table (read against the first model's vocabularies), into t
 * and topt. */
static int translator_extras(rnnsearch_translator *t, const rnnsearch_model *const *models,
                             int count, const rnnsearch_options *o, rs_translate_options *topt,
                             rs_error *e)
{
    if (o->weights) {
        if (o->n_weights != count)
            return rs_fail(e, "weights: %d weight%s for %d model%s (one per model)", o->n_weights,
                           o->n_weights == 1 ? "" : "s", count, count == 1 ? "" : "s");
        memcpy(t->weights, o->weights, (size_t)count * sizeof *t->weights);
        topt->weights = t->weights;
    }
    /* The lock is the model's own state, not what the caller's const
     * promises stays unchanged (its parameters). */
    for (int k = 0; o->int8 && k < count; k++) {
        if (model_int8((rnnsearch_model *)models[k], &t->members[k], e))
            return -1;
    }
    if (o->shortlist) {
        if (rs_lexicon_read(&t->lexicon, o->shortlist, &t->members[0]->model->src_vocab,
                            &t->members[0]->model->tgt_vocab, e))
            return -1;
        /* 0: Marian's 100; -1: none (the command line's FIRST or BEST of 0). */
        const int first = o->shortlist_first, best = o->shortlist_best;
        topt->shortlist = (rs_shortlist){.lex = &t->lexicon,
                                         .first = first == 0  ? RS_API_SHORTLIST_DEFAULT
                                                  : first < 0 ? 0
                                                              : first,
                                         .best = best == 0  ? RS_API_SHORTLIST_DEFAULT
                                                 : best < 0 ? 0
                                                            : best};
    }
    return 0;
}

static void translator_release(rnnsearch_translator *t)
{
    rs_lexicon_free(&t->lexicon);
    free(t->remove_bpe);
    free(t);
}

int rnnsearch_translator_new_ensemble(const rnnsearch_model *const *models, int count,
                                      const rnnsearch_options *opt, rnnsearch_translator **tr,
                                      rnnsearch_error *err)
{
    rs_error e;
    if (!tr)
        return rs_api_fail(err, "rnnsearch_translator_new_ensemble: no place for the translator");
    *tr = NULL;
    rnnsearch_options o;
    if (opt && rnnsearch_options_check(opt, err))
        return -1;
    if (rs_api_options_read(opt, &o, err))
        return -1;
    rnnsearch_translator *t = rs_calloc(1, sizeof *t, &e);
    if (!t)
        return fail_with(err, &e);
    if (ensemble_members(models, count, t->members, "rnnsearch_translator_new_ensemble", err)) {
        free(t);
        return -1;
    }
    if (o.remove_bpe && !(t->remove_bpe = rs_strdup(o.remove_bpe, &e))) {
        free(t);
        return fail_with(err, &e);
    }
    rs_translate_options topt = {.beam = o.beam,
                                 .n_best = o.n_best,
                                 .length_penalty = o.length_penalty,
                                 .max_len = o.max_len,
                                 .max_src_len = o.max_src_len,
                                 .batch_size = o.batch_size,
                                 .want_alignment = o.alignment != 0,
                                 .replace_unk = o.replace_unk != 0,
                                 .remove_bpe = t->remove_bpe,
                                 .post_process = -1 /* the model's, as translate */};
    if (translator_extras(t, models, count, &o, &topt, &e) ||
        rs_translator_init(&t->tr, t->members, count, &models[0]->codec, &topt, &e)) {
        translator_release(t);
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
    translator_release(tr);
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

/* The one conversion from the library's result to the public one: moves
 * the pipeline's rs_translated into rnnsearch_translation, field for field
 * under the same names (the public structures' layout is frozen, so the
 * library's types took their names). The ids and the alignment's column
 * count stay behind, for rs_translated_free, with whatever was not moved.
 * An empty line (count 0) becomes one hypothesis with empty text. */
static int take_translation(rs_translated *src, rnnsearch_translation *dst, rs_error *e)
{
    const int count = src->count > 0 ? src->count : 1;
    memset(dst, 0, sizeof *dst);
    dst->hyps = rs_calloc((size_t)count, sizeof *dst->hyps, e);
    if (!dst->hyps)
        return -1;
    dst->count = count;
    dst->source_count = src->source_count;
    dst->source_tokens = src->source_tokens;
    dst->truncated = src->truncated;
    src->source_tokens = NULL;
    src->source_count = 0;
    for (int r = 0; r < count; r++) {
        rs_hypothesis *h = &src->hyps[r];
        dst->hyps[r] = (rnnsearch_hypothesis){.text = h->text,
                                              .count = h->count,
                                              .tokens = h->tokens,
                                              .logprob = h->logprob,
                                              .score = h->score,
                                              .finished = h->finished,
                                              .alignment = h->alignment};
        h->text = NULL;
        h->tokens = NULL;
        h->count = 0;
        h->alignment = NULL;
        if (!dst->hyps[r].text && !(dst->hyps[r].text = rs_strdup("", e)))
            return -1;
    }
    return 0;
}

int rnnsearch_translate(rnnsearch_translator *tr, int count, const char *const *sources,
                        rnnsearch_translation *out, rnnsearch_error *err)
{
    rs_error e;
    if (!tr || count < 0 || (count > 0 && (!sources || !out)))
        return rs_api_fail(err, "rnnsearch_translate: no translator, sources or output");
    for (int i = 0; i < count; i++) {
        char what[64];
        snprintf(what, sizeof what, "sentence %d", i + 1);
        if (check_text(sources[i], what, err))
            return -1;
    }
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
    if (!model || !out)
        return rs_api_fail(err, "rnnsearch_force: no model or no place for the result (NULL)");
    if (check_text(source, "the source", err) || check_text(target, "the target", err))
        return -1;
    const rs_ready *member = &model->model;
    /* A model with --attention none has no alignment: the result's is NULL. */
    const int aligns = member->model->cfg.attention != RS_ATT_NONE;
    const rs_forced_pair pair = {.source = source,
                                 .target = target,
                                 .max_src_len = RS_MAX_SRC_LEN,
                                 .want = RS_FORCED_TOKENS | (aligns ? RS_FORCED_ALIGNMENT : 0)};
    rs_forced f;
    rs_tokens src, tgt;
    if (rs_forced_text(&member, 1, &model->codec, &pair, &f, &src, &tgt, &e))
        return fail_with(err, &e);
    *out = (rnnsearch_forced){.source_count = src.count,
                              .target_count = tgt.count,
                              .source_tokens = src.tokens,
                              .target_tokens = tgt.tokens,
                              .truncated = f.cut,
                              .logprob = f.logprob,
                              .token_logprobs = f.token_logprobs,
                              .alignment = f.alignment};
    return 0;
}

/* ---- Scoring ------------------------------------------------------------ */

/* The pairs through `rnnsearch score`'s pipeline: tokenized with the first
 * model's settings, sources cut to RS_MAX_SRC_LEN tokens, ids in its
 * vocabularies, forced decoding SCORE_BATCH pairs at a time. */
static int score_pairs(const rs_ready *const *members, int n_models, const rs_codec *codec,
                       int count, const char *const *sources, const char *const *targets,
                       double *logprobs, rs_error *e)
{
    /* A view of the caller's strings: rs_tokenize_pairs only reads them. */
    const rs_pairs pairs = {
        .count = count, .capacity = count, .src = (char **)sources, .tgt = (char **)targets};
    rs_tokenized tok = {0};
    rs_dataset data = {0};
    rs_forced *scored = rs_calloc((size_t)count, sizeof *scored, e);
    int *cut = rs_calloc((size_t)count, sizeof *cut, e);
    int status = -1;
    if (scored && cut && !rs_tokenize_pairs(&tok, &pairs, codec, "rnnsearch_score", e)) {
        /* As `rnnsearch score` reads pairs: an empty source has only the
         * empty translation (log p 0, as translate --n-best lists it), so an
         * empty source with a target is refused. */
        for (int i = 0; i < count; i++)
            if (tok.src[i].count == 0 && tok.tgt[i].count > 0) {
                rs_fail(e,
                        "rnnsearch_score: pair %d: the source is empty and the target is not (an "
                        "empty source has only the empty translation, which scores 0)",
                        i + 1);
                goto done;
            }
        rs_cut_sources(&tok, RS_MAX_SRC_LEN, cut);
        /* max_len 0 keeps every pair, in order. */
        if (!rs_dataset_build(&data, &tok, &members[0]->model->src_vocab,
                              &members[0]->model->tgt_vocab, 0, NULL, e) &&
            !rs_forced_decode(members, n_models, &data, SCORE_BATCH, 0, scored, e)) {
            for (int i = 0; i < count; i++)
                logprobs[i] = scored[i].logprob;
            for (int i = 0; i < count; i++)
                rs_forced_free(&scored[i]);
            status = 0;
        }
    }
done:
    rs_dataset_free(&data);
    rs_tokenized_free(&tok);
    free(cut);
    free(scored);
    return status;
}

int rnnsearch_score(const rnnsearch_model *const *models, int n_models, int count,
                    const char *const *sources, const char *const *targets, double *logprobs,
                    rnnsearch_error *err)
{
    rs_error e;
    const rs_ready *members[RNNSEARCH_MAX_MODELS];
    if (count < 0 || (count > 0 && (!sources || !targets || !logprobs)))
        return rs_api_fail(err, "rnnsearch_score: no sources, targets or scores (NULL), or a "
                                "negative count");
    if (ensemble_members(models, n_models, members, "rnnsearch_score", err))
        return -1;
    for (int i = 0; i < count; i++) {
        char what[64];
        snprintf(what, sizeof what, "pair %d: the source", i + 1);
        if (check_text(sources[i], what, err))
            return -1;
        snprintf(what, sizeof what, "pair %d: the target", i + 1);
        if (check_text(targets[i], what, err))
            return -1;
    }
    if (rs_ensemble_check(members, n_models, &e))
        return fail_with(err, &e);
    if (count == 0)
        return 0;
    if (score_pairs(members, n_models, &models[0]->codec, count, sources, targets, logprobs, &e))
        return fail_with(err, &e);
    return 0;
}
