/* The workspace (src/nn/workspace.c): the buffers of network.h's table carved
 * from one arena as its comment says. Training: every buffer, B sentences,
 * T steps. Translation: the encoder's (ENC) for B sentences and T = 0, one
 * decoder step's (STEP) for `rows` rows and T = 1, and none of TRAIN's. Each
 * buffer holds the floats its count gives, no two overlap, they fill the arena
 * (rs_workspace_translation_floats is its size, without wrapping at sizes
 * past 2^32 floats), the shared names point at their buffer, and a workspace
 * larger than memory is refused with a message instead of a crash. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/attention.h"
#include "nn/network.h"
#include "testlimit.h"
#include "testskip.h"
#include "tinymodel.h"

enum { MAX_BUFFERS = 64 };

typedef struct {
    const char *name;
    float *at;
    size_t count; /* 0: the workspace's kind has no such buffer */
} buffer;

/* B and T of a buffer of `use` in ws's kind, as network.h's table comment
 * gives them; 0 when that kind has no such buffer. */
static int dims(const rs_workspace *ws, const char *use, size_t *B, size_t *T)
{
    if (ws->kind == RS_WS_TRAINING) {
        *B = (size_t)ws->max_B;
        *T = (size_t)ws->max_T;
        return 1;
    }
    if (!strcmp(use, "ENC")) {
        *B = (size_t)ws->max_B;
        *T = 0;
        return 1;
    }
    *B = (size_t)ws->max_rows;
    *T = 1;
    return !strcmp(use, "STEP");
}

/* Every buffer of the table with the count it should have in ws; their number. */
static int buffers_of(const rs_workspace *ws, const rs_model *model, buffer *out)
{
    const rs_model_config *c = &model->cfg;
    const size_t S = (size_t)ws->max_S, m = (size_t)c->emb, n = (size_t)c->hidden;
    const size_t l = (size_t)c->maxout, V = (size_t)c->tgt_vocab;
    const size_t ka = (size_t)rs_attention_key_size(c->attention, c->hidden, c->att);
    int k = 0;
#define BUFFER(field, count, use, doc)                                                             \
    {                                                                                              \
        size_t B, T;                                                                               \
        const int has = dims(ws, #use, &B, &T);                                                    \
        const size_t R = T * B;                                                                    \
        (void)R;                                                                                   \
        ck_assert_int_lt(k, MAX_BUFFERS);                                                          \
        out[k++] = (buffer){#field, ws->field, has ? (size_t)(count) : 0};                         \
    }
    RS_WORKSPACE_TABLE(BUFFER)
#undef BUFFER
    return k;
}

static int by_address(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const buffer *)a)->at, y = (uintptr_t)((const buffer *)b)->at;
    return x < y ? -1 : x > y;
}

/* The buffers ws has are where their counts fit, side by side in the arena
 * from its first float, each written whole without touching another; those
 * it lacks are NULL. Returns the floats they take. */
static size_t check_carving(const rs_workspace *ws, const rs_model *model)
{
    buffer all[MAX_BUFFERS], had[MAX_BUFFERS];
    const int count = buffers_of(ws, model, all);
    int k = 0;
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        if (!all[i].count) {
            ck_assert_msg(all[i].at == NULL, "%s is not this workspace's, yet set", all[i].name);
            continue;
        }
        ck_assert_msg(all[i].at != NULL, "%s missing", all[i].name);
        had[k++] = all[i];
        total += all[i].count;
    }
    qsort(had, (size_t)k, sizeof *had, by_address);
    const float *next = ws->arena;
    for (int i = 0; i < k; i++) {
        ck_assert_msg(had[i].at == next, "%s at float %td of the arena, expected %td", had[i].name,
                      had[i].at - ws->arena, next - ws->arena);
        next = had[i].at + had[i].count;
    }
    /* Each buffer written whole with its own number, then read back: no two
     * share a float (and under ASan, none runs past the arena). */
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < had[i].count; j++)
            had[i].at[j] = (float)i;
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < had[i].count; j++)
            ck_assert_msg(had[i].at[j] == (float)i, "%s[%zu] overwritten", had[i].name, j);
    return total;
}

START_TEST(training_carves_every_buffer_for_b_sentences_of_t_steps)
{
    for (int k = 0; k < TINY_KINDS; k++) {
        rs_model model;
        tiny_model_of_kind(&model, tiny_kinds[k]);
        rs_workspace ws;
        rs_error err = {{0}};
        ck_assert_msg(!rs_workspace_alloc(&ws, &model, 3, 7, 5, &err), "%s", err.msg);
        ck_assert_int_eq(ws.kind, RS_WS_TRAINING);
        check_carving(&ws, &model);
        /* A name of RS_WORKSPACE_SHARED is its buffer's floats. */
        ck_assert_ptr_eq(ws.probs, ws.logits);
        ck_assert_ptr_eq(ws.d_logits, ws.logits);
        ck_assert_ptr_nonnull(ws.which);
        rs_workspace_free(&ws);
        ck_assert_ptr_null(ws.arena);
        ck_assert_ptr_null(ws.which);
        ck_assert_ptr_null(ws.logits);
        rs_model_free(&model);
    }
}
END_TEST

START_TEST(translation_carves_the_encoder_and_one_step)
{
    for (int k = 0; k < TINY_KINDS; k++) {
        rs_model model;
        tiny_model_of_kind(&model, tiny_kinds[k]);
        rs_workspace ws;
        rs_error err = {{0}};
        /* 4 sentences of up to 9 positions, a beam of 3: 12 rows a step. */
        ck_assert_msg(!rs_workspace_alloc_translation(&ws, &model, 4, 12, 9, &err), "%s", err.msg);
        ck_assert_int_eq(ws.kind, RS_WS_TRANSLATION);
        const size_t total = check_carving(&ws, &model);
        /* The figure messages give is the arena's size. */
        ck_assert_double_eq(rs_workspace_translation_floats(&model, 4, 12, 9), (double)total);
        /* dec_states holds s_0 only: T = 0. */
        ck_assert_ptr_eq(ws.dec_states + 4 * model.cfg.hidden,
                         ws.dec_states + total - (size_t)(ws.dec_states - ws.arena) -
                             (total - (size_t)(ws.dec_states - ws.arena)) +
                             4 * (size_t)model.cfg.hidden);
        /* TRAIN's buffers and the names that share them are not translation's. */
        ck_assert_ptr_null(ws.logits);
        ck_assert_ptr_null(ws.probs);
        ck_assert_ptr_null(ws.d_logits);
        rs_workspace_free(&ws);
        ck_assert_ptr_null(ws.arena);
        rs_model_free(&model);
    }
}
END_TEST

/* The arena's size at sizes no one allocates, against the table summed here
 * in double: past 2^32 floats it does not wrap around (the message that
 * refuses a translation batch quotes it). */
START_TEST(translation_floats_do_not_wrap)
{
    rs_model model;
    tiny_model_of_kind(&model, RS_ATT_ADDITIVE);
    const int B = 100000, rows = 300000, S = 100000;
    rs_workspace ws = {.kind = RS_WS_TRANSLATION, .max_B = B, .max_S = S, .max_rows = rows};
    buffer all[MAX_BUFFERS];
    const int count = buffers_of(&ws, &model, all);
    double want = 0;
    for (int i = 0; i < count; i++)
        want += (double)all[i].count;
    ck_assert_double_gt(want, 4294967296.0); /* att_hidden alone, rows·S·a, is 1.8e11 */
    ck_assert_double_eq(rs_workspace_translation_floats(&model, B, rows, S), want);
    rs_model_free(&model);
}
END_TEST

/* A training workspace of terabytes (att_hidden alone, R·S·a floats, is
 * 2.4 TB here), in a child allowed 64 MB more than it has: -1 and a message saying memory ran out, the workspace left empty.
 * Skipped under AddressSanitizer, which aborts on a failed allocation
 * instead of returning NULL. */
START_TEST(a_workspace_larger_than_memory_is_refused)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("workspace: the out-of-memory test under AddressSanitizer (it aborts on a failed "
              "allocation)");
#else
    rs_model model;
    tiny_model_of_kind(&model, RS_ATT_ADDITIVE);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = testlimit_fork((size_t)64 << 20);
    if (pid == 0) {
        rs_workspace ws;
        rs_error err = {{0}};
        const int rc = rs_workspace_alloc(&ws, &model, 100000, 1000, 1000, &err);
        if (write(fds[1], err.msg, strlen(err.msg) + 1) < 0)
            _exit(5);
        _exit(rc == -1 && ws.arena == NULL && ws.which == NULL ? 0 : 6);
    }
    close(fds[1]);
    char msg[1024] = "";
    const ssize_t got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    const int status = testlimit_wait(pid);
    ck_assert_msg(status == 0, "child status %d (6: allocated, or not left empty)", status);
    ck_assert_int_gt(got, 0);
    /* what could not be had, and how big */
    ck_assert_msg(strstr(msg,
                         "out of memory allocating the teacher-forced workspace for 100000 pairs "
                         "of up to 1000 source and 1000 target positions (") &&
                      strstr(msg, " TiB)"),
                  "%s", msg);
    rs_model_free(&model);
#endif
}
END_TEST

Suite *workspace_suite(void)
{
    Suite *s = suite_create("workspace");
    TCase *tc = tcase_create("carving");
    tcase_add_test(tc, training_carves_every_buffer_for_b_sentences_of_t_steps);
    tcase_add_test(tc, translation_carves_the_encoder_and_one_step);
    tcase_add_test(tc, translation_floats_do_not_wrap);
    tcase_add_test(tc, a_workspace_larger_than_memory_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
