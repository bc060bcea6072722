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
#include "testdir.h"
#include "testnetns.h"
#include "testprog.h"
#include "testskip.h"
#include "search/translate.h"

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

/* The test's usual options: any free port, 200 characters, 4 KiB bodies, beams to 8. */
static rs_serve_options test_options(int threads, int queue, int timeout)
{
    rs_serve_options opt;
    rs_serve_options_default(&opt);
    opt.port = 0;
    opt.threads = threads;
    opt.queue = queue;
    opt.timeout = timeout;
    opt.max_chars = 200;
    opt.max_body = 4096;
    opt.max_beam = 8;
    return opt;
}

static rs_server *start_with(const rs_serve_options *opt)
{
    static rs_serve_model served[2];
    served[0] = (rs_serve_model){"reorder", &model, &codec};
    served[1] = (rs_serve_model){"second", &model, &codec};
    rs_server *s;
    rs_error err;
    ck_assert_msg(rs_server_start(&s, served, 2, opt, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(rs_server_port(s), 0);
    return s;
}

static rs_server *start(int threads, int queue, int timeout)
{
    const rs_serve_options opt = test_options(threads, queue, timeout);
    return start_with(&opt);
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
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s",
                  strerror(errno));
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
    int status;                  /* HTTP status; -1: closed without an answer */
    char text[(1 << 21) + 8192]; /* a --max-answer of 2 MiB and its head */
    char *body;                  /* into text */
    double seconds;              /* from the call to the end of the answer */
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
    ck_assert_msg(a->status == status, "%s: status %d, expected %d: %.400s", what, a->status,
                  status, a->text);
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
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 4, \"n_best\": 3, \"svg\": true}",
             sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    ck_assert_ptr_nonnull(strstr(a->text, "Content-Type: application/json"));
    rs_json *j = json_of(a);
    ck_assert_str_eq(str(j, "model"), "reorder");
    ck_assert_str_eq(str(j, "translation"), t.hyps[0].text);
    const rs_json *src = rs_json_get(j, "source_tokens");
    ck_assert_int_eq(src->count, t.source_count);
    for (int k = 0; k < t.source_count; k++)
        ck_assert_str_eq(item(src, (size_t)k)->string, t.source_tokens[k]);
    const rs_json *hyps = rs_json_get(j, "hypotheses");
    ck_assert_int_eq(hyps->count, t.count);
    ck_assert_int_eq(t.count, 3);
    for (int k = 0; k < t.count; k++) {
        const rs_json *h = item(hyps, (size_t)k);
        const rs_hypothesis *want = &t.hyps[k];
        ck_assert_str_eq(str(h, "translation"), want->text);
        ck_assert_double_eq_tol(num(h, "score"), want->score, 1e-6 * fmax(1.0, fabs(want->score)));
        ck_assert_double_eq_tol(num(h, "logprob"), want->logprob,
                                1e-6 * fmax(1.0, fabs(want->logprob)));
        const rs_json *tokens = rs_json_get(h, "tokens");
        ck_assert_int_eq(tokens->count, want->count);
        for (int i = 0; i < want->count; i++)
            ck_assert_str_eq(item(tokens, (size_t)i)->string, want->tokens[i]);
        const rs_json *al = rs_json_get(h, "alignment");
        ck_assert_int_eq(rs_json_get(al, "source")->count, t.source_count + 1);
        ck_assert_int_eq(rs_json_get(al, "target")->count, want->count + 1);
        expect_matrix(al, want->alignment, want->count + 1, t.source_count + 1);
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
    const rs_forced_pair pair = {sentence, target, RS_MAX_SRC_LEN,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    ck_assert_msg(rs_forced_text(models, 1, &codec, &pair, &f, &st, &tt, &err) == 0, "%s", err.msg);
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"%s\"}", sentence, target);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    j = json_of(a);
    ck_assert_double_eq_tol(num(j, "logprob"), f.logprob, 1e-6 * fmax(1.0, fabs(f.logprob)));
    ck_assert_int_eq(rs_json_get(j, "target_tokens")->count, f.tgt_len);
    ck_assert_int_eq(rs_json_get(j, "token_logprobs")->count, f.tgt_len + 1);
    expect_matrix(rs_json_get(j, "alignment"), f.alignment, f.tgt_len + 1, f.src_len + 1);
    rs_json_free(j);
    /* 'text', as /api/translate names the source, gives the same answer
     * (but for "ms", the time the request took, which ends the object). */
    char *same = strdup(a->body);
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"target\": \"%s\"}", sentence, target);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.500s", a->text);
    const char *ms_same = strstr(same, ",\"ms\":"), *ms_got = strstr(a->body, ",\"ms\":");
    ck_assert(ms_same && ms_got);
    ck_assert_msg(ms_same - same == ms_got - a->body &&
                      !strncmp(a->body, same, (size_t)(ms_same - same)),
                  "%s\n%s", a->body, same);
    free(same);
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

START_TEST(slow_stalled_and_half_closed_clients_hold_no_worker)
{
    /* One worker and a 1 s time limit. */
    rs_server *s = start(1, 4, 1);
    int port = rs_server_port(s);
    answer *a = &answers[0], *b = &answers[1];
    const char *body = "{\"text\": \"the horse\"}";
    char head[256];
    snprintf(
        head, sizeof head,
        "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
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

    /* A client that sends its body too slowly, each byte well within the
     * idle limit, is closed when the whole request has not arrived in time. */
    start = now();
    int slow = connect_to(port);
    send_all(slow, head, strlen(head));
    double closed = 0;
    for (size_t k = 0; k < 12 && !closed; k++) {
        send_all(slow, body + k, 1);
        struct pollfd p = {.fd = slow, .events = POLLIN};
        char c;
        if (poll(&p, 1, 400) == 1 && recv(slow, &c, 1, 0) <= 0)
            closed = now() - start;
    }
    close(slow);
    ck_assert_msg(closed >= 0.9 && closed < 2.5, "a slow body was held %.2f s",
                  closed ? closed : now() - start);

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

/* A raw request with the given headers (each ending in \r\n) and body. */
static void with_headers(int port, const char *method, const char *path, const char *headers,
                         const char *body, answer *a)
{
    char buf[1 << 13];
    size_t n = body ? strlen(body) : 0;
    int h = snprintf(buf, sizeof buf,
                     "%s %s HTTP/1.1\r\n%sConnection: close\r\nContent-Length: %zu\r\n\r\n", method,
                     path, headers, n);
    ck_assert(h > 0 && (size_t)h + n < sizeof buf);
    memcpy(buf + h, body ? body : "", n);
    raw(port, buf, (size_t)h + n, 0, a);
}

/* A GET over IPv6 loopback (::1) with the given headers. */
static void raw6_get(int port, const char *path, const char *headers, answer *a)
{
    char req[1024];
    int n =
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\n%sConnection: close\r\n\r\n", path, headers);
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    to.sin6_addr = in6addr_loopback;
    ck_assert_msg(connect(fd, (struct sockaddr *)&to, sizeof to) == 0, "connect to [::1]: %s",
                  strerror(errno));
    const double start = now();
    send_all(fd, req, (size_t)n);
    read_answer(fd, a, start, 10.0);
    close(fd);
}

/* DNS rebinding and cross-origin pages: only this server's names in Host,
 * only its own pages as Origin, only JSON bodies; a token when required. */
START_TEST(foreign_hosts_origins_and_content_types_are_refused)
{
    rs_server *s = start(1, 4, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    const char *body = "{\"text\": \"the horse\", \"beam\": 2}";
    char headers[512];
    /* The request a page on another site can make (no preflight needed). */
    with_headers(port, "POST", "/api/translate",
                 "Host: attacker.example\r\nOrigin: http://attacker.example\r\n"
                 "Content-Type: text/plain\r\n",
                 body, a);
    expect_error(a, 403, "not a name of this server", "foreign Host");
    with_headers(port, "GET", "/api/models", "Host: attacker.example:8080\r\n", NULL, a);
    expect_error(a, 403, "not a name of this server", "rebinding read of /api/models");
    with_headers(
        port, "POST", "/api/translate",
        "Host: localhost\r\nOrigin: http://attacker.example\r\nContent-Type: application/json\r\n",
        body, a);
    expect_error(a, 403, "cross-origin", "foreign Origin");
    with_headers(port, "POST", "/api/translate",
                 "Host: localhost\r\nOrigin: null\r\nContent-Type: application/json\r\n", body, a);
    expect_error(a, 403, "cross-origin", "null Origin");
    with_headers(port, "POST", "/api/translate", "Host: localhost\r\nContent-Type: text/plain\r\n",
                 body, a);
    expect_error(a, 415, "application/json", "text/plain");
    with_headers(port, "POST", "/api/translate",
                 "Host: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n", body, a);
    expect_error(a, 415, "application/json", "form");
    /* Optional white space (RFC 9110: spaces and tabs) around the media
     * type and before a parameter is the same type (issue 42: a trailing tab
     * got 415); another type that begins so is not. */
    static const char *const json_types[] = {"application/json\t",
                                             "application/json \t",
                                             "\tapplication/json",
                                             "application/json ;charset=utf-8",
                                             "application/json\t; charset=utf-8",
                                             "APPLICATION/JSON"};
    for (size_t k = 0; k < sizeof json_types / sizeof *json_types; k++) {
        snprintf(headers, sizeof headers, "Host: localhost\r\nContent-Type: %s\r\n", json_types[k]);
        with_headers(port, "POST", "/api/translate", headers, body, a);
        ck_assert_msg(a->status == 200, "Content-Type '%s': %d %.300s", json_types[k], a->status,
                      a->text);
    }
    static const char *const other_types[] = {"application/jsonp", "application/json x",
                                              "application/json\tx", "application/json,text/plain",
                                              "application/json-seq"};
    for (size_t k = 0; k < sizeof other_types / sizeof *other_types; k++) {
        snprintf(headers, sizeof headers, "Host: localhost\r\nContent-Type: %s\r\n",
                 other_types[k]);
        with_headers(port, "POST", "/api/translate", headers, body, a);
        expect_error(a, 415, "application/json", other_types[k]);
    }
    /* The server's own page: Host and Origin name it, port included. */
    snprintf(
        headers, sizeof headers,
        "Host: localhost:%d\r\nOrigin: http://localhost:%d\r\nContent-Type: application/json; charset=utf-8\r\n",
        port, port);
    with_headers(port, "POST", "/api/translate", headers, body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    snprintf(headers, sizeof headers, "Host: 127.0.0.1:%d\r\n", port);
    with_headers(port, "GET", "/api/models", headers, NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);

    /* --allow-host adds a name; a token, when set, is needed everywhere. */
    rs_serve_options opt = test_options(1, 4, 10);
    static const char *const names[] = {"translator.lan"};
    opt.allow_hosts = names;
    opt.n_allow_hosts = 1;
    opt.token = "s3cret-token_1";
    s = start_with(&opt);
    port = rs_server_port(s);
    with_headers(port, "POST", "/api/translate",
                 "Host: translator.lan\r\nContent-Type: application/json\r\n", body, a);
    expect_error(a, 401, "token", "no token");
    with_headers(port, "POST", "/api/translate",
                 "Host: translator.lan\r\nContent-Type: application/json\r\n"
                 "Authorization: Bearer s3cret-token_2\r\n",
                 body, a);
    expect_error(a, 401, "token", "wrong token");
    with_headers(port, "POST", "/api/translate",
                 "Host: translator.lan\r\nContent-Type: application/json\r\n"
                 "Authorization: Bearer s3cret-token_1\r\n",
                 body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    /* The token is never a cookie (a browser sends a host's cookies to
     * every port of it: another service on the host would receive it, and
     * could plant one sent first). The page is sent without it and sets
     * none; a cookie holding the token lets nothing through. */
    with_headers(port, "GET", "/?token=s3cret-token_1", "Host: localhost\r\n", NULL, a);
    ck_assert_msg(a->status == 200 && !strstr(a->text, "Set-Cookie") &&
                      !strstr(a->text, "set-cookie"),
                  "%.300s", a->text);
    with_headers(port, "GET", "/", "Host: localhost\r\n", NULL, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "Authorization"), "%.300s", a->text);
    snprintf(headers, sizeof headers,
             "Host: localhost\r\nContent-Type: application/json\r\n"
             "Cookie: rnnsearch_token_%d=s3cret-token_1\r\n",
             port);
    with_headers(port, "POST", "/api/translate", headers, body, a);
    expect_error(a, 401, "token", "the token as a cookie");
    with_headers(port, "GET", "/api/models?token=s3cret-token_1", "Host: localhost\r\n", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    with_headers(port, "GET", "/api/models", "Host: other.lan\r\n", NULL, a);
    expect_error(a, 403, "--allow-host", "a name not allowed");
    rs_server_stop(s);
}
END_TEST

/* What one answer may cost is bounded: over --max-answer is 413, saying
 * what to ask for instead, and no answer is longer than the bound. */
START_TEST(answers_are_bounded)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 16384;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[1024];
    snprintf(body, sizeof body,
             "{\"text\": \"%s %s %s\", \"beam\": 8, \"n_best\": 8, \"svg\": true}", sentence,
             sentence, sentence);
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 413, "--max-answer", "8 hypotheses with pictures");
    snprintf(body, sizeof body, "{\"source\": \"%s %s %s\", \"target\": \"%s %s\", \"svg\": true}",
             sentence, sentence, sentence, sentence, sentence);
    request(port, "POST", "/api/align", body, a);
    expect_error(a, 413, "--max-answer", "align with a picture");
    snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 2, \"n_best\": 1}", sentence);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_uint_le(strlen(a->body), opt.max_answer);
    rs_server_stop(s);
}
END_TEST

/* Four clients that send one header line every 0.3 s (each well within the
 * idle limit) on a server of 4 connections and a 2 s limit are closed by
 * the whole-request deadline, and a fifth client gets in. */
START_TEST(slow_headers_do_not_lock_others_out)
{
    rs_serve_options opt = test_options(1, 4, 2);
    opt.connections = 4;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    int slow[4];
    for (int k = 0; k < 4; k++) {
        slow[k] = connect_to(port);
        send_all(slow[k], "POST /api/translate HTTP/1.1\r\n", 30);
    }
    const double begin = now();
    int served = 0;
    while (!served && now() - begin < 8.0) {
        for (int k = 0; k < 4; k++)
            send_all(slow[k], "X-Slow: 1\r\n", 11);
        nanosleep(&(struct timespec){0, 300000000L}, NULL);
        char req[512];
        const char *text = "{\"text\": \"the horse\"}";
        int n = snprintf(req, sizeof req,
                         "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                         "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                         strlen(text), text);
        double t = now();
        int fd = connect_to(port);
        send_all(fd, req, (size_t)n);
        read_answer(fd, a, t, 5.0);
        close(fd);
        served = a->status == 200;
    }
    ck_assert_msg(served, "a normal client was locked out for 8 s");
    ck_assert_msg(now() - begin < 4.5, "a normal client got in after %.2f s", now() - begin);
    for (int k = 0; k < 4; k++) {
        char c;
        struct pollfd p = {.fd = slow[k], .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 1000), 1);
        ck_assert_msg(recv(slow[k], &c, 1, 0) <= 0, "a slow client was answered, not closed");
        close(slow[k]);
    }
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

static char log_text[8192];
static size_t log_used;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_log(void *ctx, const char *line)
{
    (void)ctx;
    pthread_mutex_lock(&log_lock);
    log_used += (size_t)snprintf(log_text + log_used, sizeof log_text - log_used, "%s\n", line);
    if (log_used >= sizeof log_text)
        log_used = sizeof log_text - 1;
    pthread_mutex_unlock(&log_lock);
}

/* Framing that two parsers could read two ways is refused and the
 * connection closed; the log shows a client's bytes escaped; messages that
 * quote a client's text cut it on a character. */
START_TEST(framing_log_and_quoted_text)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.log = keep_log;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    const char *two_lengths =
        "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 21\r\nContent-Length: 60\r\n\r\n{\"text\": \"the horse\"}"
        "GET /api/models HTTP/1.1\r\nHost: localhost\r\n\r\n";
    raw(port, two_lengths, strlen(two_lengths), 0, a);
    expect_error(a, 400, "more than one Content-Length", "two lengths");
    ck_assert_msg(strstr(a->body, "HTTP/1.1") == NULL, "a second answer followed: %s", a->text);
    const char *length_and_chunks =
        "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n15\r\n{\"text\": \"the horse\"}\r\n0\r\n\r\n";
    raw(port, length_and_chunks, strlen(length_and_chunks), 0, a);
    expect_error(a, 400, "Content-Length and Transfer-Encoding", "length and chunks");

    const char *escape =
        "GET /\x1b[2J\x07 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    raw(port, escape, strlen(escape), 0, a);
    char body[1024] = "{\"text\": \"the horse\", \"model\": \"x";
    for (int k = 0; k < 150; k++)
        strcat(body, "\xc3\xa9");
    strcat(body, "\"}");
    request(port, "POST", "/api/translate", body, a);
    expect_error(a, 404, "no model named 'x", "a long model name"); /* json_of checks the UTF-8 */
    rs_server_stop(s);
    pthread_mutex_lock(&log_lock);
    for (size_t k = 0; k < log_used; k++)
        ck_assert_msg((unsigned char)log_text[k] >= 0x20 || log_text[k] == '\n',
                      "a control byte in the log: %s", log_text);
    ck_assert_msg(strstr(log_text, "\\x1B[2J\\x07"), "%s", log_text);
    pthread_mutex_unlock(&log_lock);
}
END_TEST

/* /api/align applies the length rule of translate and score: a source over
 * max_src_len tokens is cut, and the answer says by how many. */
START_TEST(align_cuts_long_sources_as_score_does)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_chars = 4000;
    opt.max_body = 1 << 16;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    static char body[1 << 14], source[1 << 13];
    source[0] = '\0';
    for (int k = 0; k < RS_MAX_SRC_LEN + 20; k++)
        strcat(source, k ? " horse" : "horse");
    snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"ka\"}", source);
    request(port, "POST", "/api/align", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_int_eq(rs_json_get(j, "source_tokens")->count, RS_MAX_SRC_LEN);
    ck_assert_double_eq(num(j, "truncated"), 20);
    /* The log-probability is score's for the same pair. */
    const rs_model *models[1] = {&model};
    const rs_forced_pair pair = {source, "ka", RS_MAX_SRC_LEN, 0};
    rs_forced f;
    rs_tokens st, tt;
    rs_error err;
    ck_assert_msg(!rs_forced_text(models, 1, &codec, &pair, &f, &st, &tt, &err), "%s", err.msg);
    ck_assert_double_eq_tol(num(j, "logprob"), f.logprob, 1e-6 * fmax(1.0, fabs(f.logprob)));
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);
    rs_json_free(j);
    rs_server_stop(s);
}
END_TEST

/* A model with --attention none is served: its translations come with
 * "alignment": null and "no_alignment" saying why, /api/align is refused
 * with 400 and the same words. */
START_TEST(a_model_without_attention_answers_without_alignment)
{
    char cmd[1024], path[256];
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/none --epochs 1 --emb 8 "
             "--hidden 8 --maxout 8 --attention none --quiet > %s/none.log 2>&1",
             testprog_path(), model_dir, model_dir);
    ck_assert_msg(system(cmd) == 0, "training the none model failed: %s", cmd);
    snprintf(path, sizeof path, "%s/none/last.ckpt", model_dir);
    rs_model none;
    rs_codec none_codec;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(path, &none, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_codec_for_model(&none_codec, &none, &err), "%s", err.msg);
    rs_serve_model served[2] = {{"none", &none, &none_codec}, {"reorder", &model, &codec}};
    const rs_serve_options opt = test_options(1, 4, 10);
    rs_server *s;
    ck_assert_msg(rs_server_start(&s, served, 2, &opt, &err) == 0, "%s", err.msg);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    request(port, "POST", "/api/translate", "{\"text\": \"the tall horse\", \"beam\": 2}", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    const rs_json *h = item(rs_json_get(j, "hypotheses"), 0);
    ck_assert_int_eq(rs_json_get(h, "alignment")->type, RS_JSON_NULL);
    ck_assert_ptr_nonnull(strstr(str(h, "no_alignment"), "--attention none"));
    rs_json_free(j);
    request(port, "POST", "/api/align", "{\"source\": \"the tall horse\", \"target\": \"ka\"}", a);
    expect_error(a, 400, "has no alignment", "align of a none model");
    /* The attentive model beside it still aligns. */
    request(port, "POST", "/api/align",
            "{\"source\": \"the tall horse\", \"target\": \"ka\", \"model\": \"reorder\"}", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    rs_codec_free(&none_codec);
    rs_model_free(&none);
}
END_TEST

/* The training view of a run with --attention none says there are no
 * watched alignments and why; its replay is refused with the same words. */
START_TEST(the_run_view_of_a_model_without_attention_says_why_nothing_is_watched)
{
    char run[128];
    testdir_make(run, "rs_none_run");
    testfile_put(run, "train.log",
                 "2026-11-26T00:00:00Z configuration: src_vocab=9 tgt_vocab=9 attention=none "
                 "tie_embeddings=0\n");
    testfile_put(run, "train.log.tsv", "step\tepoch\ttrain_loss\n10\t1\t2.5\n");
    size_t len;
    int status;
    rs_error err;
    char *json = rs_run_log_json(run, 1 << 20, &len, &status, &err);
    ck_assert_msg(json != NULL, "%s", err.msg);
    rs_json *j = rs_json_parse(json, len, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(str(j, "no_alignment"), "--attention none"));
    rs_json_free(j);
    free(json);
    FILE *out = tmpfile();
    ck_assert_int_eq(rs_run_write_replay(out, run, &err), -1);
    ck_assert_msg(strstr(err.msg, "no watch.jsonl to replay: a model with --attention none"), "%s",
                  err.msg);
    fclose(out);
    /* An attentive run's answer has no such member. */
    testfile_put(run, "train.log", "configuration: attention=additive\n");
    json = rs_run_log_json(run, 1 << 20, &len, &status, &err);
    ck_assert_ptr_null(strstr(json, "no_alignment"));
    free(json);
    testdir_remove(run);
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
    /* Not a numeric address: refused with the options, before a model is loaded. */
    snprintf(cmd, sizeof cmd, "serve -m %s/m --host localhost --port 0 2>&1", model_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--host: 'localhost' is not a numeric IPv4 or IPv6 address"), "%s",
                  out);
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
    snprintf(cmd, sizeof cmd, "serve -m %s/m --max-batch 0 2> /dev/null", model_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);
    twice[1].name = "y";
    opt.max_batch = 0;
    ck_assert_int_eq(rs_server_start(&s, twice, 2, &opt, &err), -1);
    ck_assert_msg(strstr(err.msg, "max_batch"), "%s", err.msg);
    opt.max_batch = 64;
    twice[1].name = "x";
    /* An allowed host is compared with Host's name, which has no port. */
    static const char *const with_port[] = {"a.example:8080"}, *const bracketed[] = {"[::1]"},
                             *const spaced[] = {"a example"}, *const fine[] = {"fd00::1", "a.b-c"};
    const char *const *lists[] = {with_port, bracketed, spaced};
    twice[1].name = "y";
    for (int k = 0; k < 3; k++) {
        opt.allow_hosts = lists[k];
        opt.n_allow_hosts = 1;
        ck_assert_int_eq(rs_server_start(&s, twice, 2, &opt, &err), -1);
        ck_assert_msg(strstr(err.msg, "not a host name or address (without a port)"), "%s",
                      err.msg);
    }
    opt.allow_hosts = fine;
    opt.n_allow_hosts = 2;
    ck_assert_msg(rs_server_start(&s, twice, 2, &opt, &err) == 0, "%s", err.msg);
    rs_server_stop(s);
}
END_TEST

/* `rnnsearch serve` as a process: its port read from the line it prints. */
typedef struct {
    pid_t pid;
    int port;
    char log[256];
} server_process;

/* `rnnsearch serve -m MODEL --port 0 --quiet OPTIONS`, its port read from its log. */
static void spawn_server_with(server_process *p, const char *model_arg, const char *options)
{
    char cmd[1024];
    static int spawned;
    snprintf(p->log, sizeof p->log, "%s/serve.%d.%d.log", model_dir, (int)getpid(), ++spawned);
    unlink(p->log);
    snprintf(cmd, sizeof cmd, "exec %s serve -m %s --port 0 --quiet %s 2> %s", testprog_path(),
             model_arg, options, p->log);
    p->pid = fork();
    ck_assert_int_ge(p->pid, 0);
    if (p->pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    p->port = 0;
    for (int k = 0; k < 200 && !p->port; k++) {
        nanosleep(&(struct timespec){0, 50000000L}, NULL);
        char text[4096] = "";
        FILE *f = fopen(p->log, "r");
        if (f) {
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = '\0';
            fclose(f);
        }
        const char *url = strstr(text, "models:") ? strstr(text, "http://") : NULL;
        const char *colon =
            url ? strchr(url + 7 + (url[7] == '[' ? strcspn(url + 7, "]") : 0), ':') : NULL;
        if (colon)
            p->port = atoi(colon + 1);
    }
    ck_assert_msg(p->port > 0, "the server printed no address");
}

static void spawn_server(server_process *p, const char *options)
{
    char model_arg[128];
    snprintf(model_arg, sizeof model_arg, "%s/m", model_dir);
    spawn_server_with(p, model_arg, options);
}

static char *read_log(const server_process *p)
{
    size_t size;
    unsigned char *text = testfile_read(p->log, &size);
    return (char *)text;
}

static int wait_exit(pid_t pid, double seconds)
{
    const double end = now() + seconds;
    int status;
    while (now() < end) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* A request whose answer (pictures of 8 hypotheses of a long sentence) is
 * larger than the socket buffers: it is still being sent when it returns. */
static int big_request(int port)
{
    static char body[8192], req[9000];
    int used = snprintf(body, sizeof body, "{\"text\": \"");
    for (int k = 0; k < 40; k++)
        used += snprintf(body + used, sizeof body - (size_t)used, "%s%s", k ? " " : "", sentence);
    used += snprintf(body + used, sizeof body - (size_t)used,
                     "\", \"beam\": 64, \"n_best\": 64, \"svg\": true}");
    int n = snprintf(req, sizeof req,
                     "POST /api/translate HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                     used, body);
    /* A small receive window, so that most of the answer waits in the server. */
    int fd = socket(AF_INET, SOCK_STREAM, 0), window = 8192;
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &window, sizeof window), 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    send_all(fd, req, (size_t)n);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_msg(poll(&p, 1, 20000) == 1, "no answer began within 20 s");
    return fd;
}

/* SIGTERM lets an answer in transfer finish, then the server exits 0; a
 * second signal during that ends it at once. On 0.0.0.0 it warns and
 * requires a token it prints. */
START_TEST(the_command_stops_gracefully_and_guards_open_addresses)
{
    server_process p;
    const char *options =
        "--timeout 10 --max-chars 4000 --max-body 65536 --max-answer 67108864 --max-beam 64";
    spawn_server(&p, options);
    int fd = big_request(p.port);
    ck_assert_int_eq(kill(p.pid, SIGTERM), 0);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    const double until = now() + 20.0;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        ck_assert_msg(now() < until && poll(&pf, 1, 1000) >= 0, "the answer did not end");
        if (len + 65536 > cap)
            ck_assert_ptr_nonnull(text = realloc(text, cap *= 2));
        ssize_t n = recv(fd, text + len, 65536, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    text[len] = '\0';
    const char *length = strstr(text, "Content-Length: "), *body = strstr(text, "\r\n\r\n");
    ck_assert_msg(!strncmp(text, "HTTP/1.1 200", 12) && length && body, "%.200s", text);
    size_t want = strtoul(length + 16, NULL, 10), got = len - (size_t)(body + 4 - text);
    ck_assert_msg(got == want && want > 6000000, "an answer of %zu bytes was cut at %zu", want,
                  got);
    free(text);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);

    spawn_server(&p, options);
    fd = big_request(p.port);
    ck_assert_int_eq(kill(p.pid, SIGTERM), 0);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    double t = now();
    ck_assert_int_eq(kill(p.pid, SIGINT), 0);
    ck_assert_int_eq(wait_exit(p.pid, 2.0), 128 + SIGINT);
    ck_assert_msg(now() - t < 1.0, "the second signal took %.2f s", now() - t);
    close(fd);
    char *log = read_log(&p);
    ck_assert_msg(strstr(log, "again, exiting at once"), "%s", log);
    ck_assert_msg(strstr(log, "terminated by SIGTERM, stopping"), "%s", log);
    free(log);

    spawn_server(&p, "--host 0.0.0.0");
    log = read_log(&p);
    const char *token = strstr(log, "?token=");
    ck_assert_msg(strstr(log, "warning: listening on every network address") && token, "%s", log);
    char auth[128], headers[256];
    snprintf(auth, sizeof auth, "%.32s", token + 7);
    answer *a = &answers[0];
    with_headers(p.port, "GET", "/api/models", "Host: 192.0.2.1\r\n", NULL, a);
    expect_error(a, 401, "token", "no token on 0.0.0.0");
    snprintf(headers, sizeof headers, "Host: 192.0.2.1\r\nAuthorization: Bearer %s\r\n", auth);
    with_headers(p.port, "GET", "/api/models", headers, NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    free(log);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
}
END_TEST

/* The training view follows a run in progress: a training appends to
 * watch.jsonl while a client polls GET /api/run/watch?from=NEXT; every answer
 * is whole JSON (no torn record), the records come in order, some arrive
 * while the training still runs, and all of them together are the file. */
START_TEST(the_run_view_reads_a_watch_file_while_training_appends)
{
    char dir[64], cmd[1024], run[128];
    testdir_make(dir, "rnnsearch-serve-run");
    snprintf(run, sizeof run, "%s/run", dir);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 32 * 1024; /* the records come in several answers */
    opt.run_dir = run;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    /* Nothing trained yet: an empty run. */
    request(port, "GET", "/api/run/watch?from=0", NULL, a);
    ck_assert_int_eq(a->status, 200);
    rs_json *j = json_of(a);
    ck_assert_uint_eq(rs_json_get(j, "records")->count, 0);
    rs_json_free(j);

    snprintf(cmd, sizeof cmd,
             "head -n 3000 corpora/reorder/train.tsv > %s/train.tsv && exec %s train --train "
             "%s/train.tsv --dev corpora/reorder/dev.tsv --out %s --epochs 1 --eval-every 4 "
             "--emb 16 --hidden 32 --att 16 --maxout 8 --quiet 2> %s/stderr",
             dir, testprog_path(), dir, run, dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    uint64_t next = 0;
    int records = 0, while_running = 0, finished = 0, last_step = 0;
    while (!finished) {
        int status;
        finished = waitpid(pid, &status, WNOHANG) == pid;
        if (finished)
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the training failed");
        /* After the end, read until nothing is left. */
        for (int more = 1; more;) {
            char path[64];
            snprintf(path, sizeof path, "/api/run/watch?from=%llu", (unsigned long long)next);
            request(port, "GET", path, NULL, a);
            ck_assert_int_eq(a->status, 200);
            j = json_of(a);
            const rs_json *recs = rs_json_get(j, "records");
            uint64_t from, to;
            ck_assert(rs_json_to_u64(rs_json_get(j, "from"), &from) == 0 && from == next);
            ck_assert(rs_json_to_u64(rs_json_get(j, "next"), &to) == 0 && to >= next);
            for (size_t k = 0; k < recs->count; k++) {
                const int step = (int)num(&recs->items[k], "step");
                ck_assert_int_ge(step, last_step);
                last_step = step;
                ck_assert(rs_json_get(&recs->items[k], "alignment") != NULL);
            }
            records += (int)recs->count;
            while_running += !finished && recs->count > 0 && next > 0;
            more = finished && to > next;
            next = to;
            rs_json_free(j);
        }
        nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    ck_assert_msg(while_running > 0, "no record was read while the training ran");
    char path[256];
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    size_t size;
    char *file = (char *)testfile_read(path, &size);
    int lines = 0;
    for (char *p = file; (p = strchr(p, '\n')); p++)
        lines++;
    free(file);
    ck_assert_uint_eq(next, size);
    ck_assert_int_eq(records, lines);
    ck_assert_int_gt(last_step, 0);

    /* The log as columns and rows. */
    request(port, "GET", "/api/run", NULL, a);
    ck_assert_int_eq(a->status, 200);
    j = json_of(a);
    const rs_json *cols = rs_json_get(j, "columns"), *rows = rs_json_get(j, "rows");
    ck_assert_str_eq(item(cols, 0)->string, "step");
    ck_assert_uint_ge(rows->count, 2);
    ck_assert_int_eq((int)item(item(rows, rows->count - 1), 0)->number, last_step);
    rs_json_free(j);
    request(port, "POST", "/api/run", "{}", a);
    expect_error(a, 405, "GET", "POST /api/run");
    request(port, "GET", "/api/run/watch?from=-1", NULL, a);
    expect_error(a, 400, "byte offset", "negative offset");
    with_headers(port, "GET", "/api/run/watch",
                 "Host: localhost\r\nOrigin: http://evil.example\r\n", NULL, a);
    expect_error(a, 403, "cross-origin", "foreign page reading the run");
    rs_server_stop(s);

    /* Without a run: 404 saying how to give one; with a token, it is needed. */
    opt.run_dir = NULL;
    s = start_with(&opt);
    request(rs_server_port(s), "GET", "/api/run", NULL, a);
    expect_error(a, 404, "--run DIR", "no run");
    rs_server_stop(s);
    opt.run_dir = run;
    opt.token = "secret-token";
    s = start_with(&opt);
    request(rs_server_port(s), "GET", "/api/run/watch", NULL, a);
    expect_error(a, 401, "token", "run without the token");
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* "words": true merges SentencePiece pieces into the words `align --words`
 * shows (the same function): the answer's alignment record is that command's
 * JSON record; a model without pieces refuses it. */
START_TEST(words_merge_pieces_as_align_words_does)
{
    char dir[64], cmd[1024], path[256];
    testdir_make(dir, "rnnsearch-serve-words");
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/spm --subwords 60 --max-steps 5 "
             "--emb 8 --hidden 8 --att 8 --maxout 4 --quiet 2>/dev/null",
             testprog_path(), dir);
    ck_assert_int_eq(system(cmd), 0);
    rs_model spm;
    rs_codec spm_codec;
    rs_error err;
    snprintf(path, sizeof path, "%s/spm/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(path, &spm, NULL, &err) == 0, "%s", err.msg);
    ck_assert_msg(rs_codec_for_model(&spm_codec, &spm, &err) == 0, "%s", err.msg);
    const rs_serve_model served[2] = {{"spm", &spm, &spm_codec}, {"words", &model, &codec}};
    rs_serve_options opt = test_options(1, 4, 10);
    rs_server *s;
    ck_assert_msg(rs_server_start(&s, served, 2, &opt, &err) == 0, "%s", err.msg);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    request(port, "POST", "/api/align",
            "{\"source\": \"my young teacher sees the horse\", \"target\": \"lehro yelo mimi\", "
            "\"words\": true}",
            a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    const char *record = strstr(a->body, "\"alignment\":");
    ck_assert_ptr_nonnull(record);
    record += strlen("\"alignment\":");
    snprintf(cmd, sizeof cmd,
             "printf 'my young teacher sees the horse\\tlehro yelo mimi\\n' | %s align -m %s/spm "
             "--pairs --words --format json",
             testprog_path(), dir);
    char want[8192];
    ck_assert_int_eq(testprog_shell(cmd, want, sizeof want), 0);
    want[strcspn(want, "\n")] = '\0';
    /* The command's record and the answer both count from 0. */
    ck_assert_ptr_nonnull(strstr(want, "{\"id\":0,"));
    ck_assert_msg(!strncmp(record, want, strlen(want)), "answer: %.400s\nalign --words: %s", record,
                  want);
    ck_assert_ptr_nonnull(strstr(want, "\"source\":[\"my\",\"young\",\"teacher\""));
    /* Without it, the pieces; a word-level model refuses it. */
    request(port, "POST", "/api/translate", "{\"text\": \"my young teacher\"}", a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\\u2581") == NULL &&
                      strstr(a->body, "\"source\":[\"\xE2\x96\x81"),
                  "%.300s", a->text);
    request(port, "POST", "/api/translate", "{\"text\": \"my young teacher\", \"words\": true}", a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"source\":[\"my\",\"young\""), "%.300s",
                  a->text);
    request(port, "POST", "/api/translate",
            "{\"text\": \"the horse\", \"model\": \"words\", \"words\": true}", a);
    expect_error(a, 400, "has none (tokenizer word)", "words on a word model");
    request(port, "POST", "/api/translate", "{\"text\": \"the horse\", \"words\": 1}", a);
    expect_error(a, 400, "'words' must be true or false", "words not a boolean");
    rs_server_stop(s);
    rs_codec_free(&spm_codec);
    rs_model_free(&spm);
    testdir_remove(dir);
}
END_TEST

/* serve --config: the serve: section's settings (a list for --allow-host),
 * the command line's --port winning over the file's. */
START_TEST(the_command_reads_its_section_of_a_yaml_file)
{
    char path[256], options[300];
    snprintf(path, sizeof path, "%s/serve.yaml", model_dir);
    const char *yaml = "training: {epochs: 3}\n"
                       "serve:\n  port: 1\n  max_beam: 3\n  max_batch: 5\n  timeout: 7\n"
                       "  allow_host: [a.example, b.example]\n";
    testfile_write(path, (const unsigned char *)yaml, strlen(yaml));
    snprintf(options, sizeof options, "--config %s", path);
    server_process p;
    spawn_server(&p, options);
    char *log = read_log(&p);
    ck_assert_msg(strstr(log, "max-batch 5 | max-beam 3 | timeout 7 s"), "%s", log);
    free(log);
    answer *a = &answers[0];
    with_headers(p.port, "GET", "/api/models", "Host: b.example\r\n", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    with_headers(p.port, "GET", "/api/models", "Host: c.example\r\n", NULL, a);
    ck_assert_msg(a->status != 200, "%.300s", a->text);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
}
END_TEST

/* serve --int8 translates with int8 weights (its scores differ from the exact
 * server's), and a given target's forced alignment stays exact. */
START_TEST(int8_changes_translations_scores_not_forced_ones)
{
    char body[256];
    const char *paths[2] = {"/api/translate", "/api/align"};
    double score[2][2];
    for (int q = 0; q < 2; q++) {
        server_process p;
        spawn_server(&p, q ? "--int8" : "");
        for (int k = 0; k < 2; k++) {
            answer *a = &answers[0];
            if (k == 0)
                snprintf(body, sizeof body, "{\"text\": \"%s\"}", sentence);
            else
                snprintf(body, sizeof body, "{\"source\": \"%s\", \"target\": \"ka vidat\"}",
                         sentence);
            request(p.port, "POST", paths[k], body, a);
            ck_assert_msg(a->status == 200, "%s: %.300s", paths[k], a->text);
            rs_json *j = json_of(a);
            score[q][k] =
                k ? num(j, "logprob") : num(item(rs_json_get(j, "hypotheses"), 0), "logprob");
            rs_json_free(j);
        }
        kill(p.pid, SIGTERM);
        ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    }
    ck_assert_msg(score[0][0] != score[1][0], "translation score %g with and without --int8",
                  score[0][0]);
    ck_assert_msg(score[0][1] == score[1][1], "forced logprob %g, with --int8 %g", score[0][1],
                  score[1][1]);
}
END_TEST

/* ---- who may ask: addresses, headers, arguments ---- */

/* Whether a token is needed is decided on the parsed address, not its
 * spelling: ::0, 0::0 and 0:0:0:0:0:0:0:0 are ::, and any address that is
 * not loopback (10.9.9.9, fd00::9) reaches a network too. The library
 * refuses to listen on one without a token, before it binds. */
START_TEST(the_token_is_decided_by_what_the_address_is)
{
    static const char *const loopback[] = {
        "127.0.0.1", "127.9.9.9",       "127.255.255.254",  "::1",
        "0::1",      "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::FFFF:127.1.2.3"};
    static const char *const open[] = {
        "0.0.0.0",  "::",      "::0",         "0::0",           "0:0:0:0:0:0:0:0",
        "10.9.9.9", "fd00::9", "192.0.2.1",   "128.0.0.1",      "::ffff:10.9.9.9",
        "::2",      "fe80::1", "::127.0.0.1", "::ffff:0.0.0.0", "126.255.255.255"};
    static const char *const not_numeric[] = {"localhost",  "127.1",      "",      "1.2.3.4.5",
                                              "fe80::1%lo", " 127.0.0.1", "[::1]", "::1 "};
    for (size_t k = 0; k < sizeof loopback / sizeof *loopback; k++)
        ck_assert_msg(rs_serve_loopback(loopback[k]) == 1, "%s is loopback", loopback[k]);
    for (size_t k = 0; k < sizeof open / sizeof *open; k++)
        ck_assert_msg(rs_serve_loopback(open[k]) == 0, "%s is not loopback", open[k]);
    for (size_t k = 0; k < sizeof not_numeric / sizeof *not_numeric; k++)
        ck_assert_msg(rs_serve_loopback(not_numeric[k]) == -1, "'%s' is not an address",
                      not_numeric[k]);
    for (size_t k = 0; k < 5; k++) /* the spellings of every address */
        ck_assert_msg(rs_serve_any_address(open[k]) == 1, "%s is every address", open[k]);
    ck_assert_int_eq(rs_serve_any_address("::ffff:0.0.0.0"), 1);
    ck_assert_int_eq(rs_serve_any_address("10.9.9.9"), 0);
    ck_assert_int_eq(rs_serve_any_address("127.0.0.1"), 0);
    ck_assert_int_eq(rs_serve_any_address("localhost"), -1);
    rs_serve_options opt = test_options(1, 4, 10);
    const rs_serve_model served[1] = {{"reorder", &model, &codec}};
    rs_server *s;
    rs_error err;
    for (size_t k = 0; k < sizeof open / sizeof *open; k++) {
        opt.host = open[k];
        ck_assert_msg(rs_server_start(&s, served, 1, &opt, &err) == -1 && s == NULL,
                      "%s without a token was not refused", open[k]);
        ck_assert_msg(strstr(err.msg, "not a loopback address") && strstr(err.msg, "token"), "%s",
                      err.msg);
    }

    /* The program on ::0 (which listens on ::1 too): a token of its own,
     * required from every client whatever Host it names; on
     * 0:0:0:0:0:0:0:0 with --no-token, none. */
    server_process p;
    spawn_server(&p, "--host ::0");
    char *log = read_log(&p);
    const char *token = strstr(log, "?token=");
    ck_assert_msg(strstr(log, "warning: listening on every network address (::0)") && token, "%s",
                  log);
    char headers[256];
    answer *a = &answers[0];
    raw6_get(p.port, "/api/models", "Host: 127.0.0.1\r\n", a);
    expect_error(a, 401, "token", "::0 without a token, Host 127.0.0.1");
    raw6_get(p.port, "/api/models", "Host: [::1]\r\n", a);
    expect_error(a, 401, "token", "::0 without a token, Host [::1]");
    snprintf(headers, sizeof headers, "Host: 127.0.0.1\r\nAuthorization: Bearer %.32s\r\n",
             token + 7);
    raw6_get(p.port, "/api/models", headers, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    free(log);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    spawn_server(&p, "--host 0:0:0:0:0:0:0:0 --no-token");
    log = read_log(&p);
    ck_assert_msg(!strstr(log, "?token=") && strstr(log, "can use this server (--no-token)"), "%s",
                  log);
    free(log);
    raw6_get(p.port, "/api/models", "Host: [::1]\r\n", a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
}
END_TEST

/* One GET /api/models to addr:port in the private network: its status, or
 * a negative number (no connection, no answer within 5 s). No Check
 * assertions: it runs in a forked child. */
static int probe(const char *addr, int port, const char *headers)
{
    union {
        struct sockaddr sa;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } to;
    memset(&to, 0, sizeof to);
    socklen_t len;
    if (inet_pton(AF_INET, addr, &to.v4.sin_addr) == 1) {
        to.v4.sin_family = AF_INET;
        to.v4.sin_port = htons((uint16_t)port);
        len = sizeof to.v4;
    } else if (inet_pton(AF_INET6, addr, &to.v6.sin6_addr) == 1) {
        to.v6.sin6_family = AF_INET6;
        to.v6.sin6_port = htons((uint16_t)port);
        len = sizeof to.v6;
    } else {
        return -2;
    }
    /* An address just added may take a moment to route (seen once for
     * fd00::9): a few tries, 2 s at most. */
    int fd = -1;
    for (int k = 0; k < 20 && fd < 0; k++) {
        fd = socket(to.sa.sa_family, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, &to.sa, len)) {
            if (k == 19)
                fprintf(stderr, "connect to %s port %d: %s\n", addr, port, strerror(errno));
            close(fd);
            fd = -1;
            nanosleep(&(struct timespec){0, 100000000L}, NULL);
        }
    }
    if (fd < 0)
        return -3;
    char req[512], text[4096];
    int n = snprintf(req, sizeof req, "GET /api/models HTTP/1.1\r\n%sConnection: close\r\n\r\n",
                     headers);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -4;
    }
    size_t got = 0;
    const double until = now() + 5.0;
    while (got < sizeof text - 1 && now() < until) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 200) != 1)
            continue;
        ssize_t r = recv(fd, text + got, sizeof text - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    text[got] = '\0';
    int status = -5;
    return sscanf(text, "HTTP/1.1 %d", &status) == 1 ? status : -5;
}

/* The checks of one address in the private network (the child's exit
 * status: 0, or the number of the check that failed). */
static int private_address_checks(const char *host, const char *connect_to_addr)
{
    const rs_serve_model served[1] = {{"reorder", &model, &codec}};
    rs_serve_options opt = test_options(1, 4, 10);
    rs_server *s;
    rs_error err;
    opt.host = host;
    if (rs_server_start(&s, served, 1, &opt, &err) == 0) {
        fprintf(stderr, "%s: started without a token\n", host);
        rs_server_stop(s);
        return 1;
    }
    opt.token = "netns-token-1";
    if (rs_server_start(&s, served, 1, &opt, &err)) {
        fprintf(stderr, "%s: %s\n", host, err.msg);
        return 2;
    }
    const int port = rs_server_port(s);
    char own[128];
    snprintf(own, sizeof own, "Host: %s%s%s\r\n", strchr(connect_to_addr, ':') ? "[" : "",
             connect_to_addr, strchr(connect_to_addr, ':') ? "]" : "");
    const struct {
        const char *headers;
        int status;
    } checks[] = {
        {own, 401},
        {"Host: 127.0.0.1\r\n", 401},
        {"Host: localhost\r\n", 401},
        {"Host: 127.0.0.1\r\nAuthorization: Bearer netns-token-2\r\n", 401},
        {"Host: 127.0.0.1\r\nAuthorization: Bearer netns-token-1\r\n", 200},
    };
    int failed = 0;
    for (int k = 0; k < 5 && !failed; k++) {
        char headers[256];
        snprintf(headers, sizeof headers, "%s", checks[k].headers);
        int got = probe(connect_to_addr, port, headers);
        if (got != checks[k].status) {
            fprintf(stderr, "%s via %s, %s: status %d, expected %d\n", host, connect_to_addr,
                    checks[k].headers, got, checks[k].status);
            failed = 3 + k;
        }
    }
    rs_server_stop(s);
    return failed;
}

/* In a private network namespace (unshare, as `unshare -rn`): a server on
 * 10.9.9.9, on fd00::9 or on ::0 answers no client without the token,
 * whatever Host it names, and will not start without one. */
START_TEST(non_loopback_addresses_need_the_token_in_a_private_network)
{
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        static const char *const ip[] = {"addr add 10.9.9.9/32 dev lo",
                                         "-6 addr add fd00::9/128 dev lo nodad"};
        char why[256] = "";
        close(pipefd[0]);
        if (testnetns_enter(ip, 2, why, sizeof why)) {
            if (write(pipefd[1], why, strlen(why)) < 0)
                _exit(98);
            _exit(77);
        }
        int rc = private_address_checks("10.9.9.9", "10.9.9.9");
        if (!rc)
            rc = private_address_checks("fd00::9", "fd00::9");
        if (!rc)
            rc = private_address_checks("::0", "fd00::9");
        if (!rc)
            rc = private_address_checks("0.0.0.0", "10.9.9.9");
        _exit(rc);
    }
    close(pipefd[1]);
    int rc = wait_exit(pid, 40.0);
    char why[256] = "";
    ssize_t n = read(pipefd[0], why, sizeof why - 1);
    why[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    if (rc == 77) {
        test_skip(why);
        return;
    }
    ck_assert_msg(rc == 0, "check %d failed in the private network (see above)", rc);
}
END_TEST

/* Two Host, Origin, Content-Type or Authorization headers (the first would
 * win), an HTTP/1.1 request without Host, a Host with bytes after its
 * address, and a 'from' that strtoull would take but is not digits: 400. */
START_TEST(duplicate_and_malformed_headers_are_refused)
{
    rs_serve_options opt = test_options(1, 4, 10);
    char dir[64];
    testdir_make(dir, "rnnsearch-serve-strict");
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    const char *body = "{\"text\": \"the horse\"}";
    with_headers(port, "GET", "/api/models", "Host: 127.0.0.1\r\nHost: evil.com\r\n", NULL, a);
    expect_error(a, 400, "more than one Host", "two Hosts");
    with_headers(port, "GET", "/api/models", "Host: evil.com\r\nhost: 127.0.0.1\r\n", NULL, a);
    expect_error(a, 400, "more than one Host", "two Hosts, the second allowed");
    with_headers(port, "POST", "/api/translate",
                 "Host: localhost\r\nOrigin: http://localhost\r\nOrigin: http://evil.com\r\n"
                 "Content-Type: application/json\r\n",
                 body, a);
    expect_error(a, 400, "more than one Origin", "two Origins");
    with_headers(
        port, "POST", "/api/translate",
        "Host: localhost\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n", body,
        a);
    expect_error(a, 400, "more than one Content-Type", "two Content-Types");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n", NULL,
                 a);
    expect_error(a, 400, "more than one Authorization", "two Authorizations");
    /* Host is required of HTTP/1.1 (RFC 9112 §3.2), not of HTTP/1.0. */
    const char *no_host = "GET /api/models HTTP/1.1\r\nConnection: close\r\n\r\n";
    raw(port, no_host, strlen(no_host), 0, a);
    expect_error(a, 400, "needs a Host header", "HTTP/1.1 without Host");
    const char *old = "GET /api/models HTTP/1.0\r\n\r\n";
    raw(port, old, strlen(old), 0, a);
    ck_assert_msg(!strncmp(a->text, "HTTP/1.", 7) && strstr(a->text, " 200 "), "%.300s", a->text);
    static const char *const malformed[] = {"[::1]evil.com",
                                            "[::1].evil.com",
                                            "[::1",
                                            "[evil.com]",
                                            "[::1]:80x",
                                            "localhost:",
                                            "localhost:123456",
                                            "local host",
                                            "localhost@evil.com",
                                            "evil.com#localhost",
                                            "127.0.0.1:80:80",
                                            "",
                                            "[]"};
    for (size_t k = 0; k < sizeof malformed / sizeof *malformed; k++) {
        char headers[128];
        snprintf(headers, sizeof headers, "Host: %s\r\n", malformed[k]);
        with_headers(port, "GET", "/api/models", headers, NULL, a);
        ck_assert_msg(a->status == 400 && strstr(a->body, "malformed Host"), "Host '%s': %.300s",
                      malformed[k], a->text);
    }
    with_headers(port, "GET", "/api/models", "Host: [::1]:8080\r\n", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    with_headers(port, "GET", "/api/models", "Host: LOCALHOST:1\r\n", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    with_headers(port, "GET", "/api/models", "Host: [0:0::1]:1\r\n", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    with_headers(port, "GET", "/api/models", "Host: 127.0.0.2\r\n", NULL, a);
    expect_error(a, 403, "not a name of this server", "another loopback address");
    /* 'from': digits only once decoded, once, and not beyond 64 bits. */
    static const char *const froms[] = {
        "+5",       "%205",    "%2B5", "5%00", "-1",
        "5 ",       "0x10",    "1e3",  "",     "99999999999999999999",
        "1&from=2", "0&from=0"};
    for (size_t k = 0; k < sizeof froms / sizeof *froms; k++) {
        char path[128];
        snprintf(path, sizeof path, "/api/run/watch?from=%s", froms[k]);
        request(port, "GET", path, NULL, a);
        ck_assert_msg(a->status == 400, "from=%s: %.300s", froms[k], a->text);
    }
    request(port, "GET", "/api/run/watch?from", NULL, a);
    expect_error(a, 400, "digits only", "from without a value");
    request(port, "GET", "/api/run/watch?from=007", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    request(port, "GET", "/api/run/watch?from=18446744073709551615", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    /* Two tokens, one of them right: the server would pick one. */
    opt.token = "s3cret-token_1";
    s = start_with(&opt);
    request(rs_server_port(s), "GET", "/api/models?token=s3cret-token_1&token=x", NULL, a);
    expect_error(a, 400, "'token' is given more than once", "two tokens");
    request(rs_server_port(s), "GET", "/api/models?x=a%00b&token=s3cret-token_1", NULL, a);
    expect_error(a, 400, "a query argument holds a NUL byte", "an argument with a NUL");
    request(rs_server_port(s), "GET", "/api/models?token=s3cret-token_1%00junk", NULL, a);
    expect_error(a, 400, "NUL", "a token with a NUL");
    request(rs_server_port(s), "GET", "/api/models?token=s3cret-token_1", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* Found by attacking the server: a NUL byte in a header value or in the
 * path made them read shorter than sent (Host "localhost\0.evil.example"
 * read as localhost, /api/models%00.json routed to /api/models); a header
 * name with a space before its colon ("Host : evil.com") is no header a
 * reader would agree on. Each is 400. */
START_TEST(nul_bytes_and_odd_header_names_are_refused)
{
    rs_server *s = start(1, 4, 10);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    char req[512];
    static const char *const with_nul[] = {
        "Host: localhost\0.evil.example:8904\r\n",
        "Host: localhost\r\nOrigin: http://localhost\0.evil.example\r\n",
        "Host: localhost\r\nSec-Fetch-Site: same-origin\0cross-site\r\n",
        "Host: localhost\r\nX-Other: a\0b\r\n",
    };
    for (size_t i = 0; i < sizeof with_nul / sizeof *with_nul; i++) {
        /* The header's length up to its \r\n\0... : the NUL inside counts. */
        const char *h = with_nul[i];
        size_t hl = strlen(h) + 1 + strlen(h + strlen(h) + 1);
        int n = snprintf(req, sizeof req, "GET /api/models HTTP/1.1\r\n");
        memcpy(req + n, h, hl);
        n += (int)hl;
        n += snprintf(req + n, sizeof req - (size_t)n, "Connection: close\r\n\r\n");
        raw(port, req, (size_t)n, 0, a);
        expect_error(a, 400, "NUL", "a header with a NUL byte");
    }
    const char *path_nul =
        "GET /api/models%00.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    raw(port, path_nul, strlen(path_nul), 0, a);
    expect_error(a, 400, "NUL", "/api/models%00.json");
    const char *space = "GET /api/models HTTP/1.1\r\nHost : evil.com\r\nHost: localhost\r\n"
                        "Connection: close\r\n\r\n";
    raw(port, space, strlen(space), 0, a);
    ck_assert_msg(a->status == 400, "Host with a space before the colon: %.300s", a->text);
    const char *space2 =
        "GET /api/models HTTP/1.1\r\nHost: localhost\r\nOrigin : http://evil.com\r\n"
        "Connection: close\r\n\r\n";
    raw(port, space2, strlen(space2), 0, a);
    ck_assert_msg(a->status == 400, "Origin with a space before the colon: %.300s", a->text);
    /* The same requests without the odd bytes are answered. */
    const char *fine = "GET /api/models HTTP/1.1\r\nHost: localhost\r\nX-Pad: a b  \t\r\n"
                       "X-Empty:\r\nConnection: close\r\n\r\n";
    raw(port, fine, strlen(fine), 0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
}
END_TEST

/* ---- the training view's files ---- */

/* A GET answered within `wait` seconds (else the test fails). */
static void get_within(int port, const char *path, double wait, answer *a)
{
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
    const double start = now();
    int fd = connect_to(port);
    send_all(fd, req, (size_t)n);
    read_answer(fd, a, start, wait);
    close(fd);
}

/* A FIFO (or any file that is not regular) in the run directory would block
 * whoever opens or reads it: refused at once, and the server goes on
 * answering; the program still ends on SIGTERM. */
START_TEST(run_files_that_could_block_are_refused)
{
    char dir[64], path[256], options[128];
    testdir_make(dir, "rnnsearch-serve-fifo");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    get_within(port, "/api/run/watch?from=0", 3.0, a);
    expect_error(a, 403, "watch.jsonl is not a regular file", "a FIFO as watch.jsonl");
    ck_assert_msg(a->seconds < 1.0, "refusing the FIFO took %.2f s", a->seconds);
    get_within(port, "/api/run", 3.0, a);
    expect_error(a, 403, "train.log.tsv is not a regular file", "a FIFO as train.log.tsv");
    get_within(port, "/", 3.0, a);
    ck_assert_msg(a->status == 200 && a->seconds < 1.0, "%.200s", a->text);
    get_within(port, "/api/models", 3.0, a);
    ck_assert_msg(a->status == 200 && a->seconds < 1.0, "%.200s", a->text);
    double t = now();
    rs_server_stop(s);
    ck_assert_msg(now() - t < 3.0, "stopping took %.2f s", now() - t);
    /* A FIFO only as watch.jsonl: the log is still read, its size left unknown. */
    unlink(path);
    testfile_write(path, (const unsigned char *)"step\tdev_loss\n1\t2.5\n", 20);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[1,2.5]]") &&
                      strstr(a->body, "\"watch_bytes\":null"),
                  "%.300s", a->text);
    rs_server_stop(s);

    server_process p;
    snprintf(options, sizeof options, "--run %s", dir);
    spawn_server(&p, options);
    get_within(p.port, "/api/run/watch?from=0", 3.0, a);
    expect_error(a, 403, "not a regular file", "the program, a FIFO as watch.jsonl");
    get_within(p.port, "/api/models", 3.0, a);
    ck_assert_int_eq(a->status, 200);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    testdir_remove(dir);
}
END_TEST

/* Polls /api/run/watch from `from` until `next` stops moving (at most 20
 * answers, each within 2 s): the records' "sentence" numbers in order into
 * ids, the skipped records and bytes summed; returns the last next. */
static uint64_t poll_watch(int port, uint64_t from, int *ids, int *n_ids, int *skipped,
                           uint64_t *skipped_bytes)
{
    answer *a = &answers[1];
    for (int k = 0; k < 20; k++) {
        char path[96];
        snprintf(path, sizeof path, "/api/run/watch?from=%llu", (unsigned long long)from);
        get_within(port, path, 2.0, a);
        ck_assert_msg(a->status == 200, "from %llu: %.300s", (unsigned long long)from, a->text);
        rs_json *j = json_of(a);
        const rs_json *recs = rs_json_get(j, "records");
        for (size_t r = 0; r < recs->count; r++)
            ids[(*n_ids)++] = (int)num(&recs->items[r], "sentence");
        uint64_t next, bytes, skips;
        ck_assert(rs_json_to_u64(rs_json_get(j, "next"), &next) == 0 && next >= from);
        ck_assert(rs_json_to_u64(rs_json_get(j, "skipped"), &skips) == 0);
        ck_assert(rs_json_to_u64(rs_json_get(j, "skipped_bytes"), &bytes) == 0);
        *skipped += (int)skips;
        *skipped_bytes += bytes;
        rs_json_free(j);
        if (next == from)
            return next;
        from = next;
    }
    ck_abort_msg("the watch answers did not stop moving in 20 polls");
    return from;
}

static void append_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* A watch record longer than an answer may be is skipped with a count, not
 * refused on every poll: a 3 MiB line still without its newline, then once
 * it ends, the records after it; the same for a whole record of 40 KB.
 * Every answer comes within 2 s and the other endpoints answer meanwhile. */
/* A watch record as training writes it (train/watch.h), of one word. */
#define WATCH_RECORD(step, sentence)                                                               \
    "{\"step\":" #step ",\"sentence\":" #sentence                                                  \
    ",\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],\"alignment\":[[1]]}\n"

/* Only records as training writes them reach the page (one that lacked
 * its matrix made the replay page draw nothing at all): others are counted
 * as unreadable. */
START_TEST(malformed_watch_records_are_unreadable)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-records");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    const char *text = WATCH_RECORD(
        1,
        0) "{\"step\":700}\n{}\n[1,2]\n"
           "{\"step\":1,\"sentence\":0,\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],"
           "\"alignment\":[[1,2]]}\n"
           "{\"step\":1,\"sentence\":0,\"kind\":\"greedy\",\"source\":\"abc\",\"target\":[\"b\"],"
           "\"alignment\":[[1]]}\n"
           "{\"step\":1,\"sentence\":\"0\",\"kind\":\"greedy\",\"source\":[\"a\"],\"target\":[\"b\"],"
           "\"alignment\":[[\"1\"]]}\n" WATCH_RECORD(2, 0);
    testfile_write(path, (const unsigned char *)text, strlen(text));
    size_t len;
    int status;
    rs_error err;
    char *json = rs_run_watch_json(dir, 0, 1 << 20, &len, &status, &err);
    ck_assert_msg(json, "%s", err.msg);
    ck_assert_msg(strstr(json, "\"unreadable\":6") && strstr(json, "\"step\":2,"), "%s", json);
    ck_assert_msg(!strstr(json, "\"step\":700"), "%s", json);
    free(json);
    testdir_remove(dir);
}
END_TEST

START_TEST(watch_records_too_long_are_skipped)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-long");
    snprintf(path, sizeof path, "%s/watch.jsonl", dir);
    const char *two = WATCH_RECORD(0, 1) WATCH_RECORD(0, 2);
    testfile_write(path, (const unsigned char *)two, strlen(two));
    const size_t big = (size_t)3 << 20;
    char *line = malloc(big);
    ck_assert_ptr_nonnull(line);
    memset(line, 'x', big);
    memcpy(line, "{\"step\":1,\"sentence\":9,\"pad\":\"", 31);
    append_file(path, line, big);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_answer = 16384;
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    int ids[16], n = 0, skipped = 0;
    uint64_t bytes = 0;
    uint64_t next = poll_watch(port, 0, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0] * 10 + ids[1], 12);
    ck_assert_int_eq(skipped, 1);
    ck_assert_uint_eq(bytes, big);
    ck_assert_uint_eq(next, strlen(two) + big);
    answer *a = &answers[0];
    get_within(port, "/api/models", 2.0, a);
    ck_assert_int_eq(a->status, 200);
    /* The line ends; a whole record of 40 KB follows, then a small one. */
    const char *third = "\"}\n" WATCH_RECORD(1, 3);
    append_file(path, third, strlen(third));
    memcpy(line + 40000, "\"}\n", 3);
    append_file(path, line, 40003);
    const char *last = WATCH_RECORD(1, 4);
    append_file(path, last, strlen(last));
    n = 0;
    skipped = 0;
    bytes = 0;
    next = poll_watch(port, next, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0] * 10 + ids[1], 34);
    ck_assert_int_eq(skipped, 1);
    ck_assert_uint_eq(bytes, 3 + 40003);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(next, (uint64_t)st.st_size);
    /* From 0 in one go: the four small records, two skipped. */
    n = 0;
    skipped = 0;
    bytes = 0;
    poll_watch(port, 0, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(skipped, 2);
    /* An offset inside a line reads from the next one. */
    n = 0;
    poll_watch(port, 5, ids, &n, &skipped, &bytes);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(ids[0], 2);
    rs_server_stop(s);
    free(line);
    testdir_remove(dir);
}
END_TEST

/* A symbolic link in the run directory that leads out of it is refused (a
 * run directory may be /tmp, where anyone can make one); one that stays
 * inside is followed, and so is a run directory that is itself a link. */
START_TEST(symlinks_out_of_the_run_directory_are_refused)
{
    char dir[64], run[128], path[256], target[256];
    testdir_make(dir, "rnnsearch-serve-links");
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert_int_eq(mkdir(run, 0700), 0);
    snprintf(path, sizeof path, "%s/secret", dir);
    const char *secret = "step\tpassword\n1\thunter2\n";
    testfile_write(path, (const unsigned char *)secret, strlen(secret));
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    ck_assert_int_eq(symlink("../secret", path), 0);
    snprintf(target, sizeof target, "%s/secret", dir);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    ck_assert_int_eq(symlink(target, path), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = run;
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    get_within(port, "/api/run", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "a log linked to a file outside");
    ck_assert_ptr_null(strstr(a->text, "hunter2"));
    ck_assert_ptr_null(strstr(a->text, "secret"));
    get_within(port, "/api/run/watch", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "watch.jsonl linked outside");
    /* Through a directory link: run/sub -> .. */
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", run);
    ck_assert_int_eq(symlink("..", path), 0);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    ck_assert_int_eq(symlink("sub/secret", path), 0);
    get_within(port, "/api/run/watch", 3.0, a);
    expect_error(a, 403, "leads out of the run directory", "a link through a directory link");
    rs_server_stop(s);
    /* Links that stay inside, and a run directory reached through a link. */
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    unlink(path);
    snprintf(path, sizeof path, "%s/watch.jsonl", run);
    unlink(path);
    snprintf(path, sizeof path, "%s/log.real", run);
    testfile_write(path, (const unsigned char *)"step\tloss\n7\t1.5\n", 16);
    snprintf(path, sizeof path, "%s/train.log.tsv", run);
    ck_assert_int_eq(symlink("log.real", path), 0);
    char link[128];
    snprintf(link, sizeof link, "%s/run-link", dir);
    ck_assert_int_eq(symlink("run", link), 0);
    opt.run_dir = link;
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[7,1.5]]"), "%.300s", a->text);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* A log of `rows` rows, steps 1…rows, about 75 bytes a row. */
static void write_log(const char *path, int rows)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\t"
          "dev_metric_name\taer\talign_precision\talign_recall\n",
          f);
    for (int k = 1; k <= rows; k++)
        fprintf(f, "%d\t%d\t%.9f\t%.9f\t%.4f\t115000.0\t0.002\t%.3f\tbleu\t\t\t\n", k, 1 + k / 100,
                3.0 / (1 + k * 0.001), 3.1 / (1 + k * 0.001), 0.01 * k, 0.08 * k);
    ck_assert_int_eq(fclose(f), 0);
}

/* The steps of an /api/run answer's rows, checked to rise; their count. */
static size_t log_steps(const rs_json *j, int *steps, size_t max)
{
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert_ptr_nonnull(rows);
    ck_assert_uint_le(rows->count, max);
    for (size_t k = 0; k < rows->count; k++) {
        steps[k] = (int)item(item(rows, k), 0)->number;
        ck_assert_uint_eq(item(rows, k)->count, 12);
        if (k)
            ck_assert_int_gt(steps[k], steps[k - 1]);
    }
    return rows->count;
}

/* A 30 000-row log is larger than an answer: thinned to RS_RUN_MAX_ROWS rows
 * sampled evenly, the first and the last kept, and the page told so; a
 * log read whole is thinned exactly; a small --max-answer gets fewer rows. */
START_TEST(long_logs_are_thinned)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-thin");
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    write_log(path, 30000);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    rs_serve_options opt = test_options(1, 4, 10);
    rs_serve_options_default(&opt); /* the default --max-answer, 2 MiB */
    opt.port = 0;
    ck_assert_uint_gt((uint64_t)st.st_size, opt.max_answer);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    answer *a = &answers[0];
    static int steps[RS_RUN_MAX_ROWS];
    for (int poll_no = 0; poll_no < 3; poll_no++) { /* every poll, not only the first */
        get_within(rs_server_port(s), "/api/run", 5.0, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        rs_json *j = json_of(a);
        size_t n = log_steps(j, steps, RS_RUN_MAX_ROWS);
        ck_assert_uint_ge(n, RS_RUN_MAX_ROWS * 9 / 10);
        ck_assert_int_eq(steps[0], 1);
        ck_assert_int_eq(steps[n - 1], 30000);
        for (size_t k = 1; k < n; k++) /* evenly: no gap over twice the mean */
            ck_assert_int_le(steps[k] - steps[k - 1], 2 * 30000 / (int)n + 2);
        ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_TRUE);
        ck_assert(rs_json_get(j, "log_rows_exact")->type == RS_JSON_FALSE);
        const double rows = num(j, "log_rows");
        ck_assert_msg(fabs(rows - 30000) < 1500, "estimated %g rows", rows);
        rs_json_free(j);
    }
    rs_server_stop(s);
    /* 5 000 rows, read whole: exactly the rows k·4999/1999. */
    write_log(path, 5000);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_uint_eq(log_steps(j, steps, RS_RUN_MAX_ROWS), RS_RUN_MAX_ROWS);
    for (int k = 0; k < RS_RUN_MAX_ROWS; k++)
        ck_assert_int_eq(steps[k], 1 + k * 4999 / (RS_RUN_MAX_ROWS - 1));
    ck_assert_int_eq((int)num(j, "log_rows"), 5000);
    ck_assert(rs_json_get(j, "log_rows_exact")->type == RS_JSON_TRUE);
    ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_TRUE);
    rs_json_free(j);
    rs_server_stop(s);
    /* A small --max-answer: fewer rows, the last still there. */
    opt.max_answer = 16384;
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200 && strlen(a->body) <= 16384, "%.300s", a->text);
    j = json_of(a);
    size_t n = log_steps(j, steps, RS_RUN_MAX_ROWS);
    ck_assert_uint_ge(n, 20);
    ck_assert_int_eq(steps[n - 1], 5000);
    rs_json_free(j);
    rs_server_stop(s);
    /* A short log is sent whole. */
    write_log(path, 3);
    s = start_with(&opt);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    j = json_of(a);
    ck_assert_uint_eq(log_steps(j, steps, 3), 3);
    ck_assert(rs_json_get(j, "thinned")->type == RS_JSON_FALSE);
    rs_json_free(j);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* Found by attacking the server: /api/run passed the log's bytes through
 * (invalid UTF-8 in cells and column names, a NUL cutting a cell); a 2 MB
 * row of control bytes took seconds (escaped 6x larger, rewritten up to 12
 * times); an answer too large got 500, not 413; a missing log was "thinned". */
static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(run_answers_are_utf8_and_bounded)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-serve-utf8");
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    opt.max_answer = 1 << 21;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    /* No log: nothing was left out. */
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_msg(rs_json_get(j, "thinned")->type == RS_JSON_FALSE, "%.300s", a->body);
    rs_json_free(j);
    static const char bad[] = "step\tx\xff\n1\t\xff\xfe\n2\ta\0b\n";
    write_bytes(path, bad, sizeof bad - 1);
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    j = json_of(a); /* json_of fails on invalid UTF-8 */
    const rs_json *rows = rs_json_get(j, "rows");
    ck_assert_uint_eq(rows->count, 2);
    ck_assert_str_eq(item(item(rows, 0), 1)->string, "\xEF\xBF\xBD\xEF\xBF\xBD");
    ck_assert_str_eq(item(item(rows, 1), 1)->string, "a\xEF\xBF\xBD"
                                                     "b"); /* the NUL */
    ck_assert_str_eq(item(rs_json_get(j, "columns"), 1)->string, "x\xEF\xBF\xBD");
    rs_json_free(j);
    /* A 2 MB row of control bytes, and many such rows: answered quickly. */
    const size_t big = 2000000;
    char *text = malloc(big + 64);
    ck_assert_ptr_nonnull(text);
    int n = snprintf(text, 64, "step\tx\n1\t");
    memset(text + n, 0x01, big);
    text[n + big] = '\n';
    write_bytes(path, text, (size_t)n + big + 1);
    double t0 = now();
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(now() - t0 < 0.5, "a 2 MB row of control bytes took %.2f s", now() - t0);
    rs_json_free(json_of(a));
    /* Rows of tabs (a cell each): fewer rows, and quickly. */
    n = snprintf(text, 64, "step\tx\n");
    for (size_t at = (size_t)n; at + 4096 < big; at += 4096) {
        memset(text + at, '\t', 4095);
        text[at + 4095] = '\n';
        n = (int)(at + 4096);
    }
    write_bytes(path, text, (size_t)n);
    t0 = now();
    get_within(port, "/api/run", 5.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(now() - t0 < 1.0, "rows of tabs took %.2f s", now() - t0);
    rs_json_free(json_of(a));
    rs_server_stop(s);
    /* A header that cannot fit any answer: 413, as documented. */
    opt.max_answer = 16384;
    s = start_with(&opt);
    memset(text, 'c', 20000);
    memcpy(text + 20000, "\n1\n", 3);
    for (int k = 0; k < 20000; k += 10)
        text[k] = '\t';
    write_bytes(path, text, 20003);
    get_within(rs_server_port(s), "/api/run", 5.0, a);
    expect_error(a, 413, "larger than", "a header over --max-answer");
    rs_server_stop(s);
    free(text);
    testdir_remove(dir);
}
END_TEST

/* Opened as /?token=…, the page takes the token out of the address bar and
 * the history at once, keeps it in its origin's localStorage and sends it as
 * Authorization: Bearer (the browser test checks it in Chromium; this, that
 * the page served has the code). */
START_TEST(the_page_forgets_its_token)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.token = "s3cret-token_1";
    rs_server *s = start_with(&opt);
    answer *a = &answers[0];
    request(rs_server_port(s), "GET", "/?token=s3cret-token_1", NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    const char *forget = strstr(a->body, "function forgetToken()");
    ck_assert_ptr_nonnull(forget);
    ck_assert_ptr_nonnull(strstr(forget, "url.searchParams.delete('token')"));
    ck_assert_ptr_nonnull(strstr(forget, "history.replaceState("));
    ck_assert_ptr_nonnull(strstr(forget, "store.setItem(tokenKey, token)"));
    ck_assert_ptr_nonnull(strstr(a->body, "headers.Authorization = 'Bearer ' + token"));
    ck_assert_ptr_nonnull(strstr(a->body, "readToken();\n  loadModels();"));
    rs_server_stop(s);
}
END_TEST

/* Found by attacking the server as another site would: a GET of an <img>
 * or <script> carries no Origin, so Fetch Metadata decides (another site,
 * or another port of this one, may only open the page, not frame it nor
 * read the API), and every answer tells the browser not to hand it to
 * another origin (CORP, nosniff); the page may not be framed. */
START_TEST(other_sites_cannot_read_or_frame_the_server)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-serve-sites");
    rs_serve_options opt = test_options(1, 4, 10);
    opt.run_dir = dir;
    rs_server *s = start_with(&opt);
    const int port = rs_server_port(s);
    answer *a = &answers[0];
    with_headers(port, "GET", "/api/run",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\n"
                 "Sec-Fetch-Dest: script\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "a <script> of another site");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: same-site\r\nSec-Fetch-Mode: cors\r\n"
                 "Sec-Fetch-Dest: empty\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "a fetch from another port of this host");
    with_headers(port, "GET", "/",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: iframe\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "another site framing the page");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: document\r\n",
                 NULL, a);
    expect_error(a, 403, "another site's page", "another site navigating to the API");
    with_headers(port, "GET", "/api/models",
                 "Host: localhost\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n",
                 NULL, a);
    expect_error(a, 400, "more than one Sec-Fetch-Site", "two Sec-Fetch-Site headers");
    /* A link from another site opens the page; the page's own requests pass. */
    with_headers(port, "GET", "/",
                 "Host: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"
                 "Sec-Fetch-Dest: document\r\n",
                 NULL, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(strstr(a->text, "frame-ancestors 'none'") &&
                      strstr(a->text, "X-Frame-Options: DENY") &&
                      strstr(a->text, "Referrer-Policy: no-referrer") &&
                      strstr(a->text, "Cross-Origin-Resource-Policy: same-origin"),
                  "%.600s", a->text);
    with_headers(port, "GET", "/api/run",
                 "Host: localhost\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: cors\r\n", NULL,
                 a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    ck_assert_msg(strstr(a->text, "X-Content-Type-Options: nosniff") &&
                      strstr(a->text, "Cross-Origin-Resource-Policy: same-origin"),
                  "%.600s", a->text);
    with_headers(port, "GET", "/api/models", "Host: localhost\r\nSec-Fetch-Site: none\r\n", NULL,
                 a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_server_stop(s);
    testdir_remove(dir);
}
END_TEST

/* Found by using the server carelessly: `-m /tmp/x.ckpt` made /tmp the run
 * directory, so anyone could put there the files the page shows. A default
 * run directory that everyone may write to is left out, saying so; --run
 * names it deliberately. */
START_TEST(a_run_directory_anyone_may_write_is_not_shown_by_default)
{
    char dir[64], path[256], model_arg[256], options[128];
    testdir_make(dir, "rnnsearch-serve-shared");
    snprintf(path, sizeof path, "%s/m/last.ckpt", model_dir);
    size_t size;
    unsigned char *ckpt = testfile_read(path, &size);
    snprintf(model_arg, sizeof model_arg, "%s/x.ckpt", dir);
    testfile_write(model_arg, ckpt, size);
    free(ckpt);
    snprintf(path, sizeof path, "%s/train.log.tsv", dir);
    testfile_write(path, (const unsigned char *)"step\tloss\n1\t2\n", 14);
    ck_assert_int_eq(chmod(dir, 01777), 0);
    server_process p;
    answer *a = &answers[0];
    spawn_server_with(&p, model_arg, "");
    char *log = read_log(&p);
    ck_assert_msg(strstr(log, "no training view of") && strstr(log, "anyone may write there") &&
                      !strstr(log, "serve: training view of"),
                  "%s", log);
    free(log);
    get_within(p.port, "/api/run", 3.0, a);
    expect_error(a, 404, "--run DIR", "a default run directory anyone may write to");
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    snprintf(options, sizeof options, "--run %s", dir);
    spawn_server_with(&p, model_arg, options);
    get_within(p.port, "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200 && strstr(a->body, "\"rows\":[[1,2]]"), "%.300s", a->text);
    /* The log says where the view is: the page has no tabs. */
    log = read_log(&p);
    ck_assert_msg(strstr(log, "serve: training view of") && strstr(log, "below the explorer") &&
                      !strstr(log, "Training tab"),
                  "%s", log);
    free(log);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    spawn_server_with(&p, model_arg, "");
    get_within(p.port, "/api/run", 3.0, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    kill(p.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(p.pid, 5.0), 0);
    testdir_remove(dir);
}
END_TEST

/* ---- batches: a "text" list, and OpenNMT-py's endpoint ---- */

static const char *const batch_sentences[3] = {"the tall horse sees a baker",
                                               "a baker sees the horse", "the horse"};

/* |got − want| ≤ tol (0: the same number). */
static void expect_near(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol, "%s: %.9g, expected %.9g (within %g)", what, got, want,
                  tol);
}

/* Two translate answers for the same sentence: the same text, tokens and
 * hypotheses, and numbers within tol (a batch's matrix products sum in
 * another order than one sentence's, so the last float bits may differ). */
static void expect_same_result(const rs_json *got, const rs_json *want, double tol)
{
    ck_assert_str_eq(str(got, "text"), str(want, "text"));
    ck_assert_str_eq(str(got, "translation"), str(want, "translation"));
    ck_assert_double_eq(num(got, "truncated"), num(want, "truncated"));
    const rs_json *gs = rs_json_get(got, "source_tokens"), *ws = rs_json_get(want, "source_tokens");
    ck_assert_int_eq(gs->count, ws->count);
    for (size_t k = 0; k < ws->count; k++)
        ck_assert_str_eq(item(gs, k)->string, item(ws, k)->string);
    const rs_json *gh = rs_json_get(got, "hypotheses"), *wh = rs_json_get(want, "hypotheses");
    ck_assert_int_eq(gh->count, wh->count);
    for (size_t k = 0; k < wh->count; k++) {
        const rs_json *g = item(gh, k), *w = item(wh, k);
        ck_assert_str_eq(str(g, "translation"), str(w, "translation"));
        expect_near(num(g, "score"), num(w, "score"), tol, "score");
        expect_near(num(g, "logprob"), num(w, "logprob"), tol, "logprob");
        const rs_json *ga = rs_json_get(rs_json_get(g, "alignment"), "alignment"),
                      *wa = rs_json_get(rs_json_get(w, "alignment"), "alignment");
        ck_assert_int_eq(ga->count, wa->count);
        for (size_t r = 0; r < wa->count; r++) {
            ck_assert_int_eq(item(ga, r)->count, item(wa, r)->count);
            for (size_t c = 0; c < item(wa, r)->count; c++)
                expect_near(item(item(ga, r), c)->number, item(item(wa, r), c)->number, tol,
                            "an alignment weight");
        }
    }
}

/* A translate answer equals the pipeline's result to the float bit. */
static void expect_pipeline_result(const rs_json *got, const rs_translated *t)
{
    const rs_json *hyps = rs_json_get(got, "hypotheses");
    ck_assert_int_eq(hyps->count, t->count);
    for (int k = 0; k < t->count; k++) {
        const rs_json *h = item(hyps, (size_t)k);
        ck_assert_str_eq(str(h, "translation"), t->hyps[k].text);
        ck_assert_float_eq((float)num(h, "score"), (float)t->hyps[k].score);
        expect_matrix(rs_json_get(h, "alignment"), t->hyps[k].alignment, t->hyps[k].count + 1,
                      t->source_count + 1);
    }
}

/* A server of the test model alone, under the name "reorder". */
static rs_server *start_one(const rs_serve_options *opt)
{
    static rs_serve_model served[1];
    served[0] = (rs_serve_model){"reorder", &model, &codec};
    rs_server *s;
    rs_error err;
    ck_assert_msg(rs_server_start(&s, served, 1, opt, &err) == 0, "%s", err.msg);
    return s;
}

/* A list of three sentences, decoded as one batch, answers what each
 * sentence alone answers (the same translations, tokens and hypotheses;
 * numbers to float rounding), in the request's order, whatever that order
 * is; and exactly what the pipeline gives for the three as one batch, as
 * `rnnsearch translate` decodes them. */
START_TEST(a_batch_answers_what_its_sentences_alone_do)
{
    rs_server *s = start(1, 4, 10);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    char body[1024];
    rs_json *single[3];
    for (int i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "{\"text\": \"%s\", \"beam\": 3, \"n_best\": 2}",
                 batch_sentences[i]);
        request(port, "POST", "/api/translate", body, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        single[i] = json_of(a);
    }
    /* The pipeline as `rnnsearch translate --batch-size 3 --beam 3 --n-best 2`. */
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    topt.beam = 3;
    topt.n_best = 2;
    topt.batch_size = 3;
    topt.want_alignment = 1;
    const rs_model *models[1] = {&model};
    rs_error err;
    static const int orders[2][3] = {{0, 1, 2}, {2, 0, 1}};
    for (int o = 0; o < 2; o++) {
        const int *ord = orders[o];
        const char *lines[3] = {batch_sentences[ord[0]], batch_sentences[ord[1]],
                                batch_sentences[ord[2]]};
        rs_translated t[3];
        rs_translator tr;
        ck_assert_msg(rs_translator_init(&tr, models, 1, &codec, &topt, &err) == 0, "%s", err.msg);
        ck_assert_msg(rs_translate_lines(&tr, 3, lines, t, &err) == 0, "%s", err.msg);
        rs_translator_free(&tr);
        snprintf(body, sizeof body,
                 "{\"text\": [\"%s\", \"%s\", \"%s\"], \"beam\": 3, \"n_best\": 2}", lines[0],
                 lines[1], lines[2]);
        request(port, "POST", "/api/translate", body, a);
        ck_assert_msg(a->status == 200, "%.300s", a->text);
        rs_json *j = json_of(a);
        ck_assert_int_eq(j->count, 2); /* results, ms */
        num(j, "ms");
        const rs_json *results = rs_json_get(j, "results");
        ck_assert_int_eq(results->count, 3);
        for (int i = 0; i < 3; i++) {
            const rs_json *r = item(results, (size_t)i);
            ck_assert_ptr_null(rs_json_get(r, "ms"));
            ck_assert_str_eq(str(r, "model"), "reorder");
            expect_same_result(r, single[ord[i]], 1e-4);
            expect_pipeline_result(r, &t[i]);
            rs_translated_free(&t[i]);
        }
        rs_json_free(j);
    }
    /* A list of one is still a list, and answers as its sentence alone. */
    snprintf(body, sizeof body, "{\"text\": [\"%s\"], \"beam\": 3, \"n_best\": 2}",
             batch_sentences[1]);
    request(port, "POST", "/api/translate", body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    rs_json *j = json_of(a);
    ck_assert_int_eq(rs_json_get(j, "results")->count, 1);
    expect_same_result(item(rs_json_get(j, "results"), 0), single[1], 0.0);
    rs_json_free(j);
    for (int i = 0; i < 3; i++)
        rs_json_free(single[i]);
    rs_server_stop(s);
}
END_TEST

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

/* OpenNMT-py's endpoints pass the same gate as every other: Host, Origin,
 * Fetch Metadata, the token, a JSON content type, the body's bound. */
START_TEST(opennmt_endpoints_are_guarded_like_the_others)
{
    rs_serve_options opt = test_options(1, 4, 10);
    opt.max_batch = 2;
    opt.token = "s3cret-token_1";
    rs_server *s = start_with(&opt);
    int port = rs_server_port(s);
    answer *a = &answers[0];
    const char *body = "[{\"src\": \"the horse\", \"id\": 0}]";
    const char *json = "Content-Type: application/json\r\n";
    const char *auth = "Authorization: Bearer s3cret-token_1\r\n";
    char headers[512];
    snprintf(headers, sizeof headers, "Host: localhost\r\n%s%s", json, auth);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    ck_assert_msg(a->status == 200, "%.300s", a->text);
    snprintf(headers, sizeof headers, "Host: localhost\r\n%s", json);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 401, "token", "no token");
    with_headers(port, "GET", "/translator/models", "Host: localhost\r\n", NULL, a);
    expect_error(a, 401, "token", "models without the token");
    snprintf(headers, sizeof headers, "Host: localhost\r\nOrigin: http://attacker.example\r\n%s%s",
             json, auth);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 403, "cross-origin", "foreign Origin");
    snprintf(headers, sizeof headers, "Host: attacker.example\r\n%s%s", json, auth);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 403, "not a name of this server", "foreign Host");
    snprintf(headers, sizeof headers, "Host: localhost\r\nSec-Fetch-Site: cross-site\r\n%s%s", json,
             auth);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 403, "another site", "another site's page");
    snprintf(headers, sizeof headers, "Host: localhost\r\nContent-Type: text/plain\r\n%s", auth);
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 415, "application/json", "text/plain");
    snprintf(headers, sizeof headers, "Host: localhost\r\n%s%s", json, auth);
    with_headers(port, "POST", "/translator/translate", headers,
                 "[{\"src\": \"a\"}, {\"src\": \"b\"}, {\"src\": \"c\"}]", a);
    expect_error(a, 413, "the limit is 2", "too many sentences");
    with_headers(port, "GET", "/translator/translate", headers, NULL, a);
    expect_error(a, 405, "POST", "GET translate");
    ck_assert_ptr_nonnull(strstr(a->text, "Allow: POST"));
    with_headers(port, "POST", "/translator/models", headers, "{}", a);
    expect_error(a, 405, "GET", "POST models");
    snprintf(headers, sizeof headers, "Host: localhost\r\n%s%sContent-Length: 50000000\r\n", json,
             auth);
    /* with_headers adds its own Content-Length: two are refused (framing) */
    with_headers(port, "POST", "/translator/translate", headers, body, a);
    expect_error(a, 400, "Content-Length", "two lengths");
    static char big[8192];
    int h = snprintf(big, sizeof big,
                     "POST /translator/translate HTTP/1.1\r\nHost: localhost\r\n%s%s"
                     "Content-Length: 50000000\r\n\r\n",
                     json, auth);
    memset(big + h, 'x', 1000);
    raw(port, big, (size_t)h + 1000, 0, a);
    expect_error(a, 413, "longer than 4096 bytes", "a body over --max-body");
    rs_server_stop(s);
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
    tcase_add_test(tc, foreign_hosts_origins_and_content_types_are_refused);
    tcase_add_test(tc, answers_are_bounded);
    tcase_add_test(tc, slow_headers_do_not_lock_others_out);
    tcase_add_test(tc, many_keys_are_checked_in_linear_time);
    tcase_add_test(tc, framing_log_and_quoted_text);
    tcase_add_test(tc, align_cuts_long_sources_as_score_does);
    tcase_add_test(tc, a_model_without_attention_answers_without_alignment);
    tcase_add_test(tc, the_run_view_of_a_model_without_attention_says_why_nothing_is_watched);
    tcase_add_test(tc, the_command_stops_gracefully_and_guards_open_addresses);
    tcase_add_test(tc, the_run_view_reads_a_watch_file_while_training_appends);
    tcase_add_test(tc, words_merge_pieces_as_align_words_does);
    tcase_add_test(tc, the_command_reads_its_section_of_a_yaml_file);
    tcase_add_test(tc, int8_changes_translations_scores_not_forced_ones);
    tcase_add_test(tc, the_token_is_decided_by_what_the_address_is);
    tcase_add_test(tc, non_loopback_addresses_need_the_token_in_a_private_network);
    tcase_add_test(tc, duplicate_and_malformed_headers_are_refused);
    tcase_add_test(tc, run_files_that_could_block_are_refused);
    tcase_add_test(tc, watch_records_too_long_are_skipped);
    tcase_add_test(tc, malformed_watch_records_are_unreadable);
    tcase_add_test(tc, symlinks_out_of_the_run_directory_are_refused);
    tcase_add_test(tc, long_logs_are_thinned);
    tcase_add_test(tc, the_page_forgets_its_token);
    tcase_add_test(tc, other_sites_cannot_read_or_frame_the_server);
    tcase_add_test(tc, a_run_directory_anyone_may_write_is_not_shown_by_default);
    tcase_add_test(tc, nul_bytes_and_odd_header_names_are_refused);
    tcase_add_test(tc, run_answers_are_utf8_and_bounded);
    tcase_add_test(tc, a_batch_answers_what_its_sentences_alone_do);
    tcase_add_test(tc, batches_are_bounded_and_checked_item_by_item);
    tcase_add_test(tc, opennmt_requests_round_trip);
    tcase_add_test(tc, opennmt_endpoints_are_guarded_like_the_others);
    suite_add_tcase(s, tc);
    return s;
}
