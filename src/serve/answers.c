/* What the server answers: the JSON texts (an error, the models and their
 * settings, an alignment as `rnnsearch align` writes it), each written
 * within a cap of bytes, and the HTTP answers that carry them and the page,
 * with the headers that keep other sites' pages from reading them.
 *
 * Lifetimes: a text from rs_serve_membuf_close (and from the functions that
 * return one) is malloc'd and the caller's; rs_serve_send_json takes its
 * body and libmicrohttpd frees it once sent (MHD_RESPMEM_MUST_FREE). The
 * page is a static array (serve_page.h), sent from the server's one page
 * answer (made at start, destroyed at stop). */
#include <math.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "eval/alignment.h"
#include "model/config.h"
#include "serve/server.h"
#include "serve/serve_page.h"

/* ---- JSON texts ---- */

/* Finite numbers as they are (9 significant digits: exact for a float),
 * anything else as null, which JSON has instead of NaN and infinities. */
void rs_serve_json_number(FILE *out, double x)
{
    if (isfinite(x))
        fprintf(out, "%.9g", x);
    else
        fputs("null", out);
}

int rs_serve_membuf_open(membuf *m, size_t cap)
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
char *rs_serve_membuf_close(membuf *m, size_t *len)
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

char *rs_serve_error_json(const char *message, int status, size_t *len)
{
    membuf m;
    if (rs_serve_membuf_open(&m, 4 * sizeof(rs_error) + 64))
        return NULL;
    fputs("{\"error\":", m.f);
    rs_json_write_string(m.f, message);
    fprintf(m.f, ",\"status\":%d}\n", status);
    return rs_serve_membuf_close(&m, len);
}

/* An alignment as alignment.h writes it: its JSON record or its SVG picture. */
static char *alignment_text(const rs_alignment *a, int svg, int id, const char *title, size_t cap,
                            size_t *len)
{
    membuf m;
    if (rs_serve_membuf_open(&m, cap))
        return NULL;
    if (svg)
        rs_alignment_write_svg(m.f, a, title);
    else
        rs_alignment_write_json(m.f, a, id);
    return rs_serve_membuf_close(&m, len);
}

int rs_serve_answer_too_large(rs_error *err, size_t cap)
{
    return rs_fail(err,
                   "the answer would be larger than %zu bytes (the server's --max-answer): "
                   "ask for fewer hypotheses (n_best), \"svg\": false, a shorter text or fewer "
                   "sentences",
                   cap);
}

size_t rs_serve_answer_room(FILE *out, size_t cap)
{
    if (fflush(out) || ferror(out))
        return 0;
    const long at = ftell(out);
    return at < 0 || (size_t)at >= cap ? 0 : cap - (size_t)at;
}

int rs_serve_write_alignment(FILE *out, const char *const *tgt, int tgt_count,
                             const char *const *src, int src_count, const float *w,
                             const alignment_answer *aa, rs_error *err)
{
    /* The record and the picture within what is left of the answer, so that
     * the one that passes it is the last drawn. */
    const size_t room = rs_serve_answer_room(out, aa->cap);
    if (!room)
        return rs_serve_answer_too_large(err, aa->cap);
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
    char *record = alignment_text(&a, 0, aa->id, NULL, room, &len), *picture = NULL;
    int rc = 0;
    if (!record ||
        (aa->svg && !(picture = alignment_text(&a, 1, aa->id, aa->title, room - len, &len)))) {
        rc = rs_serve_answer_too_large(err, aa->cap);
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

/* A translation's "hypotheses" member, stopping at the first hypothesis
 * that finds the answer at its cap: 0, or the HTTP status of the failure
 * (413 over the cap) with err. */
static int write_hypotheses(FILE *out, const rs_translated *t, const hypotheses_answer *ha,
                            rs_error *err)
{
    fputs(",\"hypotheses\":[", out);
    for (int k = 0; k < t->count; k++) {
        /* Checked before each: past the cap, the rest is not drawn at all. */
        if (!rs_serve_answer_room(out, ha->cap))
            return rs_serve_answer_too_large(err, ha->cap), 413;
        const rs_hypothesis *h = &t->hyps[k];
        fprintf(out, "%s{\"rank\":%d,\"translation\":", k ? "," : "", k);
        rs_json_write_string(out, h->text);
        fputs(",\"tokens\":", out);
        rs_json_write_strings(out, (const char *const *)h->tokens, h->count);
        fputs(",\"score\":", out);
        rs_serve_json_number(out, h->score);
        fputs(",\"logprob\":", out);
        rs_serve_json_number(out, h->logprob);
        fprintf(out, ",\"finished\":%s,", h->finished ? "true" : "false");
        if (!ha->alignment) {
            /* --attention none: said in the answer, where the matrix would be. */
            fputs("\"alignment\":null,\"no_alignment\":", out);
            rs_json_write_string(out, RS_NO_ALIGNMENT_WHY);
            putc('}', out);
            continue;
        }
        if (!h->alignment)
            return rs_fail(err, "the translation came without its alignment"), 500;
        const alignment_answer aa = {k, ha->svg, ha->words, h->text, ha->cap};
        if (rs_serve_write_alignment(out, (const char *const *)h->tokens, h->count,
                                     (const char *const *)t->source_tokens, t->source_count,
                                     h->alignment, &aa, err))
            return 413;
        putc('}', out);
    }
    fputs("]", out);
    return 0;
}

/* Sentence i's answer, without its closing brace (the worker adds "ms" to a
 * single sentence's; a list's items are closed at once). */
static int write_result(FILE *out, const rs_translated *t, const translations_answer *ta, int i,
                        rs_error *err)
{
    fputs("{\"model\":", out);
    rs_json_write_string(out, ta->model);
    fputs(",\"text\":", out);
    rs_json_write_string(out, ta->texts[i]);
    fputs(",\"source_tokens\":", out);
    rs_json_write_strings(out, (const char *const *)t->source_tokens, t->source_count);
    fprintf(out, ",\"truncated\":%d,\"beam\":%d,\"n_best\":%d,\"translation\":", t->truncated,
            ta->beam, ta->n_best);
    rs_json_write_string(out, t->hyps[0].text);
    return write_hypotheses(out, t, &ta->ha, err);
}

/* OpenNMT-py's answer (onmt/bin/server.py): one list per hypothesis rank
 * (n_best lists, here one), each with an entry per sentence in order: src
 * as sent, tgt, n_best, pred_score (the score that ranked it: in greedy
 * search the sum of log-probabilities, </s> included). */
static int write_onmt(FILE *out, const rs_translated *t, const translations_answer *ta,
                      rs_error *err)
{
    fputs("[[", out);
    for (int i = 0; i < ta->count; i++) {
        if (!rs_serve_answer_room(out, ta->ha.cap))
            return rs_serve_answer_too_large(err, ta->ha.cap), 413;
        fputs(i ? ",{\"src\":" : "{\"src\":", out);
        rs_json_write_string(out, ta->texts[i]);
        fputs(",\"tgt\":", out);
        rs_json_write_string(out, t[i].hyps[0].text);
        fputs(",\"n_best\":1,\"pred_score\":", out);
        rs_serve_json_number(out, t[i].hyps[0].score);
        putc('}', out);
    }
    fputs("]]\n", out);
    return 0;
}

int rs_serve_write_translations(FILE *out, const rs_translated *t, const translations_answer *ta,
                                rs_error *err)
{
    if (ta->onmt)
        return write_onmt(out, t, ta, err);
    fputs(ta->batch ? "{\"results\":[" : "", out);
    for (int i = 0; i < ta->count; i++) {
        /* Checked before each sentence too: one without alignments draws none. */
        if (!rs_serve_answer_room(out, ta->ha.cap))
            return rs_serve_answer_too_large(err, ta->ha.cap), 413;
        fputs(i ? "," : "", out);
        const int failed = write_result(out, &t[i], ta, i, err);
        if (failed)
            return failed;
        fputs(ta->batch ? "}" : "", out);
    }
    fputs(ta->batch ? "]" : "", out);
    return 0;
}

/* The model's configuration and its training run's, every key of the one
 * table, in its order. */
static void write_config(FILE *out, const rs_model *model)
{
    const char *sep = "";
    putc('{', out);
#define RS_SERVE_I(name, def, help, ...)                                                           \
    fprintf(out, "%s\"" #name "\":%d", sep, RS_SERVE_PART.name), sep = ",";
#define RS_SERVE_F(name, def, help, ...)                                                           \
    fprintf(out, "%s\"" #name "\":%.7g", sep, (double)RS_SERVE_PART.name), sep = ",";
#define RS_SERVE_E(name, def, help, names)                                                         \
    fprintf(out, "%s\"" #name "\":", sep), sep = ",";                                              \
    rs_json_write_string(out, names[RS_SERVE_PART.name]);
#define RS_SERVE_PART model->cfg
    RS_MODEL_CONFIG_FIELDS(RS_SERVE_I, RS_SERVE_F, RS_SERVE_E)
#undef RS_SERVE_PART
#define RS_SERVE_PART model->train
    RS_TRAIN_CONFIG_FIELDS(RS_SERVE_I, RS_SERVE_F, RS_SERVE_E)
#undef RS_SERVE_PART
#undef RS_SERVE_I
#undef RS_SERVE_F
#undef RS_SERVE_E
    putc('}', out);
}

char *rs_serve_models_json(const rs_server *s, size_t *len)
{
    membuf m;
    if (rs_serve_membuf_open(&m, s->opt.max_answer))
        return NULL;
    fputs("{\"models\":[", m.f);
    for (int i = 0; i < s->n_models; i++) {
        const rs_model *model = s->models[i].model->model;
        fputs(i ? ",{\"name\":" : "{\"name\":", m.f);
        rs_json_write_string(m.f, s->models[i].name);
        fprintf(m.f, ",\"default\":%s,\"src_vocab\":%d,\"tgt_vocab\":%d,\"params\":%zu,\"config\":",
                i ? "false" : "true", model->src_vocab.size, model->tgt_vocab.size,
                (size_t)model->layout.total);
        write_config(m.f, model);
        putc('}', m.f);
    }
    fprintf(m.f,
            "],\"limits\":{\"max_body\":%zu,\"max_chars\":%d,\"max_batch\":%d,\"max_beam\":%d,"
            "\"max_src_len\":%d,\"max_answer\":%zu,\"timeout\":%d,\"threads\":%d,\"queue\":%d}}\n",
            s->opt.max_body, s->opt.max_chars, s->opt.max_batch, s->opt.max_beam, RS_MAX_SRC_LEN,
            s->opt.max_answer, s->opt.timeout, s->opt.threads, s->opt.queue);
    return rs_serve_membuf_close(&m, len);
}

/* OpenNMT-py's list (TranslationServer.list_models): one entry per model,
 * model_id its place in the -m order, the settings its translate endpoint
 * uses (greedy, one hypothesis) as "opt". */
char *rs_serve_onmt_models_json(const rs_server *s, size_t *len)
{
    membuf m;
    if (rs_serve_membuf_open(&m, s->opt.max_answer))
        return NULL;
    putc('[', m.f);
    for (int i = 0; i < s->n_models; i++) {
        fprintf(m.f, "%s{\"model_id\":%d,\"models\":[", i ? "," : "", i);
        rs_json_write_string(m.f, s->models[i].name);
        fputs("],\"loaded\":true,\"timeout\":-1,\"opt\":{\"beam_size\":1,\"n_best\":1}}", m.f);
    }
    fputs("]\n", m.f);
    return rs_serve_membuf_close(&m, len);
}

/* ---- HTTP answers ---- */

/* A page of another origin that loads an answer as a script or an image
 * (which needs no CORS) gets nothing a browser would let it use: it is not
 * sniffed as another type, and the browser withholds it (CORP). */
static void no_cross_origin_reads(struct MHD_Response *r)
{
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
}

enum MHD_Result rs_serve_send_json(request *rq, int status, char *body, size_t len)
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
    const int post = rq->route == ROUTE_TRANSLATE || rq->route == ROUTE_ALIGN ||
                     rq->route == ROUTE_PUSH || rq->route == ROUTE_ONMT_TRANSLATE;
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, post ? "POST" : "GET, HEAD");
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

enum MHD_Result rs_serve_send_error(request *rq, int status, const char *message)
{
    size_t len = 0;
    char *body = rs_serve_error_json(message, status, &len);
    return rs_serve_send_json(rq, status, body, len);
}

/* The page is self-contained: it may talk to this server and nothing else,
 * no other page may frame it, and it names itself to no one (Referer). */
void rs_serve_page_headers(struct MHD_Response *r)
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

/* The page (the same with or without a token: it sends the token itself). */
enum MHD_Result rs_serve_send_page(rs_server *s, request *rq)
{
    if (MHD_queue_response(rq->connection, 200, s->page) != MHD_YES)
        return MHD_NO;
    rq->status = 200;
    return MHD_YES;
}
