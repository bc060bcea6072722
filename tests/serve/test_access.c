/* Who may ask the server (serve/access.c), on loopback and in a private
 * network: Host, Origin, Fetch Metadata and Content-Type against other sites'
 * pages and DNS rebinding, the token decided on the parsed address, one of
 * each header that decides, framing two parsers could read two ways, NUL
 * bytes and odd header names, and a client's bytes escaped in the log. */
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
    const rs_serve_model served[1] = {{"reorder", &model_ready, &codec}};
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
    const rs_serve_model served[1] = {{"reorder", &model_ready, &codec}};
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

Suite *serve_access_suite(void)
{
    Suite *s = suite_create("serve_access");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, foreign_hosts_origins_and_content_types_are_refused);
    tcase_add_test(tc, framing_log_and_quoted_text);
    tcase_add_test(tc, the_token_is_decided_by_what_the_address_is);
    tcase_add_test(tc, non_loopback_addresses_need_the_token_in_a_private_network);
    tcase_add_test(tc, duplicate_and_malformed_headers_are_refused);
    tcase_add_test(tc, nul_bytes_and_odd_header_names_are_refused);
    tcase_add_test(tc, opennmt_endpoints_are_guarded_like_the_others);
    suite_add_tcase(s, tc);
    return s;
}
