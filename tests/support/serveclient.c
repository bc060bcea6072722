/* The serve suites' shared model, server and client (serveclient.h). */
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

char model_dir[64];

rs_model model;

rs_ready model_ready;

rs_codec codec;

void train_model(void)
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
    model_ready = rs_ready_plain(&model);
}

void free_model(void)
{
    rs_codec_free(&codec);
    rs_model_free(&model);
    testdir_remove(model_dir);
}

rs_serve_options test_options(int threads, int queue, int timeout)
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

rs_server *start_with(const rs_serve_options *opt)
{
    static rs_serve_model served[2];
    served[0] = (rs_serve_model){"reorder", &model_ready, &codec};
    served[1] = (rs_serve_model){"second", &model_ready, &codec};
    rs_server *s;
    rs_error err;
    ck_assert_msg(rs_server_start(&s, served, 2, opt, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(rs_server_port(s), 0);
    return s;
}

rs_server *start(int threads, int queue, int timeout)
{
    const rs_serve_options opt = test_options(threads, queue, timeout);
    return start_with(&opt);
}

double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s",
                  strerror(errno));
    return fd;
}

void send_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return; /* the server may close early (413): what it said is read next */
        data += n;
        len -= (size_t)n;
    }
}

void read_answer(int fd, answer *a, double start, double wait)
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

void raw(int port, const char *data, size_t len, int shut_wr, answer *a)
{
    double start = now();
    int fd = connect_to(port);
    send_all(fd, data, len);
    if (shut_wr)
        shutdown(fd, SHUT_WR);
    read_answer(fd, a, start, 20.0);
    close(fd);
}

void request(int port, const char *method, const char *path, const char *body, answer *a)
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

rs_json *json_of(const answer *a)
{
    rs_error err;
    ck_assert_msg(a->body != NULL, "no body in: %.300s", a->text);
    rs_json *j = rs_json_parse(a->body, strlen(a->body), &err);
    ck_assert_msg(j != NULL, "not JSON (%s): %.300s", err.msg, a->body);
    ck_assert_int_eq(j->type, RS_JSON_OBJECT);
    return j;
}

void expect_error(const answer *a, int status, const char *words, const char *what)
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

const rs_json *item(const rs_json *array, size_t k)
{
    ck_assert(array && array->type == RS_JSON_ARRAY && k < array->count);
    return &array->items[k];
}

const char *str(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && v->type == RS_JSON_STRING, "'%s' is not a string", key);
    return v->string;
}

double num(const rs_json *obj, const char *key)
{
    const rs_json *v = rs_json_get(obj, key);
    ck_assert_msg(v && v->type == RS_JSON_NUMBER, "'%s' is not a number", key);
    return v->number;
}

const char *const sentence = "the tall horse sees a baker";

answer answers[2];

void with_headers(int port, const char *method, const char *path, const char *headers,
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

void spawn_server_with(server_process *p, const char *model_arg, const char *options)
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

void spawn_server(server_process *p, const char *options)
{
    char model_arg[128];
    snprintf(model_arg, sizeof model_arg, "%s/m", model_dir);
    spawn_server_with(p, model_arg, options);
}

char *read_log(const server_process *p)
{
    size_t size;
    unsigned char *text = testfile_read(p->log, &size);
    return (char *)text;
}

int wait_exit(pid_t pid, double seconds)
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

const char *const batch_sentences[3] = {"the tall horse sees a baker", "a baker sees the horse",
                                        "the horse"};
