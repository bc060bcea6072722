/* The HTTP server of `rnnsearch serve`: routing, request limits, the bounded
 * queue, the workers and the JSON answers (see serve.h, docs/serve.md).
 *
 * Lifetimes: a request (one per HTTP request, libmicrohttpd's con_cls) is
 * made by the polling thread when the headers are in and freed by it in
 * on_completed. While a worker has it, its connection is suspended, so
 * libmicrohttpd neither calls us for it nor closes it: a request is never
 * freed under a worker. Everything a worker writes into the request is read
 * by the polling thread only after MHD_resume_connection. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "alignment.h"
#include "clock.h"
#include "forced.h"
#include "json.h"
#include "serve.h"
#include "serve_page.h"
#include "translate.h"

void rs_serve_options_default(rs_serve_options *opt)
{
    *opt = (rs_serve_options){.host = "127.0.0.1",
                              .port = 8080,
                              .threads = 2,
                              .queue = 64,
                              .connections = 64,
                              .max_body = 64 * 1024,
                              .timeout = 10,
                              .max_chars = 1000,
                              .max_beam = 16};
}

typedef enum { ROUTE_PAGE, ROUTE_MODELS, ROUTE_TRANSLATE, ROUTE_ALIGN, ROUTE_NONE } route;
typedef enum { RECEIVING, QUEUED, DECODED } request_state;

typedef struct {
    struct MHD_Connection *connection;
    route route;
    request_state state;
    double start;         /* monotonic seconds when the headers were in */
    char method[8];
    char path[64];        /* for the log, cut and with control bytes replaced */
    char *body;           /* [len] the body so far (capacity cap) */
    size_t len, cap;
    int too_big, too_slow;
    /* The job, once the body is parsed. */
    int model;
    char *text, *target;  /* translate: text; align: source (text) and target */
    int beam, n_best, svg;
    /* The answer. */
    int status;           /* HTTP status sent (0: none yet) */
    char *reply;          /* a worker's answer, JSON */
    size_t reply_len;
} request;

typedef struct rs_server rs_server;

typedef struct {
    rs_server *server;
    pthread_t thread;
    int started;
    rs_translator *tr; /* [n_models], this worker's own decoding workspaces */
} worker;

struct rs_server {
    rs_serve_options opt;
    const rs_serve_model *models;
    const rs_model **model_ptrs; /* [n_models]: models[i].model, for rs_translator_init */
    int n_models;
    struct MHD_Daemon *daemon;
    struct MHD_Response *page;
    int port;
    worker *workers;             /* [opt.threads] */
    pthread_mutex_t lock;        /* guards ring, head, count, stopping */
    pthread_cond_t wake;
    request **ring;              /* [opt.queue] waiting requests, from head */
    int head, count, stopping;
};

/* ---- JSON output ---- */

/* Finite numbers as they are (9 significant digits: exact for a float),
 * anything else as null, which JSON has instead of NaN and infinities. */
static void json_number(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, "%.9g", x);
    else
        fputs("null", out);
}

/* An open_memstream whose text becomes an answer; NULL when out of memory. */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
} membuf;

static int membuf_open(membuf *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    return m->f ? 0 : -1;
}

/* Closes the stream; the text (or NULL after any error) is the caller's. */
static char *membuf_close(membuf *m, size_t *len)
{
    int bad = ferror(m->f);
    if (fclose(m->f) || bad) {
        free(m->text);
        return NULL;
    }
    *len = m->len;
    return m->text;
}

static char *error_json(const char *message, int status, size_t *len)
{
    membuf m;
    if (membuf_open(&m))
        return NULL;
    fputs("{\"error\":", m.f);
    rs_json_write_string(m.f, message);
    fprintf(m.f, ",\"status\":%d}\n", status);
    return membuf_close(&m, len);
}

/* An alignment as alignment.h writes it: its JSON record or its SVG picture. */
static char *alignment_text(const rs_alignment *a, int svg, int id, const char *title, size_t *len)
{
    membuf m;
    if (membuf_open(&m))
        return NULL;
    if (svg)
        rs_alignment_write_svg(m.f, a, title);
    else
        rs_alignment_write_json(m.f, a, id);
    return membuf_close(&m, len);
}

/* The "alignment" member (alignment.h's JSON record: labels with </s>, the
 * matrix row by row) and, when asked, the "svg" member (the same picture
 * `rnnsearch align --format svg` draws). */
static int write_alignment(FILE *out, const char *const *tgt, int tgt_count, const char *const *src,
                           int src_count, const float *w, int id, int svg, const char *title,
                           rs_error *err)
{
    rs_alignment a;
    if (rs_alignment_make(&a, tgt, tgt_count, src, src_count, w, err))
        return -1;
    size_t len;
    char *record = alignment_text(&a, 0, id, NULL, &len), *picture = NULL;
    int rc = 0;
    if (!record || (svg && !(picture = alignment_text(&a, 1, id, title, &len)))) {
        rc = rs_fail(err, "out of memory writing an alignment");
    } else {
        /* The record without its JSON Lines newline: an answer is one line. */
        fputs("\"alignment\":", out);
        fwrite(record, 1, strcspn(record, "\n"), out);
        if (picture) {
            fputs(",\"svg\":", out);
            rs_json_write_string(out, picture);
        }
    }
    free(record);
    free(picture);
    rs_alignment_free(&a);
    return rc;
}

static void write_config(FILE *out, const rs_config *cfg)
{
    const char *sep = "";
    putc('{', out);
#define RS_SERVE_I(name, def, help, ...) fprintf(out, "%s\"" #name "\":%d", sep, cfg->name), sep = ",";
#define RS_SERVE_F(name, def, help, ...)                                  \
    fprintf(out, "%s\"" #name "\":%.7g", sep, (double)cfg->name), sep = ",";
#define RS_SERVE_E(name, def, help, names)           \
    fprintf(out, "%s\"" #name "\":", sep), sep = ","; \
    rs_json_write_string(out, names[cfg->name]);
    RS_CONFIG_FIELDS(RS_SERVE_I, RS_SERVE_F, RS_SERVE_E)
#undef RS_SERVE_I
#undef RS_SERVE_F
#undef RS_SERVE_E
    putc('}', out);
}

static char *models_json(const rs_server *s, size_t *len)
{
    membuf m;
    if (membuf_open(&m))
        return NULL;
    fputs("{\"models\":[", m.f);
    for (int i = 0; i < s->n_models; i++) {
        const rs_model *model = s->models[i].model;
        fputs(i ? ",{\"name\":" : "{\"name\":", m.f);
        rs_json_write_string(m.f, s->models[i].name);
        fprintf(m.f, ",\"default\":%s,\"src_vocab\":%d,\"tgt_vocab\":%d,\"params\":%zu,\"config\":",
                i ? "false" : "true", model->src_vocab.size, model->tgt_vocab.size,
                (size_t)model->layout.total);
        write_config(m.f, &model->cfg);
        putc('}', m.f);
    }
    fprintf(m.f,
            "],\"limits\":{\"max_body\":%zu,\"max_chars\":%d,\"max_beam\":%d,\"max_src_len\":%d,"
            "\"timeout\":%d,\"threads\":%d,\"queue\":%d}}\n",
            s->opt.max_body, s->opt.max_chars, s->opt.max_beam, RS_MAX_SRC_LEN, s->opt.timeout,
            s->opt.threads, s->opt.queue);
    return membuf_close(&m, len);
}

/* ---- the jobs (worker threads) ---- */

/* One sentence at a time, with its alignment; the pipeline's defaults else. */
static void translate_options(rs_translate_options *opt, int beam, int n_best)
{
    rs_translate_options_default(opt);
    opt->batch_size = 1;
    opt->want_alignment = 1;
    opt->beam = beam;
    opt->n_best = n_best;
}

static int translate_job(worker *w, request *rq, FILE *out, rs_error *err, int *status)
{
    rs_translator *tr = &w->tr[rq->model];
    /* A translator's workspaces are sized for its beam and n-best: another
     * request's sizes get a fresh translator (its workspaces grow on use). */
    if (tr->opt.beam != rq->beam || tr->opt.n_best != rq->n_best) {
        rs_translate_options opt;
        translate_options(&opt, rq->beam, rq->n_best);
        rs_translator_free(tr);
        if (rs_translator_init(tr, &w->server->model_ptrs[rq->model], 1,
                               w->server->models[rq->model].codec, &opt, err)) {
            *status = 500;
            return -1;
        }
    }
    rs_translated t;
    const char *line = rq->text;
    *status = 500;
    if (rs_translate_lines(tr, 1, &line, &t, err))
        return -1;
    int rc = 0;
    if (t.src_count == 0) {
        *status = 400;
        rc = rs_fail(err, "'text' has no tokens");
        goto done;
    }
    fputs("{\"model\":", out);
    rs_json_write_string(out, w->server->models[rq->model].name);
    fputs(",\"text\":", out);
    rs_json_write_string(out, rq->text);
    fputs(",\"source_tokens\":", out);
    rs_json_write_strings(out, (const char *const *)t.src_tokens, t.src_count);
    fprintf(out, ",\"truncated\":%d,\"beam\":%d,\"n_best\":%d,\"translation\":", t.truncated,
            rq->beam, rq->n_best);
    rs_json_write_string(out, t.hyp[0].text);
    fputs(",\"hypotheses\":[", out);
    for (int k = 0; k < t.n && !rc; k++) {
        const rs_hypothesis *h = &t.hyp[k];
        fprintf(out, "%s{\"rank\":%d,\"translation\":", k ? "," : "", k);
        rs_json_write_string(out, h->text);
        fputs(",\"tokens\":", out);
        rs_json_write_strings(out, (const char *const *)h->tokens, h->len);
        fputs(",\"score\":", out);
        json_number(out, h->score);
        fputs(",\"logprob\":", out);
        json_number(out, h->logprob);
        fprintf(out, ",\"finished\":%s,", h->finished ? "true" : "false");
        if (!h->alignment) {
            rc = rs_fail(err, "the translation came without its alignment");
            break;
        }
        rc = write_alignment(out, (const char *const *)h->tokens, h->len,
                             (const char *const *)t.src_tokens, t.src_count, h->alignment, k,
                             rq->svg, h->text, err);
        putc('}', out);
    }
    fputs("]", out);
done:
    rs_translated_free(&t);
    return rc;
}

static int align_job(worker *w, request *rq, FILE *out, rs_error *err, int *status)
{
    const rs_serve_model *sm = &w->server->models[rq->model];
    rs_forced f;
    rs_tokens src = {0}, tgt = {0};
    /* Text that cannot be tokenized, or has no tokens, is the client's to fix. */
    *status = 400;
    for (int side = RS_SIDE_SRC; side <= RS_SIDE_TGT; side++) {
        const char *name = side == RS_SIDE_SRC ? "source" : "target";
        rs_error inner;
        int rc = rs_codec_tokens(sm->codec, side, side == RS_SIDE_SRC ? rq->text : rq->target,
                                 &src, &inner);
        int count = src.count;
        rs_tokens_free(&src);
        if (rc)
            return rs_fail(err, "'%s': %s", name, inner.msg);
        if (count == 0)
            return rs_fail(err, "'%s' has no tokens", name);
    }
    *status = 500;
    if (rs_forced_text(&w->server->model_ptrs[rq->model], 1, sm->codec, rq->text, rq->target,
                       RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT, &f, &src, &tgt, err))
        return -1;
    int rc = 0;
    if (!f.alignment || !f.token_logprobs) {
        rc = rs_fail(err, "forced decoding came without its alignment");
        goto done;
    }
    fputs("{\"model\":", out);
    rs_json_write_string(out, sm->name);
    fputs(",\"source\":", out);
    rs_json_write_string(out, rq->text);
    fputs(",\"target\":", out);
    rs_json_write_string(out, rq->target);
    fputs(",\"source_tokens\":", out);
    rs_json_write_strings(out, (const char *const *)src.tokens, src.count);
    fputs(",\"target_tokens\":", out);
    rs_json_write_strings(out, (const char *const *)tgt.tokens, tgt.count);
    fputs(",\"logprob\":", out);
    json_number(out, f.logprob);
    fputs(",\"token_logprobs\":[", out);
    for (int i = 0; i <= f.tgt_len; i++) {
        if (i)
            putc(',', out);
        json_number(out, f.token_logprobs[i]);
    }
    fputs("],", out);
    rc = write_alignment(out, (const char *const *)tgt.tokens, tgt.count,
                         (const char *const *)src.tokens, src.count, f.alignment, 0, rq->svg,
                         rq->target, err);
done:
    rs_forced_free(&f);
    rs_tokens_free(&src);
    rs_tokens_free(&tgt);
    return rc;
}

/* Decodes one request into rq->status and rq->reply (NULL only when even an
 * error message could not be made: the connection is then closed). */
static void run_job(worker *w, request *rq)
{
    const rs_server *s = w->server;
    rs_error err;
    int status = 500;
    double start = rs_clock_seconds();
    char *reply = NULL;
    size_t len = 0;
    membuf m;
    if (start - rq->start > s->opt.timeout) {
        status = 503;
        rs_fail(&err, "the request waited more than %d s for a worker; try again", s->opt.timeout);
    } else if (membuf_open(&m) == 0) {
        int rc = rq->route == ROUTE_TRANSLATE ? translate_job(w, rq, m.f, &err, &status)
                                              : align_job(w, rq, m.f, &err, &status);
        if (rc == 0) {
            fprintf(m.f, ",\"ms\":%.1f}\n", 1e3 * (rs_clock_seconds() - start));
            reply = membuf_close(&m, &len);
            if (reply)
                status = 200;
            else
                rs_fail(&err, "out of memory writing the answer");
        } else {
            free(membuf_close(&m, &len));
        }
    } else {
        rs_fail(&err, "out of memory");
    }
    if (!reply)
        reply = error_json(err.msg, status, &len);
    rq->status = status;
    rq->reply = reply;
    rq->reply_len = len;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    rs_server *s = w->server;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->count && !s->stopping)
            pthread_cond_wait(&s->wake, &s->lock);
        if (!s->count) { /* stopping, and nothing left to answer */
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        request *rq = s->ring[s->head];
        s->head = (s->head + 1) % s->opt.queue;
        s->count--;
        pthread_mutex_unlock(&s->lock);
        run_job(w, rq);
        rq->state = DECODED;
        MHD_resume_connection(rq->connection);
    }
}

/* ---- requests (the polling thread) ---- */

static enum MHD_Result send_json(request *rq, int status, char *body, size_t len)
{
    if (!body)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
                                rq->route == ROUTE_TRANSLATE || rq->route == ROUTE_ALIGN ? "POST"
                                                                                         : "GET, HEAD");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    enum MHD_Result ok = MHD_queue_response(rq->connection, (unsigned)status, r);
    MHD_destroy_response(r);
    if (ok == MHD_YES)
        rq->status = status;
    return ok;
}

static enum MHD_Result send_error(request *rq, int status, const char *message)
{
    size_t len = 0;
    char *body = error_json(message, status, &len);
    return send_json(rq, status, body, len);
}

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
    return ROUTE_NONE;
}

/* Characters of UTF-8 text (the JSON reader has validated it). */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* A required or optional string member that is not empty or blank and not
 * over the length limit; *out is a copy. Returns 0 or an HTTP status. */
static int take_text(const rs_serve_options *opt, const rs_json *root, const char *key,
                     int required, char **out, rs_error *err)
{
    const rs_json *v = rs_json_get(root, key);
    if (!v) {
        if (required)
            return rs_fail(err, "'%s' is missing", key), 400;
        return 0;
    }
    if (v->type != RS_JSON_STRING)
        return rs_fail(err, "'%s' must be a string, not %s", key, rs_json_type_name(v->type)), 400;
    if (strspn(v->string, " \t\r\n") == v->len)
        return rs_fail(err, "'%s' is empty", key), 400;
    size_t chars = utf8_chars(v->string);
    if (chars > (size_t)opt->max_chars)
        return rs_fail(err, "'%s' has %zu characters; the limit is %d", key, chars,
                       opt->max_chars), 413;
    if (!(*out = strdup(v->string)))
        return rs_fail(err, "out of memory"), 500;
    return 0;
}

static int take_int(const rs_json *root, const char *key, int min, int max, int *out,
                    rs_error *err)
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

/* Parses and checks the body of a translate or align request into the job
 * fields of rq. Returns 0, or an HTTP status with the message in err. */
static int parse_job(const rs_server *s, request *rq, rs_error *err)
{
    static const char *const translate_keys[] = {"text", "model", "beam", "n_best", "svg", NULL};
    static const char *const align_keys[] = {"source", "target", "model", "svg", NULL};
    const char *const *keys = rq->route == ROUTE_TRANSLATE ? translate_keys : align_keys;
    if (rq->len == 0)
        return rs_fail(err, "the body is empty; send a JSON object"), 400;
    rs_error inner;
    rs_json *root = rs_json_parse(rq->body, rq->len, &inner);
    if (!root)
        return rs_fail(err, "the body is not JSON: %s", inner.msg), 400;
    int status = 0;
    if (root->type != RS_JSON_OBJECT) {
        status = 400;
        rs_fail(err, "the body must be a JSON object, not %s", rs_json_type_name(root->type));
        goto done;
    }
    for (size_t i = 0; i < root->count && !status; i++) {
        int known = 0;
        for (int k = 0; keys[k]; k++)
            known |= !strcmp(root->keys[i], keys[k]);
        if (!known) {
            status = 400;
            rs_fail(err, "unknown member '%.100s'", root->keys[i]);
        }
    }
    if (status)
        goto done;
    rq->model = 0;
    const rs_json *model = rs_json_get(root, "model");
    if (model && model->type != RS_JSON_STRING) {
        status = 400;
        rs_fail(err, "'model' must be a string, not %s", rs_json_type_name(model->type));
        goto done;
    }
    if (model) {
        rq->model = -1;
        for (int i = 0; i < s->n_models; i++)
            if (!strcmp(model->string, s->models[i].name))
                rq->model = i;
        if (rq->model < 0) {
            status = 404;
            rs_fail(err, "no model named '%.200s' (GET /api/models lists them)", model->string);
            goto done;
        }
    }
    const rs_json *svg = rs_json_get(root, "svg");
    if (svg && svg->type != RS_JSON_TRUE && svg->type != RS_JSON_FALSE) {
        status = 400;
        rs_fail(err, "'svg' must be true or false, not %s", rs_json_type_name(svg->type));
        goto done;
    }
    rq->svg = svg && svg->type == RS_JSON_TRUE;
    if (rq->route == ROUTE_TRANSLATE) {
        rq->beam = 1;
        rq->n_best = 0;
        if ((status = take_text(&s->opt, root, "text", 1, &rq->text, err)) ||
            (status = take_int(root, "beam", 1, s->opt.max_beam, &rq->beam, err)) ||
            (status = take_int(root, "n_best", 1, s->opt.max_beam, &rq->n_best, err)))
            goto done;
        if (rq->n_best == 0)
            rq->n_best = rq->beam;
        if (rq->n_best > rq->beam) {
            status = 400;
            rs_fail(err, "'n_best' (%d) must not exceed 'beam' (%d)", rq->n_best, rq->beam);
        }
    } else {
        if ((status = take_text(&s->opt, root, "source", 1, &rq->text, err)) == 0)
            status = take_text(&s->opt, root, "target", 1, &rq->target, err);
    }
done:
    rs_json_free(root);
    return status;
}

/* Queues a parsed request for the workers and suspends its connection; a
 * full queue (or a stopping server) is answered 503 at once. */
static enum MHD_Result submit(rs_server *s, request *rq)
{
    pthread_mutex_lock(&s->lock);
    if (s->stopping || s->count == s->opt.queue) {
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        return send_error(rq, 503, stopping ? "the server is stopping"
                                            : "all workers are busy and the queue is full; try again");
    }
    /* Suspended before a worker can see it, so that its resume never comes first. */
    MHD_suspend_connection(rq->connection);
    rq->state = QUEUED;
    s->ring[(s->head + s->count) % s->opt.queue] = rq;
    s->count++;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    return MHD_YES;
}

/* Keeps the body, up to max_body bytes; past the limit, or past the time
 * limit, the rest is read and thrown away and the answer is an error. */
static void receive(const rs_server *s, request *rq, const char *data, size_t size)
{
    if (rs_clock_seconds() - rq->start > s->opt.timeout)
        rq->too_slow = 1;
    if (!rq->too_big && !rq->too_slow && rq->len + size > s->opt.max_body)
        rq->too_big = 1;
    if (rq->too_big || rq->too_slow) {
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

static request *request_new(struct MHD_Connection *connection, const char *url, const char *method)
{
    request *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NULL;
    rq->connection = connection;
    rq->start = rs_clock_seconds();
    rq->route = route_of(url);
    snprintf(rq->method, sizeof rq->method, "%s", method);
    snprintf(rq->path, sizeof rq->path, "%s", url);
    for (char *p = rq->path; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = '?';
    return rq;
}

/* The first call for a request: its headers are in. */
static enum MHD_Result on_headers(rs_server *s, request *rq, const char *method)
{
    const int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    const int post = !strcmp(method, MHD_HTTP_METHOD_POST);
    size_t len = 0;
    char *body;
    switch (rq->route) {
    case ROUTE_NONE:
        return send_error(rq, 404, "no such page: the API is POST /api/translate, POST /api/align "
                                   "and GET /api/models; the explorer is GET /");
    case ROUTE_PAGE:
        if (!get)
            return send_error(rq, 405, "use GET");
        if (MHD_queue_response(rq->connection, 200, s->page) != MHD_YES)
            return MHD_NO;
        rq->status = 200;
        return MHD_YES;
    case ROUTE_MODELS:
        if (!get)
            return send_error(rq, 405, "use GET");
        body = models_json(s, &len);
        return send_json(rq, 200, body, len);
    case ROUTE_TRANSLATE:
    case ROUTE_ALIGN: {
        if (!post)
            return send_error(rq, 405, "use POST with a JSON body");
        const char *cl = MHD_lookup_connection_value(rq->connection, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->opt.max_body) {
            char msg[128];
            snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
            return send_error(rq, 413, msg);
        }
        return MHD_YES;
    }
    }
    return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
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
        return on_headers(s, rq, method);
    }
    if (rq->state == DECODED) {
        char *reply = rq->reply;
        rq->reply = NULL;
        return send_json(rq, rq->status, reply, rq->reply_len);
    }
    if (*upload_data_size) {
        receive(s, rq, upload_data, *upload_data_size);
        *upload_data_size = 0;
        /* libmicrohttpd cannot answer before the body has ended: a body
         * still coming after three times the time limit has its connection closed. */
        return rs_clock_seconds() - rq->start > 3.0 * s->opt.timeout ? MHD_NO : MHD_YES;
    }
    if (rq->status) /* answered on the headers already */
        return MHD_YES;
    if (rq->too_slow) {
        char msg[96];
        snprintf(msg, sizeof msg, "the body took more than %d s to arrive", s->opt.timeout);
        return send_error(rq, 408, msg);
    }
    if (rq->too_big) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
        return send_error(rq, 413, msg);
    }
    rs_error err;
    int status = parse_job(s, rq, &err);
    free(rq->body);
    rq->body = NULL;
    if (status)
        return send_error(rq, status, err.msg);
    return submit(s, rq);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq)
        return;
    if (s->opt.log) {
        char line[160];
        snprintf(line, sizeof line, "%s %s %d %.1f ms%s", rq->method, rq->path, rq->status,
                 1e3 * (rs_clock_seconds() - rq->start),
                 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
        s->opt.log(s->opt.log_ctx, line);
    }
    free(rq->body);
    free(rq->text);
    free(rq->target);
    free(rq->reply);
    free(rq);
    *con_cls = NULL;
}

/* ---- start and stop ---- */

static void stop_workers(rs_server *s)
{
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    for (int t = 0; s->workers && t < s->opt.threads; t++) {
        worker *w = &s->workers[t];
        if (w->started)
            pthread_join(w->thread, NULL);
        w->started = 0;
        for (int i = 0; w->tr && i < s->n_models; i++)
            rs_translator_free(&w->tr[i]);
        free(w->tr);
        w->tr = NULL;
    }
}

static int start_workers(rs_server *s, rs_error *err)
{
    rs_translate_options topt;
    translate_options(&topt, 1, 1);
    for (int t = 0; t < s->opt.threads; t++) {
        worker *w = &s->workers[t];
        w->server = s;
        if (!(w->tr = rs_calloc((size_t)s->n_models, sizeof *w->tr, err)))
            return -1;
        for (int i = 0; i < s->n_models; i++)
            if (rs_translator_init(&w->tr[i], &s->model_ptrs[i], 1, s->models[i].codec, &topt, err))
                return -1;
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc)
            return rs_fail(err, "cannot start a worker thread: %s", strerror(rc));
        w->started = 1;
    }
    return 0;
}

static int check_options(const rs_serve_options *o, int n_models, const rs_serve_model *models,
                         rs_error *err)
{
    if (n_models < 1)
        return rs_fail(err, "no model to serve");
    if (o->port < 0 || o->port > 65535)
        return rs_fail(err, "port %d is not from 0 to 65535", o->port);
    if (o->threads < 1 || o->queue < 1 || o->connections < 1 || o->max_body < 1 ||
        o->timeout < 1 || o->max_chars < 1 || o->max_beam < 1)
        return rs_fail(err, "threads, queue, connections, max_body, timeout, max_chars and "
                            "max_beam must all be at least 1");
    for (int i = 0; i < n_models; i++)
        for (int k = 0; k < i; k++)
            if (!strcmp(models[i].name, models[k].name))
                return rs_fail(err, "two models are named '%s'", models[i].name);
    return 0;
}

int rs_server_start(rs_server **out, const rs_serve_model *models, int n_models,
                    const rs_serve_options *opt, rs_error *err)
{
    *out = NULL;
    if (check_options(opt, n_models, models, err))
        return -1;
    union {
        struct sockaddr sa;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } addr;
    memset(&addr, 0, sizeof addr);
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (inet_pton(AF_INET, opt->host, &addr.v4.sin_addr) == 1) {
        addr.v4.sin_family = AF_INET;
        addr.v4.sin_port = htons((uint16_t)opt->port);
    } else if (inet_pton(AF_INET6, opt->host, &addr.v6.sin6_addr) == 1) {
        addr.v6.sin6_family = AF_INET6;
        addr.v6.sin6_port = htons((uint16_t)opt->port);
        flags |= MHD_USE_IPv6;
    } else {
        return rs_fail(err, "host '%s' is not a numeric IPv4 or IPv6 address", opt->host);
    }
    rs_server *s = rs_calloc(1, sizeof *s, err);
    if (!s)
        return -1;
    s->opt = *opt;
    s->models = models;
    s->n_models = n_models;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    if (!(s->model_ptrs = rs_calloc((size_t)n_models, sizeof *s->model_ptrs, err)) ||
        !(s->ring = rs_calloc((size_t)opt->queue, sizeof *s->ring, err)) ||
        !(s->workers = rs_calloc((size_t)opt->threads, sizeof *s->workers, err)))
        goto fail;
    for (int i = 0; i < n_models; i++)
        s->model_ptrs[i] = models[i].model;
    s->page = MHD_create_response_from_buffer((size_t)rs_serve_page_len, (void *)rs_serve_page,
                                              MHD_RESPMEM_PERSISTENT);
    if (!s->page) {
        rs_fail(err, "out of memory");
        goto fail;
    }
    MHD_add_response_header(s->page, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    /* The page is self-contained: it may talk to this server and nothing else. */
    MHD_add_response_header(s->page, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src "
                            "'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:");
    if (start_workers(s, err))
        goto fail;
    s->daemon = MHD_start_daemon(flags, (uint16_t)opt->port, NULL, NULL, on_request, s,
                                 MHD_OPTION_SOCK_ADDR, &addr.sa,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)opt->timeout,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)opt->connections,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->daemon) {
        rs_fail(err, "cannot listen on %s port %d: %s", opt->host, opt->port,
                errno ? strerror(errno) : "libmicrohttpd refused");
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : opt->port;
    *out = s;
    return 0;
fail:
    rs_server_stop(s);
    return -1;
}

int rs_server_port(const rs_server *server)
{
    return server->port;
}

void rs_server_stop(rs_server *s)
{
    if (!s)
        return;
    /* Workers answer what is queued (resuming every suspended connection)
     * before the daemon stops, as libmicrohttpd requires. */
    stop_workers(s);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->page)
        MHD_destroy_response(s->page);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s->workers);
    free(s->ring);
    free(s->model_ptrs);
    free(s);
}
