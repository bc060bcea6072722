/* A request's body read by its worker (serve/body.c): every kind of bad
 * input a 4xx JSON error, many keys checked in linear time, a batch bounded
 * and checked item by item, and OpenNMT-py's request shape. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "search/forced.h"
#include "common/json.h"
#include "serve/serve.h"
#include "serve/run.h"
#include "serveclient.h"
#include "testdir.h"
#include "testnetns.h"
#include "testprog.h"
#include "testskip.h"
#include "search/translate.h"

START_TEST(bad_input_gets_a_4xx_json_error)
{
    rs_server *s = start(1, 4, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    static const struct {
        const char *path, *body;
        int status;
        const char *words;
    } cases[] = {
        {"/api/translate", "{\"text\": \"a\"", 400, "not JSON"},
        {"/api/translate", "{\"text\": \"a\",}", 400, "not JSON"},
        {"/api/translate", "", 400, "empty"},
        {"/api/translate", "[\"the horse\"]", 400, "JSON object"},
        {"/api/translate", "{\"text\": 5}", 400, "'text' must be a string"},
        {"/api/translate", "{\"text\": null}", 400, "'text' must be a string"},
        {"/api/translate", "{\"text\": \"a\", \"beam\": \"4\"}", 400, "'beam'"},
        {"/api/translate", "{\"text\": \"a\", \"beam\": 2.5}", 400, "'beam'"},
        {"/api/translate", "{\"text\": \"a\", \"beam\": 0}", 400, "'beam'"},
        {"/api/translate", "{\"text\": \"a\", \"beam\": 99}", 400, "'beam'"},
        {"/api/translate", "{\"text\": \"a\", \"beam\": 2, \"n_best\": 3}", 400, "'n_best'"},
        {"/api/translate", "{\"text\": \"a\", \"svg\": \"yes\"}", 400, "'svg'"},
        {"/api/translate", "{\"text\": \"a\", \"nbest\": 2}", 400, "unknown member 'nbest'"},
        {"/api/translate", "{\"text\": \"a\", \"model\": \"nope\"}", 404, "no model named 'nope'"},
        {"/api/translate", "{\"text\": \"a\", \"model\": 1}", 400, "'model' must be a string"},
        {"/api/translate", "{\"beam\": 2}", 400, "'text' is missing"},
        {"/api/translate", "{\"text\": \"\"}", 400, "'text' is empty"},
        {"/api/translate", "{\"text\": \" \\n\\t \"}", 400, "'text' is empty"},
        {"/api/translate", "{\"text\": \"a\\u0000b\"}", 400, "not JSON"},
        {"/api/translate", "{\"text\": \"\\ud800\"}", 400, "not JSON"},
        {"/api/translate", "{\"text\": \"\xff\xfe horse\"}", 400, "UTF-8"},
        {"/api/translate", "{\"text\": \"\xc3\x28\"}", 400, "UTF-8"},
        {"/api/translate", "{\"text\": \"\\u3000\\u2003\"}", 400, "'text' has no tokens"},
        {"/api/align", "{\"source\": \"\\u3000\", \"target\": \"ka\"}", 400,
         "'source' has no tokens"},
        {"/api/align", "{\"source\": \"the horse\", \"target\": \"\\u2003\"}", 400,
         "'target' has no tokens"},
        {"/api/align", "{\"source\": \"the horse\"}", 400, "'target' is missing"},
        {"/api/align", "{\"source\": \"the horse\", \"target\": []}", 400,
         "'target' must be a string"},
        {"/api/align", "{\"source\": \"\", \"target\": \"ka\"}", 400, "'source' is empty"},
        {"/api/align", "{\"text\": \"\", \"target\": \"ka\"}", 400, "'text' is empty"},
        {"/api/align", "{\"text\": \"the horse\", \"source\": \"the horse\", \"target\": \"ka\"}",
         400, "'text' or as 'source'"},
        {"/api/align", "{\"target\": \"ka\"}", 400, "'text' is missing"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char what[64];
        snprintf(what, sizeof what, "case %zu", k);
        request(port, "POST", cases[k].path, cases[k].body, a);
        expect_error(a, cases[k].status, cases[k].words, what);
    }
    /* A text far over the length limit (200 characters here): 413; the
     * limit counts characters, not bytes. */
    char body[4000];
    strcpy(body, "{\"text\": \"");
    for (int k = 0; k < 150; k++)
        strcat(body, "the ");
    strcat(body, "\"}");
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 413, "600 characters; the limit is 200", "long text");
    strcpy(body, "{\"text\": \"");
    for (int k = 0; k < 199; k++)
        strcat(body, "\xc3\xa9"); /* é: 2 bytes, 1 character */
    strcat(body, "\"}");
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "199 characters in 398 bytes: %.300s", a->text);

    /* A huge body (max_body is 4096 here), announced or chunked. */
    static char big[1 << 16];
    int h = snprintf(
        big, sizeof big,
        "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n");
    memset(big + h, 'x', 1000);
    raw(port, big, (size_t)h + 1000, 0, a);
    expect_error(a, 413, "longer than 4096 bytes", "huge Content-Length");
    h = snprintf(
        big, sizeof big,
        "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    for (int k = 0; k < 3; k++) {
        h += snprintf(big + h, sizeof big - (size_t)h, "1000\r\n");
        memset(big + h, 'x', 4096);
        h += 4096;
        h += snprintf(big + h, sizeof big - (size_t)h, "\r\n");
    }
    h += snprintf(big + h, sizeof big - (size_t)h, "0\r\n\r\n");
    raw(port, big, (size_t)h, 0, a);
    expect_error(a, 413, "longer than 4096 bytes", "huge chunked body");

    /* Wrong method, unknown path. */
    request(port, "GET", "/api/translate", NULL, a);
    expect_error(a, 405, "POST", "GET translate");
    ck_assert_ptr_nonnull(strstr(a->text, "Allow: POST"));
    request(port, "POST", "/api/models", "{}", a);
    expect_error(a, 405, "GET", "POST models");
    request(port, "GET", "/etc/passwd", NULL, a);
    expect_error(a, 404, "no such page", "unknown path");

    /* And the server still translates. */
    request(port, "POST", "/api/translate", "{\"text\": \"the horse\"}", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
}
END_TEST

/* A body of 40 000 keys is refused for its keys in linear time, on a worker. */
START_TEST(many_keys_are_checked_in_linear_time)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_body = 1 << 20;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    const int keys = 40000;
    size_t size = (size_t)keys * 16 + 64, used = 0;
    char *body = malloc(size), *req = malloc(size + 512);
    ck_assert(body && req);
    used += (size_t)snprintf(body + used, size - used, "{\"text\": \"the horse\"");
    for (int k = 0; k < keys; k++)
        used += (size_t)snprintf(body + used, size - used, ",\"k%d\":%d", k, k);
    used += (size_t)snprintf(body + used, size - used, "}");
    int h = snprintf(req, 512,
                     "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     used);
    memcpy(req + h, body, used);
    double t = now();
    raw(port, req, (size_t)h + used, 0, a);
    expect_error(a, 400, "unknown member 'k0'", "40 000 keys");
    ck_assert_msg(now() - t < 1.0, "40 000 keys took %.2f s", now() - t);
    /* The same keys twice: the duplicate is found, at its place. */
    memcpy(body + used - 1, ",\"k7\":1}", 9);
    rs_error err;
    rs_json *j = rs_json_parse(body, strlen(body), &err);
    ck_assert_ptr_null(j);
    ck_assert_msg(strstr(err.msg, "duplicate key"), "%s", err.msg);
    free(body);
    free(req);
    rs_server_stop(s);
}
END_TEST

/* A server of the test model alone, under the name "reorder". */
static rs_server *start_one(const rs_serve_options *opt)
{
    static rs_serve_model served[1];
    served[0] = (rs_serve_model){"reorder", &model_ready, &codec};
    rs_server *s;
    rs_error err;
    ck_assert_msg(rs_server_start(&s, served, 1, opt, &err) == 0, "%s", err.msg);
    return s;
}

/* A batch is bounded like everything else: --max-batch sentences (413
 * beyond), each within --max-chars, the answer within --max-answer; an
 * empty list and items that are not usable sentences are 400, naming the
 * item. */
START_TEST(batches_are_bounded_and_checked_item_by_item)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_batch = 3;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    static const struct {
        const char *path, *body;
        int status;
        const char *words;
    } cases[] = {
        {"/api/translate", "{\"text\": [\"a\", \"b\", \"c\", \"d\"]}", 413,
         "'text' has 4 sentences; the limit is 3 (the server's --max-batch)"},
        {"/api/translate", "{\"text\": []}", 400, "'text' is an empty list"},
        {"/api/translate", "{\"text\": [\"the horse\", 5]}", 400,
         "'text'[1] must be a string, not number"},
        {"/api/translate", "{\"text\": [\"the horse\", [\"a\"]]}", 400,
         "'text'[1] must be a string, not array"},
        {"/api/translate", "{\"text\": [\"the horse\", null]}", 400, "'text'[1] must be a string"},
        {"/api/translate", "{\"text\": [\"the horse\", \"a\", \" \"]}", 400, "'text'[2] is empty"},
        {"/api/translate", "{\"text\": [\"the horse\", \"\\u3000\"]}", 400,
         "'text'[1] has no tokens"},
        {"/api/translate", "{\"text\": {\"a\": 1}}", 400,
         "'text' must be a string or a list of strings, not object"},
        {"/translator/translate",
         "[{\"src\": \"a\"}, {\"src\": \"b\"}, {\"src\": \"c\"}, {\"src\": \"d\"}]", 413,
         "the request has 4 sentences; the limit is 3"},
        {"/translator/translate", "[]", 400, "the request is an empty list"},
        {"/translator/translate", "", 400, "send a JSON list"},
        {"/translator/translate", "{\"src\": \"the horse\"}", 400, "must be a JSON list"},
        {"/translator/translate", "[\"the horse\"]", 400, "sentence 0 must be an object"},
        {"/translator/translate", "[{\"src\": \"a\"}, {\"id\": 0}]", 400,
         "sentence 1: 'src' is missing"},
        {"/translator/translate", "[{\"src\": 5}]", 400, "sentence 0's 'src' must be a string"},
        {"/translator/translate", "[{\"src\": \"\"}]", 400, "sentence 0's 'src' is empty"},
        {"/translator/translate", "[{\"src\": \"\\u2003\"}]", 400,
         "sentence 0's 'src' has no tokens"},
        {"/translator/translate", "[{\"src\": \"a\", \"ref\": \"b\"}]", 400,
         "sentence 0: unknown member 'ref'"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": -1}]", 400, "'id' must be"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": \"0\"}]", 400, "'id' must be"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 2}]", 404, "no model with id 2"},
        /* Ids are read exactly (issue 42: 2^53 + 1 came back as 2^53). */
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 9007199254740993}]", 404,
         "no model with id 9007199254740993;"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 18446744073709551615}]", 404,
         "no model with id 18446744073709551615;"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 18446744073709551616}]", 400,
         "'id' must be"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 1.5}]", 400, "'id' must be"},
        {"/translator/translate", "[{\"src\": \"a\", \"id\": 0}, {\"src\": \"b\", \"id\": 1}]", 400,
         "one request goes to one model"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char what[64];
        snprintf(what, sizeof what, "case %zu", k);
        request(port, "POST", cases[k].path, cases[k].body, a);
        expect_error(a, cases[k].status, cases[k].words, what);
    }
    /* An item over --max-chars (200 here), counted per sentence. */
    char body[4096];
    int n = snprintf(body, sizeof body, "{\"text\": [\"the horse\", \"a baker\", \"");
    for (int k = 0; k < 60; k++)
        n += snprintf(body + n, sizeof body - (size_t)n, "the ");
    snprintf(body + n, sizeof body - (size_t)n, "\"]}");
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 413, "'text'[2] has 240 characters; the limit is 200", "a long item");
    rs_server_stop(s);

    /* Three sentences with 8 pictured hypotheses each do not fit 16 KiB. */
    opt.max_answer = 16384;
    s = start_with(&opt);
    port = rs_server_port(s);
    snprintf(body, sizeof body, "{\"text\": [\"%s\", \"%s\", \"%s\"], \"beam\": 8, \"svg\": true}",
             batch_sentences[0], batch_sentences[1], batch_sentences[2]);
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 413, "--max-answer", "a batch answer over the bound");
    ck_assert_ptr_nonnull(strstr(a->body, "fewer sentences"));
    rs_server_stop(s);
}
END_TEST

/* OpenNMT-py's request and answer shapes: [{"src", "id"}] in,
 * [[{"src", "tgt", "n_best", "pred_score"}]] out, in order, each equal to
 * /api/translate's greedy answer; with one model any id is it, with several
 * the id is the place in the -m order. */
START_TEST(opennmt_requests_round_trip)
{
    rs_serve_options opt = test_options(1, 4, 10);
    answer *a = &answers[0];
    char body[1024];
    for (int several = 0; several < 2; several++) {
        rs_server *s = several ? start_with(&opt) : start_one(&opt);
        int port = rs_server_port(s);
        char tgt[3][512];
        double score[3];
        for (int i = 0; i < 3; i++) {
            snprintf(body, sizeof body, "{\"text\": \"%s\"}", batch_sentences[i]);
            request(port, "POST", "/api/translate", body, a);
            ck_assert_msg(a->status == 200, "%.300s", a->text);
            rs_json *j = json_of(a);
            snprintf(tgt[i], sizeof tgt[i], "%s", str(j, "translation"));
            score[i] = num(item(rs_json_get(j, "hypotheses"), 0), "score");
            rs_json_free(j);
        }
        const int id = several ? 1 : 100; /* "second" is the same model */
        snprintf(body, sizeof body,
                 "[{\"src\": \"%s\", \"id\": %d}, {\"src\": \"%s\", \"id\": %d}, "
                 "{\"src\": \"%s\", \"id\": %d}]",
                 batch_sentences[2], id, batch_sentences[0], id, batch_sentences[1], id);
        request(port, "POST", "/translator/translate", body, a);
        ck_assert_msg(a->status == 200, "%.500s", a->text);
        rs_error err;
        rs_json *j = rs_json_parse(a->body, strlen(a->body), &err);
        ck_assert_msg(j && j->type == RS_JSON_ARRAY && j->count == 1, "%.500s", a->body);
        const rs_json *ranks = item(j, 0);
        ck_assert_int_eq(ranks->count, 3);
        static const int ord[3] = {2, 0, 1};
        for (int i = 0; i < 3; i++) {
            const rs_json *r = item(ranks, (size_t)i);
            ck_assert_int_eq(r->count, 4);
            ck_assert_str_eq(str(r, "src"), batch_sentences[ord[i]]);
            ck_assert_str_eq(str(r, "tgt"), tgt[ord[i]]);
            ck_assert_double_eq(num(r, "n_best"), 1);
            ck_assert_double_eq_tol(num(r, "pred_score"), score[ord[i]],
                                    1e-6 * fmax(1.0, fabs(score[ord[i]])));
        }
        rs_json_free(j);
        /* No id: the first model. */
        request(port, "POST", "/translator/translate", "[{\"src\": \"the horse\"}]", a);
        ck_assert_msg(a->status == 200 && strstr(a->body, "\"src\":\"the horse\""), "%.300s",
                      a->text);
        request(port, "GET", "/translator/models", NULL, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        j = rs_json_parse(a->body, strlen(a->body), &err);
        ck_assert_msg(j && j->type == RS_JSON_ARRAY && j->count == (size_t)(several ? 2 : 1),
                      "%.300s", a->body);
        for (size_t k = 0; k < j->count; k++) {
            ck_assert_double_eq(num(item(j, k), "model_id"), (double)k);
            ck_assert_str_eq(item(rs_json_get(item(j, k), "models"), 0)->string,
                             k ? "second" : "reorder");
        }
        rs_json_free(j);
        rs_server_stop(s);
    }
}
END_TEST

Suite *serve_body_suite(void)
{
    Suite *s = suite_create("serve_body");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bad_input_gets_a_4xx_json_error);
    tcase_add_test(tc, many_keys_are_checked_in_linear_time);
    tcase_add_test(tc, batches_are_bounded_and_checked_item_by_item);
    tcase_add_test(tc, opennmt_requests_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
