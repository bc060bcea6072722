/* A worker's reading of a translate, align or push request's body into the
 * request's job fields (run_job in jobs.c calls it, off the polling thread),
 * with the request limits: known members only, texts of at most max_chars
 * characters, at most max_batch sentences a request, beam and n_best from 1
 * to max_beam; and OpenNMT-py's request shape for /translator/translate.
 * Messages quote a client's text cut on a character boundary. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "model/config.h"
#include "search/decode.h"
#include "serve/server.h"

/* The longest prefix of UTF-8 text s of at most max bytes that ends on a
 * character boundary, for messages that quote a client's text. */
static int utf8_prefix(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return (int)n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return (int)n;
}

/* Characters of UTF-8 text (the JSON reader has validated it). */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* How messages name sentence i of a translate request: 'text' alone, an
 * item of a "text" list ('text'[2], counted from 0 as JSON paths are), or
 * an OpenNMT-py entry's src (sentence 2's 'src'). */
void rs_serve_text_name(const request *rq, int i, char *name, size_t size)
{
    if (rq->route == ROUTE_ONMT_TRANSLATE)
        snprintf(name, size, "sentence %d's 'src'", i);
    else if (rq->batch)
        snprintf(name, size, "'text'[%d]", i);
    else
        snprintf(name, size, "'text'");
}

/* A string that is not empty or blank and not over the length limit; *out
 * is a copy; `what` names it in messages. Returns 0 or an HTTP status. */
static int copy_text(const rs_serve_options *opt, const rs_json *v, const char *what, char **out,
                     rs_error *err)
{
    if (v->type != RS_JSON_STRING)
        return rs_fail(err, "%s must be a string, not %s", what, rs_json_type_name(v->type)), 400;
    if (strspn(v->string, " \t\r\n") == v->len)
        return rs_fail(err, "%s is empty", what), 400;
    size_t chars = utf8_chars(v->string);
    if (chars > (size_t)opt->max_chars)
        return rs_fail(err, "%s has %zu characters; the limit is %d", what, chars, opt->max_chars),
               413;
    if (!(*out = strdup(v->string)))
        return rs_fail(err, "out of memory"), 500;
    return 0;
}

/* A required or optional string member (copy_text); 0 or an HTTP status. */
static int take_text(const rs_serve_options *opt, const rs_json *root, const char *key,
                     int required, char **out, rs_error *err)
{
    const rs_json *v = rs_json_get(root, key);
    char what[32];
    if (!v) {
        if (required)
            return rs_fail(err, "'%s' is missing", key), 400;
        return 0;
    }
    snprintf(what, sizeof what, "'%s'", key);
    return copy_text(opt, v, what, out, err);
}

/* Room for the n sentences of a translate request (`what` names the list):
 * at least one, at most max_batch (413 beyond, before anything is copied). */
static int new_texts(const rs_serve_options *opt, request *rq, size_t n, const char *what,
                     rs_error *err)
{
    if (n == 0)
        return rs_fail(err, "%s is an empty list; send at least one sentence", what), 400;
    if (n > (size_t)opt->max_batch)
        return rs_fail(err, "%s has %zu sentences; the limit is %d (the server's --max-batch)",
                       what, n, opt->max_batch),
               413;
    if (!(rq->texts = calloc(n, sizeof *rq->texts)))
        return rs_fail(err, "out of memory"), 500;
    rq->count = (int)n;
    return 0;
}

/* "text": one sentence, or a list of them translated as one batch. */
static int take_texts(const rs_serve_options *opt, request *rq, const rs_json *root, rs_error *err)
{
    const rs_json *v = rs_json_get(root, "text");
    char what[48];
    int status;
    if (!v)
        return rs_fail(err, "'text' is missing"), 400;
    if (v->type != RS_JSON_STRING && v->type != RS_JSON_ARRAY)
        return rs_fail(err, "'text' must be a string or a list of strings, not %s",
                       rs_json_type_name(v->type)),
               400;
    rq->batch = v->type == RS_JSON_ARRAY;
    if ((status = new_texts(opt, rq, rq->batch ? v->count : 1, "'text'", err)))
        return status;
    for (int i = 0; i < rq->count; i++) {
        rs_serve_text_name(rq, i, what, sizeof what);
        if ((status = copy_text(opt, rq->batch ? &v->items[i] : v, what, &rq->texts[i], err)))
            return status;
    }
    return 0;
}

static int take_int(const rs_json *root, const char *key, int min, int max, int *out, rs_error *err)
{
    const rs_json *v = rs_json_get(root, key);
    uint64_t x;
    if (!v)
        return 0;
    if (v->type != RS_JSON_NUMBER || rs_json_to_u64(v, &x) || x < (uint64_t)min ||
        x > (uint64_t)max)
        return rs_fail(err, "'%s' must be an integer from %d to %d", key, min, max), 400;
    *out = (int)x;
    return 0;
}

/* An optional boolean member (absent: false); 400 when it is not one. */
static int take_bool(const rs_json *root, const char *key, int *out, rs_error *err)
{
    const rs_json *v = rs_json_get(root, key);
    if (v && v->type != RS_JSON_TRUE && v->type != RS_JSON_FALSE)
        return rs_fail(err, "'%s' must be true or false, not %s", key, rs_json_type_name(v->type)),
               400;
    *out = v && v->type == RS_JSON_TRUE;
    return 0;
}

/* The optional "model" member: the index of the model of that name (absent:
 * 0, the default). Returns 0, or an HTTP status with the message in err. */
static int take_model(const rs_server *s, const rs_json *root, int *out, rs_error *err)
{
    const rs_json *v = rs_json_get(root, "model");
    *out = 0;
    if (!v)
        return 0;
    if (v->type != RS_JSON_STRING)
        return rs_fail(err, "'model' must be a string, not %s", rs_json_type_name(v->type)), 400;
    *out = -1;
    for (int i = 0; i < s->n_models; i++)
        if (!strcmp(v->string, s->models[i].name))
            *out = i;
    if (*out < 0)
        return rs_fail(err, "no model named '%.*s' (GET /api/models lists them)",
                       utf8_prefix(v->string, 200), v->string),
               404;
    return 0;
}

/* An OpenNMT-py entry's optional "id" (absent: 0): the model with that
 * place in the -m order (GET /translator/models lists them). With one model
 * every id is that model: clients are configured with the id of their
 * OpenNMT-py server's conf.json (its example's is 100). */
static int take_onmt_id(const rs_server *s, const rs_json *entry, int i, int *out, rs_error *err)
{
    const rs_json *v = rs_json_get(entry, "id");
    uint64_t id = 0;
    *out = 0;
    if (!v)
        return 0;
    if (v->type != RS_JSON_NUMBER || rs_json_to_u64(v, &id))
        return rs_fail(err, "sentence %d: 'id' must be a model's model_id, an integer from 0", i),
               400;
    if (s->n_models == 1)
        return 0;
    if (id >= (uint64_t)s->n_models)
        return rs_fail(err,
                       "sentence %d: no model with id %llu; this server has ids 0 to %d "
                       "(GET /translator/models lists them)",
                       i, (unsigned long long)id, s->n_models - 1),
               404;
    *out = (int)id;
    return 0;
}

/* OpenNMT-py's request, [{"src": "...", "id": N}, ...]: the sentences in
 * order, for one model (as there, where the first entry's id decides; here
 * entries that name different models are refused rather than sent to the
 * first's), greedy with one hypothesis. Returns 0 or an HTTP status. */
static int take_onmt(const rs_server *s, request *rq, const rs_json *root, rs_error *err)
{
    char what[48];
    int status, model;
    if (root->type != RS_JSON_ARRAY)
        return rs_fail(err, "the body must be a JSON list of {\"src\": ..., \"id\": ...}, not %s",
                       rs_json_type_name(root->type)),
               400;
    if ((status = new_texts(&s->opt, rq, root->count, "the request", err)))
        return status;
    rq->beam = rq->n_best = 1;
    for (int i = 0; i < rq->count; i++) {
        const rs_json *e = &root->items[i];
        if (e->type != RS_JSON_OBJECT)
            return rs_fail(err, "sentence %d must be an object {\"src\": ...}, not %s", i,
                           rs_json_type_name(e->type)),
                   400;
        for (size_t k = 0; k < e->count; k++)
            if (strcmp(e->keys[k], "src") && strcmp(e->keys[k], "id"))
                return rs_fail(err, "sentence %d: unknown member '%.*s' (only src and id)", i,
                               utf8_prefix(e->keys[k], 100), e->keys[k]),
                       400;
        if (!rs_json_get(e, "src"))
            return rs_fail(err, "sentence %d: 'src' is missing", i), 400;
        rs_serve_text_name(rq, i, what, sizeof what);
        if ((status = copy_text(&s->opt, rs_json_get(e, "src"), what, &rq->texts[i], err)) ||
            (status = take_onmt_id(s, e, i, &model, err)))
            return status;
        if (i > 0 && model != rq->model)
            return rs_fail(err,
                           "sentence %d asks for model id %d and sentence 0 for %d: one request "
                           "goes to one model",
                           i, model, rq->model),
                   400;
        rq->model = model;
    }
    return 0;
}

/* The members of /api/translate past model, svg and words: the texts, beam
 * and n_best (default: the beam). Returns 0 or an HTTP status. */
static int take_translate(const rs_server *s, request *rq, const rs_json *root, rs_error *err)
{
    int status;
    rq->beam = 1;
    rq->n_best = 0;
    if ((status = take_texts(&s->opt, rq, root, err)) ||
        (status = take_int(root, "beam", 1, s->opt.max_beam, &rq->beam, err)) ||
        (status = take_int(root, "n_best", 1, s->opt.max_beam, &rq->n_best, err)))
        return status;
    if (rq->n_best == 0)
        rq->n_best = rq->beam;
    if (rq->n_best > rq->beam)
        return rs_fail(err, "'n_best' (%d) must not exceed 'beam' (%d)", rq->n_best, rq->beam), 400;
    return 0;
}

/* The optional "alpha" member of /api/push: one weight per source position
 * (</s> last), at most max_src_len + 1 of them, each a number (their range
 * and sum are explain's checks, against the sentence). 0 or an HTTP status. */
static int take_alpha(request *rq, const rs_json *root, rs_error *err)
{
    const rs_json *v = rs_json_get(root, "alpha");
    if (!v)
        return 0;
    if (v->type != RS_JSON_ARRAY || v->count == 0 || v->count > RS_MAX_SRC_LEN + 1)
        return rs_fail(err,
                       "'alpha' must be a list of 1 to %d numbers, one weight a source position "
                       "(</s> last)",
                       RS_MAX_SRC_LEN + 1),
               400;
    if (!(rq->alpha = calloc(v->count, sizeof *rq->alpha)))
        return rs_fail(err, "out of memory"), 500;
    for (size_t j = 0; j < v->count; j++) {
        if (v->items[j].type != RS_JSON_NUMBER)
            return rs_fail(err, "'alpha'[%zu] must be a number, not %s", j,
                           rs_json_type_name(v->items[j].type)),
                   400;
        rq->alpha[j] = v->items[j].number;
    }
    rq->n_alpha = (int)v->count;
    return 0;
}

/* The members of /api/push past model and svg: the sentence, the step
 * (from 1) and either the source position it attends to (from 1, </s>
 * last) or its weights. The bounds here are the widest any sentence
 * allows (max_src_len tokens, its longest output); the sentence's own are
 * explain's (eval/explain_step.h). Returns 0 or an HTTP status. */
static int take_push(const rs_server *s, request *rq, const rs_json *root, rs_error *err)
{
    const int max_step = rs_output_limit(0, RS_MAX_SRC_LEN) + 1;
    int status;
    rq->step = 0;
    rq->has_attend = rs_json_get(root, "attend") != NULL;
    if ((status = take_text(&s->opt, root, "text", 1, &rq->text, err)))
        return status;
    if (!rs_json_get(root, "step"))
        return rs_fail(err, "'step' is missing (the decoder step to push, from 1)"), 400;
    if ((status = take_int(root, "step", 1, max_step, &rq->step, err)) ||
        (status = take_int(root, "attend", 1, RS_MAX_SRC_LEN + 1, &rq->attend, err)) ||
        (status = take_alpha(rq, root, err)))
        return status;
    if (rq->has_attend == (rq->alpha != NULL))
        return rs_fail(err,
                       "give 'attend' (the source position step %d looks at, from 1) or "
                       "'alpha' (its weights), one of them",
                       rq->step),
               400;
    return 0;
}

/* The JSON object of /api/translate, /api/align or /api/push into rq's job
 * fields; 0 or an HTTP status. */
static int take_object(const rs_server *s, request *rq, const rs_json *root, rs_error *err)
{
    static const char *const translate_keys[] = {"text", "model", "beam", "n_best",
                                                 "svg",  "words", NULL};
    static const char *const align_keys[] = {"text", "source", "target", "model",
                                             "svg",  "words",  NULL};
    static const char *const push_keys[] = {"text",  "model", "step", "attend",
                                            "alpha", "svg",   NULL};
    const char *const *keys = rq->route == ROUTE_TRANSLATE ? translate_keys
                              : rq->route == ROUTE_PUSH    ? push_keys
                                                           : align_keys;
    int status;
    if (root->type != RS_JSON_OBJECT)
        return rs_fail(err, "the body must be a JSON object, not %s",
                       rs_json_type_name(root->type)),
               400;
    for (size_t i = 0; i < root->count; i++) {
        int known = 0;
        for (int k = 0; keys[k]; k++)
            known |= !strcmp(root->keys[i], keys[k]);
        if (!known)
            return rs_fail(err, "unknown member '%.*s'", utf8_prefix(root->keys[i], 100),
                           root->keys[i]),
                   400;
    }
    if ((status = take_model(s, root, &rq->model, err)) ||
        (status = take_bool(root, "svg", &rq->svg, err)) ||
        (status = take_bool(root, "words", &rq->words, err)))
        return status;
    if (rq->words && s->models[rq->model].model->model->cfg.tokenizer != RS_TOKENIZER_SPM)
        return rs_fail(
                   err,
                   "'words' merges SentencePiece pieces, and model '%s' has none (tokenizer %s)",
                   s->models[rq->model].name,
                   rs_tokenizer_names[s->models[rq->model].model->model->cfg.tokenizer]),
               400;
    if (rq->route == ROUTE_TRANSLATE)
        return take_translate(s, rq, root, err);
    if (rq->route == ROUTE_PUSH)
        return take_push(s, rq, root, err);
    /* The source is 'text', as /api/translate names it; 'source', its first
     * name here, stays accepted. Messages name the member the client sent. */
    const int has_text = rs_json_get(root, "text") != NULL;
    const int has_source = rs_json_get(root, "source") != NULL;
    if (has_text && has_source)
        return rs_fail(err, "give the source sentence as 'text' or as 'source' (its other name), "
                            "not both"),
               400;
    if (!has_text && !has_source)
        return rs_fail(err, "'text' is missing (the source sentence; 'source' is accepted too)"),
               400;
    if ((status = take_text(&s->opt, root, has_text ? "text" : "source", 1, &rq->text, err)))
        return status;
    return take_text(&s->opt, root, "target", 1, &rq->target, err);
}

/* Parses and checks the body of a translate or align request into the job
 * fields of rq (on a worker: see run_job in jobs.c). Returns 0, or an HTTP
 * status with the message in err. */
int rs_serve_parse_job(const rs_server *s, request *rq, rs_error *err)
{
    const int onmt = rq->route == ROUTE_ONMT_TRANSLATE;
    if (rq->len == 0)
        return rs_fail(err, "the body is empty; send a JSON %s", onmt ? "list" : "object"), 400;
    rs_error inner;
    rs_json *root = rs_json_parse(rq->body, rq->len, &inner);
    if (!root)
        return rs_fail(err, "the body is not JSON: %s", inner.msg), 400;
    int status = onmt ? take_onmt(s, rq, root, err) : take_object(s, rq, root, err);
    rs_json_free(root);
    return status;
}
