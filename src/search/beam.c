#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/beam.h"

int rs_beam_init(rs_beam_search *bs, const rs_model *const *models, int n_models, int max_sentences,
                 int beam, int max_S, rs_error *err)
{
    memset(bs, 0, sizeof *bs);
    bs->max_sentences = max_sentences;
    bs->beam = beam;
    bs->max_S = max_S;
    return rs_decoder_init(&bs->dec, models, n_models, max_sentences, beam, max_S, err);
}

void rs_beam_free(rs_beam_search *bs)
{
    rs_decoder_free(&bs->dec);
    memset(bs, 0, sizeof *bs);
}

typedef struct {
    float score; /* running log p after this token */
    int row;     /* the hypothesis it extends */
    int token;
} candidate;

typedef struct {
    double norm, logprob;
    int step, row; /* its </s> was chosen at this step, extending this row */
} finished;

/* Inserts c into best[0..*count) kept sorted by score, at most cap entries. */
static void keep_best(candidate *best, int *count, int cap, candidate c)
{
    if (*count == cap && c.score <= best[cap - 1].score)
        return;
    int i = *count < cap ? (*count)++ : cap - 1;
    while (i > 0 && best[i - 1].score < c.score) {
        best[i] = best[i - 1];
        i--;
    }
    best[i] = c;
}

/* Rows are grouped by sentence, K each, in sentence order: group g is rows
 * g·K … g·K + K − 1. History is kept per step in that step's row numbering
 * (a sentence that ends leaves the batch and the numbering shrinks):
 * tokens[step][r], parents[step][r] (a row of step − 1), alphas[step][r]. */
int rs_beam_translate(rs_beam_search *bs, int B, const int *const *src, const int *src_count,
                      const rs_beam_options *opt, rs_translation *out, rs_error *err)
{
    rs_decoder *dec = &bs->dec;
    const int K = bs->beam, rows0 = B * K, V = dec->models[0]->cfg.tgt_vocab;
    const int nbest = opt->n_best;
    int status = -1, steps = 0;
    for (int i = 0; i < B * nbest; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].score = -INFINITY;
    }
    if (B > bs->max_sentences)
        return rs_fail(err, "beam search: %d sentences exceed the %d it was sized for", B,
                       bs->max_sentences);
    int *limit = rs_calloc((size_t)B, sizeof(int), err);
    if (!limit)
        return -1;
    for (int b = 0; b < B; b++) {
        limit[b] = rs_output_limit(opt->max_len, src_count[b]);
        if (limit[b] + 1 > steps)
            steps = limit[b] + 1;
    }
    int *tokens = rs_calloc((size_t)steps * rows0, sizeof(int), err);
    int *parents = rs_calloc((size_t)steps * rows0, sizeof(int), err);
    float *alphas = NULL;
    candidate *best = rs_calloc((size_t)2 * K, sizeof *best, err);
    finished *done = rs_calloc((size_t)B * K, sizeof *done, err);
    int *done_count = rs_calloc((size_t)B, sizeof(int), err);
    float *scores = rs_calloc((size_t)rows0, sizeof(float), err);
    float *new_scores = rs_calloc((size_t)rows0, sizeof(float), err);
    int *prev = rs_calloc((size_t)rows0, sizeof(int), err);
    int *new_prev = rs_calloc((size_t)rows0, sizeof(int), err);
    int *parent = rs_calloc((size_t)rows0, sizeof(int), err);
    if (!tokens || !parents || !best || !done || !done_count || !scores || !new_scores || !prev ||
        !new_prev || !parent || rs_decoder_start(dec, B, src, src_count, K, err))
        goto cleanup;
    const int S = dec->S;
    if (opt->want_alignment && !(alphas = rs_calloc((size_t)steps * rows0 * S, sizeof(float), err)))
        goto cleanup;
    for (int r = 0; r < rows0; r++) {
        prev[r] = RS_BOS;
        /* At first all K rows are the same hypothesis: only row 0 may expand. */
        scores[r] = r % K == 0 ? 0.0f : -INFINITY;
    }

    for (int step = 0; step < steps && dec->rows > 0; step++) {
        const int rows = dec->rows;
        rs_decoder_step(dec, prev);
        if (alphas)
            memcpy(alphas + (size_t)step * rows0 * S, dec->alpha, sizeof(float) * (size_t)rows * S);
        int new_rows = 0;
        for (int g = 0; g * K < rows; g++) {
            const int b = dec->sentence[g * K];
            int count = 0;
            for (int k = 0; k < K; k++) {
                int r = g * K + k;
                if (scores[r] == -INFINITY)
                    continue;
                const float *logit = dec->logits + (size_t)r * V;
                const float base = scores[r] - dec->lse[r];
                if (step == limit[b]) { /* the length limit: only </s> */
                    keep_best(best, &count, 2 * K, (candidate){base + logit[RS_EOS], r, RS_EOS});
                    continue;
                }
                for (int v = RS_UNK; v < V; v++)
                    if (v != RS_BOS)
                        keep_best(best, &count, 2 * K, (candidate){base + logit[v], r, v});
            }
            /* Walking the candidates best first until K rows are filled: one that
             * ends with </s> is finished, the others become the next rows. */
            int next = 0;
            for (int i = 0; i < count && next < K && done_count[b] < K; i++) {
                candidate c = best[i];
                if (c.token == RS_EOS) {
                    finished *f = &done[b * K + done_count[b]++];
                    f->logprob = c.score;
                    f->norm = c.score / pow(step + 1, opt->length_penalty);
                    f->step = step;
                    f->row = c.row;
                } else {
                    int r = new_rows + next++;
                    new_scores[r] = c.score;
                    new_prev[r] = c.token;
                    parent[r] = c.row;
                    tokens[(size_t)step * rows0 + r] = c.token;
                    parents[(size_t)step * rows0 + r] = c.row;
                }
            }
            if (done_count[b] >= K || next == 0)
                continue; /* this sentence's search is over: its rows leave */
            for (int k = next; k < K; k++) {
                int r = new_rows + k;
                new_scores[r] = -INFINITY;
                new_prev[r] = RS_PAD;
                parent[r] = g * K;
                parents[(size_t)step * rows0 + r] = g * K;
            }
            new_rows += K;
        }
        memcpy(scores, new_scores, sizeof(float) * (size_t)new_rows);
        memcpy(prev, new_prev, sizeof(int) * (size_t)new_rows);
        rs_decoder_select(dec, parent, new_rows);
    }

    /* Rank each sentence's finished hypotheses and walk their back-pointers. */
    for (int b = 0; b < B; b++) {
        finished *f = done + b * K;
        int nf = done_count[b];
        for (int i = 1; i < nf; i++) /* insertion sort by normalised score, best first */
            for (int j = i; j > 0 && f[j].norm > f[j - 1].norm; j--) {
                finished tmp = f[j];
                f[j] = f[j - 1];
                f[j - 1] = tmp;
            }
        for (int rank = 0; rank < nbest && rank < nf; rank++) {
            rs_translation *t = &out[b * nbest + rank];
            int len = f[rank].step; /* tokens before </s> */
            t->len = len;
            t->src_len = dec->batch.src_len[b];
            t->logprob = f[rank].logprob;
            t->finished = f[rank].step < limit[b];
            t->score = f[rank].norm;
            t->ids = rs_calloc((size_t)len + 1, sizeof(int), err);
            if (!t->ids)
                goto cleanup;
            if (alphas) {
                t->alignment = rs_calloc((size_t)(len + 1) * t->src_len, sizeof(float), err);
                if (!t->alignment)
                    goto cleanup;
            }
            /* The </s> step's alignment is that of the row it extended. */
            int row = f[rank].row;
            for (int step = len; step >= 0; step--) {
                if (alphas)
                    memcpy(t->alignment + (size_t)step * t->src_len,
                           alphas + ((size_t)step * rows0 + row) * S, sizeof(float) * t->src_len);
                if (step == 0)
                    break;
                t->ids[step - 1] = tokens[(size_t)(step - 1) * rows0 + row];
                row = parents[(size_t)(step - 1) * rows0 + row];
            }
        }
    }
    status = 0;
cleanup:
    if (status)
        for (int i = 0; i < B * nbest; i++)
            rs_translation_free(&out[i]);
    free(limit);
    free(tokens);
    free(parents);
    free(alphas);
    free(best);
    free(done);
    free(done_count);
    free(scores);
    free(new_scores);
    free(prev);
    free(new_prev);
    free(parent);
    return status;
}
