#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "beam.h"

int rs_beam_init(rs_beam_search *bs, const rs_model *model, int max_sentences, int beam,
                 int max_S, rs_error *err)
{
    memset(bs, 0, sizeof *bs);
    bs->max_sentences = max_sentences;
    bs->beam = beam;
    bs->max_S = max_S;
    const int rows = max_sentences * beam, n = model->cfg.hidden;
    const int ka = attention_key_size(model->attention, n, model->cfg.att);
    if (rs_decoder_init(&bs->dec, model, rows, max_S, err))
        return -1;
    bs->keys = rs_calloc((size_t)max_S * rows * ka, sizeof(float), err);
    bs->annotations = rs_calloc((size_t)max_S * rows * 2 * n, sizeof(float), err);
    bs->src_len = rs_calloc((size_t)rows, sizeof(int), err);
    bs->scores = rs_calloc((size_t)rows, sizeof(float), err);
    bs->alive = rs_calloc((size_t)rows, sizeof(int), err);
    if (!bs->keys || !bs->annotations || !bs->src_len || !bs->scores || !bs->alive) {
        rs_beam_free(bs);
        return -1;
    }
    return 0;
}

void rs_beam_free(rs_beam_search *bs)
{
    rs_decoder_free(&bs->dec);
    free(bs->keys);
    free(bs->annotations);
    free(bs->src_len);
    free(bs->scores);
    free(bs->alive);
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

int rs_beam_translate(rs_beam_search *bs, int B, const int *const *src, const int *src_count,
                      const rs_beam_options *opt, rs_translation *out, double *norm_score,
                      rs_error *err)
{
    rs_decoder *dec = &bs->dec;
    const rs_model *model = dec->model;
    const int K = bs->beam, rows = B * K, n = model->cfg.hidden, V = model->cfg.tgt_vocab;
    const int ka = attention_key_size(model->attention, n, model->cfg.att);
    const int steps = opt->max_len + 1, nbest = opt->n_best;
    int status = -1;
    for (int i = 0; i < B * nbest; i++) {
        memset(&out[i], 0, sizeof out[i]);
        norm_score[i] = -INFINITY;
    }
    if (B > bs->max_sentences)
        return rs_fail(err, "beam search: %d sentences exceed the %d it was sized for", B,
                       bs->max_sentences);
    if (rs_batch_fill(&dec->batch, B, src, src_count, NULL, NULL, err))
        return -1;
    const int S = dec->batch.S;
    rs_encode(&dec->ws, model, &dec->batch);

    /* Each sentence's source side, copied for its K rows (row b·K + k). */
    for (int j = 0; j < S; j++)
        for (int r = 0; r < rows; r++) {
            int b = r / K;
            memcpy(bs->keys + ((size_t)j * rows + r) * ka, dec->ws.keys + ((size_t)j * B + b) * ka,
                   sizeof(float) * ka);
            memcpy(bs->annotations + ((size_t)j * rows + r) * 2 * n,
                   dec->ws.annotations + ((size_t)j * B + b) * 2 * n, sizeof(float) * 2 * n);
        }
    for (int r = 0; r < rows; r++) {
        int b = r / K;
        bs->src_len[r] = dec->batch.src_len[b];
        memcpy(dec->state + (size_t)r * n, dec->ws.dec_states + (size_t)b * n, sizeof(float) * n);
        dec->prev[r] = RS_BOS;
        /* At first all K rows are the same hypothesis: only row 0 may expand. */
        bs->scores[r] = r % K == 0 ? 0.0f : -INFINITY;
        bs->alive[r] = r % K == 0;
    }

    /* History per step and row: token, parent row, alignment. */
    int *tokens = rs_calloc((size_t)steps * rows, sizeof(int), err);
    int *parents = rs_calloc((size_t)steps * rows, sizeof(int), err);
    float *alphas = opt->want_alignment ? rs_calloc((size_t)steps * rows * S, sizeof(float), err) : NULL;
    candidate *best = rs_calloc((size_t)2 * K, sizeof *best, err);
    finished *done = rs_calloc((size_t)B * K, sizeof *done, err);
    int *done_count = rs_calloc((size_t)B, sizeof(int), err);
    float *new_scores = rs_calloc((size_t)rows, sizeof(float), err);
    int *new_prev = rs_calloc((size_t)rows, sizeof(int), err);
    int *new_alive = rs_calloc((size_t)rows, sizeof(int), err);
    if (!tokens || !parents || (opt->want_alignment && !alphas) || !best || !done ||
        !done_count || !new_scores || !new_prev || !new_alive)
        goto cleanup;

    int live_sentences = B;
    for (int step = 0; step < steps && live_sentences > 0; step++) {
        rs_decoder_step(&dec->sw, dec->next_state, dec->logprobs, dec->alpha, dec->state, dec->prev,
                        bs->keys, bs->annotations, bs->src_len, model, rows, S);
        if (alphas)
            memcpy(alphas + (size_t)step * rows * S, dec->alpha, sizeof(float) * (size_t)rows * S);
        for (int b = 0; b < B; b++) {
            int count = 0;
            if (done_count[b] < K) {
                for (int k = 0; k < K; k++) {
                    int r = b * K + k;
                    if (!bs->alive[r])
                        continue;
                    const float *lp = dec->logprobs + (size_t)r * V;
                    if (step == steps - 1) { /* the length limit: only </s> */
                        keep_best(best, &count, 2 * K, (candidate){bs->scores[r] + lp[RS_EOS], r, RS_EOS});
                        continue;
                    }
                    for (int v = RS_UNK; v < V; v++)
                        if (v != RS_BOS)
                            keep_best(best, &count, 2 * K, (candidate){bs->scores[r] + lp[v], r, v});
                }
            }
            /* Walking the candidates best first until K rows are filled: one that
             * ends with </s> is finished, the others become the next rows. */
            int next = 0;
            for (int i = 0; i < count && next < K && done_count[b] < K; i++) {
                candidate c = best[i];
                if (c.token == RS_EOS) {
                    double length = step + 1;
                    finished *f = &done[b * K + done_count[b]++];
                    f->logprob = c.score;
                    f->norm = c.score / pow(length, opt->length_penalty);
                    f->step = step;
                    f->row = c.row;
                } else if (next < K) {
                    int r = b * K + next++;
                    new_scores[r] = c.score;
                    new_prev[r] = c.token;
                    new_alive[r] = 1;
                    tokens[(size_t)step * rows + r] = c.token;
                    parents[(size_t)step * rows + r] = c.row;
                }
            }
            for (int k = next; k < K; k++) {
                int r = b * K + k;
                new_scores[r] = -INFINITY;
                new_prev[r] = RS_PAD;
                new_alive[r] = 0;
                parents[(size_t)step * rows + r] = r;
            }
            if (done_count[b] >= K || next == 0) {
                /* Finished: rows stay allocated but idle. */
                for (int k = 0; k < K; k++)
                    new_alive[b * K + k] = 0;
            }
        }
        /* Reorder states by parent so row r continues its chosen hypothesis. */
        live_sentences = 0;
        for (int b = 0; b < B; b++) {
            int any = 0;
            for (int k = 0; k < K; k++) {
                int r = b * K + k;
                int p = parents[(size_t)step * rows + r];
                memcpy(dec->state + (size_t)r * n, dec->next_state + (size_t)p * n, sizeof(float) * n);
                bs->scores[r] = new_scores[r];
                dec->prev[r] = new_prev[r];
                bs->alive[r] = new_alive[r];
                any |= new_alive[r];
            }
            live_sentences += any;
        }
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
            t->finished = f[rank].step < steps - 1;
            norm_score[b * nbest + rank] = f[rank].norm;
            t->ids = rs_calloc((size_t)len + 1, sizeof(int), err);
            if (!t->ids)
                goto cleanup;
            if (alphas) {
                t->alignment = rs_calloc((size_t)(len + 1) * S, sizeof(float), err);
                if (!t->alignment)
                    goto cleanup;
            }
            /* The </s> step's alignment is that of the row it extended. */
            int row = f[rank].row;
            for (int step = len; step >= 0; step--) {
                if (alphas)
                    memcpy(t->alignment + (size_t)step * t->src_len,
                           alphas + ((size_t)step * rows + row) * S, sizeof(float) * t->src_len);
                if (step == 0)
                    break;
                t->ids[step - 1] = tokens[(size_t)(step - 1) * rows + row];
                row = parents[(size_t)(step - 1) * rows + row];
            }
        }
    }
    status = 0;
cleanup:
    if (status)
        for (int i = 0; i < B * nbest; i++)
            rs_translation_free(&out[i]);
    free(tokens);
    free(parents);
    free(alphas);
    free(best);
    free(done);
    free(done_count);
    free(new_scores);
    free(new_prev);
    free(new_alive);
    return status;
}
