/* The jobs: the two queues and the threads that take from them. The
 * polling thread queues a whole request (rs_serve_submit); `threads`
 * decoding workers take translate and align requests, each with its own
 * rs_translator per model for single sentences (a list of sentences gets
 * one of its own, made and freed with it: see translator_for); one reader
 * takes the training view's requests (/api/run, /api/run/watch), so that no
 * file, however slow or large, holds up the polling thread or a decoding
 * worker. A worker parses the body, decodes, writes the answer into the
 * request and resumes its connection.
 *
 * Lifetimes: a queued request's connection is suspended (rs_serve_submit
 * suspends it before a worker can see it), so the request lives until the
 * worker resumes it and the polling thread has answered. A decoding worker
 * frees the body when done with it; every worker leaves its answer (status,
 * reply) in the request, read by the polling thread only after
 * MHD_resume_connection. The models are shared and read-only; a worker's
 * translators live from rs_serve_start_workers to rs_serve_stop_workers,
 * which joins the threads first; a batch's for its decoding only. The
 * queues' rings and the stopping flag are guarded by the server's lock. */
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json.h"
#include "model/codec.h"
#include "search/forced.h"
#include "search/translate.h"
#include "serve/run.h"
#include "serve/server.h"

/* Queues a whole request for the workers (or, for the training view, the
 * reader) and suspends its connection; a full queue (or a stopping server)
 * is answered 503 at once. */
enum MHD_Result rs_serve_submit(rs_server *s, request *rq)
{
    const int read = rq->route == ROUTE_RUN || rq->route == ROUTE_RUN_WATCH;
    job_queue *q = read ? &s->reads : &s->decode;
    pthread_mutex_lock(&s->lock);
    if (s->stopping || q->count == q->size) {
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        return rs_serve_send_error(rq, 503,
                                   stopping ? "the server is stopping"
                                   : read
                                       ? "too many training-view requests are waiting; try again"
                                       : "all workers are busy and the queue is full; try again");
    }
    /* Suspended before a worker can see it, so that its resume never comes first. */
    rs_serve_set_busy(s, rq->connection, 1);
    MHD_suspend_connection(rq->connection);
    rq->state = QUEUED;
    q->ring[(q->head + q->count) % q->size] = rq;
    q->count++;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&s->lock);
    return MHD_YES;
}

/* Whether a model has an alignment to show (not --attention none). */
static int has_alignment(const rs_ready *model)
{
    return model->model->cfg.attention != RS_ATT_NONE;
}

/* batch_size sentences decoded together, with their alignments when the
 * model has them; the pipeline's defaults else. */
static void translate_options(rs_translate_options *opt, int beam, int n_best, int batch_size,
                              const rs_ready *model)
{
    rs_translate_options_default(opt);
    opt->batch_size = batch_size;
    opt->want_alignment = has_alignment(model);
    opt->beam = beam;
    opt->n_best = n_best;
}

/* The translator for rq: for one sentence the worker's own for the model
 * (re-made for another beam or n-best: its workspaces are sized for them);
 * for several a fresh one into *fresh, their count its batch size, so that
 * they are decoded as one batch, as `rnnsearch translate --batch-size N`
 * decodes N lines. Fresh, because the last bits of a result depend on the
 * size the workspaces have grown to: an answer depends on its request
 * only, never on what the worker decoded before, and a list of one
 * answers what its sentence alone does. NULL with err on failure. */
static rs_translator *translator_for(worker *w, const request *rq, rs_translator *fresh,
                                     rs_error *err)
{
    const rs_server *s = w->server;
    rs_translator *tr = &w->tr[rq->model];
    rs_translate_options opt;
    if (rq->count > 1) {
        translate_options(&opt, rq->beam, rq->n_best, rq->count, s->model_ptrs[rq->model]);
        if (rs_translator_init(fresh, &s->model_ptrs[rq->model], 1, s->models[rq->model].codec,
                               &opt, err))
            return NULL;
        return fresh;
    }
    if (tr->opt.beam == rq->beam && tr->opt.n_best == rq->n_best)
        return tr;
    translate_options(&opt, rq->beam, rq->n_best, 1, s->model_ptrs[rq->model]);
    rs_translator_free(tr);
    if (rs_translator_init(tr, &s->model_ptrs[rq->model], 1, s->models[rq->model].codec, &opt, err))
        return NULL;
    return tr;
}

/* The request's sentences through the pipeline in one call, answered as one
 * object ("text" a string), {"results": [...]} ("text" a list) or
 * OpenNMT-py's lists. */
static int translate_job(worker *w, request *rq, FILE *out, rs_error *err, int *status)
{
    rs_translator fresh;
    memset(&fresh, 0, sizeof fresh);
    *status = 500;
    rs_translator *tr = translator_for(w, rq, &fresh, err);
    rs_translated *t = tr ? rs_calloc((size_t)rq->count, sizeof *t, err) : NULL;
    int rc = t ? rs_translate_lines(tr, rq->count, (const char *const *)rq->texts, t, err) : -1;
    for (int i = 0; i < rq->count && !rc; i++)
        if (t[i].source_count == 0) {
            char name[48];
            rs_serve_text_name(rq, i, name, sizeof name);
            *status = 400;
            rc = rs_fail(err, "%s has no tokens", name);
        }
    if (!rc) {
        const rs_server *s = w->server;
        const translations_answer ta = {
            s->models[rq->model].name,
            (const char *const *)rq->texts,
            rq->count,
            rq->route == ROUTE_ONMT_TRANSLATE,
            rq->batch,
            rq->beam,
            rq->n_best,
            {rq->svg, rq->words, has_alignment(s->model_ptrs[rq->model]), s->opt.max_answer}};
        const int failed = rs_serve_write_translations(out, t, &ta, err);
        if (failed) {
            *status = failed;
            rc = -1;
        }
    }
    for (int i = 0; t && i < rq->count; i++)
        rs_translated_free(&t[i]);
    free(t);
    if (tr == &fresh)
        rs_translator_free(&fresh);
    return rc;
}

static int align_job(worker *w, request *rq, FILE *out, rs_error *err, int *status)
{
    const rs_serve_model *sm = &w->server->models[rq->model];
    rs_forced f;
    rs_tokens src = {0}, tgt = {0};
    /* Text that cannot be tokenized, or has no tokens, is the client's to fix;
     * so is asking a model without attention for an alignment. */
    *status = 400;
    if (!has_alignment(w->server->model_ptrs[rq->model]))
        return rs_fail(err, "model %s: %s", sm->name, RS_NO_ALIGNMENT_WHY);
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
    if (rs_forced_text(&w->server->model_ptrs[rq->model], 1, sm->codec, &pair, &f, &src, &tgt, err))
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
    fprintf(out, ",\"truncated\":%d,\"logprob\":", f.cut);
    rs_serve_json_number(out, f.logprob);
    fputs(",\"token_logprobs\":[", out);
    for (int i = 0; i <= f.tgt_len; i++) {
        if (i)
            putc(',', out);
        rs_serve_json_number(out, f.token_logprobs[i]);
    }
    fputs("],", out);
    const alignment_answer aa = {0, rq->svg, rq->words, rq->target, w->server->opt.max_answer};
    if ((rc = rs_serve_write_alignment(out, (const char *const *)tgt.tokens, tgt.count,
                                       (const char *const *)src.tokens, src.count, f.alignment, &aa,
                                       err)))
        *status = 413;
done:
    rs_forced_free(&f);
    rs_tokens_free(&src);
    rs_tokens_free(&tgt);
    return rc;
}

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
    } else if ((status = rs_serve_parse_job(s, rq, &err)) != 0) {
        /* err says what is wrong with the body */
    } else if (rs_serve_membuf_open(&m, s->opt.max_answer) == 0) {
        status = 500;
        int rc = rq->route == ROUTE_ALIGN  ? align_job(w, rq, m.f, &err, &status)
                 : rq->route == ROUTE_PUSH ? rs_serve_push_job(s, rq, m.f, &err, &status)
                                           : translate_job(w, rq, m.f, &err, &status);
        if (rc == 0) {
            /* OpenNMT-py's answer is a list, closed by write_onmt. */
            if (rq->route != ROUTE_ONMT_TRANSLATE)
                fprintf(m.f, ",\"ms\":%.1f}\n", 1e3 * (rs_clock_seconds() - start));
            reply = rs_serve_membuf_close(&m, &len);
            if (reply) {
                status = 200;
            } else {
                status = 413;
                rs_serve_answer_too_large(&err, s->opt.max_answer);
            }
        } else {
            free(rs_serve_membuf_close(&m, &len));
        }
    } else {
        rs_fail(&err, "out of memory");
    }
    free(rq->body);
    rq->body = NULL;
    if (!reply)
        reply = rs_serve_error_json(err.msg, status, &len);
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
        reply = rs_serve_error_json(err.msg, status, &len);
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

int rs_serve_start_workers(rs_server *s, rs_error *err)
{
    for (int t = -1; t < s->opt.threads; t++) {
        worker *w = t < 0 ? &s->reader : &s->workers[t];
        w->server = s;
        w->queue = t < 0 ? &s->reads : &s->decode;
        if (t >= 0) {
            if (!(w->tr = rs_calloc((size_t)s->n_models, sizeof *w->tr, err)))
                return -1;
            for (int i = 0; i < s->n_models; i++) {
                rs_translate_options topt;
                translate_options(&topt, 1, 1, 1, s->model_ptrs[i]);
                if (rs_translator_init(&w->tr[i], &s->model_ptrs[i], 1, s->models[i].codec, &topt,
                                       err))
                    return -1;
            }
        }
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc)
            return rs_fail(err, "cannot start a worker thread: %s", strerror(rc));
        w->started = 1;
    }
    return 0;
}

void rs_serve_stop_workers(rs_server *s)
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
