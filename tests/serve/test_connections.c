/* Open connections (serve/connections.c): slow, stalled and half-closed
 * clients, and clients sending one header line at a time, hold no worker and
 * lock no one out. */
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

Suite *serve_connections_suite(void)
{
    Suite *s = suite_create("serve_connections");
    TCase *tc = tcase_create("loopback");
    tcase_add_unchecked_fixture(tc, train_model, free_model);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, slow_stalled_and_half_closed_clients_hold_no_worker);
    tcase_add_test(tc, slow_headers_do_not_lock_others_out);
    suite_add_tcase(s, tc);
    return s;
}
