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
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "eval/alignment.h"
#include "common/clock.h"
#include "search/forced.h"
#include "common/json.h"
#include "serve/serve.h"
#include "serve/run.h"
#include "serve/serve_page.h"
#include "search/translate.h"

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
                              .max_beam = 16,
                              .max_answer = 2 * 1024 * 1024};
}

/* The cookie's name ends with the port: browsers send a host's cookies to
 * every port of it, so two servers on one host would otherwise overwrite
 * each other's token (the first page then gets 401). */
#define RS_SERVE_COOKIE "rnnsearch_token_"

typedef enum {
    ROUTE_PAGE,
    ROUTE_MODELS,
    ROUTE_TRANSLATE,
    ROUTE_ALIGN,
    ROUTE_RUN,
    ROUTE_RUN_WATCH,
    ROUTE_NONE
} route;
typedef enum { RECEIVING, QUEUED, DECODED } request_state;

typedef struct {
    struct MHD_Connection *connection;
    route route;
    request_state state;
    double start;    /* monotonic seconds when the headers were in */
    char method[40]; /* for the log: cut, control and non-ASCII bytes as \xNN */
    char path[160];  /* the same */
    char *body;      /* [len] the body so far (capacity cap) */
    size_t len, cap;
    int too_big;
    int close_after; /* answer with Connection: close */
    /* The job, once the body is parsed. */
    int model;
    char *text, *target; /* translate: text; align: source (text) and target */
    int beam, n_best, svg, words;
    uint64_t from; /* /api/run/watch: the byte offset asked for */
    /* The answer. */
    int status;  /* HTTP status sent (0: none yet) */
    char *reply; /* a worker's answer, JSON */
    size_t reply_len;
} request;

/* A numeric IPv4 or IPv6 address. */
typedef union {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
} address;

typedef struct rs_server rs_server;

/* Requests waiting for a thread, in a ring; guarded by the server's lock. */
typedef struct {
    request **ring; /* [size] waiting requests, from head */
    int size, head, count;
    pthread_cond_t wake;
} job_queue;

typedef struct {
    rs_server *server;
    job_queue *queue; /* where it takes its requests from */
    pthread_t thread;
    int started;
    rs_translator *tr; /* [n_models], a decoding worker's own workspaces; NULL: the reader */
} worker;

struct rs_server {
    rs_serve_options opt;
    const rs_serve_model *models;
    const rs_model **model_ptrs; /* [n_models]: models[i].model, for rs_translator_init */
    int n_models;
    struct MHD_Daemon *daemon;
    struct MHD_Response *page;
    atomic_int port;      /* set once the daemon runs: a request in between reads 0 */
    worker *workers;      /* [opt.threads] */
    worker reader;        /* reads the run files for the training view */
    pthread_mutex_t lock; /* guards the queues and stopping */
    job_queue decode;     /* translate and align requests, for the workers */
    job_queue reads;      /* /api/run and /api/run/watch, for the reader */
    int stopping;
    address listening; /* the address listened on */
    int any_address;   /* listening on every address (0.0.0.0, ::) */
    /* The open connections, for the whole-request deadline and the drain
     * at stop; guarded by conn_lock (polling thread and reaper). */
    pthread_mutex_t conn_lock;
    pthread_cond_t conn_wake;
    struct open_connection *conns;
    int n_conns, draining, reaper_stop, reaper_started;
    pthread_t reaper;
};

/* One open connection: `since` is when it opened or last finished an answer.
 * While `busy` (a request queued, decoded or being answered) the deadline
 * does not run; otherwise a whole request must arrive within opt.timeout of
 * `since`, or the reaper shuts the socket down (libmicrohttpd's own timeout
 * restarts with every byte, so a client sending one header line a second
 * would otherwise hold its connection forever). */
typedef struct open_connection {
    struct open_connection *prev, *next;
    int fd;
    double since;
    int busy;
} open_connection;

/* ---- addresses ---- */

/* 0 with *a filled (family, address; port 0), or -1: not a numeric address. */
static int parse_address(const char *host, address *a)
{
    memset(a, 0, sizeof *a);
    if (inet_pton(AF_INET, host, &a->v4.sin_addr) == 1) {
        a->v4.sin_family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a->v6.sin6_addr) == 1) {
        a->v6.sin6_family = AF_INET6;
        return 0;
    }
    return -1;
}

int rs_serve_loopback(const char *host)
{
    address a;
    if (!host || parse_address(host, &a))
        return -1;
    if (a.sa.sa_family == AF_INET)
        return ntohl(a.v4.sin_addr.s_addr) >> 24 == 127;
    const struct in6_addr *v6 = &a.v6.sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(v6))
        return 1;
    return IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127;
}

/* Every address: 0.0.0.0, :: (however written), ::ffff:0.0.0.0. */
static int unspecified(const address *a)
{
    if (a->sa.sa_family == AF_INET)
        return a->v4.sin_addr.s_addr == 0;
    const struct in6_addr *v6 = &a->v6.sin6_addr;
    static const unsigned char zero[4] = {0, 0, 0, 0};
    return IN6_IS_ADDR_UNSPECIFIED(v6) ||
           (IN6_IS_ADDR_V4MAPPED(v6) && !memcmp(v6->s6_addr + 12, zero, 4));
}

int rs_serve_any_address(const char *host)
{
    address a;
    if (!host || parse_address(host, &a))
        return -1;
    return unspecified(&a);
}

static int same_address(const address *a, const address *b)
{
    if (a->sa.sa_family != b->sa.sa_family)
        return 0;
    if (a->sa.sa_family == AF_INET)
        return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
    return !memcmp(&a->v6.sin6_addr, &b->v6.sin6_addr, sizeof a->v6.sin6_addr);
}

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

/* A text of at most `cap` bytes written through a FILE (fmemopen on a
 * buffer of cap + 1): writing past the cap is an error of the stream, so no
 * answer, however many hypotheses and pictures it is asked for, takes more
 * memory than its cap. NULL from membuf_close: out of memory or over the cap. */
typedef struct {
    FILE *f;
    char *text;
    size_t cap;
} membuf;

static int membuf_open(membuf *m, size_t cap)
{
    m->cap = cap;
    m->f = NULL;
    if (!(m->text = malloc(cap + 1)))
        return -1;
    if (!(m->f = fmemopen(m->text, cap + 1, "w"))) {
        free(m->text);
        return -1;
    }
    return 0;
}

/* Closes the stream; the text (NUL-terminated, or NULL after any error) is the caller's. */
static char *membuf_close(membuf *m, size_t *len)
{
    int bad = fflush(m->f) != 0 || ferror(m->f);
    long end = ftell(m->f);
    if (fclose(m->f) || bad || end < 0 || (size_t)end > m->cap) {
        free(m->text);
        return NULL;
    }
    *len = (size_t)end;
    m->text[*len] = '\0';
    char *fitted = realloc(m->text, *len + 1);
    return fitted ? fitted : m->text;
}

static char *error_json(const char *message, int status, size_t *len)
{
    membuf m;
    if (membuf_open(&m, 4 * sizeof(rs_error) + 64))
        return NULL;
    fputs("{\"error\":", m.f);
    rs_json_write_string(m.f, message);
    fprintf(m.f, ",\"status\":%d}\n", status);
    return membuf_close(&m, len);
}

/* An alignment as alignment.h writes it: its JSON record or its SVG picture. */
static char *alignment_text(const rs_alignment *a, int svg, int id, const char *title, size_t cap,
                            size_t *len)
{
    membuf m;
    if (membuf_open(&m, cap))
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
typedef struct {
    int id, svg;       /* the record's id; 1: the SVG picture too */
    int words;         /* SentencePiece pieces merged into words (alignment.h) */
    const char *title; /* of the picture */
    size_t cap;        /* bytes the record and the picture may take each */
} alignment_answer;

static int answer_too_large(rs_error *err, size_t cap)
{
    return rs_fail(err,
                   "the answer would be larger than %zu bytes (the server's --max-answer): "
                   "ask for fewer hypotheses (n_best), \"svg\": false, or a shorter text",
                   cap);
}

static int write_alignment(FILE *out, const char *const *tgt, int tgt_count, const char *const *src,
                           int src_count, const float *w, const alignment_answer *aa, rs_error *err)
{
    rs_alignment a, pieces;
    if (rs_alignment_make(aa->words ? &pieces : &a, tgt, tgt_count, src, src_count, w, err))
        return -1;
    if (aa->words) {
        /* The words `align --words` shows, by the same merge. */
        int rc = rs_alignment_to_words(&pieces, &a, err);
        rs_alignment_free(&pieces);
        if (rc)
            return -1;
    }
    size_t len;
    char *record = alignment_text(&a, 0, aa->id, NULL, aa->cap, &len), *picture = NULL;
    int rc = 0;
    if (!record ||
        (aa->svg && !(picture = alignment_text(&a, 1, aa->id, aa->title, aa->cap, &len)))) {
        rc = answer_too_large(err, aa->cap);
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
#define RS_SERVE_I(name, def, help, ...)                                                           \
    fprintf(out, "%s\"" #name "\":%d", sep, cfg->name), sep = ",";
#define RS_SERVE_F(name, def, help, ...)                                                           \
    fprintf(out, "%s\"" #name "\":%.7g", sep, (double)cfg->name), sep = ",";
#define RS_SERVE_E(name, def, help, names)                                                         \
    fprintf(out, "%s\"" #name "\":", sep), sep = ",";                                              \
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
    if (membuf_open(&m, s->opt.max_answer))
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
            "\"max_answer\":%zu,\"timeout\":%d,\"threads\":%d,\"queue\":%d}}\n",
            s->opt.max_body, s->opt.max_chars, s->opt.max_beam, RS_MAX_SRC_LEN, s->opt.max_answer,
            s->opt.timeout, s->opt.threads, s->opt.queue);
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
        const alignment_answer aa = {k, rq->svg, rq->words, h->text, w->server->opt.max_answer};
        if ((rc = write_alignment(out, (const char *const *)h->tokens, h->len,
                                  (const char *const *)t.src_tokens, t.src_count, h->alignment, &aa,
                                  err)))
            *status = 413;
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
        int rc = rs_codec_tokens(sm->codec, side, side == RS_SIDE_SRC ? rq->text : rq->target, &src,
                                 &inner);
        int count = src.count;
        rs_tokens_free(&src);
        if (rc)
            return rs_fail(err, "'%s': %s", name, inner.msg);
        if (count == 0)
            return rs_fail(err, "'%s' has no tokens", name);
    }
    *status = 500;
    /* The one length rule of translate and score: the source cut to max_src_len tokens. */
    const rs_forced_pair pair = {rq->text, rq->target, RS_MAX_SRC_LEN,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    int cut = 0;
    if (rs_forced_text(&w->server->model_ptrs[rq->model], 1, sm->codec, &pair, &f, &src, &tgt, &cut,
                       err))
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
    fprintf(out, ",\"truncated\":%d,\"logprob\":", cut);
    json_number(out, f.logprob);
    fputs(",\"token_logprobs\":[", out);
    for (int i = 0; i <= f.tgt_len; i++) {
        if (i)
            putc(',', out);
        json_number(out, f.token_logprobs[i]);
    }
    fputs("],", out);
    const alignment_answer aa = {0, rq->svg, rq->words, rq->target, w->server->opt.max_answer};
    if ((rc = write_alignment(out, (const char *const *)tgt.tokens, tgt.count,
                              (const char *const *)src.tokens, src.count, f.alignment, &aa, err)))
        *status = 413;
done:
    rs_forced_free(&f);
    rs_tokens_free(&src);
    rs_tokens_free(&tgt);
    return rc;
}

static int parse_job(const rs_server *s, request *rq, rs_error *err);

/* Parses and decodes one request into rq->status and rq->reply (NULL only
 * when even an error message could not be made: the connection is then
 * closed). Parsing is here, not on the polling thread, so that no body, however
 * it is built, holds up the connections of others. */
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
    } else if ((status = parse_job(s, rq, &err)) != 0) {
        /* err says what is wrong with the body */
    } else if (membuf_open(&m, s->opt.max_answer) == 0) {
        status = 500;
        int rc = rq->route == ROUTE_TRANSLATE ? translate_job(w, rq, m.f, &err, &status)
                                              : align_job(w, rq, m.f, &err, &status);
        if (rc == 0) {
            fprintf(m.f, ",\"ms\":%.1f}\n", 1e3 * (rs_clock_seconds() - start));
            reply = membuf_close(&m, &len);
            if (reply) {
                status = 200;
            } else {
                status = 413;
                answer_too_large(&err, s->opt.max_answer);
            }
        } else {
            free(membuf_close(&m, &len));
        }
    } else {
        rs_fail(&err, "out of memory");
    }
    free(rq->body);
    rq->body = NULL;
    if (!reply)
        reply = error_json(err.msg, status, &len);
    rq->status = status;
    rq->reply = reply;
    rq->reply_len = len;
}

/* The training view's answer (run.h), read from the files the training
 * appends to: whole lines only, at most max_answer bytes an answer. */
static void read_job(const rs_server *s, request *rq)
{
    rs_error err;
    int status = 500;
    size_t len = 0;
    char *reply = NULL;
    if (rs_clock_seconds() - rq->start > s->opt.timeout) {
        status = 503;
        rs_fail(&err, "the request waited more than %d s to be read; try again", s->opt.timeout);
    } else if (rq->route == ROUTE_RUN) {
        reply = rs_run_log_json(s->opt.run_dir, s->opt.max_answer, &len, &status, &err);
    } else {
        reply = rs_run_watch_json(s->opt.run_dir, rq->from, s->opt.max_answer, &len, &status, &err);
    }
    if (reply)
        status = 200;
    else
        reply = error_json(err.msg, status, &len);
    rq->status = status;
    rq->reply = reply;
    rq->reply_len = len;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    rs_server *s = w->server;
    job_queue *q = w->queue;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!q->count && !s->stopping)
            pthread_cond_wait(&q->wake, &s->lock);
        if (!q->count) { /* stopping, and nothing left to answer */
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        request *rq = q->ring[q->head];
        q->head = (q->head + 1) % q->size;
        q->count--;
        pthread_mutex_unlock(&s->lock);
        if (w->tr)
            run_job(w, rq);
        else
            read_job(s, rq);
        rq->state = DECODED;
        MHD_resume_connection(rq->connection);
    }
}

/* ---- requests (the polling thread) ---- */

/* Marks the request's connection busy (the deadline stops: the request is
 * in) or idle again (the deadline starts anew from now). */
static void set_busy(rs_server *s, struct MHD_Connection *c, int busy)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    open_connection *conn = info ? info->socket_context : NULL;
    if (!conn)
        return;
    pthread_mutex_lock(&s->conn_lock);
    conn->busy = busy;
    conn->since = rs_clock_seconds();
    pthread_mutex_unlock(&s->conn_lock);
}

/* A page of another origin that loads an answer as a script or an image
 * (which needs no CORS) gets nothing a browser would let it use: it is not
 * sniffed as another type, and the browser withholds it (CORP). */
static void no_cross_origin_reads(struct MHD_Response *r)
{
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
}

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
    no_cross_origin_reads(r);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(
            r, MHD_HTTP_HEADER_ALLOW,
            rq->route == ROUTE_TRANSLATE || rq->route == ROUTE_ALIGN ? "POST" : "GET, HEAD");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    /* A request refused for its framing (two lengths, length and chunks) may
     * have a body that would be read as another request: close after answering. */
    if (rq->close_after)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
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
    if (!strcmp(url, "/api/run"))
        return ROUTE_RUN;
    if (!strcmp(url, "/api/run/watch"))
        return ROUTE_RUN_WATCH;
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
        return rs_fail(err, "'%s' has %zu characters; the limit is %d", key, chars, opt->max_chars),
               413;
    if (!(*out = strdup(v->string)))
        return rs_fail(err, "out of memory"), 500;
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

/* Parses and checks the body of a translate or align request into the job
 * fields of rq. Returns 0, or an HTTP status with the message in err. */
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

static int parse_job(const rs_server *s, request *rq, rs_error *err)
{
    static const char *const translate_keys[] = {"text", "model", "beam", "n_best",
                                                 "svg",  "words", NULL};
    static const char *const align_keys[] = {"source", "target", "model", "svg", "words", NULL};
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
            rs_fail(err, "unknown member '%.*s'", utf8_prefix(root->keys[i], 100), root->keys[i]);
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
            rs_fail(err, "no model named '%.*s' (GET /api/models lists them)",
                    utf8_prefix(model->string, 200), model->string);
            goto done;
        }
    }
    if ((status = take_bool(root, "svg", &rq->svg, err)) ||
        (status = take_bool(root, "words", &rq->words, err)))
        goto done;
    if (rq->words && s->models[rq->model].model->cfg.tokenizer != RS_TOKENIZER_SPM) {
        status = 400;
        rs_fail(err, "'words' merges SentencePiece pieces, and model '%s' has none (tokenizer %s)",
                s->models[rq->model].name,
                rs_tokenizer_names[s->models[rq->model].model->cfg.tokenizer]);
        goto done;
    }
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

/* Queues a whole request for the workers (or, for the training view, the
 * reader) and suspends its connection; a full queue (or a stopping server)
 * is answered 503 at once. */
static enum MHD_Result submit(rs_server *s, request *rq)
{
    const int read = rq->route == ROUTE_RUN || rq->route == ROUTE_RUN_WATCH;
    job_queue *q = read ? &s->reads : &s->decode;
    pthread_mutex_lock(&s->lock);
    if (s->stopping || q->count == q->size) {
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        return send_error(rq, 503,
                          stopping ? "the server is stopping"
                          : read   ? "too many training-view requests are waiting; try again"
                                   : "all workers are busy and the queue is full; try again");
    }
    /* Suspended before a worker can see it, so that its resume never comes first. */
    set_busy(s, rq->connection, 1);
    MHD_suspend_connection(rq->connection);
    rq->state = QUEUED;
    q->ring[(q->head + q->count) % q->size] = rq;
    q->count++;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&s->lock);
    return MHD_YES;
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
static void escape_for_log(char *dst, size_t size, const char *src)
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
    escape_for_log(rq->method, sizeof rq->method, method);
    escape_for_log(rq->path, sizeof rq->path, url);
    return rq;
}

/* The page is self-contained: it may talk to this server and nothing else,
 * no other page may frame it, and it names itself to no one (Referer). */
static void page_headers(struct MHD_Response *r)
{
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src "
                            "'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:; "
                            "frame-ancestors 'none'");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    no_cross_origin_reads(r);
}

/* ---- who may ask (the polling thread) ---- */

/* The headers and query arguments that decide who may ask, counted: one
 * request must not carry two of them that two readers could pick between. */
typedef struct {
    int content_lengths, transfer_encodings, hosts, origins, content_types, authorizations;
    int fetch_sites, fetch_modes, fetch_dests;
} header_counts;

static enum MHD_Result count_headers(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    header_counts *h = cls;
    (void)kind;
    (void)value;
    h->content_lengths += !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH);
    h->transfer_encodings += !strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    h->hosts += !strcasecmp(key, MHD_HTTP_HEADER_HOST);
    h->origins += !strcasecmp(key, "Origin");
    h->content_types += !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_TYPE);
    h->authorizations += !strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION);
    h->fetch_sites += !strcasecmp(key, "Sec-Fetch-Site");
    h->fetch_modes += !strcasecmp(key, "Sec-Fetch-Mode");
    h->fetch_dests += !strcasecmp(key, "Sec-Fetch-Dest");
    return MHD_YES;
}

typedef struct {
    int from, token, nul; /* how many of each; arguments whose value holds a NUL */
    const char *bad;      /* an argument given twice, or with a NUL */
} argument_counts;

static enum MHD_Result count_arguments(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
    argument_counts *a = cls;
    (void)kind;
    const int from = !strcmp(key, "from"), token = !strcmp(key, "token");
    a->from += from;
    a->token += token;
    /* %00 decodes to a NUL, after which the value would read shorter than sent. */
    if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
        a->nul++;
        a->bad = from ? "'from'" : token ? "'token'" : "a query argument";
    }
    if ((from && a->from > 1) || (token && a->token > 1))
        a->bad = from ? "'from'" : "'token'";
    return MHD_YES;
}

/* The name of a Host value or of an origin's authority (RFC 9110 §7.2,
 * uri-host [":" port]) into name[size]: "[::1]:8080" → "::1",
 * "localhost:8080" → "localhost". An IPv6 literal must parse as one, a name
 * is letters, digits, '-', '.' and '_', a port 1 to 5 digits; anything else
 * (bytes after the ']', an empty name, a bracket not closed): -1. */
static int host_name(const char *authority, char *name, size_t size)
{
    const char *end;
    size_t len;
    if (authority[0] == '[') {
        end = strchr(authority, ']');
        if (!end)
            return -1;
        len = (size_t)(end - authority - 1);
        if (len == 0 || len >= size)
            return -1;
        memcpy(name, authority + 1, len);
        name[len] = '\0';
        struct in6_addr a;
        if (inet_pton(AF_INET6, name, &a) != 1)
            return -1;
        end++;
    } else {
        len = strspn(authority, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789-._");
        if (len == 0 || len >= size)
            return -1;
        memcpy(name, authority, len);
        name[len] = '\0';
        end = authority + len;
    }
    if (*end == ':') {
        size_t digits = strspn(end + 1, "0123456789");
        return digits >= 1 && digits <= 5 && end[1 + digits] == '\0' ? 0 : -1;
    }
    return *end == '\0' ? 0 : -1;
}

/* Names a browser may use for this server (name: host_name's). A page on
 * another site that renames itself to 127.0.0.1 (DNS rebinding) still sends
 * its own name in Host: only the loopback names, the listening address and
 * --allow-host names are this server's. Listening on every address (0.0.0.0,
 * ::), any name is accepted: the token guards the server then. */
static int host_allowed(const rs_server *s, const char *name)
{
    if (s->any_address)
        return 1;
    address a, one;
    if (!strcasecmp(name, "localhost"))
        return 1;
    /* Addresses compared as addresses: [0:0::1] is ::1. */
    if (!parse_address(name, &a) &&
        (same_address(&a, &s->listening) ||
         (!parse_address("127.0.0.1", &one) && same_address(&a, &one)) ||
         (!parse_address("::1", &one) && same_address(&a, &one))))
        return 1;
    for (int i = 0; i < s->opt.n_allow_hosts; i++)
        if (!strcasecmp(name, s->opt.allow_hosts[i]))
            return 1;
    return 0;
}

/* Constant-time comparison, so that answer times say nothing of the token. */
static int same_secret(const char *given, const char *token)
{
    size_t n = strlen(token);
    if (!given || strlen(given) != n)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

static int has_token(const rs_server *s, struct MHD_Connection *c)
{
    const char *auth =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth && !strncasecmp(auth, "Bearer ", 7) && same_secret(auth + 7, s->opt.token))
        return 1;
    char cookie[32];
    snprintf(cookie, sizeof cookie, RS_SERVE_COOKIE "%d", atomic_load(&s->port));
    return same_secret(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"),
                       s->opt.token) ||
           same_secret(MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie), s->opt.token);
}

/* Checks every request before its route: framing (RFC 9112 §6.3), one of
 * each header and argument that decides, Host, Origin and token. Returns 0,
 * or an HTTP status with the message in msg. */
static int refused(const rs_server *s, request *rq, const char *version, int get, char *msg,
                   size_t size)
{
    struct MHD_Connection *c = rq->connection;
    header_counts h = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_headers, &h);
    if (h.content_lengths > 1 || (h.content_lengths && h.transfer_encodings)) {
        rq->close_after = 1;
        snprintf(msg, size, "%s",
                 h.content_lengths > 1 ? "more than one Content-Length header"
                                       : "both Content-Length and Transfer-Encoding");
        return 400;
    }
    const char *twice = h.hosts > 1            ? "Host"
                        : h.origins > 1        ? "Origin"
                        : h.content_types > 1  ? "Content-Type"
                        : h.authorizations > 1 ? "Authorization"
                        : h.fetch_sites > 1    ? "Sec-Fetch-Site"
                        : h.fetch_modes > 1    ? "Sec-Fetch-Mode"
                        : h.fetch_dests > 1    ? "Sec-Fetch-Dest"
                                               : NULL;
    if (twice) {
        snprintf(msg, size, "more than one %s header", twice);
        return 400;
    }
    argument_counts args = {0, 0, 0, NULL};
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, count_arguments, &args);
    if (args.bad) {
        snprintf(msg, size, "%s %s", args.bad,
                 args.nul ? "holds a NUL byte (%00)" : "is given more than once");
        return 400;
    }
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    char name[256];
    if (!host && strcmp(version, MHD_HTTP_VERSION_1_0)) {
        snprintf(msg, size, "an HTTP/1.1 request needs a Host header");
        return 400;
    }
    if (host && host_name(host, name, sizeof name)) {
        char shown[96];
        escape_for_log(shown, sizeof shown, host);
        snprintf(msg, size, "malformed Host header '%s' (a name or address, then :PORT)", shown);
        return 400;
    }
    if (host && !host_allowed(s, name)) {
        char shown[96];
        escape_for_log(shown, sizeof shown, host);
        snprintf(msg, size,
                 "Host '%s' is not a name of this server (start it with "
                 "--allow-host NAME to accept one)",
                 shown);
        return 403;
    }
    /* A browser names the page a request comes from; only the server's own
     * pages (same scheme, name and port as Host) may use the API. */
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) {
        const char *authority = !strncmp(origin, "http://", 7) ? origin + 7 : NULL;
        if (!authority || !host || strcasecmp(authority, host)) {
            char shown[96];
            escape_for_log(shown, sizeof shown, origin);
            snprintf(msg, size,
                     "cross-origin request from '%s' refused: the API answers the "
                     "pages of this server only",
                     shown);
            return 403;
        }
    }
    /* A GET of an <img>, a <script> or a no-cors fetch carries no Origin,
     * but a browser says whose page sent it (Fetch Metadata): another site,
     * or another port of this one (same-site), may only open the page as a
     * page of its own, never read the API or frame the page. */
    const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && strcasecmp(site, "same-origin") && strcasecmp(site, "none")) {
        const char *mode = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Mode");
        const char *dest = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Dest");
        if (!(get && rq->route == ROUTE_PAGE && mode && !strcasecmp(mode, "navigate") &&
              (!dest || !strcasecmp(dest, "document")))) {
            char shown[48];
            escape_for_log(shown, sizeof shown, site);
            snprintf(msg, size,
                     "request from another site's page (Sec-Fetch-Site: %s) refused: the API "
                     "answers the pages of this server only",
                     shown);
            return 403;
        }
    }
    if (s->opt.token && !has_token(s, c)) {
        snprintf(msg, size,
                 "this server needs its token: open the address it printed at start "
                 "(/?token=...), or send 'Authorization: Bearer TOKEN'");
        return 401;
    }
    return 0;
}

/* A JSON body, as the API's POSTs must be: a form or text/plain POST (which
 * a page on any site may send without asking) is refused. */
static int json_content_type(struct MHD_Connection *c)
{
    const char *type =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!type || strncasecmp(type, "application/json", 16))
        return 0;
    return type[16] == '\0' || type[16] == ';' || type[16] == ' ';
}

/* The page; with a token, the cookie that lets its own requests through. */
static enum MHD_Result send_page(rs_server *s, request *rq)
{
    if (!s->opt.token) {
        if (MHD_queue_response(rq->connection, 200, s->page) != MHD_YES)
            return MHD_NO;
        rq->status = 200;
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(
        (size_t)rs_serve_page_len, (void *)rs_serve_page, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    page_headers(r);
    char cookie[256];
    snprintf(cookie, sizeof cookie, RS_SERVE_COOKIE "%d=%s; Path=/; HttpOnly; SameSite=Strict",
             atomic_load(&s->port), s->opt.token);
    MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    enum MHD_Result ok = MHD_queue_response(rq->connection, 200, r);
    MHD_destroy_response(r);
    if (ok == MHD_YES)
        rq->status = 200;
    return ok;
}

/* A training-view request checked on its headers: it goes to the reader
 * (read_job) once whole, or is answered here. */
static enum MHD_Result check_run(rs_server *s, request *rq, int get)
{
    if (!get)
        return send_error(rq, 405, "use GET");
    if (!s->opt.run_dir)
        return send_error(rq, 404,
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
                return send_error(rq, 400, "'from' is a byte offset: digits only");
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
    int status = refused(s, rq, version, get, msg, sizeof msg);
    if (status)
        return send_error(rq, status, msg);
    switch (rq->route) {
    case ROUTE_NONE:
        return send_error(rq, 404,
                          "no such page: the API is POST /api/translate, POST /api/align, "
                          "GET /api/models, GET /api/run and GET /api/run/watch; the explorer "
                          "is GET /");
    case ROUTE_PAGE:
        if (!get)
            return send_error(rq, 405, "use GET");
        return send_page(s, rq);
    case ROUTE_MODELS:
        if (!get)
            return send_error(rq, 405, "use GET");
        body = models_json(s, &len);
        return send_json(rq, 200, body, len);
    case ROUTE_RUN:
    case ROUTE_RUN_WATCH: return check_run(s, rq, get);
    case ROUTE_TRANSLATE:
    case ROUTE_ALIGN: {
        if (!post)
            return send_error(rq, 405, "use POST with a JSON body");
        if (!json_content_type(rq->connection))
            return send_error(rq, 415, "send the body as Content-Type: application/json");
        const char *cl = MHD_lookup_connection_value(rq->connection, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->opt.max_body) {
            snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
            return send_error(rq, 413, msg);
        }
        return MHD_YES;
    }
    }
    return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
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
        return send_json(rq, rq->status, reply, rq->reply_len);
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
        return send_error(rq, 413, msg);
    }
    return submit(s, rq);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq)
        return;
    set_busy(s, connection, 0);
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
    free(rq->reply);
    free(rq);
    *con_cls = NULL;
}

/* ---- connections: the whole-request deadline and the drain ---- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    rs_server *s = cls;
    open_connection *conn = *socket_context;
    pthread_mutex_lock(&s->conn_lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info && (conn = calloc(1, sizeof *conn))) {
            conn->fd = info->connect_fd;
            conn->since = rs_clock_seconds();
            conn->next = s->conns;
            if (s->conns)
                s->conns->prev = conn;
            s->conns = conn;
            s->n_conns++;
            *socket_context = conn;
        }
    } else if (conn) {
        /* libmicrohttpd notifies before it closes the socket: once this
         * returns, the reaper no longer knows the descriptor. */
        if (conn->prev)
            conn->prev->next = conn->next;
        else
            s->conns = conn->next;
        if (conn->next)
            conn->next->prev = conn->prev;
        s->n_conns--;
        free(conn);
        *socket_context = NULL;
        pthread_cond_broadcast(&s->conn_wake);
    }
    pthread_mutex_unlock(&s->conn_lock);
}

/* Several times a second: shuts down every connection that has not brought
 * in a whole request within the time limit (and, while draining, every idle
 * one at once); libmicrohttpd then sees the socket end and closes it. */
static void *reaper_main(void *arg)
{
    rs_server *s = arg;
    pthread_mutex_lock(&s->conn_lock);
    while (!s->reaper_stop) {
        const double now = rs_clock_seconds();
        for (open_connection *c = s->conns; c; c = c->next)
            if (!c->busy && (s->draining || now - c->since > s->opt.timeout)) {
                shutdown(c->fd, SHUT_RDWR);
                c->since = INFINITY; /* once */
            }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &until);
    }
    pthread_mutex_unlock(&s->conn_lock);
    return NULL;
}

/* ---- start and stop ---- */

static void stop_workers(rs_server *s)
{
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->decode.wake);
    pthread_cond_broadcast(&s->reads.wake);
    pthread_mutex_unlock(&s->lock);
    for (int t = -1; t < s->opt.threads; t++) {
        worker *w = t < 0 ? &s->reader : s->workers ? &s->workers[t] : NULL;
        if (!w)
            break;
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
    for (int t = -1; t < s->opt.threads; t++) {
        worker *w = t < 0 ? &s->reader : &s->workers[t];
        w->server = s;
        w->queue = t < 0 ? &s->reads : &s->decode;
        if (t >= 0) {
            if (!(w->tr = rs_calloc((size_t)s->n_models, sizeof *w->tr, err)))
                return -1;
            for (int i = 0; i < s->n_models; i++)
                if (rs_translator_init(&w->tr[i], &s->model_ptrs[i], 1, s->models[i].codec, &topt,
                                       err))
                    return -1;
        }
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
    const int loopback = rs_serve_loopback(o->host);
    if (loopback < 0)
        return rs_fail(err, "host '%s' is not a numeric IPv4 or IPv6 address",
                       o->host ? o->host : "(none)");
    if (!loopback && !o->token && !o->no_token)
        return rs_fail(err,
                       "%s is not a loopback address: anyone who can reach it could use the "
                       "server, so it needs a token (or, deliberately, no_token)",
                       o->host);
    if (o->port < 0 || o->port > 65535)
        return rs_fail(err, "port %d is not from 0 to 65535", o->port);
    if (o->threads < 1 || o->queue < 1 || o->connections < 1 || o->max_body < 1 || o->timeout < 1 ||
        o->max_chars < 1 || o->max_beam < 1 || o->max_answer < 4096)
        return rs_fail(err, "threads, queue, connections, max_body, timeout, max_chars and "
                            "max_beam must all be at least 1, max_answer at least 4096");
    for (int i = 0; i < o->n_allow_hosts; i++) {
        /* Compared with Host's name, which has no port: "x:80" would never match. */
        const char *h = o->allow_hosts[i];
        char name[256];
        address a;
        if (!h || (parse_address(h, &a) && (host_name(h, name, sizeof name) || strchr(h, ':'))))
            return rs_fail(err, "allowed host '%s' is not a host name or address (without a port)",
                           h ? h : "(none)");
    }
    if (o->token && (strlen(o->token) < 8 || strlen(o->token) > 128 ||
                     strspn(o->token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789-_.") != strlen(o->token)))
        return rs_fail(err, "a token is 8 to 128 letters, digits, '-', '_' or '.'");
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
    address addr;
    parse_address(opt->host, &addr); /* numeric: check_options says so */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (addr.sa.sa_family == AF_INET) {
        addr.v4.sin_port = htons((uint16_t)opt->port);
    } else {
        addr.v6.sin6_port = htons((uint16_t)opt->port);
        flags |= MHD_USE_IPv6;
    }
    rs_server *s = rs_calloc(1, sizeof *s, err);
    if (!s)
        return -1;
    s->opt = *opt;
    s->models = models;
    s->n_models = n_models;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->decode.wake, NULL);
    pthread_cond_init(&s->reads.wake, NULL);
    pthread_mutex_init(&s->conn_lock, NULL);
    pthread_cond_init(&s->conn_wake, NULL);
    s->listening = addr;
    s->any_address = unspecified(&addr);
    s->decode.size = s->reads.size = opt->queue;
    if (!(s->model_ptrs = rs_calloc((size_t)n_models, sizeof *s->model_ptrs, err)) ||
        !(s->decode.ring = rs_calloc((size_t)opt->queue, sizeof *s->decode.ring, err)) ||
        !(s->reads.ring = rs_calloc((size_t)opt->queue, sizeof *s->reads.ring, err)) ||
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
    page_headers(s->page);
    if (start_workers(s, err))
        goto fail;
    int rc = pthread_create(&s->reaper, NULL, reaper_main, s);
    if (rc) {
        rs_fail(err, "cannot start a thread: %s", strerror(rc));
        goto fail;
    }
    s->reaper_started = 1;
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)opt->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, &addr.sa,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)opt->timeout, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)opt->connections, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
    if (!s->daemon) {
        rs_fail(err, "cannot listen on %s port %d: %s", opt->host, opt->port,
                errno ? strerror(errno) : "libmicrohttpd refused");
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    atomic_store(&s->port, info ? info->port : opt->port);
    *out = s;
    return 0;
fail:
    rs_server_stop(s);
    return -1;
}

int rs_server_port(const rs_server *server)
{
    return atomic_load(&server->port);
}

void rs_server_stop(rs_server *s)
{
    if (!s)
        return;
    /* No new connections; idle ones closed at once (the reaper, draining);
     * workers answer what is queued (resuming every suspended connection)
     * before the daemon stops, as libmicrohttpd requires; answers in
     * transfer get up to the time limit to finish. */
    if (s->daemon) {
        MHD_socket listener = MHD_quiesce_daemon(s->daemon);
        if (listener != MHD_INVALID_SOCKET)
            close(listener);
    }
    pthread_mutex_lock(&s->conn_lock);
    s->draining = 1;
    pthread_cond_broadcast(&s->conn_wake);
    pthread_mutex_unlock(&s->conn_lock);
    stop_workers(s);
    const double deadline = rs_clock_seconds() + s->opt.timeout;
    pthread_mutex_lock(&s->conn_lock);
    while (s->daemon && s->n_conns > 0 && rs_clock_seconds() < deadline) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &until);
    }
    s->reaper_stop = 1;
    pthread_cond_broadcast(&s->conn_wake);
    pthread_mutex_unlock(&s->conn_lock);
    if (s->reaper_started)
        pthread_join(s->reaper, NULL);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->page)
        MHD_destroy_response(s->page);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->decode.wake);
    pthread_cond_destroy(&s->reads.wake);
    pthread_mutex_destroy(&s->conn_lock);
    pthread_cond_destroy(&s->conn_wake);
    free(s->workers);
    free(s->decode.ring);
    free(s->reads.ring);
    free(s->model_ptrs);
    free(s);
}
