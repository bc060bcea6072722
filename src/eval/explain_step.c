/* One real decoder step of a trained model (see explain_step.h): the model's
 * own code runs to s_{i-1}, then step i is recomputed in double precision.
 * Shapes as in explain_step.h: S, n, 2n, m, a, ka, l, V; matrices row-major
 * [out, in], y = W x (docs/model.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/explain_step.h"
#include "search/decode.h"
#include "search/translate.h"

void rs_explained_step_free(rs_explained_step *x)
{
    double *all[] = {x->s_prev, x->h,   x->keys, x->query, x->phi, x->e, x->alpha, x->c, x->emb,
                     x->xproj,  x->rec, x->z,    x->r,     x->g,   x->s, x->tpre,  x->t, x->logp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(x->src_ids);
    for (int j = 0; x->src_words && j < x->S; j++)
        free(x->src_words[j]);
    free(x->src_words);
    free(x->prefix);
    free(x->which);
    free(x->model_alpha);
    free(x->model_state);
    memset(x, 0, sizeof *x);
}

static int alloc_all(rs_explained_step *x, rs_error *err)
{
    const size_t S = (size_t)x->S, n = (size_t)x->n, m = (size_t)x->m, ka = (size_t)x->ka;
    const size_t a = (size_t)x->a, l = (size_t)x->l, V = (size_t)x->V;
    struct {
        double **p;
        size_t count;
    } d[] = {{&x->s_prev, n},      {&x->h, S * 2 * n}, {&x->keys, S * ka}, {&x->query, ka},
             {&x->phi, S * a + 1}, {&x->e, S},         {&x->alpha, S},     {&x->c, 2 * n},
             {&x->emb, m},         {&x->xproj, 3 * n}, {&x->rec, 3 * n},   {&x->z, n},
             {&x->r, n},           {&x->g, n},         {&x->s, n},         {&x->tpre, 2 * l},
             {&x->t, l},           {&x->logp, V}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (!(*d[i].p = rs_calloc(d[i].count, sizeof(double), err)))
            return -1;
    x->which = rs_calloc(l, sizeof *x->which, err);
    x->model_alpha = rs_calloc(S, sizeof *x->model_alpha, err);
    x->model_state = rs_calloc(n, sizeof *x->model_state, err);
    x->prefix = rs_calloc((size_t)x->step, sizeof *x->prefix, err);
    return x->which && x->model_alpha && x->model_state && x->prefix ? 0 : -1;
}

/* Raw text of one side to ids (no </s>), as translation and forced
 * decoding map them: a token out of the vocabulary is <unk>; the tokens
 * themselves into *words when it is not NULL (the caller frees them). */
static int text_ids(const rs_model *model, const rs_codec *codec, int side, const char *raw,
                    int **ids, int *count, rs_tokens *words, rs_error *err)
{
    rs_tokens tok = {0};
    rs_error inner;
    *ids = NULL;
    if (rs_codec_tokens(codec, side, raw, &tok, &inner))
        return rs_fail(err, "the %s: %s", side == RS_SIDE_SRC ? "sentence" : "target", inner.msg);
    const rs_vocab *vocab = side == RS_SIDE_SRC ? &model->src_vocab : &model->tgt_vocab;
    *count = tok.count;
    *ids = rs_calloc((size_t)tok.count + 1, sizeof **ids, err);
    if (*ids)
        for (int k = 0; k < tok.count; k++)
            (*ids)[k] = rs_vocab_id(vocab, tok.tokens[k]);
    if (words && *ids)
        *words = tok;
    else
        rs_tokens_free(&tok);
    return *ids ? 0 : -1;
}

/* The word greedy search takes from a row of logits (search/decode.c's
 * best_word): the first largest but <pad> and <s>, </s> winning its ties. */
static int greedy_word(const float *logit, int V)
{
    int best = RS_EOS;
    for (int v = RS_UNK; v < V; v++)
        if (v != RS_BOS && v != RS_EOS && logit[v] > logit[best])
            best = v;
    return best;
}

/* y = W x + b (b may be NULL): W [rows, cols] float, x [cols] double; W's
 * row stride is `stride` (a block of columns of a wider matrix). */
static void matvec(double *y, const float *W, int rows, int cols, size_t stride, const double *x,
                   const float *b)
{
    for (int i = 0; i < rows; i++) {
        double s = b ? b[i] : 0.0;
        const float *w = W + (size_t)i * stride;
        for (int k = 0; k < cols; k++)
            s += (double)w[k] * x[k];
        y[i] = s;
    }
}

/* y += W x, as matvec. */
static void matvec_add(double *y, const float *W, int rows, int cols, size_t stride,
                       const double *x)
{
    for (int i = 0; i < rows; i++) {
        double s = 0.0;
        const float *w = W + (size_t)i * stride;
        for (int k = 0; k < cols; k++)
            s += (double)w[k] * x[k];
        y[i] += s;
    }
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* Step i in double precision, from s_prev, h and y_{i-1} (model.md's
 * "Alignment model", "Decoder GRU" and "Deep output with maxout"). */
static void work_step(rs_explained_step *x, const rs_model *model)
{
    const rs_tensors *w = &model->w;
    const int S = x->S, n = x->n, m = x->m, a = x->a, ka = x->ka, l = x->l, V = x->V;
    /* keys_j = U_a h_j + b_a [a] (additive) or K h_j [n]; the query side
     * W_a s_{i-1} [a] (additive) or s_{i-1} itself */
    for (int j = 0; j < S; j++)
        matvec(x->keys + (size_t)j * ka, x->kind == RS_ATT_ADDITIVE ? w->att_U : w->att_K, ka,
               2 * n, (size_t)2 * n, x->h + (size_t)j * 2 * n,
               x->kind == RS_ATT_ADDITIVE ? w->att_b : NULL);
    if (x->kind == RS_ATT_ADDITIVE)
        matvec(x->query, w->att_W, a, n, (size_t)n, x->s_prev, NULL);
    else
        memcpy(x->query, x->s_prev, sizeof(double) * (size_t)n);
    /* ε_ij: v_a · tanh(W_a s + key_j), or s · key_j (/ √n scaled-dot) */
    double emax = -INFINITY;
    for (int j = 0; j < S; j++) {
        const double *k = x->keys + (size_t)j * ka;
        double e = 0.0;
        if (x->kind == RS_ATT_ADDITIVE) {
            double *phi = x->phi + (size_t)j * a;
            for (int u = 0; u < a; u++) {
                phi[u] = tanh(x->query[u] + k[u]);
                e += (double)w->att_v[u] * phi[u];
            }
        } else {
            for (int u = 0; u < n; u++)
                e += x->s_prev[u] * k[u];
            if (x->kind == RS_ATT_SCALED_DOT)
                e /= sqrt((double)n);
        }
        x->e[j] = e;
        emax = e > emax ? e : emax;
    }
    /* α_ij = exp(ε_ij − max) / Σ_k exp(ε_ik − max); c_i = Σ_j α_ij h_j */
    double sum = 0.0;
    for (int j = 0; j < S; j++)
        sum += x->alpha[j] = exp(x->e[j] - emax);
    for (int j = 0; j < S; j++) {
        x->alpha[j] /= sum;
        for (int k = 0; k < 2 * n; k++)
            x->c[k] += x->alpha[j] * x->h[(size_t)j * 2 * n + k];
    }
    /* the GRU: x_proj = W'_e emb + W'_c c + b' [3n], then the gates */
    for (int k = 0; k < m; k++)
        x->emb[k] = model->w.tgt_emb[(size_t)x->prefix[x->step - 1] * m + k];
    const size_t in = (size_t)m + 2 * (size_t)n;
    matvec(x->xproj, w->dec_W, 3 * n, m, in, x->emb, w->dec_b);
    matvec_add(x->xproj, w->dec_W + m, 3 * n, 2 * n, in, x->c);
    matvec(x->rec, w->dec_U, 2 * n, n, (size_t)n, x->s_prev, NULL); /* U'_z s, U'_r s */
    for (int k = 0; k < n; k++) {
        x->z[k] = sigmoid(x->xproj[k] + x->rec[k]);
        x->r[k] = sigmoid(x->xproj[n + k] + x->rec[n + k]);
    }
    double *rs = x->s; /* r ⊙ s_{i-1}, before s holds s_i */
    for (int k = 0; k < n; k++)
        rs[k] = x->r[k] * x->s_prev[k];
    matvec(x->rec + 2 * n, w->dec_U + (size_t)2 * n * n, n, n, (size_t)n, rs, NULL);
    for (int k = 0; k < n; k++) {
        x->g[k] = tanh(x->xproj[2 * n + k] + x->rec[2 * n + k]);
        x->s[k] = (1.0 - x->z[k]) * x->s_prev[k] + x->z[k] * x->g[k];
    }
    /* t̃ = U_o s_i + V_o emb + C_o c + b_o [2l]; t[k] = max of the pair (the first on a tie) */
    matvec(x->tpre, w->out_U, 2 * l, n, (size_t)n, x->s, w->out_b);
    matvec_add(x->tpre, w->out_V, 2 * l, m, (size_t)m, x->emb);
    matvec_add(x->tpre, w->out_C, 2 * l, 2 * n, (size_t)2 * n, x->c);
    for (int k = 0; k < l; k++) {
        x->which[k] = x->tpre[2 * k + 1] > x->tpre[2 * k];
        x->t[k] = x->tpre[2 * k + x->which[k]];
    }
    /* log p = logits − log Σ exp(logits), logits = W_out t + b_out */
    matvec(x->logp, w->out_W, V, l, (size_t)l, x->t, w->out_bw);
    double lmax = -INFINITY, z = 0.0;
    for (int v = 0; v < V; v++)
        lmax = x->logp[v] > lmax ? x->logp[v] : lmax;
    for (int v = 0; v < V; v++)
        z += exp(x->logp[v] - lmax);
    const double lse = lmax + log(z);
    for (int v = 0; v < V; v++)
        x->logp[v] -= lse;
}

/* The prefix y_1 … y_{T} (target or greedy) into *ids, *count. */
static int prefix_of(rs_decoder *dec, const rs_model *model, const rs_codec *codec,
                     const rs_explain_step_request *rq, const int *src, int src_count, int **ids,
                     int *count, rs_error *err)
{
    if (rq->target)
        return text_ids(model, codec, RS_SIDE_TGT, rq->target, ids, count, NULL, err);
    rs_hypothesis h;
    if (rs_greedy(dec, 1, &src, &src_count, 0, 0, &h, err))
        return -1;
    *count = h.count;
    *ids = rs_calloc((size_t)h.count + 1, sizeof **ids, err);
    if (*ids)
        memcpy(*ids, h.ids, sizeof **ids * (size_t)h.count);
    rs_hypothesis_free(&h);
    return *ids ? 0 : -1;
}

int rs_explain_step_compute(rs_explained_step *x, const rs_model *model, const rs_codec *codec,
                            const rs_explain_step_request *rq, rs_error *err)
{
    memset(x, 0, sizeof *x);
    const rs_model_config *cfg = &model->cfg;
    if (cfg->attention == RS_ATT_NONE)
        return rs_fail(err, RS_NO_ALIGNMENT_WHY);
    if (rq->step < 1)
        return rs_fail(err, "--step %d: steps count from 1 (step i reads y_{i-1}, y_0 = <s>)",
                       rq->step);
    int *src = NULL, src_count = 0, *tgt = NULL, tgt_count = 0, status = -1;
    rs_tokens words = {0};
    rs_decoder dec;
    int dec_made = 0;
    if (text_ids(model, codec, RS_SIDE_SRC, rq->source, &src, &src_count, &words, err))
        goto done;
    /* translate gives an empty line for it, not a decoding to explain */
    if (src_count == 0) {
        rs_fail(err, "the sentence has no tokens: an empty line translates to an empty line, "
                     "with no step to explain");
        goto done;
    }
    if (src_count > RS_MAX_SRC_LEN) {
        rs_fail(err, "the sentence has %d tokens; explain takes at most %d", src_count,
                RS_MAX_SRC_LEN);
        goto done;
    }
    const rs_model *const models[1] = {model};
    if (rs_decoder_init(&dec, models, 1, 1, 1, src_count + 1, err))
        goto done;
    dec_made = 1;
    if (prefix_of(&dec, model, codec, rq, src, src_count, &tgt, &tgt_count, err))
        goto done;
    /* steps 1 … T emit y_1 … y_T, step T + 1 emits </s> */
    if (rq->step > tgt_count + 1) {
        rs_fail(err, "--step %d: the %s has %d token%s and </s>, so steps 1 to %d", rq->step,
                rq->target ? "target" : "greedy translation", tgt_count, tgt_count == 1 ? "" : "s",
                tgt_count + 1);
        goto done;
    }
    x->kind = cfg->attention;
    x->S = src_count + 1, x->n = cfg->hidden, x->m = cfg->emb, x->l = cfg->maxout;
    x->a = x->kind == RS_ATT_ADDITIVE ? cfg->att : 0;
    x->ka = rs_attention_key_size(x->kind, cfg->hidden, cfg->att);
    x->V = model->tgt_vocab.size;
    x->step = rq->step;
    if (alloc_all(x, err) || !(x->src_ids = rs_calloc((size_t)x->S, sizeof *x->src_ids, err)))
        goto done;
    memcpy(x->src_ids, src, sizeof *src * (size_t)src_count);
    x->src_ids[src_count] = RS_EOS;
    if (!(x->src_words = rs_calloc((size_t)x->S, sizeof *x->src_words, err)))
        goto done;
    for (int j = 0; j < x->S; j++)
        if (!(x->src_words[j] = strdup(j < src_count ? words.tokens[j] : "</s>"))) {
            rs_fail(err, "out of memory");
            goto done;
        }
    x->prefix[0] = RS_BOS;
    for (int k = 1; k < x->step; k++)
        x->prefix[k] = tgt[k - 1];
    x->next = x->step <= tgt_count ? tgt[x->step - 1] : RS_EOS;

    /* The model's own float32 steps 1 … i−1 along the prefix, then step i. */
    if (rs_decoder_start(&dec, 1, (const int *const *)&src, &src_count, 1, err))
        goto done;
    for (int k = 0; k < x->step; k++) {
        if (k == x->step - 1)
            for (int u = 0; u < x->n; u++)
                x->s_prev[u] = dec.member[0].state[u];
        rs_decoder_step(&dec, &x->prefix[k]);
        if (k < x->step - 1)
            rs_decoder_select(&dec, NULL, 1);
    }
    const rs_workspace *ws = &dec.member[0].ws;
    for (size_t k = 0; k < (size_t)x->S * 2 * x->n; k++)
        x->h[k] = ws->annotations[k]; /* [S,B=1,2n] is [S,2n] */
    memcpy(x->model_alpha, dec.alpha, sizeof(float) * (size_t)x->S);
    memcpy(x->model_state, dec.member[0].next_state, sizeof(float) * (size_t)x->n);
    x->model_best = greedy_word(dec.logits, x->V);
    work_step(x, model);
    status = 0;
done:
    if (dec_made)
        rs_decoder_free(&dec);
    free(src);
    free(tgt);
    rs_tokens_free(&words);
    if (status)
        rs_explained_step_free(x);
    return status;
}
