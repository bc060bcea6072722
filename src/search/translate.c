/* The translation pipeline (see translate.h): text to ids through the
 * model's codec, greedy or beam search, ids back to text, with <unk>
 * replacement, BPE joining and the alignment on request, under the one
 * length rule; a call's batches on opt.workers threads. */
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "common/blas_buffer.h"
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
        opt->max_len < 0 || opt->max_src_len < 0 || opt->workers < 0 ||
        opt->workers > RS_MAX_THREADS)
        return rs_fail(err,
                       "translation options out of range (beam %d, n-best %d, batch %d, "
                       "workers %d)",
                       opt->beam, opt->n_best, opt->batch_size, opt->workers);
    if (opt->weights && rs_ensemble_weights_check(opt->weights, n_models, err))
        return -1;
    tr->models = models;
    tr->n_models = n_models;
    tr->codec = codec;
    tr->opt = *opt;
    if (!tr->opt.max_src_len)
        tr->opt.max_src_len = RS_MAX_SRC_LEN;
    if (!tr->opt.workers)
        tr->opt.workers = 1;
    tr->searches = rs_calloc((size_t)tr->opt.workers, sizeof *tr->searches, err);
    return tr->searches ? 0 : -1;
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
    for (int w = 0; tr->searches && w < tr->opt.workers; w++)
        search_release(&tr->searches[w]);
    free(tr->searches);
    memset(tr, 0, sizeof *tr);
}

/* The rounding of a reservation's source length: a multiple of this many
 * positions, so a run of batches of slowly growing lengths (they come sorted)
 * reallocates now and then, not at every batch, and pads little. */
#define RS_RESERVE_S_STEP 8

/* s's workspaces for a batch of need_B sentences of up to need_S − 1 tokens.
 * They are sized by that batch (its sentences and its longest source), not
 * by the options' batch_size times the longest source of the call: a batch
 * of 100 000 short dates and one long line after them asked for 100 000 rows
 * of the long line's length, 67 GB for a model of 3 MB (issue 42). A
 * reservation that holds the batch is kept. One that does not is replaced:
 * by one holding both it and the batch when that costs at most twice the
 * batch's own (so calls that alternate long and short batches, as serve's
 * can, do not reallocate each time), else by the batch's own. Memory thus
 * stays within about twice what the largest batch actually decoded holds
 * (sentences rounded up to a power of two, positions to RS_RESERVE_S_STEP),
 * per worker. *too_large is set when the workspace could not be had. */
static int search_reserve(const rs_translator *tr, rs_search *s, int need_S, int need_B,
                          int *too_large, rs_error *err)
{
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
        *too_large = 1;
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
static int name_tokens(const rs_translator *tr, const rs_translated *source, rs_hypothesis *h,
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

/* A call's batches, formed as one thread would form them (sentences in
 * length order, batch_size at a time, the empty ones left out), and the
 * workers that take them in turn: batch k is order[first + k·batch_size ..],
 * decoded whole by one worker into out[] (each sentence in one batch, so
 * the workers write apart). */
typedef struct {
    const rs_translator *tr;
    const int *const *ids; /* [count]: ids[i][0..len[i]) */
    const int *len;
    const int *order;     /* [count]: sentences by length, the empty first */
    int first, count;     /* order[first..count) are decoded */
    int batches;          /* ⌈(count − first) / batch_size⌉ */
    rs_translated *out;   /* [count] */
    pthread_mutex_t lock; /* guards next, failed, *err and too_large */
    int next;             /* the next batch to take */
    int failed;           /* a batch failed: *err says why, no more are taken */
    int too_large;        /* its workspace could not be had (rs_translator's batch_too_large) */
    rs_error *err;
} decode_job;

typedef struct {
    decode_job *job;
    rs_search *s;          /* the worker's own workspaces (tr->searches[w]) */
    int *which;            /* [batch_size]: the batch's sentences, as out's indices */
    const int **batch_ids; /* [batch_size] */
    int *batch_len;        /* [batch_size] */
    pthread_t thread;
} decode_worker;

/* Decodes batch k with w's workspaces and moves its hypotheses into out. */
static int decode_batch(decode_worker *w, int k, int *too_large, rs_error *err)
{
    const decode_job *job = w->job;
    const rs_translate_options *o = &job->tr->opt;
    const int nbest = o->n_best, want = o->want_alignment || o->replace_unk;
    const int from = job->first + k * o->batch_size;
    const int B = job->count - from < o->batch_size ? job->count - from : o->batch_size;
    rs_search *s = w->s;
    int longest = 0;
    for (int b = 0; b < B; b++) {
        const int i = job->order[from + b];
        w->which[b] = i;
        w->batch_ids[b] = job->ids[i];
        w->batch_len[b] = job->len[i];
        longest = job->len[i] > longest ? job->len[i] : longest;
    }
    /* This batch's room, before its steps (</s> is a source position). */
    if (search_reserve(job->tr, s, longest + 1, B, too_large, err))
        return -1;
    int rc;
    if (o->beam == 1) {
        rc = rs_greedy(&s->greedy, B, w->batch_ids, w->batch_len, o->max_len, want, s->found, err);
    } else {
        rs_beam_options bo = {.beam = o->beam,
                              .length_penalty = o->length_penalty,
                              .n_best = nbest,
                              .max_len = o->max_len,
                              .want_alignment = want};
        rc = rs_beam_translate(&s->beam, B, w->batch_ids, w->batch_len, &bo, s->found, err);
    }
    /* The found hypotheses move into out; the rest (n-best slots the beam
     * did not fill, or all after a failure) are freed. */
    for (int b = 0; b < B && rc == 0; b++) {
        rs_translated *t = &job->out[w->which[b]];
        for (int r = 0; r < nbest; r++) {
            rs_hypothesis *f = &s->found[b * nbest + r];
            if (f->ids && rc == 0) {
                t->hyps[t->count] = *f;
                memset(f, 0, sizeof *f);
                rc = name_tokens(job->tr, t, &t->hyps[t->count++], err);
            }
        }
    }
    for (int r = 0; r < B * nbest; r++)
        rs_hypothesis_free(&s->found[r]);
    return rc;
}

/* A worker: the next batch until none is left or one has failed. The first
 * failure's message is kept; a worker that fails after it drops its own. */
static void *work(void *arg)
{
    decode_worker *w = arg;
    decode_job *job = w->job;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        const int k = job->failed || job->next == job->batches ? -1 : job->next++;
        pthread_mutex_unlock(&job->lock);
        if (k < 0)
            return NULL;
        rs_error err;
        int too_large = 0;
        /* Longest first: the batches come shortest first (length order),
         * and the last one taken should be short, or one worker decodes
         * the longest alone while the others wait. */
        if (decode_batch(w, job->batches - 1 - k, &too_large, &err)) {
            pthread_mutex_lock(&job->lock);
            if (!job->failed) {
                job->failed = 1;
                job->too_large = too_large;
                *job->err = err;
            }
            pthread_mutex_unlock(&job->lock);
            return NULL;
        }
    }
}

/* The job on n workers: the calling thread and n − 1 threads of its own,
 * each product on one BLAS thread (BLAS's own threads would only compete
 * with the workers, as with training's shards: a decoder step's products of
 * batch_size rows are too small to split), or on the calling thread alone
 * when n is 1, on BLAS's threads as set. A thread that cannot be started,
 * or whose OpenBLAS buffer could not be mapped (rs_blas_room), leaves its
 * batches to the others: results do not depend on who decodes a batch. */
static void run_workers(decode_job *job, decode_worker *w, int n)
{
    rs_error no_room;
    if (n > 1 && rs_blas_room(n - 1, &no_room))
        n = 1;
    if (n == 1) {
        work(&w[0]);
        return;
    }
    const int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    int started = 1;
    while (started < n && !pthread_create(&w[started].thread, NULL, work, &w[started]))
        started++;
    work(&w[0]);
    for (int i = 1; i < started; i++)
        pthread_join(w[i].thread, NULL);
    openblas_set_num_threads(blas_threads);
}

static void workers_free(decode_worker *w, int n)
{
    for (int i = 0; w && i < n; i++) {
        free(w[i].which);
        free(w[i].batch_ids);
        free(w[i].batch_len);
    }
    free(w);
}

/* Decodes the non-empty sentences of out[0..count) (their source_tokens set),
 * whose ids are ids[i][0..len[i]), on up to opt.workers workers. */
static int decode_all(rs_translator *tr, int count, const int *const *ids, const int *len,
                      rs_translated *out, rs_error *err)
{
    const int size = tr->opt.batch_size;
    decode_job job = {.tr = tr, .ids = ids, .len = len, .count = count, .out = out, .err = err};
    decode_worker *w = NULL;
    int *order = NULL, n = 0, status = -1;
    tr->batch_too_large = 0;
    /* Sentences of similar length decode together (less padding); each
     * sentence's result does not depend on its batch. */
    if (!(order = rs_calloc((size_t)count + 1, sizeof(int), err)) ||
        rs_batch_length_order(count, len, order, err))
        goto done;
    job.order = order;
    while (job.first < count && len[order[job.first]] <= 0)
        job.first++;
    job.batches = (count - job.first) / size + ((count - job.first) % size != 0);
    n = job.batches < tr->opt.workers ? job.batches : tr->opt.workers;
    if (n == 0) {
        status = 0;
        goto done;
    }
    if (!(w = rs_calloc((size_t)n, sizeof *w, err)))
        goto done;
    for (int i = 0; i < n; i++) {
        w[i] = (decode_worker){.job = &job, .s = &tr->searches[i]};
        if (!(w[i].which = rs_calloc((size_t)size, sizeof(int), err)) ||
            !(w[i].batch_ids = rs_calloc((size_t)size, sizeof(int *), err)) ||
            !(w[i].batch_len = rs_calloc((size_t)size, sizeof(int), err)))
            goto done;
    }
    if (pthread_mutex_init(&job.lock, NULL)) {
        rs_fail(err, "cannot make the decoding workers' lock");
        goto done;
    }
    run_workers(&job, w, n);
    pthread_mutex_destroy(&job.lock);
    tr->batch_too_large = job.too_large;
    status = job.failed ? -1 : 0;
done:
    workers_free(w, n);
    free(order);
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
