/* The server of `rnnsearch serve` as a whole (serve/serve.c and the command):
 * the options the library and the command refuse, a graceful stop on SIGTERM
 * that lets an answer in transfer finish, the serve: section of a
 * configuration file, and --int8. The model is a tiny one trained here by the
 * program (tests/support/serveclient.h); the server's pieces have their own
 * suites beside this one (test_access.c, test_body.c, …). */
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
    rs_serve_model twice[2] = {{"x", &model_ready, &codec}, {"x", &model_ready, &codec}};
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

/* A new token is 32 hex digits that the token rule takes, a new one each
 * time; the stop beside the caller returns 0 once done when no second signal
 * comes (SIGUSR2, blocked here, never sent). */
START_TEST(new_tokens_and_the_stop_beside)
{
    char a[64], b[64];
    rs_error err;
    ck_assert_int_eq(rs_serve_token_new(a, sizeof a), 0);
    ck_assert_int_eq(rs_serve_token_new(b, sizeof b), 0);
    ck_assert_int_eq((int)strlen(a), 32);
    ck_assert_int_eq((int)strspn(a, "0123456789abcdef"), 32);
    ck_assert_msg(!rs_serve_token_check(a, &err), "%s", err.msg);
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(rs_serve_token_new(b, 32), -1); /* no room for the NUL */

    rs_serve_model one[1] = {{"x", &model_ready, &codec}};
    rs_serve_options opt;
    rs_serve_options_default(&opt);
    opt.port = 0;
    rs_server *s;
    ck_assert_msg(rs_server_start(&s, one, 1, &opt, &err) == 0, "%s", err.msg);
    sigset_t never, old;
    sigemptyset(&never);
    sigaddset(&never, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &never, &old);
    ck_assert_int_eq(rs_server_stop_or_signal(s, &never), 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
END_TEST

Suite *serve_suite(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_command_checks_its_options);
    tcase_add_test(tc, new_tokens_and_the_stop_beside);
    tcase_add_test(tc, the_command_stops_gracefully_and_guards_open_addresses);
    tcase_add_test(tc, the_command_reads_its_section_of_a_yaml_file);
    tcase_add_test(tc, int8_changes_translations_scores_not_forced_ones);
    suite_add_tcase(s, tc);
    return s;
}
