/* The workspace of network.h: its table (RS_WORKSPACE_TABLE) carved into
 * one arena, for training (every buffer, B sentences of T steps) or for
 * translation (the encoder's buffers and one decoder step's), so that
 * nothing is allocated per batch. Apart from network.c, which computes in
 * the buffers and never sizes them. */
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/linear.h"
#include "nn/network.h"

static float *take(float *base, size_t *offset, size_t count)
{
    float *p = base ? base + *offset : NULL;
    *offset += count;
    return p;
}

/* The table's `use` column as values. */
enum { RS_WS_USE_ENC, RS_WS_USE_STEP, RS_WS_USE_TRAIN };

/* Whether a workspace of ws's kind has a buffer of this use, and the B and T
 * of its count: training's have one B and T; translation's encoder buffers
 * B sentences and T = 0, its step's B rows and T = 1. */
static int dims_of(const rs_workspace *ws, int use, size_t *B, size_t *T)
{
    const int training = ws->kind == RS_WS_TRAINING;
    *B = (size_t)(use == RS_WS_USE_ENC ? ws->max_B : ws->max_rows);
    *T = (size_t)(use == RS_WS_USE_ENC || training ? ws->max_T : 1);
    return training || use != RS_WS_USE_TRAIN;
}

/* Assigns every buffer of RS_WORKSPACE_TABLE that ws's kind has its place in
 * the arena (the others NULL), and the names of RS_WORKSPACE_SHARED theirs
 * (base NULL: only counts). */
static size_t carve(rs_workspace *ws, float *base, const rs_model_config *c, int ka_)
{
    const size_t S = (size_t)ws->max_S;
    const size_t m = (size_t)c->emb, n = (size_t)c->hidden, l = (size_t)c->maxout;
    const size_t V = (size_t)c->tgt_vocab, ka = (size_t)ka_;
    size_t at = 0;
#define RS_WS_TAKE(field, count, use, doc)                                                         \
    {                                                                                              \
        size_t B, T;                                                                               \
        const int has = dims_of(ws, RS_WS_USE_##use, &B, &T);                                      \
        const size_t R = T * B;                                                                    \
        (void)R;                                                                                   \
        ws->field = has ? take(base, &at, count) : NULL;                                           \
    }
    RS_WORKSPACE_TABLE(RS_WS_TAKE)
#undef RS_WS_TAKE
#define RS_WS_SHARE(field, of, doc) ws->field = ws->of;
    RS_WORKSPACE_SHARED(RS_WS_SHARE)
#undef RS_WS_SHARE
    return at;
}

/* The message of a workspace of `bytes` that could not be had: its kind
 * (teacher-forced: training's, and score's and forced alignment's forward
 * pass) and sizes. */
static void no_room(const rs_workspace *ws, double bytes, rs_error *err)
{
    if (ws->kind == RS_WS_TRAINING)
        rs_fail_memory(err, bytes,
                       "the teacher-forced workspace for %d pairs of up to %d source and %d "
                       "target positions",
                       ws->max_B, ws->max_S, ws->max_T);
    else
        rs_fail_memory(err, bytes,
                       "the translation workspace for %d sentences, %d rows and %d source "
                       "positions",
                       ws->max_B, ws->max_rows, ws->max_S);
}

/* The arena and the maxout argmax of a workspace whose kind and sizes are set. */
static int workspace_alloc(rs_workspace *ws, const rs_model *model, rs_error *err)
{
    const rs_model_config *c = &model->cfg;
    int ka = rs_attention_key_size(model->cfg.attention, c->hidden, c->att);
    size_t total = carve(ws, NULL, c, ka);
    const size_t rows =
        ws->kind == RS_WS_TRAINING ? (size_t)ws->max_T * ws->max_B : (size_t)ws->max_rows;
    ws->arena = rs_calloc(total, sizeof(float), err);
    ws->which = rs_calloc(rows * c->maxout, 1, err);
    if (!ws->arena || !ws->which) {
        no_room(ws, (double)total * sizeof(float) + (double)rows * c->maxout, err);
        rs_workspace_free(ws);
        return -1;
    }
    carve(ws, ws->arena, c, ka);
    return 0;
}

int rs_workspace_alloc(rs_workspace *ws, const rs_model *model, int max_B, int max_S, int max_T,
                       rs_error *err)
{
    memset(ws, 0, sizeof *ws);
    ws->kind = RS_WS_TRAINING;
    ws->max_B = max_B;
    ws->max_S = max_S;
    ws->max_T = max_T;
    ws->max_rows = max_B;
    return workspace_alloc(ws, model, err);
}

int rs_workspace_alloc_translation(rs_workspace *ws, const rs_model *model, int max_B, int max_rows,
                                   int max_S, rs_error *err)
{
    memset(ws, 0, sizeof *ws);
    ws->kind = RS_WS_TRANSLATION;
    ws->max_B = max_B;
    ws->max_S = max_S;
    ws->max_rows = max_rows;
    return workspace_alloc(ws, model, err);
}

void rs_workspace_free(rs_workspace *ws)
{
    free(ws->arena);
    free(ws->which);
    memset(ws, 0, sizeof *ws);
}

double rs_workspace_translation_floats(const rs_model *model, int max_B, int max_rows, int max_S)
{
    rs_workspace ws = {
        .kind = RS_WS_TRANSLATION, .max_B = max_B, .max_S = max_S, .max_rows = max_rows};
    const rs_model_config *c = &model->cfg;
    return (double)carve(&ws, NULL, c, rs_attention_key_size(c->attention, c->hidden, c->att));
}
