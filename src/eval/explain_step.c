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

/* The request's members as messages name them: explain's options or a
 * JSON body's members (rs_explain_step_request's json_names). */
enum { NAME_STEP, NAME_ATTEND, NAME_ALPHA, NAME_TARGET };
static const char *named(const rs_explain_step_request *rq, int which)
{
    static const char *const option[] = {"--step", "--attend", "--alpha", "--target"};
    static const char *const member[] = {"'step'", "'attend'", "'alpha'", "'target'"};
    return (rq->json_names ? member : option)[which];
}

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
    free(x->softmax_alpha);
    free(x->old_ids);
    free(x->new_ids);
    free(x->old_text);
    free(x->new_text);
    free(x->old_alpha);
    free(x->new_alpha);
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

/* α_i and c_i from s_prev and h (model.md's "Alignment model"): keys_j =
 * U_a h_j + b_a [a] (additive) or K h_j [n]; the query side W_a s_{i-1} [a]
 * (additive) or s_{i-1} itself; with forced [S] (a push), α_i is forced and
 * the softmax's α goes to softmax_alpha. */
static void attend(rs_explained_step *x, const rs_tensors *w, const double *forced)
{
    const int S = x->S, n = x->n, a = x->a, ka = x->ka;
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
    for (int j = 0; j < S; j++)
        x->alpha[j] /= sum;
    if (forced) {
        memcpy(x->softmax_alpha, x->alpha, sizeof(double) * (size_t)S);
        memcpy(x->alpha, forced, sizeof(double) * (size_t)S);
    }
    for (int j = 0; j < S; j++) {
        for (int k = 0; k < 2 * n; k++)
            x->c[k] += x->alpha[j] * x->h[(size_t)j * 2 * n + k];
    }
}

/* s_i from s_{i-1}, emb(y_{i-1}) and c_i (model.md's "Decoder GRU"):
 * x_proj = W'_e emb + W'_c c + b' [3n], then the gates. */
static void gru_step(rs_explained_step *x, const rs_tensors *w)
{
    const int n = x->n, m = x->m;
    for (int k = 0; k < m; k++)
        x->emb[k] = w->tgt_emb[(size_t)x->prefix[x->step - 1] * m + k];
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
}

/* log p(y_i) from s_i, emb and c_i (model.md's "Deep output with maxout"):
 * t̃ = U_o s_i + V_o emb + C_o c + b_o [2l]; t[k] = max of the pair (the
 * first on a tie); log p = logits − log Σ exp(logits), logits = W_out t + b_out. */
static void output_logp(rs_explained_step *x, const rs_tensors *w)
{
    const int n = x->n, m = x->m, l = x->l, V = x->V;
    matvec(x->tpre, w->out_U, 2 * l, n, (size_t)n, x->s, w->out_b);
    matvec_add(x->tpre, w->out_V, 2 * l, m, (size_t)m, x->emb);
    matvec_add(x->tpre, w->out_C, 2 * l, 2 * n, (size_t)2 * n, x->c);
    for (int k = 0; k < l; k++) {
        x->which[k] = x->tpre[2 * k + 1] > x->tpre[2 * k];
        x->t[k] = x->tpre[2 * k + x->which[k]];
    }
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

/* Step i in double precision, from s_prev, h and y_{i-1}; forced [S] or
 * NULL as attend's. */
static void work_step(rs_explained_step *x, const rs_model *model, const double *forced)
{
    attend(x, &model->w, forced);
    gru_step(x, &model->w);
    output_logp(x, &model->w);
}

/* A side's token ids (no </s>); for greedy search's prefix before a push,
 * its alignment rows too. */
typedef struct {
    int *ids;
    int count;
    float *alpha; /* [(count + 1) × S] or NULL */
} id_list;

/* The prefix y_1 … y_{T} (target or greedy) into *out. */
static int prefix_of(rs_decoder *dec, const rs_model *model, const rs_codec *codec,
                     const rs_explain_step_request *rq, const id_list *src, id_list *out,
                     rs_error *err)
{
    if (rq->target)
        return text_ids(model, codec, RS_SIDE_TGT, rq->target, &out->ids, &out->count, NULL, err);
    const int *src_ids = src->ids;
    rs_hypothesis h;
    const int push = rq->has_attend || rq->alpha != NULL;
    if (rs_greedy(dec, 1, &src_ids, &src->count, 0, push, &h, err))
        return -1;
    out->count = h.count;
    out->ids = rs_calloc((size_t)h.count + 1, sizeof *out->ids, err);
    if (out->ids)
        memcpy(out->ids, h.ids, sizeof *out->ids * (size_t)h.count);
    out->alpha = h.alignment; /* the push's "before" */
    h.alignment = NULL;
    rs_hypothesis_free(&h);
    return out->ids ? 0 : -1;
}

/* α_i of a push into forced[S] (checked: the position in 1 … S, or S
 * values, each finite and ≥ 0, summing to 1 within 1e-6 per value). */
static int push_alpha(const rs_explain_step_request *rq, int S, double *forced, rs_error *err)
{
    if (rq->alpha) {
        if (rq->n_alpha != S)
            return rs_fail(err,
                           "%s has %d value%s: the sentence has %d token%s and </s>, so "
                           "%d values, one a source position",
                           named(rq, NAME_ALPHA), rq->n_alpha, rq->n_alpha == 1 ? "" : "s", S - 1,
                           S == 2 ? "" : "s", S);
        double sum = 0.0;
        for (int j = 0; j < S; j++) {
            if (!isfinite(rq->alpha[j]) || rq->alpha[j] < 0)
                return rs_fail(err, "%s: value %d is %g; weights are 0 or more",
                               named(rq, NAME_ALPHA), j + 1, rq->alpha[j]);
            sum += forced[j] = rq->alpha[j];
        }
        if (fabs(sum - 1.0) > 1e-6 * S)
            return rs_fail(err, "%s sums to %.9g; attention weights sum to 1",
                           named(rq, NAME_ALPHA), sum);
        return 0;
    }
    if (rq->attend < 1 || rq->attend > S)
        return rs_fail(err, "%s %d: the sentence has %d token%s and </s>, so positions 1 to %d",
                       named(rq, NAME_ATTEND), rq->attend, S - 1, S == 2 ? "" : "s", S);
    forced[rq->attend - 1] = 1.0;
    return 0;
}

const char **rs_explain_target_tokens(const rs_model *model, const int *ids, int count,
                                      rs_error *err)
{
    const char **tokens = rs_calloc((size_t)count + 1, sizeof *tokens, err);
    for (int k = 0; tokens && k < count; k++)
        tokens[k] = ids[k] >= 0 && ids[k] < model->tgt_vocab.size ? model->tgt_vocab.tokens[ids[k]]
                                                                  : "<unk>";
    return tokens;
}

/* ids[count] as the detokenized text of the target side. */
static int ids_text(const rs_model *model, const rs_codec *codec, const int *ids, int count,
                    char **text, rs_error *err)
{
    const char **tokens = rs_explain_target_tokens(model, ids, count, err);
    if (!tokens)
        return -1;
    const int status = rs_codec_text(codec, RS_SIDE_TGT, tokens, count, text, err);
    free(tokens);
    return status;
}

/* After the pushed step i (the decoder's step i done, not selected): its
 * state becomes the pushed s_i, y_i the pushed step's greedy word, and
 * greedy decoding goes on from there to </s> or rs_output_limit, as
 * rs_greedy; new_ids receives y_1 … (</s> not included). */
static int decode_on(rs_explained_step *x, rs_decoder *dec, int src_count, rs_error *err)
{
    const int limit = rs_output_limit(0, src_count);
    if (!(x->new_ids = rs_calloc((size_t)limit + 1, sizeof *x->new_ids, err)))
        return -1;
    for (int k = 1; k < x->step && k <= limit; k++)
        x->new_ids[x->new_count++] = x->prefix[k];
    /* y_i: as greedy_word, over the pushed step's log-probabilities */
    int y = RS_EOS;
    for (int v = RS_UNK; v < x->V; v++)
        if (v != RS_BOS && v != RS_EOS && x->logp[v] > x->logp[y])
            y = v;
    float *next = dec->member[0].next_state;
    for (int u = 0; u < x->n; u++)
        next[u] = (float)x->s[u];
    const size_t S = (size_t)x->S;
    for (size_t j = 0; j < S; j++) /* the pushed step's row: α_i as given */
        x->new_alpha[(size_t)x->new_count * S + j] = (float)x->alpha[j];
    rs_decoder_select(dec, NULL, 1);
    while (y != RS_EOS && x->new_count < limit) {
        x->new_ids[x->new_count++] = y;
        rs_decoder_step(dec, &y);
        memcpy(x->new_alpha + (size_t)x->new_count * S, dec->alpha, sizeof(float) * S);
        rs_decoder_select(dec, NULL, 1);
        y = greedy_word(dec->logits, x->V);
    }
    return 0;
}

/* The request's own errors, before any text is read. */
static int check_request(const rs_model_config *cfg, const rs_explain_step_request *rq,
                         rs_error *err)
{
    if (cfg->attention == RS_ATT_NONE)
        return rs_fail(err, RS_NO_ALIGNMENT_WHY);
    if (rq->step < 1)
        return rs_fail(err, "%s %d: steps count from 1 (step i reads y_{i-1}, y_0 = <s>)",
                       named(rq, NAME_STEP), rq->step);
    const int push = rq->has_attend || rq->alpha != NULL;
    if (push && rq->target)
        return rs_fail(err, "%s continues the greedy translation: leave out %s",
                       named(rq, rq->alpha ? NAME_ALPHA : NAME_ATTEND), named(rq, NAME_TARGET));
    if (rq->has_attend && rq->alpha)
        return rs_fail(err, "%s and %s exclude each other: one α a push", named(rq, NAME_ATTEND),
                       named(rq, NAME_ALPHA));
    return 0;
}

/* The sentence's ids and tokens: 1 … RS_MAX_SRC_LEN of them. */
static int source_of(const rs_model *model, const rs_codec *codec, const char *raw, id_list *src,
                     rs_tokens *words, rs_error *err)
{
    if (text_ids(model, codec, RS_SIDE_SRC, raw, &src->ids, &src->count, words, err))
        return -1;
    /* translate gives an empty line for it, not a decoding to explain */
    if (src->count == 0)
        return rs_fail(err, "the sentence has no tokens: an empty line translates to an empty "
                            "line, with no step to explain");
    if (src->count > RS_MAX_SRC_LEN)
        return rs_fail(err, "the sentence has %d tokens; explain takes at most %d", src->count,
                       RS_MAX_SRC_LEN);
    return 0;
}

/* x's shapes and buffers, and step i's inputs: the source with </s> (ids
 * and words), the prefix y_0 = <s>, y_1 … y_{i-1}, and the word step i emits
 * along tgt (</s> past its end). */
static int step_inputs(rs_explained_step *x, const rs_model *model,
                       const rs_explain_step_request *rq, const id_list *src,
                       const rs_tokens *words, const id_list *tgt, rs_error *err)
{
    const rs_model_config *cfg = &model->cfg;
    x->kind = cfg->attention;
    x->S = src->count + 1, x->n = cfg->hidden, x->m = cfg->emb, x->l = cfg->maxout;
    x->a = x->kind == RS_ATT_ADDITIVE ? cfg->att : 0;
    x->ka = rs_attention_key_size(x->kind, cfg->hidden, cfg->att);
    x->V = model->tgt_vocab.size;
    x->step = rq->step;
    if (alloc_all(x, err) || !(x->src_ids = rs_calloc((size_t)x->S, sizeof *x->src_ids, err)))
        return -1;
    memcpy(x->src_ids, src->ids, sizeof *src->ids * (size_t)src->count);
    x->src_ids[src->count] = RS_EOS;
    if (!(x->src_words = rs_calloc((size_t)x->S, sizeof *x->src_words, err)))
        return -1;
    for (int j = 0; j < x->S; j++)
        if (!(x->src_words[j] = strdup(j < src->count ? words->tokens[j] : "</s>")))
            return rs_fail(err, "out of memory");
    x->prefix[0] = RS_BOS;
    for (int k = 1; k < x->step; k++)
        x->prefix[k] = tgt->ids[k - 1];
    x->next = x->step <= tgt->count ? tgt->ids[x->step - 1] : RS_EOS;
    return 0;
}

/* A push: room for the softmax's α and the new alignment in x, and the
 * pushed α_i into *forced [S] (the caller frees it). */
static int push_of(rs_explained_step *x, const rs_explain_step_request *rq, double **forced,
                   rs_error *err)
{
    x->pushed = 1;
    const size_t rows = (size_t)rs_output_limit(0, x->S - 1) + 1;
    if (!(x->softmax_alpha = rs_calloc((size_t)x->S, sizeof(double), err)) ||
        !(x->new_alpha = rs_calloc(rows * (size_t)x->S, sizeof(float), err)) ||
        !(*forced = rs_calloc((size_t)x->S, sizeof(double), err)))
        return -1;
    return push_alpha(rq, x->S, *forced, err);
}

/* The model's own float32 steps 1 … i−1 along the prefix, then step i:
 * s_{i-1} and h in double for work_step, and the model's α_i, s_i and
 * greedy word to compare with. */
static int model_steps(rs_explained_step *x, rs_decoder *dec, const id_list *src, rs_error *err)
{
    const int *src_ids = src->ids;
    if (rs_decoder_start(dec, 1, &src_ids, &src->count, 1, err))
        return -1;
    for (int k = 0; k < x->step; k++) {
        if (k == x->step - 1)
            for (int u = 0; u < x->n; u++)
                x->s_prev[u] = dec->member[0].state[u];
        rs_decoder_step(dec, &x->prefix[k]);
        if (k < x->step - 1) {
            if (x->new_alpha) /* a push's alignment: the model's rows along the prefix */
                memcpy(x->new_alpha + (size_t)k * x->S, dec->alpha, sizeof(float) * (size_t)x->S);
            rs_decoder_select(dec, NULL, 1);
        }
    }
    const rs_workspace *ws = &dec->member[0].ws;
    for (size_t k = 0; k < (size_t)x->S * 2 * x->n; k++)
        x->h[k] = ws->annotations[k]; /* [S,B=1,2n] is [S,2n] */
    memcpy(x->model_alpha, dec->alpha, sizeof(float) * (size_t)x->S);
    memcpy(x->model_state, dec->member[0].next_state, sizeof(float) * (size_t)x->n);
    x->model_best = greedy_word(dec->logits, x->V);
    return 0;
}

int rs_explain_step_compute(rs_explained_step *x, const rs_ready *ready, const rs_codec *codec,
                            const rs_explain_step_request *rq, rs_error *err)
{
    const rs_model *model = ready->model;
    memset(x, 0, sizeof *x);
    if (check_request(&model->cfg, rq, err))
        return -1;
    const int push = rq->has_attend || rq->alpha != NULL;
    id_list src = {0}, tgt = {0};
    int status = -1, dec_made = 0;
    rs_tokens words = {0};
    rs_decoder dec;
    double *forced = NULL;
    if (source_of(model, codec, rq->source, &src, &words, err))
        goto done;
    const rs_ready *const models[1] = {ready};
    if (rs_decoder_init(&dec, models, 1, 1, 1, src.count + 1, err))
        goto done;
    dec_made = 1;
    if (prefix_of(&dec, model, codec, rq, &src, &tgt, err))
        goto done;
    /* steps 1 … T emit y_1 … y_T, step T + 1 emits </s> */
    if (rq->step > tgt.count + 1) {
        rs_fail(err, "%s %d: the %s has %d token%s and </s>, so steps 1 to %d",
                named(rq, NAME_STEP), rq->step, rq->target ? "target" : "greedy translation",
                tgt.count, tgt.count == 1 ? "" : "s", tgt.count + 1);
        goto done;
    }
    if (step_inputs(x, model, rq, &src, &words, &tgt, err) ||
        (push && push_of(x, rq, &forced, err)) || model_steps(x, &dec, &src, err))
        goto done;
    work_step(x, model, forced);
    if (push) {
        x->old_ids = tgt.ids, x->old_count = tgt.count, x->old_alpha = tgt.alpha;
        tgt.ids = NULL, tgt.alpha = NULL;
        if (decode_on(x, &dec, src.count, err) ||
            ids_text(model, codec, x->old_ids, x->old_count, &x->old_text, err) ||
            ids_text(model, codec, x->new_ids, x->new_count, &x->new_text, err))
            goto done;
    }
    status = 0;
done:
    free(forced);
    if (dec_made)
        rs_decoder_free(&dec);
    free(src.ids);
    free(tgt.ids);
    free(tgt.alpha);
    rs_tokens_free(&words);
    if (status)
        rs_explained_step_free(x);
    return status;
}
