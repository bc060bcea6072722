/* POST /api/push: a teacher's "what if step i had looked at x_j?" over
 * HTTP. The one road is explain's (eval/explain_step.h): step i's α is put
 * on source position j (or set to the weights given), step i is recomputed
 * from it and greedy decoding goes on; the answer holds the greedy
 * translation before the push and the one after it, each with its
 * alignment (and its picture when asked), as the explorer shows them side
 * by side. The alignments are in the model's tokens (SentencePiece pieces
 * are not merged into words: the push names a token position). */
#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"
#include "eval/explain_step.h"
#include "serve/server.h"

/* A list of n numbers. */
static void write_numbers(FILE *out, const double *v, int n)
{
    putc('[', out);
    for (int k = 0; k < n; k++) {
        if (k)
            putc(',', out);
        rs_serve_json_number(out, v[k]);
    }
    putc(']', out);
}

/* One side of the answer: the greedy translation before the push or after it. */
typedef struct {
    const char *name; /* "before" or "after" */
    int id;           /* the alignment record's id */
    const int *ids;   /* [count] target ids, </s> not included */
    int count;
    const char *text;
    const float *alpha; /* [(count + 1) × S] */
} side;

/* One side's member: the translation, its tokens and its alignment (rows:
 * the tokens then </s>); 0, or -1 with err when it would pass the
 * answer's cap. */
static int write_side(FILE *out, const rs_model *model, const rs_explained_step *x, const side *sd,
                      const alignment_answer *base, rs_error *err)
{
    const int count = sd->count;
    const char **tokens = rs_explain_target_tokens(model, sd->ids, count, err);
    if (!tokens)
        return -1;
    fprintf(out, ",\"%s\":{\"translation\":", sd->name);
    rs_json_write_string(out, sd->text);
    fputs(",\"tokens\":", out);
    rs_json_write_strings(out, tokens, count);
    putc(',', out);
    alignment_answer aa = *base;
    aa.id = sd->id;
    aa.title = sd->text;
    const int rc = rs_serve_write_alignment(out, tokens, count, (const char *const *)x->src_words,
                                            x->S - 1, sd->alpha, &aa, err);
    free(tokens);
    putc('}', out);
    return rc;
}

int rs_serve_push_job(const rs_server *s, const request *rq, FILE *out, rs_error *err, int *status)
{
    const rs_serve_model *sm = &s->models[rq->model];
    const rs_explain_step_request srq = {rq->text,   NULL,      rq->step,    rq->has_attend,
                                         rq->attend, rq->alpha, rq->n_alpha, 1};
    rs_explained_step x;
    rs_error inner;
    /* What explain refuses is the request's to fix: a step past the
     * translation, a position past the sentence, weights that are not α. */
    *status = 400;
    if (rs_explain_step_compute(&x, sm->model, sm->codec, &srq, &inner))
        return rs_fail(err, "model %s: %s", sm->name, inner.msg);
    fputs("{\"model\":", out);
    rs_json_write_string(out, sm->name);
    fputs(",\"text\":", out);
    rs_json_write_string(out, rq->text);
    fprintf(out, ",\"step\":%d,\"attend\":", x.step);
    if (rq->has_attend)
        fprintf(out, "%d", rq->attend);
    else
        fputs("null", out);
    fputs(",\"source_tokens\":", out);
    rs_json_write_strings(out, (const char *const *)x.src_words, x.S - 1);
    fputs(",\"alpha\":", out);
    write_numbers(out, x.alpha, x.S);
    fputs(",\"softmax_alpha\":", out);
    write_numbers(out, x.softmax_alpha, x.S);
    const alignment_answer aa = {0, rq->svg, 0, NULL, s->opt.max_answer};
    *status = 413;
    const side before = {"before", 0, x.old_ids, x.old_count, x.old_text, x.old_alpha};
    const side after = {"after", 1, x.new_ids, x.new_count, x.new_text, x.new_alpha};
    int rc = write_side(out, sm->model->model, &x, &before, &aa, err);
    if (!rc)
        rc = write_side(out, sm->model->model, &x, &after, &aa, err);
    rs_explained_step_free(&x);
    return rc;
}
