/* The public C API (api/rnnsearch.h) over the library's own pipeline: models
 * load as -m resolves them (model/locate.c), translation is
 * search/translate.c, forced decoding search/forced.c, tokens model/codec.c.
 * What is here only moves results into the public structures and copies
 * error messages out. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "data/dataset.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "model/locate.h"
#include "search/decode.h"
#include "search/forced.h"
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

struct rnnsearch_model {
    rs_model model;
    rs_codec codec;
    char checkpoint[4096];
};

/* RNNSEARCH_MAX_MODELS is the command line's bound on -m (RS_CLI_MAX_MODELS,
 * in cmd/, which this layer does not see). */
struct rnnsearch_translator {
    const rs_model *members[RNNSEARCH_MAX_MODELS]; /* the translator's models array */
    char *remove_bpe;                              /* the options' marker, copied, or NULL */
    rs_translator tr;
};

/* Pairs scored together by rnnsearch_score: `rnnsearch score`'s default
 * --batch-size. */
#define SCORE_BATCH 64
/* The longest remove_bpe marker taken (the command line takes any; a marker
 * is a few bytes, and this bounds the walk over a string never ended). */
#define MARKER_MAX 256

/* Copies an internal message out (err may be NULL); returns -1. */
static int fail_with(rnnsearch_error *err, const rs_error *e)
{
    if (err)
        memcpy(err->message, e->msg, sizeof err->message);
    return -1;
}

static int fail_msg(rnnsearch_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail_msg(rnnsearch_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A text as the program would read it in a line: present, at most
 * RNNSEARCH_MAX_TEXT bytes (strnlen: an endless string is not walked to its
 * end). UTF-8 is checked where it is tokenized. */
static int check_text(const char *text, const char *what, rnnsearch_error *err)
{
    if (!text)
        return fail_msg(err, "%s: no text (NULL)", what);
    if (strnlen(text, (size_t)RNNSEARCH_MAX_TEXT + 1) > RNNSEARCH_MAX_TEXT)
        return fail_msg(err, "%s: longer than %d bytes (the most a line may hold)", what,
                        RNNSEARCH_MAX_TEXT);
    return 0;
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
        return fail_msg(err, "side must be RNNSEARCH_SOURCE (0) or RNNSEARCH_TARGET (1)");
    return 0;
}

int rnnsearch_tokenize(const rnnsearch_model *model, int side, const char *text,
                       rnnsearch_tokens *out, rnnsearch_error *err)
{
    rs_error e;
    rs_tokens tok = {0};
    if (!model || !out)
        return fail_msg(err, "rnnsearch_tokenize: no model or no place for the tokens (NULL)");
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
        return fail_msg(err, "rnnsearch_detokenize: no model or no place for the text (NULL)");
    if (check_side(side, err))
        return -1;
    if (count < 0 || (count > 0 && !tokens))
        return fail_msg(err, "rnnsearch_detokenize: no tokens (NULL) or a negative count");
    /* The tokens of one line of `tokenize --detokenize`: together (with a
     * separator each) at most a line's bytes, each valid UTF-8, as the
     * program reads them. */
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        if (!tokens[i])
            return fail_msg(err, "rnnsearch_detokenize: token %d is NULL", i + 1);
        const size_t len = strnlen(tokens[i], (size_t)RNNSEARCH_MAX_TEXT + 1);
        total += len + 1;
        if (total > (size_t)RNNSEARCH_MAX_TEXT + 1)
            return fail_msg(err,
                            "rnnsearch_detokenize: the tokens hold more than %d bytes (the "
                            "most a line may hold)",
                            RNNSEARCH_MAX_TEXT);
        if (rs_utf8_validate(tokens[i], len, &e))
            return fail_msg(err, "rnnsearch_detokenize: token %d: %s", i + 1, e.msg);
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

/* The first version's structure: size and the eight fields up to
 * replace_unk. A smaller size is not a structure rnnsearch_options_init
 * filled. */
#define OPTIONS_SIZE_1 (offsetof(rnnsearch_options, replace_unk) + sizeof(int))
/* Above this, opt->size is taken for memory that was never initialised: no
 * version's structure will be that large. */
#define OPTIONS_SIZE_MAX 4096

/* One row per field: what rnnsearch_options_set names and
 * rnnsearch_options_check bounds (the command line's ranges, and 0 for
 * "automatic" where the library has it). */
typedef struct {
    const char *name;
    size_t offset;
    int is_float;
    double min, max;
} option_field;

static const option_field option_fields[] = {
    {"beam", offsetof(rnnsearch_options, beam), 0, 1, RS_MAX_BEAM},
    {"n_best", offsetof(rnnsearch_options, n_best), 0, 1, RS_MAX_BEAM},
    {"length_penalty", offsetof(rnnsearch_options, length_penalty), 1, -RS_MAX_LENGTH_PENALTY,
     RS_MAX_LENGTH_PENALTY},
    {"max_len", offsetof(rnnsearch_options, max_len), 0, 0, RS_MAX_LENGTH},
    {"max_src_len", offsetof(rnnsearch_options, max_src_len), 0, 0, RS_MAX_LENGTH},
    {"batch_size", offsetof(rnnsearch_options, batch_size), 0, 1, RS_MAX_BATCH},
    {"alignment", offsetof(rnnsearch_options, alignment), 0, 0, 1},
    {"replace_unk", offsetof(rnnsearch_options, replace_unk), 0, 0, 1},
};
enum { N_OPTION_FIELDS = sizeof option_fields / sizeof option_fields[0] };

/* Whether v lies in the field's range (and is whole, for an integer field);
 * a message naming the field when it does not. */
static int check_field(const option_field *f, double v, rnnsearch_error *err)
{
    if (isfinite(v) && v >= f->min && v <= f->max && (f->is_float || v == floor(v)))
        return 0;
    if (f->is_float)
        return fail_msg(err, "%s: %.15g is not a number from %g to %g", f->name, v, f->min, f->max);
    /* A whole number prints whole (2147483647, not 2.14748e+09). */
    if (isfinite(v) && v == floor(v) && fabs(v) < 1e18)
        return fail_msg(err, "%s: %.0f is not an integer from %.0f to %.0f", f->name, v, f->min,
                        f->max);
    return fail_msg(err, "%s: %g is not an integer from %.0f to %.0f", f->name, v, f->min, f->max);
}

static double field_value(const rnnsearch_options *opt, const option_field *f)
{
    const char *at = (const char *)opt + f->offset;
    if (f->is_float) {
        float x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    int i;
    memcpy(&i, at, sizeof i);
    return i;
}

static void defaults(rnnsearch_options *opt)
{
    rs_translate_options d;
    rs_translate_options_default(&d);
    *opt = (rnnsearch_options){.size = sizeof *opt,
                               .beam = d.beam,
                               .n_best = d.n_best,
                               .length_penalty = d.length_penalty,
                               .max_len = d.max_len,
                               .max_src_len = d.max_src_len,
                               .batch_size = d.batch_size,
                               .alignment = d.want_alignment,
                               .replace_unk = d.replace_unk,
                               .remove_bpe = d.remove_bpe};
}

int rnnsearch_options_init(rnnsearch_options *opt, size_t size, rnnsearch_error *err)
{
    if (!opt)
        return fail_msg(err, "rnnsearch_options_init: no options (NULL)");
    if (size < OPTIONS_SIZE_1 || size > OPTIONS_SIZE_MAX)
        return fail_msg(err,
                        "rnnsearch_options_init: a size of %zu bytes is not that of an "
                        "rnnsearch_options (pass sizeof the structure)",
                        size);
    rnnsearch_options d;
    defaults(&d);
    d.size = size;
    /* The caller's structure may be shorter (an older header) or longer (a
     * newer one) than this library's: write exactly size bytes, the fields
     * this library does not know zero, which is their default. */
    const size_t known = size < sizeof d ? size : sizeof d;
    memcpy(opt, &d, known);
    if (size > known)
        memset((char *)opt + known, 0, size - known);
    return 0;
}

size_t rnnsearch_options_size(void)
{
    return sizeof(rnnsearch_options);
}

/* A copy of the caller's options in this library's layout: its first size
 * bytes over the defaults, after checking that size is one
 * rnnsearch_options_init wrote and that nothing this library does not know
 * is set. */
static int options_size(const rnnsearch_options *opt, size_t *size, rnnsearch_error *err)
{
    *size = opt->size;
    if (*size < OPTIONS_SIZE_1 || *size > OPTIONS_SIZE_MAX)
        return fail_msg(err,
                        "the options' size is %zu bytes: fill them with "
                        "rnnsearch_options_init(&opt, sizeof opt, …) first",
                        *size);
    return 0;
}

static int options_read(const rnnsearch_options *opt, rnnsearch_options *o, rnnsearch_error *err)
{
    defaults(o);
    if (!opt)
        return 0;
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    const size_t known = size < sizeof *o ? size : sizeof *o;
    memcpy(o, opt, known);
    for (size_t i = known; i < size; i++)
        if (((const unsigned char *)opt)[i])
            return fail_msg(err,
                            "the options set a field at byte %zu, which librnnsearch %s does not "
                            "know (it knows %zu bytes): a newer rnnsearch.h's field needs a "
                            "newer library",
                            i, RNNSEARCH_VERSION, sizeof *o);
    o->size = sizeof *o;
    return 0;
}

int rnnsearch_options_set(rnnsearch_options *opt, const char *name, double value,
                          rnnsearch_error *err)
{
    if (!opt || !name)
        return fail_msg(err, "rnnsearch_options_set: no options or no name (NULL)");
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    if (!strcmp(name, "remove_bpe"))
        return fail_msg(err, "rnnsearch_options_set: remove_bpe is a text: set it with "
                             "rnnsearch_options_set_text");
    for (int i = 0; i < N_OPTION_FIELDS; i++) {
        const option_field *f = &option_fields[i];
        if (strcmp(name, f->name))
            continue;
        if (f->offset + sizeof(int) > size)
            return fail_msg(err, "rnnsearch_options_set: %s lies beyond the caller's options",
                            name);
        if (check_field(f, value, err))
            return -1;
        char *at = (char *)opt + f->offset;
        if (f->is_float) {
            const float x = (float)value;
            memcpy(at, &x, sizeof x);
        } else {
            const int x = (int)value;
            memcpy(at, &x, sizeof x);
        }
        return 0;
    }
    return fail_msg(err, "rnnsearch_options_set: no option is called '%.64s'", name);
}

/* A remove_bpe marker: NULL (none), or 1 … MARKER_MAX bytes. */
static int check_marker(const char *marker, rnnsearch_error *err)
{
    if (!marker)
        return 0;
    if (!*marker)
        return fail_msg(err, "remove_bpe: the marker is empty (NULL for none)");
    if (strnlen(marker, MARKER_MAX + 1) > MARKER_MAX)
        return fail_msg(err, "remove_bpe: the marker is longer than %d bytes", MARKER_MAX);
    return 0;
}

int rnnsearch_options_set_text(rnnsearch_options *opt, const char *name, const char *value,
                               rnnsearch_error *err)
{
    if (!opt || !name)
        return fail_msg(err, "rnnsearch_options_set_text: no options or no name (NULL)");
    size_t size;
    if (options_size(opt, &size, err))
        return -1;
    if (strcmp(name, "remove_bpe"))
        return fail_msg(err, "rnnsearch_options_set_text: no text option is called '%.64s'", name);
    const size_t at = offsetof(rnnsearch_options, remove_bpe);
    if (at + sizeof value > size)
        return fail_msg(err,
                        "rnnsearch_options_set_text: remove_bpe lies beyond the caller's "
                        "options (%zu bytes: a 1.0 header's)",
                        size);
    if (check_marker(value, err))
        return -1;
    memcpy((char *)opt + at, &value, sizeof value);
    return 0;
}

int rnnsearch_options_check(const rnnsearch_options *opt, rnnsearch_error *err)
{
    if (!opt)
        return fail_msg(err, "rnnsearch_options_check: no options (NULL)");
    rnnsearch_options o;
    if (options_read(opt, &o, err))
        return -1;
    for (int i = 0; i < N_OPTION_FIELDS; i++)
        if (check_field(&option_fields[i], field_value(&o, &option_fields[i]), err))
            return -1;
    if (o.n_best > o.beam)
        return fail_msg(err, "n_best: %d is more than the beam (%d)", o.n_best, o.beam);
    return check_marker(o.remove_bpe, err);
}

/* The members of an ensemble, as the pipeline takes them (&model->model). */
static int ensemble_members(const rnnsearch_model *const *models, int count,
                            const rs_model **members, const char *fn, rnnsearch_error *err)
{
    if (!models || count < 1 || count > RNNSEARCH_MAX_MODELS)
        return fail_msg(err, "%s: %d models (or a NULL array): an ensemble has 1 to %d", fn, count,
                        RNNSEARCH_MAX_MODELS);
    for (int k = 0; k < count; k++) {
        if (!models[k])
            return fail_msg(err, "%s: model %d is NULL", fn, k + 1);
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
        return fail_msg(err, "rnnsearch_translator_new: no model or no place for the translator");
    return rnnsearch_translator_new_ensemble(&model, 1, opt, tr, err);
}

int rnnsearch_translator_new_ensemble(const rnnsearch_model *const *models, int count,
                                      const rnnsearch_options *opt, rnnsearch_translator **tr,
                                      rnnsearch_error *err)
{
    rs_error e;
    if (!tr)
        return fail_msg(err, "rnnsearch_translator_new_ensemble: no place for the translator");
    *tr = NULL;
    rnnsearch_options o;
    if (opt && rnnsearch_options_check(opt, err))
        return -1;
    if (options_read(opt, &o, err))
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
    if (rs_translator_init(&t->tr, t->members, count, &models[0]->codec, &topt, &e)) {
        free(t->remove_bpe);
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
    free(tr->remove_bpe);
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
        return fail_msg(err, "rnnsearch_translate: no translator, sources or output");
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
        return fail_msg(err, "rnnsearch_force: no model or no place for the result (NULL)");
    if (check_text(source, "the source", err) || check_text(target, "the target", err))
        return -1;
    const rs_model *member = &model->model;
    /* A model with --attention none has no alignment: the result's is NULL. */
    const int aligns = member->cfg.attention != RS_ATT_NONE;
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
static int score_pairs(const rs_model *const *members, int n_models, const rs_codec *codec,
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
        /* An empty source, as rnnsearch_force (and score's reader) refuse it. */
        for (int i = 0; i < count; i++)
            if (tok.src[i].count == 0) {
                rs_fail(e, "rnnsearch_score: pair %d: the source is empty", i + 1);
                goto done;
            }
        rs_cut_sources(&tok, RS_MAX_SRC_LEN, cut);
        /* max_len 0 keeps every pair, in order. */
        if (!rs_dataset_build(&data, &tok, &members[0]->src_vocab, &members[0]->tgt_vocab, 0, NULL,
                              e) &&
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
    const rs_model *members[RNNSEARCH_MAX_MODELS];
    if (count < 0 || (count > 0 && (!sources || !targets || !logprobs)))
        return fail_msg(err, "rnnsearch_score: no sources, targets or scores (NULL), or a "
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
