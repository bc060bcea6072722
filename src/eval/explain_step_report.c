/* The report of one real decoder step (see explain_step.h): every
 * intermediate of rs_explain_step_compute as text, in the order of
 * docs/model.md (attention, decoder GRU, deep output, softmax), with one
 * entry of each vector worked by hand. Shapes as in explain_step.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/svg.h"
#include "eval/explain_step.h"

typedef struct {
    FILE *f;
    int digits, full;
} out_t;

/* A number at the report's digits, no "-0.000". */
static void num(out_t *o, double x)
{
    char t[64];
    if (fabs(x) >= 1e15 || (x != 0 && fabs(x) < 0.5 * pow(10.0, -o->digits)))
        snprintf(t, sizeof t, "%.*e", o->digits, x);
    else
        snprintf(t, sizeof t, "%.*f", o->digits, x);
    if (t[0] == '-' && strspn(t + 1, "0.") == strlen(t + 1))
        memmove(t, t + 1, strlen(t));
    fputs(t, o->f);
}

/* A number inside a sum or product: negative ones in parentheses. */
static void fac(out_t *o, double x)
{
    if (x < 0 && fabs(x) >= 0.5 * pow(10.0, -o->digits))
        fputs("(", o->f), num(o, x), fputs(")", o->f);
    else
        num(o, x);
}

static double norm(const double *x, int len)
{
    double s = 0.0;
    for (int k = 0; k < len; k++)
        s += x[k] * x[k];
    return sqrt(s);
}

/* A vector: in full when it has at most o->full entries (full < 0: always),
 * else its first four and last two entries, its size and its norm, and the
 * word "abbreviated" so that nobody takes it for the whole. */
static void vec(out_t *o, const char *name, const double *x, int len)
{
    fprintf(o->f, "   %s = (", name);
    const int whole = o->full < 0 || len <= o->full;
    for (int k = 0; k < len; k++) {
        if (!whole && k == 4) {
            fputs(", …", o->f);
            k = len - 2;
        }
        if (k)
            fputs(", ", o->f);
        num(o, x[k]);
    }
    fputs(")", o->f);
    if (!whole) {
        fprintf(o->f, "   [%d entries, abbreviated; norm ", len);
        num(o, norm(x, len));
        fputs("]", o->f);
    }
    fputs("\n", o->f);
}

static const char *word(const rs_vocab *v, int id)
{
    return id >= 0 && id < v->size ? v->tokens[id] : "?";
}

/* s, then spaces to `width` columns as a terminal shows them (a column of
 * de, fr or vi words stays a column: display width, not bytes). */
static void padded(out_t *o, const char *s, int width)
{
    fputs(s, o->f);
    for (int w = rs_display_width(s); w < width; w++)
        fputc(' ', o->f);
}

static void inputs(out_t *o, const rs_explained_step *x, const rs_model *model)
{
    const char *kind = rs_attention_kind_name(x->kind);
    fprintf(o->f,
            "decoder step i = %d of docs/model.md, %s attention; sizes n = %d, m = %d, "
            "%s%d, l = %d, V = %d\n",
            x->step, kind, x->n, x->m, x->kind == RS_ATT_ADDITIVE ? "a = " : "key size ", x->ka,
            x->l, x->V);
    fprintf(o->f,
            "double-precision arithmetic from the model's weights; vectors of more than %d "
            "entries are abbreviated (--all shows them whole); entries count from 0\n",
            o->full < 0 ? 0 : o->full);
    fputs("\nsource x_1 … x_S (position j; align's column j − 1):\n  ", o->f);
    for (int j = 0; j < x->S; j++)
        fprintf(o->f, " x_%d = %s", j + 1, x->src_words[j]);
    fputs("\nprefix y_0 … y_{i−1}:\n  ", o->f);
    for (int k = 0; k < x->step; k++)
        fprintf(o->f, " y_%d = %s", k, word(&model->tgt_vocab, x->prefix[k]));
    fputs("\n\n0. what the model's own code gives (the encoder, then steps 1 … i−1)\n", o->f);
    vec(o, "s_{i−1}", x->s_prev, x->n);
    for (int j = 0; j < x->S; j++) {
        char name[64];
        snprintf(name, sizeof name, "h_%d", j + 1);
        vec(o, name, x->h + (size_t)j * 2 * x->n, 2 * x->n);
    }
}

static void attention(out_t *o, const rs_explained_step *x, const rs_model *model)
{
    char name[96];
    const int S = x->S, ka = x->ka, a = x->a;
    if (x->kind == RS_ATT_ADDITIVE) {
        fputs("\n1. keys and query  key_j = U_a h_j + b_a (once per sentence), W_a s_{i−1}\n",
              o->f);
    } else {
        fprintf(o->f, "\n1. keys  key_j = K h_j; the query is s_{i−1} itself\n");
    }
    for (int j = 0; j < S; j++) {
        snprintf(name, sizeof name, "key_%d", j + 1);
        vec(o, name, x->keys + (size_t)j * ka, ka);
    }
    if (x->kind == RS_ATT_ADDITIVE) {
        vec(o, "W_a s_{i−1}", x->query, a);
        fputs("\n2. scores  φ_ij = tanh(W_a s_{i−1} + key_j),  e_ij = v_a · φ_ij\n", o->f);
        for (int j = 0; j < S; j++) {
            snprintf(name, sizeof name, "φ_i%d", j + 1);
            vec(o, name, x->phi + (size_t)j * a, a);
        }
        fputs("   by hand, entry 0 of φ_i1: tanh(", o->f);
        num(o, x->query[0]);
        fputs(" + ", o->f);
        num(o, x->keys[0]);
        fputs(") = ", o->f);
        num(o, x->phi[0]);
        fputs("\n", o->f);
    } else {
        fprintf(o->f, "\n2. scores  e_ij = s_{i−1} · key_j%s\n",
                x->kind == RS_ATT_SCALED_DOT ? " / sqrt(n)" : "");
    }
    double emax = -INFINITY, sum = 0.0;
    for (int j = 0; j < S; j++)
        emax = x->e[j] > emax ? x->e[j] : emax;
    for (int j = 0; j < S; j++)
        sum += exp(x->e[j] - emax);
    fputs("\n3. weights  α_ij = exp(e_ij − m) / Σ_k exp(e_ik − m),  m = max_j e_ij = ", o->f);
    num(o, emax);
    fputs(",  Σ = ", o->f);
    num(o, sum);
    fputs("\n     j  token          e_ij    exp(e_ij − m)    α_ij    (model's float32 α)\n", o->f);
    double worst = 0.0;
    for (int j = 0; j < S; j++) {
        fprintf(o->f, "   %3d  ", j + 1);
        padded(o, x->src_words[j], 12);
        fputs("  ", o->f);
        num(o, x->e[j]);
        fputs("  ", o->f);
        num(o, exp(x->e[j] - emax));
        fputs("  ", o->f);
        num(o, x->alpha[j]);
        fputs("  (", o->f);
        num(o, x->model_alpha[j]);
        fputs(")\n", o->f);
        const double d = fabs(x->alpha[j] - x->model_alpha[j]);
        worst = d > worst ? d : worst;
    }
    fprintf(o->f, "   largest |α − model's α| = %.3g (float32 rounding)\n", worst);
    fputs("\n4. context  c_i = Σ_j α_ij h_j\n", o->f);
    vec(o, "c_i", x->c, 2 * x->n);
}

static void gru(out_t *o, const rs_explained_step *x, const rs_model *model)
{
    const int n = x->n;
    fprintf(o->f, "\n5. decoder GRU  u_i = [tgt_emb[y_{i−1}] ; c_i],  y_{i−1} = %s\n",
            word(&model->tgt_vocab, x->prefix[x->step - 1]));
    vec(o, "tgt_emb[y_{i−1}]", x->emb, x->m);
    vec(o, "x^z = (W' u_i + b')[0 … n−1]", x->xproj, n);
    vec(o, "x^r = (W' u_i + b')[n … 2n−1]", x->xproj + n, n);
    vec(o, "x^g = (W' u_i + b')[2n … 3n−1]", x->xproj + 2 * n, n);
    vec(o, "U'_z s_{i−1}", x->rec, n);
    vec(o, "U'_r s_{i−1}", x->rec + n, n);
    vec(o, "U'_g (r ⊙ s_{i−1})", x->rec + 2 * n, n);
    vec(o, "z_i = σ(x^z + U'_z s_{i−1})", x->z, n);
    vec(o, "r_i = σ(x^r + U'_r s_{i−1})", x->r, n);
    vec(o, "g_i = tanh(x^g + U'_g (r_i ⊙ s_{i−1}))", x->g, n);
    vec(o, "s_i = (1 − z_i) ⊙ s_{i−1} + z_i ⊙ g_i", x->s, n);
    fputs("   by hand, entry 0: z = σ(", o->f);
    num(o, x->xproj[0]);
    fputs(" + ", o->f);
    fac(o, x->rec[0]);
    fputs(") = ", o->f);
    num(o, x->z[0]);
    fputs(", r = σ(", o->f);
    num(o, x->xproj[n]);
    fputs(" + ", o->f);
    fac(o, x->rec[n]);
    fputs(") = ", o->f);
    num(o, x->r[0]);
    fputs(", g = tanh(", o->f);
    num(o, x->xproj[2 * n]);
    fputs(" + ", o->f);
    fac(o, x->rec[2 * n]);
    fputs(") = ", o->f);
    num(o, x->g[0]);
    fputs(",\n     s_i[0] = (1 − ", o->f);
    num(o, x->z[0]);
    fputs(")·", o->f);
    fac(o, x->s_prev[0]);
    fputs(" + ", o->f);
    num(o, x->z[0]);
    fputs("·", o->f);
    fac(o, x->g[0]);
    fputs(" = ", o->f);
    num(o, x->s[0]);
    double worst = 0.0;
    for (int k = 0; k < n; k++) {
        const double d = fabs(x->s[k] - x->model_state[k]);
        worst = d > worst ? d : worst;
    }
    fprintf(o->f, "\n   largest |s_i − the model's float32 s_i| = %.3g\n", worst);
}

static void readout(out_t *o, const rs_explained_step *x, const rs_model *model, int top)
{
    fputs("\n6. deep output  t̃_i = U_o s_i + V_o tgt_emb[y_{i−1}] + C_o c_i + b_o  (the new "
          "state s_i)\n",
          o->f);
    vec(o, "t̃_i", x->tpre, 2 * x->l);
    fputs("\n7. maxout  t_i[k] = max(t̃_i[2k], t̃_i[2k+1])\n", o->f);
    vec(o, "t_i", x->t, x->l);
    fputs("   by hand, entry 0: max(", o->f);
    num(o, x->tpre[0]);
    fputs(", ", o->f);
    num(o, x->tpre[1]);
    fputs(") = ", o->f);
    num(o, x->t[0]);
    fprintf(o->f,
            "\n\n8. softmax  p(y_i | y_<i, x) = softmax(W_out t_i + b_out), the top %d of %d "
            "words\n",
            top, x->V);
    /* the `top` largest, by selection (top is small) */
    int *best = calloc((size_t)top, sizeof *best);
    int shown = 0;
    for (; best && shown < top && shown < x->V; shown++) {
        int b = -1;
        for (int v = 0; v < x->V; v++) {
            int taken = 0;
            for (int k = 0; k < shown; k++)
                taken |= best[k] == v;
            if (!taken && (b < 0 || x->logp[v] > x->logp[b]))
                b = v;
        }
        best[shown] = b;
        fprintf(o->f, "   %2d. ", shown + 1);
        padded(o, word(&model->tgt_vocab, b), 16);
        fputs(" p = ", o->f);
        num(o, exp(x->logp[b]));
        fputs("   log p = ", o->f);
        num(o, x->logp[b]);
        fputs("\n", o->f);
    }
    free(best);
    fprintf(o->f, "   greedy search takes: %s; ", word(&model->tgt_vocab, x->model_best));
    fprintf(o->f, "the prefix's y_%d: %s (p = ", x->step, word(&model->tgt_vocab, x->next));
    num(o, exp(x->logp[x->next]));
    fputs(")\n", o->f);
}

int rs_explain_step_report(const rs_explained_step *x, const rs_model *model, int digits, int full,
                           int top, char **text, rs_error *err)
{
    *text = NULL;
    if (digits < 0 || digits > 17)
        return rs_fail(err, "digits must be 0 to 17, not %d", digits);
    size_t len;
    out_t o = {open_memstream(text, &len), digits, full};
    if (!o.f)
        return rs_fail(err, "out of memory writing the explanation");
    inputs(&o, x, model);
    attention(&o, x, model);
    gru(&o, x, model);
    readout(&o, x, model, top < 1 ? 1 : top);
    if (fclose(o.f)) {
        free(*text);
        *text = NULL;
        return rs_fail(err, "out of memory writing the explanation");
    }
    return 0;
}
