/* Requests, on libmicrohttpd's one polling thread: the routes, each
 * request checked on its headers (who may ask: access.c; the method, the
 * content type, a declared length), its body kept up to the limit, then
 * queued whole for a worker (jobs.c) or answered at once; the log line when
 * it is done. Also the request limits a worker applies when it parses a
 * body (rs_serve_parse_job): known members only, texts of at most max_chars
 * characters, at most max_batch sentences a request, beam and n_best from 1
 * to max_beam; OpenNMT-py's request shape for /translator/translate.
 *
 * Lifetimes: a request is made here (request_new) when its headers are in
 * and freed here (rs_serve_on_completed), both on the polling thread; while
 * it is queued or decoded its connection is suspended, so no callback here
 * runs for it until the worker resumes it (see `request` in server.h). */
#include <errno.h>
#include <microhttpd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json.h"
#include "model/config.h"
#include "serve/server.h"

static route route_of(const char *url)
{
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return ROUTE_PAGE;
    if (!strcmp(url, "/api/models"))
        return ROUTE_MODELS;
    if (!strcmp(url, "/api/translate"))
        return ROUTE_TRANSLATE;
    if (!strcmp(url, "/api/align"))
        return ROUTE_ALIGN;
    if (!strcmp(url, "/api/run"))
        return ROUTE_RUN;
    if (!strcmp(url, "/api/run/watch"))
        return ROUTE_RUN_WATCH;
    if (!strcmp(url, "/translator/translate"))
        return ROUTE_ONMT_TRANSLATE;
    if (!strcmp(url, "/translator/models"))
        return ROUTE_ONMT_MODELS;
    return ROUTE_NONE;
}

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

/* The JSON object of /api/translate or /api/align into rq's job fields;
 * 0 or an HTTP status. */
static int take_object(const rs_server *s, request *rq, const rs_json *root, rs_error *err)
{
    static const char *const translate_keys[] = {"text", "model", "beam", "n_best",
                                                 "svg",  "words", NULL};
    static const char *const align_keys[] = {"text", "source", "target", "model",
                                             "svg",  "words",  NULL};
    const char *const *keys = rq->route == ROUTE_TRANSLATE ? translate_keys : align_keys;
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
    if (rq->words && s->models[rq->model].model->cfg.tokenizer != RS_TOKENIZER_SPM)
        return rs_fail(
                   err,
                   "'words' merges SentencePiece pieces, and model '%s' has none (tokenizer %s)",
                   s->models[rq->model].name,
                   rs_tokenizer_names[s->models[rq->model].model->cfg.tokenizer]),
               400;
    if (rq->route == ROUTE_TRANSLATE)
        return take_translate(s, rq, root, err);
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

/* Keeps the body, up to max_body bytes; past the limit the rest is read and
 * thrown away and the answer is 413. */
static void receive(const rs_server *s, request *rq, const char *data, size_t size)
{
    if (!rq->too_big && rq->len + size > s->opt.max_body)
        rq->too_big = 1;
    if (rq->too_big) {
        free(rq->body);
        rq->body = NULL;
        rq->len = rq->cap = 0;
        return;
    }
    if (rq->len + size > rq->cap) {
        size_t cap = rq->cap ? rq->cap : 1024;
        while (cap < rq->len + size)
            cap *= 2;
        char *grown = realloc(rq->body, cap);
        if (!grown) {
            rq->too_big = 1; /* answered 413: the server has no room for it now */
            return;
        }
        rq->body = grown;
        rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, size);
    rq->len += size;
}

/* A client's bytes as the log may show them: printable ASCII as is, every
 * other byte (control bytes such as ESC, and non-ASCII) and the backslash as
 * \xNN, cut with "..." to fit dst; so no request can write to the operator's
 * terminal. */
void rs_serve_escape_for_log(char *dst, size_t size, const char *src)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        const int plain = *p >= 0x20 && *p < 0x7F && *p != '\\';
        if (n + (plain ? 1 : 4) + 4 > size) {
            memcpy(dst + n, "...", 3);
            n += 3;
            break;
        }
        if (plain)
            dst[n++] = (char)*p;
        else
            n += (size_t)snprintf(dst + n, size - n, "\\x%02X", *p);
    }
    dst[n] = '\0';
}

static request *request_new(struct MHD_Connection *connection, const char *url, const char *method)
{
    request *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NULL;
    rq->connection = connection;
    rq->start = rs_clock_seconds();
    rq->route = route_of(url);
    rs_serve_escape_for_log(rq->method, sizeof rq->method, method);
    rs_serve_escape_for_log(rq->path, sizeof rq->path, url);
    return rq;
}

/* A training-view request checked on its headers: it goes to the reader
 * (read_job) once whole, or is answered here. */
static enum MHD_Result check_run(rs_server *s, request *rq, int get)
{
    if (!get)
        return rs_serve_send_error(rq, 405, "use GET");
    if (!s->opt.run_dir)
        return rs_serve_send_error(rq, 404,
                                   "this server shows no training run (start it with --run DIR, or "
                                   "-m with a model directory)");
    rq->from = 0;
    if (rq->route == ROUTE_RUN_WATCH) {
        const char *from = NULL;
        if (MHD_lookup_connection_value_n(rq->connection, MHD_GET_ARGUMENT_KIND, "from", 4, &from,
                                          NULL) == MHD_YES) {
            /* After decoding, digits only (strtoull alone would take "+5" and
             * " 5"), and within 64 bits. */
            const size_t digits = from ? strspn(from, "0123456789") : 0;
            errno = 0;
            if (digits == 0 || from[digits] || digits > 20 ||
                (rq->from = strtoull(from, NULL, 10), errno))
                return rs_serve_send_error(rq, 400, "'from' is a byte offset: digits only");
        }
    }
    return MHD_YES;
}

/* The first call for a request: its headers are in. */
static enum MHD_Result on_headers(rs_server *s, request *rq, const char *method,
                                  const char *version)
{
    const int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    const int post = !strcmp(method, MHD_HTTP_METHOD_POST);
    size_t len = 0;
    char *body, msg[512];
    int status = rs_serve_refused(s, rq, version, get, msg, sizeof msg);
    if (status)
        return rs_serve_send_error(rq, status, msg);
    switch (rq->route) {
    case ROUTE_NONE:
        return rs_serve_send_error(
            rq, 404,
            "no such page: the API is POST /api/translate, POST /api/align, "
            "GET /api/models, GET /api/run and GET /api/run/watch, and OpenNMT-py's "
            "POST /translator/translate and GET /translator/models; the explorer "
            "is GET /");
    case ROUTE_PAGE:
        if (!get)
            return rs_serve_send_error(rq, 405, "use GET");
        return rs_serve_send_page(s, rq);
    case ROUTE_MODELS:
    case ROUTE_ONMT_MODELS:
        if (!get)
            return rs_serve_send_error(rq, 405, "use GET");
        body = rq->route == ROUTE_MODELS ? rs_serve_models_json(s, &len)
                                         : rs_serve_onmt_models_json(s, &len);
        return rs_serve_send_json(rq, 200, body, len);
    case ROUTE_RUN:
    case ROUTE_RUN_WATCH: return check_run(s, rq, get);
    case ROUTE_TRANSLATE:
    case ROUTE_ONMT_TRANSLATE:
    case ROUTE_ALIGN: {
        if (!post)
            return rs_serve_send_error(rq, 405, "use POST with a JSON body");
        if (!rs_serve_json_content_type(rq->connection))
            return rs_serve_send_error(rq, 415, "send the body as Content-Type: application/json");
        const char *cl = MHD_lookup_connection_value(rq->connection, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->opt.max_body) {
            snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
            return rs_serve_send_error(rq, 413, msg);
        }
        return MHD_YES;
    }
    }
    return MHD_NO;
}

enum MHD_Result rs_serve_on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq) {
        if (!(rq = request_new(connection, url, method)))
            return MHD_NO;
        *con_cls = rq;
        return on_headers(s, rq, method, version);
    }
    if (rq->state == DECODED) {
        char *reply = rq->reply;
        rq->reply = NULL;
        return rs_serve_send_json(rq, rq->status, reply, rq->reply_len);
    }
    if (*upload_data_size) {
        receive(s, rq, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->status) /* answered on the headers already */
        return MHD_YES;
    if (rq->too_big) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
        return rs_serve_send_error(rq, 413, msg);
    }
    return rs_serve_submit(s, rq);
}

void rs_serve_on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq)
        return;
    rs_serve_set_busy(s, connection, 0);
    if (s->opt.log) {
        char line[320];
        snprintf(line, sizeof line, "%s %s %d %.1f ms%s", rq->method, rq->path, rq->status,
                 1e3 * (rs_clock_seconds() - rq->start),
                 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
        s->opt.log(s->opt.log_ctx, line);
    }
    free(rq->body);
    free(rq->text);
    free(rq->target);
    for (int i = 0; rq->texts && i < rq->count; i++)
        free(rq->texts[i]);
    free(rq->texts);
    free(rq->reply);
    free(rq);
    *con_cls = NULL;
}
