/* POST /api/push (serve/push.c): the attention of step i put on source
 * position j, greedy decoding on from there, over HTTP. The answer is
 * explain's (eval/explain_step.c, the one road): the same translations
 * before and after the push, the pushed row α = 1 on j in the alignment
 * after it, the rows of each a token's and </s>'s; and everything the
 * request carries is checked (the step, the position and the weights
 * against the sentence, the JSON, its members, the length and the body),
 * with the guards of every other API request (method, content type,
 * origin). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "eval/explain_step.h"
#include "serve/serve.h"
#include "serveclient.h"

/* The members of an answer's "before" or "after": the translation and the
 * alignment's matrix, checked to have a row per token and one for </s>. */
static const rs_json *matrix_of(const rs_json *side, int S)
{
    const rs_json *tokens = rs_json_get(side, "tokens");
    const rs_json *al = rs_json_get(rs_json_get(side, "alignment"), "alignment");
    ck_assert(tokens && tokens->type == RS_JSON_ARRAY && al && al->type == RS_JSON_ARRAY);
    ck_assert_uint_eq(al->count, tokens->count + 1);
    for (size_t i = 0; i < al->count; i++)
        ck_assert_uint_eq(item(al, i)->count, (size_t)S);
    ck_assert_ptr_nonnull(strstr(str(side, "svg"), "<svg"));
    return al;
}

START_TEST(a_push_answers_what_explain_computes)
{
    rs_server *s = start(1, 4, 10);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[512];
    rs_error err;
    /* steps 1, 2 and the last (</s>'s); the suite's tiny model repeats one
     * word whatever it looks at, so that a push changes the translation is
     * eval/test_explain_push.c's to show, on a model trained for it */
    rs_explained_step first;
    const rs_explain_step_request one = {sentence, NULL, 1, 1, 1, NULL, 0, 1};
    ck_assert_msg(!rs_explain_step_compute(&first, &model_ready, &codec, &one, &err), "%s",
                  err.msg);
    const int which[3] = {1, 2, first.old_count + 1};
    rs_explained_step_free(&first);
    for (int w = 0; w < 3; w++)
        for (int j = 1, step = which[w]; j <= 7; j++) { /* six words and </s> */
            snprintf(body, sizeof body,
                     "{\"text\": \"%s\", \"step\": %d, \"attend\": %d, \"svg\": true}", sentence,
                     step, j);
            request(port, "POST", "/api/push", body, a);
            ck_assert_msg(a->status == 200, "step %d, j %d: %.400s", step, j, a->text);
            rs_json *root = json_of(a);
            const rs_explain_step_request rq = {sentence, NULL, step, 1, j, NULL, 0, 1};
            rs_explained_step x;
            ck_assert_msg(!rs_explain_step_compute(&x, &model_ready, &codec, &rq, &err), "%s",
                          err.msg);
            ck_assert_int_eq(x.S, 7);
            const rs_json *before = rs_json_get(root, "before"),
                          *after = rs_json_get(root, "after");
            ck_assert_str_eq(str(before, "translation"), x.old_text);
            ck_assert_str_eq(str(after, "translation"), x.new_text);
            matrix_of(before, x.S);
            const rs_json *al = matrix_of(after, x.S);
            ck_assert_uint_eq(al->count, (size_t)x.new_count + 1);
            /* the pushed row: 1 on j, 0 elsewhere; the row before it the model's */
            for (int k = 0; k < x.S; k++)
                ck_assert_double_eq(item(item(al, (size_t)step - 1), (size_t)k)->number,
                                    k == j - 1 ? 1.0 : 0.0);
            if (step > 1)
                for (int k = 0; k < x.S; k++)
                    ck_assert_double_eq_tol(
                        item(item(al, 0), (size_t)k)->number,
                        item(item(matrix_of(before, x.S), 0), (size_t)k)->number, 1e-7);
            ck_assert_int_eq((int)num(root, "step"), step);
            ck_assert_int_eq((int)num(root, "attend"), j);
            ck_assert_uint_eq(rs_json_get(root, "source_tokens")->count, 6);
            rs_explained_step_free(&x);
            rs_json_free(root);
        }
    /* The greedy translation before the push is translate's with beam 1. */
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 1}", sentence);
    request(port, "POST", "/api/translate", body, a);
    rs_json *t = json_of(a);
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"step\": 1, \"alpha\": [0,0,0,0,0,0.5,0.5]}",
             sentence);
    request(port, "POST", "/api/push", body, &answers[1]);
    rs_json *p = json_of(&answers[1]);
    ck_assert_str_eq(str(rs_json_get(p, "before"), "translation"), str(t, "translation"));
    ck_assert(rs_json_get(p, "attend")->type == RS_JSON_NULL);
    ck_assert_double_eq(item(rs_json_get(p, "alpha"), 6)->number, 0.5);
    rs_json_free(t);
    rs_json_free(p);
    rs_server_stop(s);
}
END_TEST

START_TEST(a_push_is_checked_with_clear_refusals)
{
    rs_server *s = start(1, 4, 10);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[1024];
    const struct {
        const char *members; /* after "text" */
        int status;
        const char *words;
    } bad[] = {
        {"\"step\": 0, \"attend\": 1", 400, "'step' must be an integer from 1 to 511"},
        {"\"step\": 512, \"attend\": 1", 400, "'step' must be an integer from 1 to 511"},
        {"\"step\": 60, \"attend\": 1", 400, "'step' 60: the greedy translation has"},
        {"\"step\": 1.5, \"attend\": 1", 400, "'step' must be an integer"},
        {"\"step\": \"1\", \"attend\": 1", 400, "'step' must be an integer"},
        {"\"attend\": 1", 400, "'step' is missing"},
        {"\"step\": 1, \"attend\": 0", 400, "'attend' must be an integer from 1 to 251"},
        {"\"step\": 1, \"attend\": 8", 400,
         "'attend' 8: the sentence has 6 tokens and </s>, so positions 1 to 7"},
        {"\"step\": 1", 400, "give 'attend'"},
        {"\"step\": 1, \"attend\": 1, \"alpha\": [1,0,0,0,0,0,0]", 400, "give 'attend'"},
        {"\"step\": 1, \"alpha\": [1,0]", 400, "'alpha' has 2 values: the sentence has 6 tokens"},
        {"\"step\": 1, \"alpha\": [0.5,0.6,0,0,0,0,0]", 400, "'alpha' sums to 1.1"},
        {"\"step\": 1, \"alpha\": [-1,2,0,0,0,0,0]", 400, "'alpha': value 1 is -1"},
        {"\"step\": 1, \"alpha\": [1,\"0\"]", 400, "'alpha'[1] must be a number, not string"},
        {"\"step\": 1, \"alpha\": []", 400, "'alpha' must be a list of 1 to 251 numbers"},
        {"\"step\": 1, \"alpha\": 1", 400, "'alpha' must be a list"},
        {"\"step\": 1, \"attend\": 1, \"beam\": 2", 400, "unknown member 'beam'"},
        {"\"step\": 1, \"attend\": 1, \"model\": \"nope\"", 404, "no model named 'nope'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(body, sizeof body, "{\"text\": \"%s\", %s}", sentence, bad[k].members);
        request(port, "POST", "/api/push", body, a);
        expect_error(a, bad[k].status, bad[k].words, bad[k].members);
    }
    request(port, "POST", "/api/push", "{\"text\": \"the tall", a);
    expect_error(a, 400, "the body is not JSON", "a cut body");
    request(port, "POST", "/api/push", "", a);
    expect_error(a, 400, "the body is empty", "no body");
    request(port, "POST", "/api/push", "[1]", a);
    expect_error(a, 400, "a JSON object", "a list");
    request(port, "POST", "/api/push", "{\"text\": \"  \", \"step\": 1, \"attend\": 1}", a);
    expect_error(a, 400, "'text' is empty", "a blank sentence");
    /* the sentence's length (200 characters here) and the body's (4 KiB) */
    static char longer[8192];
    int n = snprintf(longer, sizeof longer, "{\"text\": \"");
    for (int k = 0; k < 60; k++)
        n += snprintf(longer + n, sizeof longer - (size_t)n, "abc ");
    snprintf(longer + n, sizeof longer - (size_t)n, "\", \"step\": 1, \"attend\": 1}");
    request(port, "POST", "/api/push", longer, a);
    expect_error(a, 413, "'text' has 240 characters; the limit is 200", "a long sentence");
    n = snprintf(longer, sizeof longer, "{\"step\": 1, \"attend\": 1, \"text\": \"a\", \"x\": \"");
    memset(longer + n, 'x', 5000);
    snprintf(longer + n + 5000, sizeof longer - (size_t)n - 5000, "\"}");
    request(port, "POST", "/api/push", longer, a);
    expect_error(a, 413, "the body is longer than 4096 bytes", "a large body");
    /* the guards of every API request */
    request(port, "GET", "/api/push", NULL, a);
    expect_error(a, 405, "use POST", "GET");
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"step\": 1, \"attend\": 1}", sentence);
    with_headers(port, "POST", "/api/push", "Host: localhost\r\nContent-Type: text/plain\r\n", body,
                 a);
    expect_error(a, 415, "Content-Type: application/json", "a text/plain POST");
    with_headers(port, "POST", "/api/push",
                 "Host: localhost\r\nOrigin: http://evil.example\r\n"
                 "Content-Type: application/json\r\n",
                 body, a);
    expect_error(a, 403, "cross-origin request", "another origin");
    with_headers(port, "POST", "/api/push",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\n"
                 "Content-Type: application/json\r\n",
                 body, a);
    expect_error(a, 403, "another site's page", "another site (Fetch Metadata)");
    rs_server_stop(s);
}
END_TEST

/* A server with a token asks for it on /api/push as on the rest of the API. */
START_TEST(a_push_needs_the_token)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.token = "push-token-1234";
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[512];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"step\": 1, \"attend\": 1}", sentence);
    request(port, "POST", "/api/push", body, a);
    expect_error(a, 401, "needs its token", "no token");
    with_headers(port, "POST", "/api/push",
                 "Host: localhost\r\nAuthorization: Bearer push-token-1234\r\n"
                 "Content-Type: application/json\r\n",
                 body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
}
END_TEST

Suite *serve_push_suite(void)
{
    Suite *s = suite_create("serve_push");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_push_answers_what_explain_computes);
    tcase_add_test(tc, a_push_is_checked_with_clear_refusals);
    tcase_add_test(tc, a_push_needs_the_token);
    suite_add_tcase(s, tc);
    return s;
}
