/* The decoder's step over one model or an ensemble (see decode.h): the
 * encoder once per batch, then per step the GRU, the attention over each
 * row's own sentence and the deep output's log-probabilities (an ensemble's
 * averaged); greedy search takes the best word per row until </s>. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "nn/attention.h"
#include "nn/vecmath.h"
#include "search/decode.h"

/* a · b, or SIZE_MAX when the product does not fit: rs_calloc then fails,
 * saying so, instead of allocating a wrapped-around size. */
static size_t mul_size(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

void rs_hypothesis_free(rs_hypothesis *h)
{
    for (int i = 0; h->tokens && i < h->count; i++)
        free(h->tokens[i]);
    free(h->tokens);
    free(h->ids);
    free(h->alignment);
    free(h->text);
    memset(h, 0, sizeof *h);
}

int rs_ensemble_check(const rs_ready *const *models, int n_models, rs_error *err)
{
    if (n_models < 1)
        return rs_fail(err, "no model given");
    const rs_vocab *v0 = &models[0]->model->tgt_vocab;
    for (int k = 1; k < n_models; k++) {
        const rs_vocab *v = &models[k]->model->tgt_vocab;
        if (v->size != v0->size)
            return rs_fail(err,
                           "model %d has a target vocabulary of %d tokens, model 1 of %d: "
                           "an ensemble needs one target vocabulary",
                           k + 1, v->size, v0->size);
        for (int i = 0; i < v->size; i++)
            if (strcmp(v->tokens[i], v0->tokens[i]))
                return rs_fail(err,
                               "model %d's target token %d is '%s', model 1's is '%s': an "
                               "ensemble needs one target vocabulary",
                               k + 1, i, v->tokens[i], v0->tokens[i]);
    }
    return 0;
}

int rs_alignment_check(const rs_ready *const *models, int n_models, const char *what, rs_error *err)
{
    for (int k = 0; k < n_models; k++) {
        if (models[k]->model->cfg.attention != RS_ATT_NONE)
            continue;
        if (n_models == 1)
            return rs_fail(err, "%s: %s", what, RS_NO_ALIGNMENT_WHY);
        return rs_fail(err, "%s: model %d of the ensemble: %s", what, k + 1, RS_NO_ALIGNMENT_WHY);
    }
    return 0;
}

static void member_free(rs_member *mb)
{
    rs_workspace_free(&mb->ws);
    rs_accel_step_free(mb->step);
    free(mb->state);
    free(mb->next_state);
    free(mb->logits);
    free(mb->lse);
    free(mb->alpha);
    rs_accel_rows_free(mb->short_W);
    free(mb->short_b);
    memset(mb, 0, sizeof *mb);
}

static int member_init(rs_member *mb, const rs_ready *ready, int max_sentences, int max_rows,
                       int max_S, rs_error *err)
{
    const rs_model *model = ready->model;
    const size_t rows = (size_t)max_rows, S = (size_t)max_S;
    const size_t n = (size_t)model->cfg.hidden, V = (size_t)model->cfg.tgt_vocab;
    if (rs_workspace_alloc_translation(&mb->ws, model, max_sentences, max_rows, max_S, err) ||
        !(mb->step = rs_accel_step_new(model, ready->accel, max_rows, err)))
        return -1;
    mb->state = rs_calloc(mul_size(rows, n), sizeof(float), err);
    mb->next_state = rs_calloc(mul_size(rows, n), sizeof(float), err);
    mb->logits = rs_calloc(mul_size(rows, V), sizeof(float), err);
    mb->lse = rs_calloc(rows, sizeof(float), err);
    mb->alpha = rs_calloc(mul_size(rows, S), sizeof(float), err);
    if (!mb->state || !mb->next_state || !mb->logits || !mb->lse || !mb->alpha)
        return -1;
    return 0;
}

int rs_decoder_init(rs_decoder *dec, const rs_ready *const *models, int n_models, int max_sentences,
                    int rows_per_sentence, int max_S, rs_error *err)
{
    memset(dec, 0, sizeof *dec);
    if (rs_ensemble_check(models, n_models, err))
        return -1;
    /* Rows are counted in int (row indices, the attention's batch): their
     * number must fit one, or the arrays below would be sized by a
     * wrapped-around product. */
    if (max_sentences < 1 || rows_per_sentence < 1 || max_S < 1 ||
        max_sentences > INT_MAX / rows_per_sentence)
        return rs_fail(err,
                       "decoder: %d sentences of %d rows each (sources of up to %d positions) "
                       "are not a size it can hold (at most %d rows)",
                       max_sentences, rows_per_sentence, max_S, INT_MAX);
    dec->models = models;
    dec->n_models = n_models;
    dec->scores = 1;
    dec->max_sentences = max_sentences;
    dec->max_rows = max_sentences * rows_per_sentence;
    dec->max_S = max_S;
    dec->columns = dec->max_columns = models[0]->model->cfg.tgt_vocab;
    const size_t rows = (size_t)dec->max_rows, V = (size_t)models[0]->model->cfg.tgt_vocab;
    dec->member = rs_calloc((size_t)n_models, sizeof *dec->member, err);
    if (!dec->member || rs_batch_alloc(&dec->batch, max_sentences, max_S, 0, err))
        goto fail;
    for (int k = 0; k < n_models; k++)
        if (member_init(&dec->member[k], models[k], max_sentences, dec->max_rows, max_S, err))
            goto fail;
    dec->sentence = rs_calloc(rows, sizeof(int), err);
    dec->src_len = rs_calloc(rows, sizeof(int), err);
    dec->parent_scratch = rs_calloc(rows, sizeof(int), err);
    if (!dec->sentence || !dec->src_len || !dec->parent_scratch)
        goto fail;
    if (n_models > 1) {
        dec->mean_logprobs = rs_calloc(mul_size(rows, V), sizeof(float), err);
        dec->mean_alpha = rs_calloc(mul_size(rows, (size_t)max_S), sizeof(float), err);
        dec->zeros = rs_calloc(rows, sizeof(float), err);
        dec->weight = rs_calloc((size_t)n_models, sizeof(float), err);
        if (!dec->mean_logprobs || !dec->mean_alpha || !dec->zeros || !dec->weight ||
            rs_decoder_weigh(dec, NULL, err))
            goto fail;
    }
    return 0;
fail:
    rs_decoder_free(dec);
    return -1;
}

double rs_decoder_bytes(const rs_ready *const *models, int n_models, int max_sentences,
                        int rows_per_sentence, int max_S)
{
    /* member_init's and rs_decoder_init's buffers, in floats */
    const double rows = (double)max_sentences * rows_per_sentence, S = max_S;
    const double V = models[0]->model->cfg.tgt_vocab;
    double floats = 0.0;
    for (int k = 0; k < n_models; k++) {
        const double n = models[k]->model->cfg.hidden;
        floats +=
            rs_workspace_translation_floats(models[k]->model, max_sentences, (int)rows, max_S) +
            rows * (2 * n + V + 1 + S);
    }
    if (n_models > 1)
        floats += rows * (V + S + 1);
    return 4.0 * floats + (double)max_sentences * S * 2 * sizeof(int);
}

int rs_ensemble_weights_check(const float *weights, int n_models, rs_error *err)
{
    double sum = 0.0;
    for (int k = 0; k < n_models; k++) {
        if (!isfinite(weights[k]) || weights[k] < 0.0f)
            return rs_fail(err, "ensemble weight %d is %g: weights are finite and not negative",
                           k + 1, (double)weights[k]);
        sum += weights[k];
    }
    if (!(sum > 0.0))
        return rs_fail(err, "the ensemble weights are all zero: at least one must be positive");
    return 0;
}

int rs_ensemble_weights_parse(const char *arg, float *weights, int *count, int max, rs_error *err)
{
    for (const char *p = arg;;) {
        char *end;
        const float w = strtof(p, &end);
        if (end == p || (*end && *end != ',') || !rs_config_plain_number(p) || !isfinite(w) ||
            w < 0.0f || strspn(p, "0123456789.eE+-") < (size_t)(end - p))
            return rs_fail(err, "'%s' is not a list of numbers >= 0 separated by ','", arg);
        if (*count == max)
            return rs_fail(err, "more than %d weights", max);
        weights[(*count)++] = w;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

int rs_decoder_weigh(rs_decoder *dec, const float *weights, rs_error *err)
{
    const int K = dec->n_models;
    if (K == 1 || !dec->weight)
        return weights ? rs_ensemble_weights_check(weights, K, err) : 0;
    int equal = 1;
    double sum = 0.0;
    if (weights) {
        if (rs_ensemble_weights_check(weights, K, err))
            return -1;
        for (int k = 0; k < K; k++) {
            equal &= weights[k] == weights[0];
            sum += weights[k];
        }
    }
    /* Equal weights are exactly 1/K, so they decode as the unweighted mean. */
    for (int k = 0; k < K; k++)
        dec->weight[k] = !weights || equal ? 1.0f / (float)K : (float)(weights[k] / sum);
    return 0;
}

void rs_decoder_free(rs_decoder *dec)
{
    for (int k = 0; dec->member && k < dec->n_models; k++)
        member_free(&dec->member[k]);
    free(dec->member);
    rs_batch_free(&dec->batch);
    free(dec->sentence);
    free(dec->src_len);
    free(dec->parent_scratch);
    free(dec->mean_logprobs);
    free(dec->mean_alpha);
    free(dec->zeros);
    free(dec->weight);
    free(dec->shortlist_ids);
    free(dec->marks);
    memset(dec, 0, sizeof *dec);
}

int rs_decoder_use_shortlist(rs_decoder *dec, const rs_shortlist *shortlist, rs_error *err)
{
    const int V = dec->models[0]->model->cfg.tgt_vocab;
    if (shortlist->lex->tgt_vocab != V ||
        shortlist->lex->src_vocab != dec->models[0]->model->cfg.src_vocab)
        return rs_fail(err,
                       "the lexical table's vocabularies (%d source, %d target tokens) are "
                       "not the model's (%d, %d)",
                       shortlist->lex->src_vocab, shortlist->lex->tgt_vocab,
                       dec->models[0]->model->cfg.src_vocab, V);
    /* The reserved ids, the first words, and `best` per source position. */
    const double most = (double)RS_RESERVED + shortlist->first +
                        (double)shortlist->best * dec->max_sentences * dec->max_S;
    dec->max_columns = most < V ? (int)most : V;
    dec->shortlist_ids = rs_calloc((size_t)dec->max_columns, sizeof(int), err);
    dec->marks = rs_calloc((size_t)V, 1, err);
    if (!dec->shortlist_ids || !dec->marks)
        return -1;
    for (int k = 0; k < dec->n_models; k++) {
        rs_member *mb = &dec->member[k];
        const size_t l = (size_t)dec->models[k]->model->cfg.maxout;
        mb->short_W = rs_accel_rows_new(mb->step, dec->max_columns, (int)l, err);
        mb->short_b = rs_calloc((size_t)dec->max_columns, sizeof(float), err);
        if (!mb->short_W || !mb->short_b)
            return -1;
    }
    dec->shortlist = *shortlist;
    return 0;
}

/* The batch's shortlist, and each member's rows of W_out and b_out for it. */
static void gather_shortlist(rs_decoder *dec, int B, const int *const *src, const int *src_count)
{
    dec->columns =
        rs_shortlist_select(&dec->shortlist, B, src, src_count, dec->marks, dec->shortlist_ids);
    for (int k = 0; k < dec->n_models; k++) {
        rs_member *mb = &dec->member[k];
        const rs_model *model = dec->models[k]->model;
        /* W_out's rows, in the form the model's output layer has (accel/). */
        const rs_linear W = rs_accel_rows_gather(mb->short_W, model, dec->shortlist_ids,
                                                 dec->columns, dec->rows > 1);
        for (int j = 0; j < dec->columns; j++)
            mb->short_b[j] = model->w.out_bw[dec->shortlist_ids[j]];
        mb->rows = (rs_output_rows){
            .count = dec->columns, .ids = dec->shortlist_ids, .W = W, .b = mb->short_b};
    }
}

int rs_decoder_start(rs_decoder *dec, int B, const int *const *src, const int *src_count,
                     int rows_per_sentence, rs_error *err)
{
    /* B · rows_per_sentence > max_rows, without computing a product that
     * may not fit an int. */
    if (B < 0 || rows_per_sentence < 1 || B > dec->max_sentences ||
        B > dec->max_rows / rows_per_sentence)
        return rs_fail(err, "decoder: %d sentences of %d rows exceed the %d rows it was sized for",
                       B, rows_per_sentence, dec->max_rows);
    if (rs_batch_fill(&dec->batch, B, src, src_count, NULL, NULL, err))
        return -1;
    dec->B = B;
    dec->S = dec->batch.S;
    dec->rows = B * rows_per_sentence;
    if (dec->shortlist.lex)
        gather_shortlist(dec, B, src, src_count);
    for (int k = 0; k < dec->n_models; k++) {
        rs_member *mb = &dec->member[k];
        const size_t n = (size_t)dec->models[k]->model->cfg.hidden;
        const rs_network_weights w = rs_accel_weights(dec->models[k]->model, dec->models[k]->accel);
        rs_encode(&mb->ws, &w, &dec->batch);
        for (int r = 0; r < dec->rows; r++)
            memcpy(mb->state + r * n, mb->ws.dec_states + (size_t)(r / rows_per_sentence) * n,
                   sizeof(float) * n);
    }
    for (int r = 0; r < dec->rows; r++) {
        dec->sentence[r] = r / rows_per_sentence;
        dec->src_len[r] = dec->batch.src_len[dec->sentence[r]];
    }
    return 0;
}

/* Whether a step normalises (lse): scores asked for, or an ensemble, whose
 * members' log-probabilities are mixed. */
static int normalises(const rs_decoder *dec)
{
    return dec->scores || dec->n_models > 1;
}

/* log Σ_v exp(row[v]) of a row of V logits (the log-softmax normaliser):
 * max + log Σ_v exp(row[v] − max). */
static float log_normalizer(const float *row, int V)
{
    const float max = rs_vmax(row, (size_t)V);
    return max + (float)log(rs_vexp_shift_total(row, max, (size_t)V));
}

/* The output layer after a step, from t_i [rows,l] (ws.tmax): logits
 * [rows,V] = W_out t_i + b_out over the step's words, all V or the
 * shortlist's rows (chosen), and with lse their log-normalisers. */
static void output_layer(rs_member *mb, const rs_network_weights *w, int rows,
                         const rs_output_rows *chosen, int lse)
{
    rs_readout_weights out = w->out;
    if (chosen) {
        out.W_out = chosen->W;
        out.b_out = chosen->b;
        out.V = chosen->count;
    }
    const rs_readout_acts acts = {.tmax = mb->ws.tmax, .logits = mb->logits};
    rs_readout_logits_forward(&acts, rows, &out);
    for (int b = 0; lse && b < rows; b++)
        mb->lse[b] = log_normalizer(mb->logits + (size_t)b * out.V, out.V);
}

void rs_decoder_step(rs_decoder *dec, const int *prev)
{
    const int rows = dec->rows, S = dec->S, K = dec->n_models;
    for (int k = 0; k < K; k++) {
        rs_member *mb = &dec->member[k];
        const rs_network_weights *w = rs_accel_step_weights(mb->step);
        const rs_step_out out = {mb->next_state, mb->ws.tmax, mb->alpha};
        /* Each row reads its sentence's source side where the encoder left it. */
        const rs_attention_source src = {mb->ws.keys, mb->ws.annotations, dec->src_len, rows,
                                         S,           dec->sentence,      dec->B};
        rs_network_step(&mb->ws, &out, mb->state, prev, &src, w);
        output_layer(mb, w, rows, dec->shortlist.lex ? &mb->rows : NULL, normalises(dec));
    }
    if (K == 1) {
        dec->logits = dec->member[0].logits;
        dec->lse = dec->member[0].lse;
        dec->alpha = dec->member[0].alpha;
        return;
    }
    /* log p(v) = Σ_k w_k log p_k(v); alignment = Σ_k w_k α_k (w_k = 1/K unweighted). */
    const size_t V = (size_t)dec->columns;
    for (int r = 0; r < rows; r++) {
        float *lp = dec->mean_logprobs + (size_t)r * V, *al = dec->mean_alpha + (size_t)r * S;
        memset(lp, 0, sizeof(float) * V);
        memset(al, 0, sizeof(float) * (size_t)S);
        for (int k = 0; k < K; k++) {
            const rs_member *mb = &dec->member[k];
            const float *row = mb->logits + (size_t)r * V, shift = mb->lse[r], w = dec->weight[k];
            for (size_t v = 0; v < V; v++)
                lp[v] += w * (row[v] - shift);
            for (int j = 0; j < S; j++)
                al[j] += w * mb->alpha[(size_t)r * S + j];
        }
    }
    dec->logits = dec->mean_logprobs;
    dec->lse = dec->zeros;
    dec->alpha = dec->mean_alpha;
}

void rs_decoder_select(rs_decoder *dec, const int *parent, int new_rows)
{
    for (int k = 0; k < dec->n_models; k++) {
        rs_member *mb = &dec->member[k];
        const size_t n = (size_t)dec->models[k]->model->cfg.hidden;
        if (parent)
            for (int r = 0; r < new_rows; r++)
                memcpy(mb->state + r * n, mb->next_state + (size_t)parent[r] * n,
                       sizeof(float) * n);
        else {
            float *swap = mb->state;
            mb->state = mb->next_state;
            mb->next_state = swap;
        }
    }
    if (!parent)
        return;
    int *sentence = dec->parent_scratch;
    for (int r = 0; r < new_rows; r++)
        sentence[r] = dec->sentence[parent[r]];
    dec->rows = new_rows;
    for (int r = 0; r < new_rows; r++) {
        dec->sentence[r] = sentence[r];
        dec->src_len[r] = dec->batch.src_len[sentence[r]];
    }
}

int rs_output_limit(int max_len, int src_count)
{
    return max_len > 0 ? max_len : 2 * src_count + 10;
}

static int push_row(rs_hypothesis *t, int step, const float *alpha, int want_alignment, int token,
                    rs_error *err)
{
    /* Grow by doubling: outputs are short and their length is not known. */
    if ((step & (step - 1)) == 0) {
        size_t cap = step ? 2 * (size_t)step : 1;
        int *ids = realloc(t->ids, cap * sizeof *ids);
        if (!ids)
            return rs_fail(err, "out of memory during decoding");
        t->ids = ids;
        if (want_alignment) {
            float *al = realloc(t->alignment, cap * t->columns * sizeof *al);
            if (!al)
                return rs_fail(err, "out of memory during decoding");
            t->alignment = al;
        }
    }
    t->ids[step] = token;
    if (want_alignment)
        memcpy(t->alignment + (size_t)step * t->columns, alpha, sizeof(float) * t->columns);
    return 0;
}

/* The word greedy search takes: what "best = </s>; for v = <unk> … V−1 but
 * <s>: if logit[v] > logit[best] then best = v" leaves, that is the first
 * largest logit but <pad> and <s>, </s> winning its ties. The words after
 * the reserved ids go through the vector argmax (the first of their largest). */
static int best_word(const float *logit, int V)
{
    int best = RS_EOS;
    for (int v = RS_UNK; v < RS_RESERVED && v < V; v++)
        if (v != RS_BOS && logit[v] > logit[best])
            best = v;
    if (V > RS_RESERVED) {
        const int top =
            RS_RESERVED + (int)rs_vargmax(logit + RS_RESERVED, (size_t)(V - RS_RESERVED));
        if (logit[top] > logit[best])
            best = top;
    }
    return best;
}

int rs_greedy(rs_decoder *dec, int B, const int *const *src, const int *src_count, int max_len,
              int want_alignment, rs_hypothesis *out, rs_error *err)
{
    for (int b = 0; b < B; b++)
        memset(&out[b], 0, sizeof out[b]);
    int *prev = rs_calloc((size_t)B + 1, sizeof(int), err);
    int *limit = rs_calloc((size_t)B + 1, sizeof(int), err);
    int *parent = rs_calloc((size_t)B + 1, sizeof(int), err);
    int status = -1;
    if (!prev || !limit || !parent || rs_decoder_start(dec, B, src, src_count, 1, err))
        goto done;
    for (int b = 0; b < B; b++) {
        out[b].columns = dec->batch.src_len[b];
        limit[b] = rs_output_limit(max_len, src_count[b]);
        prev[b] = RS_BOS;
    }
    int live = B;
    for (int step = 0; live > 0; step++) {
        rs_decoder_step(dec, prev);
        for (int r = 0; r < dec->rows; r++) {
            const int b = dec->sentence[r];
            rs_hypothesis *t = &out[b];
            if (prev[r] == RS_PAD) /* finished, not yet out of the batch */
                continue;
            /* The argmax of the logits is that of log p; at the limit only </s>. */
            const float *logit = dec->logits + (size_t)r * dec->columns;
            const int column = step < limit[b] ? best_word(logit, dec->columns) : RS_EOS;
            const int best = rs_decoder_word(dec, column);
            if (normalises(dec)) {
                t->logprob += logit[column] - dec->lse[r];
                t->score = t->logprob;
            }
            if (push_row(t, step, dec->alpha + (size_t)r * dec->S, want_alignment, best, err))
                goto done;
            if (best == RS_EOS) {
                t->finished = step < limit[b];
                t->count = step;
                prev[r] = RS_PAD;
                live--;
            } else {
                prev[r] = best;
            }
        }
        /* Finished rows leave the batch once they are a quarter of it. */
        if (live > 0 && live <= dec->rows - (dec->rows + 3) / 4) {
            int kept = 0;
            for (int r = 0; r < dec->rows; r++)
                if (prev[r] != RS_PAD) {
                    parent[kept] = r;
                    prev[kept++] = prev[r];
                }
            rs_decoder_select(dec, parent, kept);
        } else {
            rs_decoder_select(dec, NULL, dec->rows);
        }
    }
    status = 0;
done:
    if (status)
        for (int b = 0; b < B; b++)
            rs_hypothesis_free(&out[b]);
    free(prev);
    free(limit);
    free(parent);
    return status;
}
