/* Beam search (see beam.h): each sentence keeps K hypotheses, extended
 * together as one batch of rows through decode.c's step; per sentence the
 * K·V candidates are ranked by log p, the best K kept, and a hypothesis that
 * says </s> is finished, ranked by log p / (length)^α.
 *
 * A sentence's search ends when K hypotheses have finished, as Nematus,
 * Marian and fairseq end it: over the whole vocabulary, a </s> ranks among
 * the K best extensions mostly where the sentence ends. Over a lexical
 * shortlist of a few words it is among them at almost every step (little
 * else is left to rank above it), and the K finished early were truncations:
 * BLEU 77 at beam 3 on dates with lex,0,2 against 98 greedy. With a
 * shortlist the search goes on until no live hypothesis can still beat the
 * worst of the K best finished (it can at best keep its log p and end at
 * the length limit), keeping the K best. Without one it is unchanged. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn/vecmath.h"
#include "search/beam.h"

/* a · b, or SIZE_MAX when the product does not fit: rs_calloc then fails,
 * saying so, instead of allocating a wrapped-around size. */
static size_t mul_size(size_t a, size_t b)
{
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

int rs_beam_init(rs_beam_search *bs, const rs_ready *const *models, int n_models, int max_sentences,
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

/* One search over B sentences of K rows each. Rows are grouped by sentence,
 * K each, in sentence order: group g is rows g·K … g·K + K − 1. History is
 * kept per step in that step's row numbering (a sentence that ends leaves the
 * batch and the numbering shrinks): tokens[step][r], parents[step][r] (a row
 * of step − 1), alphas[step][r]. */
typedef struct {
    int B, K, rows0, steps, S;
    int *limit;  /* [B] output tokens at most */
    int patient; /* 1: with a shortlist: K finished do not end a search (above) */
    /* History, grown as the search goes (held_steps of the steps): a search
     * that ends early never holds --max-len steps of it. */
    int held_steps;
    int want_alignment;
    int *tokens, *parents;         /* [held_steps, rows0] */
    float *alphas;                 /* [held_steps, rows0, S] when alignments are asked */
    candidate *best;               /* [2K] one group's best extensions */
    finished *done;                /* [B, K] */
    int *done_count;               /* [B] */
    float *scores, *new_scores;    /* [rows0] log p of each row's hypothesis */
    int *prev, *new_prev, *parent; /* [rows0] */
} beam_state;

static void beam_state_free(beam_state *st)
{
    free(st->limit);
    free(st->tokens);
    free(st->parents);
    free(st->alphas);
    free(st->best);
    free(st->done);
    free(st->done_count);
    free(st->scores);
    free(st->new_scores);
    free(st->prev);
    free(st->new_prev);
    free(st->parent);
}

/* The arrays of a search of B sentences with K rows each; steps from the
 * longest length limit. Alphas are allocated later, once S is known. */
static int beam_state_alloc(beam_state *st, int B, int K, const int *src_count,
                            const rs_beam_options *opt, rs_error *err)
{
    memset(st, 0, sizeof *st);
    st->B = B, st->K = K, st->rows0 = B * K;
    if (!(st->limit = rs_calloc((size_t)B, sizeof(int), err)))
        return -1;
    for (int b = 0; b < B; b++) {
        st->limit[b] = rs_output_limit(opt->max_len, src_count[b]);
        if (st->limit[b] + 1 > st->steps)
            st->steps = st->limit[b] + 1;
    }
    const size_t rows0 = (size_t)st->rows0;
    st->want_alignment = opt->want_alignment;
    st->best = rs_calloc((size_t)2 * K, sizeof *st->best, err);
    st->done = rs_calloc(rows0, sizeof *st->done, err);
    st->done_count = rs_calloc((size_t)B, sizeof(int), err);
    st->scores = rs_calloc(rows0, sizeof(float), err);
    st->new_scores = rs_calloc(rows0, sizeof(float), err);
    st->prev = rs_calloc(rows0, sizeof(int), err);
    st->new_prev = rs_calloc(rows0, sizeof(int), err);
    st->parent = rs_calloc(rows0, sizeof(int), err);
    if (!st->best || !st->done || !st->done_count || !st->scores || !st->new_scores || !st->prev ||
        !st->new_prev || !st->parent)
        return -1;
    for (int r = 0; r < st->rows0; r++) {
        st->prev[r] = RS_BOS;
        /* At first all K rows are the same hypothesis: only row 0 may expand. */
        st->scores[r] = r % K == 0 ? 0.0f : -INFINITY;
    }
    return 0;
}

/* Grows *array of rows0 · per_step elements a step to hold `held` steps. */
static int grow_history(void **array, int held, size_t per_step, size_t size, rs_error *err)
{
    const size_t count = mul_size((size_t)held, per_step);
    void *grown = count <= SIZE_MAX / size ? realloc(*array, count * size) : NULL;
    if (!grown)
        return rs_fail(err, "beam search: out of memory for %d steps of history (%zu x %zu bytes)",
                       held, count, size);
    *array = grown;
    return 0;
}

/* Makes the history hold step `step`: doubling (from 64 steps), up to the
 * steps the longest limit allows. */
static int hold_step(beam_state *st, int step, rs_error *err)
{
    if (step < st->held_steps)
        return 0;
    int held = st->held_steps ? st->held_steps : 64;
    while (held <= step)
        held = held > INT_MAX / 2 ? INT_MAX : 2 * held;
    if (held > st->steps)
        held = st->steps;
    const size_t rows0 = (size_t)st->rows0;
    if (grow_history((void **)&st->tokens, held, rows0, sizeof(int), err) ||
        grow_history((void **)&st->parents, held, rows0, sizeof(int), err) ||
        (st->want_alignment && grow_history((void **)&st->alphas, held,
                                            mul_size(rows0, (size_t)st->S), sizeof(float), err)))
        return -1;
    st->held_steps = held;
    return 0;
}

/* The 2K best one-token extensions of group g's live rows (sentence b) into
 * st->best, best first; at the length limit only </s>. Returns their count. */
static int extend_group(beam_state *st, const rs_decoder *dec, int g, int b, int step)
{
    const int K = st->K, V = dec->columns;
    int count = 0;
    for (int k = 0; k < K; k++) {
        const int r = g * K + k;
        if (st->scores[r] == -INFINITY)
            continue;
        const float *logit = dec->logits + (size_t)r * V;
        const float base = st->scores[r] - dec->lse[r];
        if (step == st->limit[b]) {
            keep_best(st->best, &count, 2 * K, (candidate){base + logit[RS_EOS], r, RS_EOS});
            continue;
        }
        /* Only a candidate above the worst of the 2K kept can enter: the
         * filter skips the others by eight at a time, and keep_best sees the
         * rest in the same order (the bound only rises), so the same 2K. */
        for (int v = RS_UNK;; v++) {
            /* NaN until 2K are kept: then every candidate passes */
            const float worst = count == 2 * K ? st->best[count - 1].score : NAN;
            v = (int)rs_vfirst_above(logit, base, worst, (size_t)v, (size_t)V);
            if (v == V)
                break;
            if (v != RS_BOS)
                keep_best(st->best, &count, 2 * K,
                          (candidate){base + logit[v], r, rs_decoder_word(dec, v)});
        }
    }
    return count;
}

/* Sentence b's finished hypothesis to be replaced by one of normalised
 * score norm: a free one of its K, else (patient search) the worst of them
 * when norm is better; NULL when none. */
static finished *finished_slot(beam_state *st, int b, double norm)
{
    finished *f = st->done + b * st->K;
    if (st->done_count[b] < st->K)
        return &f[st->done_count[b]++];
    finished *worst = f;
    for (int k = 1; k < st->K; k++)
        if (f[k].norm < worst->norm)
            worst = &f[k];
    return norm > worst->norm ? worst : NULL;
}

/* Whether a live hypothesis of log p `score` after `step` steps could still
 * finish above the worst of sentence b's K finished ones: its log p can only
 * fall, and it ends at the latest at the length limit, so its normalised
 * score is at most score / L^α for L its length with </s>, from step + 2 to
 * limit + 1 (the largest L when α ≥ 0, as score ≤ 0). */
static int could_still_win(const beam_state *st, int b, float score, int step, float alpha)
{
    const finished *f = st->done + b * st->K;
    double worst = f[0].norm;
    for (int k = 1; k < st->done_count[b]; k++)
        worst = f[k].norm < worst ? f[k].norm : worst;
    const int length = alpha >= 0 ? st->limit[b] + 1 : step + 2;
    return score / pow(length, alpha) > worst;
}

/* Walks group g's candidates best first until K rows are filled: one that
 * ends with </s> is finished (scored log p / (step + 1)^α), the others
 * become rows new_rows … of the next step. Returns the rows it adds: K, or 0
 * when the sentence's search is over (its rows leave): K finished (a patient
 * search: and no live row could still beat them), or no live row left. */
static int advance_group(beam_state *st, int count, int g, int b, int step, int new_rows,
                         float length_penalty)
{
    const int K = st->K;
    int next = 0;
    for (int i = 0; i < count && next < K && (st->patient || st->done_count[b] < K); i++) {
        const candidate c = st->best[i];
        if (c.token == RS_EOS) {
            const double norm = c.score / pow(step + 1, length_penalty);
            finished *f = finished_slot(st, b, norm);
            if (!f)
                continue;
            f->logprob = c.score;
            f->norm = norm;
            f->step = step;
            f->row = c.row;
        } else {
            const int r = new_rows + next++;
            st->new_scores[r] = c.score;
            st->new_prev[r] = c.token;
            st->parent[r] = c.row;
            st->tokens[(size_t)step * st->rows0 + r] = c.token;
            st->parents[(size_t)step * st->rows0 + r] = c.row;
        }
    }
    int over = next == 0 || (!st->patient && st->done_count[b] >= K);
    if (!over && st->patient && st->done_count[b] >= K) {
        over = 1; /* the candidates came best first: the first live row is the best */
        if (could_still_win(st, b, st->new_scores[new_rows], step, length_penalty))
            over = 0;
    }
    if (over)
        return 0;
    for (int k = next; k < K; k++) {
        const int r = new_rows + k;
        st->new_scores[r] = -INFINITY;
        st->new_prev[r] = RS_PAD;
        st->parent[r] = g * K;
        st->parents[(size_t)step * st->rows0 + r] = g * K;
    }
    return K;
}

/* Sentence b's finished hypotheses ranked by normalised score, the n_best
 * first written to out[0 … n_best), their tokens (and alignments) found by
 * walking the back-pointers. */
static int collect_hypotheses(const beam_state *st, int b, int src_len, int n_best,
                              rs_hypothesis *out, rs_error *err)
{
    finished *f = st->done + b * st->K;
    const int nf = st->done_count[b];
    for (int i = 1; i < nf; i++) /* insertion sort, best first */
        for (int j = i; j > 0 && f[j].norm > f[j - 1].norm; j--) {
            finished tmp = f[j];
            f[j] = f[j - 1];
            f[j - 1] = tmp;
        }
    for (int rank = 0; rank < n_best && rank < nf; rank++) {
        rs_hypothesis *t = &out[rank];
        const int len = f[rank].step; /* tokens before </s> */
        t->count = len;
        t->columns = src_len;
        t->logprob = f[rank].logprob;
        t->finished = f[rank].step < st->limit[b];
        t->score = f[rank].norm;
        if (!(t->ids = rs_calloc((size_t)len + 1, sizeof(int), err)))
            return -1;
        if (st->alphas &&
            !(t->alignment = rs_calloc((size_t)(len + 1) * src_len, sizeof(float), err)))
            return -1;
        /* The </s> step's alignment is that of the row it extended. */
        int row = f[rank].row;
        for (int step = len; step >= 0; step--) {
            if (st->alphas)
                memcpy(t->alignment + (size_t)step * src_len,
                       st->alphas + ((size_t)step * st->rows0 + row) * st->S,
                       sizeof(float) * src_len);
            if (step == 0)
                break;
            t->ids[step - 1] = st->tokens[(size_t)(step - 1) * st->rows0 + row];
            row = st->parents[(size_t)(step - 1) * st->rows0 + row];
        }
    }
    return 0;
}

int rs_beam_translate(rs_beam_search *bs, int B, const int *const *src, const int *src_count,
                      const rs_beam_options *opt, rs_hypothesis *out, rs_error *err)
{
    rs_decoder *dec = &bs->dec;
    const int K = bs->beam, nbest = opt->n_best;
    /* Checked before out[B · n_best] is touched: the caller sized it for at
     * most max_sentences sentences of at most K hypotheses, and B · K then
     * fits an int (rs_decoder_init checked max_sentences · K). */
    if (B < 0 || B > bs->max_sentences)
        return rs_fail(err, "beam search: %d sentences exceed the %d it was sized for", B,
                       bs->max_sentences);
    if (nbest < 1 || nbest > K)
        return rs_fail(err, "beam search: n-best %d is not from 1 to the beam (%d)", nbest, K);
    for (int i = 0; i < B * nbest; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].score = -INFINITY;
    }
    beam_state st;
    int status = -1;
    if (beam_state_alloc(&st, B, K, src_count, opt, err) ||
        rs_decoder_start(dec, B, src, src_count, K, err))
        goto cleanup;
    st.S = dec->S;
    st.patient = dec->shortlist.lex != NULL;
    for (int step = 0; step < st.steps && dec->rows > 0; step++) {
        if (hold_step(&st, step, err))
            goto cleanup;
        rs_decoder_step(dec, st.prev);
        if (st.alphas)
            memcpy(st.alphas + (size_t)step * st.rows0 * st.S, dec->alpha,
                   sizeof(float) * (size_t)dec->rows * st.S);
        int new_rows = 0;
        for (int g = 0; g * K < dec->rows; g++) {
            const int b = dec->sentence[g * K];
            const int count = extend_group(&st, dec, g, b, step);
            new_rows += advance_group(&st, count, g, b, step, new_rows, opt->length_penalty);
        }
        memcpy(st.scores, st.new_scores, sizeof(float) * (size_t)new_rows);
        memcpy(st.prev, st.new_prev, sizeof(int) * (size_t)new_rows);
        rs_decoder_select(dec, st.parent, new_rows);
    }
    for (int b = 0; b < B; b++)
        if (collect_hypotheses(&st, b, dec->batch.src_len[b], nbest, out + b * nbest, err))
            goto cleanup;
    status = 0;
cleanup:
    if (status)
        for (int i = 0; i < B * nbest; i++)
            rs_hypothesis_free(&out[i]);
    beam_state_free(&st);
    return status;
}
