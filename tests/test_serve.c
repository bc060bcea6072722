/* The server of `rnnsearch serve` on loopback, driven by a plain socket
 * client: its answers equal what the translation pipeline and forced
 * decoding give; every kind of bad input gets a 4xx JSON error; slow,
 * stalled and half-closed clients hold no worker; concurrent clients get
 * correct answers. The model is a tiny one trained here by the program. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "checkpoint.h"
#include "forced.h"
#include "json.h"
#include "serve.h"
#include "testdir.h"
#include "testprog.h"
#include "translate.h"

static char model_dir[64];
static rs_model model;
static rs_codec codec;

/* Trains the tiny model once per test case, before the (forked) tests. */
static void train_model(void)
{
    char cmd[1024], path[128];
    testdir_make(model_dir, "rnnsearch-serve");
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/m --epochs 2 --emb 16 --hidden 16 "
             "--att 16 --maxout 8 --quiet > %s/train.log 2>&1",
             testprog_path(), model_dir, model_dir);
    ck_assert_msg(system(cmd) == 0, "training the test model failed: %s", cmd);
    snprintf(path, sizeof path, "%s/m/last.ckpt", model_dir);
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(path, &model, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_codec_for_model(&codec, &model, &err) == 0, "%s", err.msg);
}

static void free_model(void)
{
    rs_codec_free(&codec);
    rs_model_free(&model);
    testdir_remove(model_dir);
}

static rs_server *start(int threads, int queue, int timeout)
{
    static rs_serve_model served[2];
    served[0] = (rs_serve_model){"reorder", &model, &codec};
    served[1] = (rs_serve_model){"second", &model, &codec};
    rs_serve_options opt;
    rs_serve_options_default(&opt);
    opt.port = 0;
    opt.threads = threads;
    opt.queue = queue;
    opt.timeout = timeout;
    opt.max_chars = 200;
    opt.max_body = 4096;
    opt.max_beam = 8;
    rs_server *s;
    rs_error err;
    ck_assert_msg(rs_server_start(&s, served, 2, &opt, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(rs_server_port(s), 0);
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s", strerror(errno));
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return; /* the server may close early (413): what it said is read next */
        data += n;
        len -= (size_t)n;
    }
}

typedef struct {
    int status;     /* HTTP status; -1: closed without an answer */
    char text[1 << 17];
    char *body;     /* into text */
    double seconds; /* from the call to the end of the answer */
} answer;

/* Reads until the server closes (every request says Connection: close) or
 * `wait` seconds pass (a failure: the server must never leave a client hanging). */
static void read_answer(int fd, answer *a, double start, double wait)
{
    size_t len = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(1e3 * (start + wait - now()));
        ck_assert_msg(left > 0 && poll(&p, 1, left) == 1, "no answer within %.0f s", wait);
        ssize_t n = recv(fd, a->text + len, sizeof a->text - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        ck_assert(len < sizeof a->text - 1);
    }
    a->text[len] = '\0';
    a->seconds = now() - start;
    a->status = -1;
    a->body = strstr(a->text, "\r\n\r\n");
    if (len && sscanf(a->text, "HTTP/1.1 %d", &a->status) == 1 && a->body)
        a->body += 4;
}

/* One raw request; shut_wr half-closes the connection after sending. */
static void raw(int port, const char *data, size_t len, int shut_wr, answer *a)
{
    double start = now();
    int fd = connect_to(port);
    send_all(fd, data, len);
    if (shut_wr)
        shutdown(fd, SHUT_WR);
    read_answer(fd, a, start, 20.0);
    close(fd);
}

static void request(int port, const char *method, const char *path, const char *body, answer *a)
{
    char buf[1 << 13]; /* on each client thread's own stack */
    size_t n = body ? strlen(body) : 0;
    int h = snprintf(buf, sizeof buf,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     method, path, n);
    ck_assert(h > 0 && (size_t)h + n < sizeof buf);
    memcpy(buf + h, body ? body : "", n);
    raw(port, buf, (size_t)h + n, 0, a);
}

/* The answer's JSON (to rs_json_free), checked to be an object. */
static rs_json *json_of(const answer *a)
{
    rs_error err;
    ck_assert_msg(a->body != NULL, "no body in: %.300s", a->text);
    rs_json *j = rs_json_parse(a->body, strlen(a->body), &err);
    ck_assert_msg(j != NULL, "not JSON (%s): %.300s", err.msg, a->body);
    ck_assert_int_eq(j->type, RS_JSON_OBJECT);
    return j;
}

/* A 4xx answer with a JSON {"error": "...", "status": N}. */
static void expect_error(const answer *a, int status, const char *words, const char *what)
{
    ck_assert_msg(a->status == status, "%s: status %d, expected %d: %.400s", what, a->status, status,
                  a->text);
    rs_json *j = json_of(a);
    const rs_json *e = rs_json_get(j, "error");
    ck_assert_msg(e && e->type == RS_JSON_STRING && e->len > 0, "%s: no error message", what);
    ck_assert_msg(strstr(e->string, words), "%s: '%s' does not say '%s'", what, e->string, words);
    uint64_t st;
    ck_assert(rs_json_to_u64(rs_json_get(j, "status"), &st) == 0 && st == (uint64_t)status);
    rs_json_free(j);
}

static const rs_json *item(const rs_json *array, size_t k)
{
    ck_assert(array && array->type == RS_JSON_ARRAY && k < array->count);
    return &array->items[k];
}

static const char *str(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && v->type == RS_JSON_STRING, "'%s' is not a string", key);
    return v->string;
}

static double num(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && v->type == RS_JSON_NUMBER, "'%s' is not a number", key);
    return v->number;
}

/* rows × cols weights of an alignment record equal w (9 digits: float-exact). */
static void expect_matrix(const rs_json *record, const float *w, int rows, int cols)
{
    const rs_json *m = rs_json_get(record, "alignment");
    ck_assert(m && m->type == RS_JSON_ARRAY && m->count == (size_t)rows);
    for (int i = 0; i < rows; i++) {
        const rs_json *row = item(m, (size_t)i);
        ck_assert_int_eq(row->count, cols);
        for (int j = 0; j < cols; j++)
            ck_assert_float_eq((float)item(row, (size_t)j)->number, w[i * cols + j]);
    }
}

static const char *const sentence = "the tall horse sees a baker";

/* The answers of the test that runs (the client threads have their own). */
static answer answers[2];

START_TEST(answers_equal_the_pipeline)
{
    rs_server *s = start(2, 8, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];

    /* What the pipeline itself gives, beam 4, 3 best. */
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.beam = 4;
    opt.n_best = 3;
    opt.batch_size = 1;
    opt.want_alignment = 1;
    const rs_model *models[1] = {&model};
    rs_translator tr;
    rs_translated t;
    rs_error err;
    ck_assert_msg(rs_translator_init(&tr, models, 1, &codec, &opt, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_translate_lines(&tr, 1, &sentence, &t, &err) == 0, "%s", err.msg);

    char body[512];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 4, \"n_best\": 3, \"svg\": true}", sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Type: application/json"));
    rs_json *j = json_of(a);
    ck_assert_str_eq(str(j, "model"), "reorder");
    ck_assert_str_eq(str(j, "translation"), t.hyp[0].text);
    const rs_json *src = rs_json_get(j, "source_tokens");
    ck_assert_int_eq(src->count, t.src_count);
    for (int k = 0; k < t.src_count; k++)
        ck_assert_str_eq(item(src, (size_t)k)->string, t.src_tokens[k]);
    const rs_json *hyps = rs_json_get(j, "hypotheses");
    ck_assert_int_eq(hyps->count, t.n);
    ck_assert_int_eq(t.n, 3);
    for (int k = 0; k < t.n; k++) {
        const rs_json *h = item(hyps, (size_t)k);
        const rs_hypothesis *want = &t.hyp[k];
        ck_assert_str_eq(str(h, "translation"), want->text);
        ck_assert_double_eq_tol(num(h, "score"), want->score, 1e-6 * fmax(1.0, fabs(want->score)));
        ck_assert_double_eq_tol(num(h, "logprob"), want->logprob, 1e-6 * fmax(1.0, fabs(want->logprob)));
        const rs_json *tokens = rs_json_get(h, "tokens");
        ck_assert_int_eq(tokens->count, want->len);
        for (int i = 0; i < want->len; i++)
            ck_assert_str_eq(item(tokens, (size_t)i)->string, want->tokens[i]);
        const rs_json *al = rs_json_get(h, "alignment");
        ck_assert_int_eq(rs_json_get(al, "source")->count, t.src_count + 1);
        ck_assert_int_eq(rs_json_get(al, "target")->count, want->len + 1);
        expect_matrix(al, want->alignment, want->len + 1, t.src_count + 1);
        const char *svg = str(h, "svg");
        ck_assert_ptr_nonnull(strstr(svg, "<svg"));
        ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    }
    rs_json_free(j);
    rs_translated_free(&t);
    rs_translator_free(&tr);

    /* The second model by name, greedy: n_best defaults to the beam. */
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"model\": \"second\"}", sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    j = json_of(a);
    ck_assert_str_eq(str(j, "model"), "second");
    ck_assert_int_eq(rs_json_get(j, "hypotheses")->count, 1);
    ck_assert_ptr_null(rs_json_get(item(rs_json_get(j, "hypotheses"), 0), "svg"));
    rs_json_free(j);

    /* Forced alignment of a given target equals forced decoding's. */
    const char *target = "ka vidat lehro";
    rs_forced f;
    rs_tokens st = {0}, tt = {0};
    ck_assert_msg(rs_forced_text(models, 1, &codec, sentence, target,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT, &f, &st, &tt, &err) == 0,
                  "%s", err.msg);
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"%s\"}", sentence, target);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    j = json_of(a);
    ck_assert_double_eq_tol(num(j, "logprob"), f.logprob, 1e-6 * fmax(1.0, fabs(f.logprob)));
    ck_assert_int_eq(rs_json_get(j, "target_tokens")->count, f.tgt_len);
    ck_assert_int_eq(rs_json_get(j, "token_logprobs")->count, f.tgt_len + 1);
    expect_matrix(rs_json_get(j, "alignment"), f.alignment, f.tgt_len + 1, f.src_len + 1);
    rs_json_free(j);
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);

    /* The models and their configuration. */
    request(port, "GET", "/api/models", NULL, a);
    ck_assert_int_eq(a->status, 200);
    j = json_of(a);
    const rs_json *list = rs_json_get(j, "models");
    ck_assert_int_eq(list->count, 2);
    ck_assert_str_eq(str(item(list, 0), "name"), "reorder");
    ck_assert_int_eq(rs_json_get(item(list, 0), "default")->type, RS_JSON_TRUE);
    const rs_json *cfg = rs_json_get(item(list, 0), "config");
    ck_assert_int_eq((int)num(cfg, "hidden"), model.cfg.hidden);
    ck_assert_str_eq(str(cfg, "attention"), rs_attention_names[model.cfg.attention]);
    ck_assert_str_eq(str(cfg, "tokenizer"), "word");
    ck_assert_int_eq((int)num(rs_json_get(j, "limits"), "max_chars"), 200);
    rs_json_free(j);

    /* The page: one self-contained document, nothing fetched from elsewhere. */
    request(port, "GET", "/", NULL, a);
    ck_assert_int_eq(a->status, 200);
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Type: text/html"));
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Security-Policy: default-src 'none'"));
    ck_assert_ptr_nonnull(strstr(a->body, "<!DOCTYPE html>"));
    ck_assert_ptr_nonnull(strstr(a->body, "/api/translate"));
    ck_assert_ptr_null(strstr(a->body, "<script src"));
    ck_assert_ptr_null(strstr(a->body, "stylesheet"));
    ck_assert_ptr_null(strstr(a->body, "src=\""));
    ck_assert_ptr_null(strstr(a->body, "@import"));
    ck_assert_ptr_null(strstr(a->body, "https:"));
    rs_server_stop(s);
}
END_TEST

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
        {"/api/align", "{\"source\": \"\\u3000\", \"target\": \"ka\"}", 400, "'source' has no tokens"},
        {"/api/align", "{\"source\": \"the horse\", \"target\": \"\\u2003\"}", 400, "'target' has no tokens"},
        {"/api/align", "{\"source\": \"the horse\"}", 400, "'target' is missing"},
        {"/api/align", "{\"source\": \"the horse\", \"target\": []}", 400, "'target' must be a string"},
        {"/api/align", "{\"source\": \"\", \"target\": \"ka\"}", 400, "'source' is empty"},
        {"/api/align", "{\"text\": \"the horse\", \"target\": \"ka\"}", 400, "unknown member 'text'"},
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
    int h = snprintf(big, sizeof big, "POST /api/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n");
    memset(big + h, 'x', 1000);
    raw(port, big, (size_t)h + 1000, 0, a);
    expect_error(a, 413, "longer than 4096 bytes", "huge Content-Length");
    h = snprintf(big, sizeof big,
                 "POST /api/translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
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

START_TEST(slow_stalled_and_half_closed_clients_hold_no_worker)
{
    /* One worker and a 1 s time limit. */
    rs_server *s = start(1, 4, 1);
    int port = rs_server_port(s);
    answer *a = &answers[0], *b = &answers[1];
    const char *body = "{\"text\": \"the horse\"}";
    char head[256];
    snprintf(head, sizeof head, "POST /api/translate HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n",
             strlen(body));

    /* A stalled client (half a body, then nothing) ... */
    double start = now();
    int stalled = connect_to(port);
    send_all(stalled, head, strlen(head));
    send_all(stalled, body, 5);
    /* ... does not keep others waiting, */
    request(port, "POST", "/api/translate", body, b);
    ck_assert_int_eq(b->status, 200);
    ck_assert_msg(b->seconds < 0.9, "a request took %.2f s behind a stalled client", b->seconds);
    /* and is closed once it has been idle for the time limit (libmicrohttpd
     * cannot answer a request whose body never ends). */
    read_answer(stalled, a, start, 5.0);
    close(stalled);
    ck_assert_int_eq(a->status, -1);
    ck_assert_msg(a->seconds >= 0.9 && a->seconds < 3.5, "closed after %.2f s", a->seconds);

    /* A client that sends its body too slowly gets 408 once it is in. */
    start = now();
    int slow = connect_to(port);
    send_all(slow, head, strlen(head));
    for (size_t k = 0; k < 4; k++) {
        send_all(slow, body + k, 1);
        nanosleep(&(struct timespec){0, 400000000L}, NULL); /* well within the idle limit */
    }
    send_all(slow, body + 4, strlen(body) - 4);
    read_answer(slow, a, start, 5.0);
    close(slow);
    expect_error(a, 408, "more than 1 s", "slow body");

    /* Half-closed after a whole request: answered as usual. */
    char whole[512];
    snprintf(whole, sizeof whole, "%s%s", head, body);
    raw(port, whole, strlen(whole), 1, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    /* Half-closed in the middle of the body: closed (at once, or when idle
     * for the time limit, as libmicrohttpd notices), no worker taken. */
    snprintf(whole, sizeof whole, "%s%.6s", head, body);
    raw(port, whole, strlen(whole), 1, a);
    ck_assert_int_eq(a->status, -1);
    ck_assert_msg(a->seconds < 3.5, "a half-closed client was held %.2f s", a->seconds);
    /* A client gone before its answer: the worker finishes and goes on. */
    for (int k = 0; k < 3; k++) {
        int gone = connect_to(port);
        send_all(gone, head, strlen(head));
        send_all(gone, body, strlen(body));
        close(gone);
    }
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
}
END_TEST

typedef struct {
    int port, ok, busy, wrong;
    const char *expected;
} client;

static void *client_main(void *arg)
{
    client *c = arg;
    answer *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    char body[256];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3}", sentence);
    for (int k = 0; k < 6; k++) {
        request(c->port, "POST", "/api/translate", body, a);
        if (a->status == 503) {
            c->busy++;
        } else if (a->status == 200 && a->body) {
            rs_error err;
            rs_json *j = rs_json_parse(a->body, strlen(a->body), &err);
            const rs_json *t = j ? rs_json_get(j, "translation") : NULL;
            if (t && t->type == RS_JSON_STRING && !strcmp(t->string, c->expected))
                c->ok++;
            else
                c->wrong++;
            rs_json_free(j);
        } else {
            c->wrong++;
        }
    }
    free(a);
    return NULL;
}

START_TEST(concurrent_clients_get_correct_answers)
{
    rs_server *s = start(2, 3, 10);
    answer *a = &answers[0];
    char body[256];
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3}", sentence);
    request(rs_server_port(s), "POST", "/api/translate", body, a);
    ck_assert_int_eq(a->status, 200);
    rs_json *j = json_of(a);
    char *expected = strdup(str(j, "translation"));
    rs_json_free(j);
    enum { N = 8 };
    client clients[N];
    pthread_t threads[N];
    for (int k = 0; k < N; k++) {
        clients[k] = (client){.port = rs_server_port(s), .expected = expected};
        ck_assert(pthread_create(&threads[k], NULL, client_main, &clients[k]) == 0);
    }
    int ok = 0, busy = 0, wrong = 0;
    for (int k = 0; k < N; k++) {
        pthread_join(threads[k], NULL);
        ok += clients[k].ok, busy += clients[k].busy, wrong += clients[k].wrong;
    }
    /* Every answer is the right translation, or 503 when the queue of 3 was full. */
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(ok + busy, N * 6);
    ck_assert_int_gt(ok, N);
    free(expected);
    rs_server_stop(s);
}
END_TEST

START_TEST(the_command_checks_its_options)
{
    char cmd[512], out[4096];
    ck_assert_int_eq(testprog_run("serve --help > /dev/null", out, sizeof out), 0);
    ck_assert_int_eq(testprog_run("serve 2> /dev/null", out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "serve -m %s/m --port 70000 2> /dev/null", model_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "serve -m %s/m --host localhost --port 0 2> /dev/null", model_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 1); /* not a numeric address */
    /* Library-level checks: two models of one name, no model. */
    rs_serve_model twice[2] = {{"x", &model, &codec}, {"x", &model, &codec}};
    rs_serve_options opt;
    rs_serve_options_default(&opt);
    opt.port = 0;
    rs_server *s;
    rs_error err;
    ck_assert_int_eq(rs_server_start(&s, twice, 2, &opt, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "two models are named 'x'"));
    ck_assert_int_eq(rs_server_start(&s, twice, 0, &opt, &err), -1);
}
END_TEST

Suite *serve_suite(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, answers_equal_the_pipeline);
    tcase_add_test(tc, bad_input_gets_a_4xx_json_error);
    tcase_add_test(tc, slow_stalled_and_half_closed_clients_hold_no_worker);
    tcase_add_test(tc, concurrent_clients_get_correct_answers);
    tcase_add_test(tc, the_command_checks_its_options);
    suite_add_tcase(s, tc);
    return s;
}
