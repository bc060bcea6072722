/* The HTTP server of `rnnsearch serve` (see serve.h, docs/serve.md): its
 * options, starting it and stopping it. The rest is beside this file, one
 * piece a file (server.h lists them and holds what they share): who may ask
 * (access.c), the requests on the polling thread (requests.c), a request's
 * body read by its worker (body.c), the queues and workers (jobs.c), the
 * answers (answers.c) and the open connections (connections.c).
 *
 * Lifetimes: a server lives from rs_server_start to rs_server_stop, which
 * frees all it made. It borrows the models and codecs it serves and what
 * its options point to after start (the token, the allowed hosts, the run
 * directory, the log's context): they must outlive it. Stopping runs in
 * this order: no new connections; idle ones closed (the reaper, draining);
 * the workers answer what is queued and are joined (so every suspended
 * connection is resumed, as libmicrohttpd requires before its daemon
 * stops); answers in transfer get up to the time limit; then the reaper
 * and the daemon stop. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/blas_buffer.h"
#include "common/clock.h"
#include "serve/server.h"
#include "serve/serve_page.h"

void rs_serve_options_default(rs_serve_options *opt)
{
    *opt = (rs_serve_options){.host = "127.0.0.1",
                              .port = 8080,
                              .threads = 2,
                              .queue = 64,
                              .connections = 64,
                              .max_body = 64 * 1024,
                              .timeout = 10,
                              .max_chars = 1000,
                              .max_batch = 64,
                              .max_beam = 16,
                              .max_answer = 2 * 1024 * 1024};
}

int rs_serve_token_check(const char *token, rs_error *err)
{
    const size_t n = strlen(token);
    if (n < 8 || n > 128 ||
        strspn(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
        return rs_fail(err, "a token is 8 to 128 letters, digits, '-', '_' or '.'");
    return 0;
}

int rs_serve_token_new(char *token, size_t size)
{
    unsigned char bytes[16];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, bytes, sizeof bytes);
    close(fd);
    if (n != (ssize_t)sizeof bytes || size < 2 * sizeof bytes + 1)
        return -1;
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(token + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

static int check_options(const rs_serve_options *o, int n_models, const rs_serve_model *models,
                         rs_error *err)
{
    if (n_models < 1)
        return rs_fail(err, "no model to serve");
    const int loopback = rs_serve_loopback(o->host);
    if (loopback < 0)
        return rs_fail(err, "host '%s' is not a numeric IPv4 or IPv6 address",
                       o->host ? o->host : "(none)");
    if (!loopback && !o->token && !o->no_token)
        return rs_fail(err,
                       "%s is not a loopback address: anyone who can reach it could use the "
                       "server, so it needs a token (or, deliberately, no_token)",
                       o->host);
    if (o->port < 0 || o->port > 65535)
        return rs_fail(err, "port %d is not from 0 to 65535", o->port);
    if (o->threads < 1 || o->queue < 1 || o->connections < 1 || o->max_body < 1 || o->timeout < 1 ||
        o->max_chars < 1 || o->max_batch < 1 || o->max_batch > RS_MAX_BATCH || o->max_beam < 1 ||
        o->max_answer < 4096)
        return rs_fail(err,
                       "threads, queue, connections, max_body, timeout, max_chars, "
                       "max_batch and max_beam must all be at least 1, max_batch at most %d, "
                       "max_answer at least 4096",
                       RS_MAX_BATCH);
    for (int i = 0; i < o->n_allow_hosts; i++) {
        /* Compared with Host's name, which has no port: "x:80" would never match. */
        const char *h = o->allow_hosts[i];
        char name[256];
        address a;
        if (!h || (rs_serve_parse_address(h, &a) &&
                   (rs_serve_host_name(h, name, sizeof name) || strchr(h, ':'))))
            return rs_fail(err, "allowed host '%s' is not a host name or address (without a port)",
                           h ? h : "(none)");
    }
    if (o->token && rs_serve_token_check(o->token, err))
        return -1;
    for (int i = 0; i < n_models; i++)
        for (int k = 0; k < i; k++)
            if (!strcmp(models[i].name, models[k].name))
                return rs_fail(err, "two models are named '%s'", models[i].name);
    return 0;
}

int rs_server_start(rs_server **out, const rs_serve_model *models, int n_models,
                    const rs_serve_options *opt, rs_error *err)
{
    *out = NULL;
    if (check_options(opt, n_models, models, err))
        return -1;
    address addr;
    rs_serve_parse_address(opt->host, &addr); /* numeric: check_options says so */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (addr.sa.sa_family == AF_INET) {
        addr.v4.sin_port = htons((uint16_t)opt->port);
    } else {
        addr.v6.sin6_port = htons((uint16_t)opt->port);
        flags |= MHD_USE_IPv6;
    }
    rs_server *s = rs_calloc(1, sizeof *s, err);
    if (!s)
        return -1;
    s->opt = *opt;
    s->models = models;
    s->n_models = n_models;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->decode.wake, NULL);
    pthread_cond_init(&s->reads.wake, NULL);
    pthread_mutex_init(&s->conn_lock, NULL);
    pthread_cond_init(&s->conn_wake, NULL);
    s->listening = addr;
    s->any_address = rs_serve_unspecified(&addr);
    s->decode.size = s->reads.size = opt->queue;
    if (!(s->model_ptrs = rs_calloc((size_t)n_models, sizeof *s->model_ptrs, err)) ||
        !(s->decode.ring = rs_calloc((size_t)opt->queue, sizeof *s->decode.ring, err)) ||
        !(s->reads.ring = rs_calloc((size_t)opt->queue, sizeof *s->reads.ring, err)) ||
        !(s->workers = rs_calloc((size_t)opt->threads, sizeof *s->workers, err)))
        goto fail;
    for (int i = 0; i < n_models; i++)
        s->model_ptrs[i] = models[i].model;
    s->page = MHD_create_response_from_buffer((size_t)rs_serve_page_len, (void *)rs_serve_page,
                                              MHD_RESPMEM_PERSISTENT);
    if (!s->page) {
        rs_fail(err, "out of memory");
        goto fail;
    }
    rs_serve_page_headers(s->page);
    /* Each decoding worker maps an OpenBLAS buffer at its first product. */
    if (rs_blas_room(opt->threads, err) || rs_serve_start_workers(s, err))
        goto fail;
    int rc = pthread_create(&s->reaper, NULL, rs_serve_reaper_main, s);
    if (rc) {
        rs_fail(err, "cannot start a thread: %s", strerror(rc));
        goto fail;
    }
    s->reaper_started = 1;
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)opt->port, NULL, NULL, rs_serve_on_request, s, MHD_OPTION_SOCK_ADDR,
        &addr.sa, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)opt->timeout,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)opt->connections, MHD_OPTION_NOTIFY_COMPLETED,
        rs_serve_on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, rs_serve_on_connection, s,
        MHD_OPTION_UNESCAPE_CALLBACK, rs_serve_unescape, s, MHD_OPTION_END);
    if (!s->daemon) {
        rs_fail(err, "cannot listen on %s port %d: %s", opt->host, opt->port,
                errno ? strerror(errno) : "libmicrohttpd refused");
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    atomic_store(&s->port, info ? info->port : opt->port);
    *out = s;
    return 0;
fail:
    rs_server_stop(s);
    return -1;
}

int rs_server_port(const rs_server *server)
{
    return atomic_load(&server->port);
}

void rs_server_stop(rs_server *s)
{
    if (!s)
        return;
    /* No new connections; idle ones closed at once (the reaper, draining);
     * workers answer what is queued (resuming every suspended connection)
     * before the daemon stops, as libmicrohttpd requires; answers in
     * transfer get up to the time limit to finish. */
    if (s->daemon) {
        MHD_socket listener = MHD_quiesce_daemon(s->daemon);
        if (listener != MHD_INVALID_SOCKET)
            close(listener);
    }
    pthread_mutex_lock(&s->conn_lock);
    s->draining = 1;
    pthread_cond_broadcast(&s->conn_wake);
    pthread_mutex_unlock(&s->conn_lock);
    rs_serve_stop_workers(s);
    const double deadline = rs_clock_seconds() + s->opt.timeout;
    pthread_mutex_lock(&s->conn_lock);
    while (s->daemon && s->n_conns > 0 && rs_clock_seconds() < deadline) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &until);
    }
    s->reaper_stop = 1;
    pthread_cond_broadcast(&s->conn_wake);
    pthread_mutex_unlock(&s->conn_lock);
    if (s->reaper_started)
        pthread_join(s->reaper, NULL);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->page)
        MHD_destroy_response(s->page);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->decode.wake);
    pthread_cond_destroy(&s->reads.wake);
    pthread_mutex_destroy(&s->conn_lock);
    pthread_cond_destroy(&s->conn_wake);
    free(s->workers);
    free(s->decode.ring);
    free(s->reads.ring);
    free(s->model_ptrs);
    free(s);
}

typedef struct {
    rs_server *server;
    atomic_int done;
} stopping;

static void *stop_main(void *arg)
{
    stopping *st = arg;
    rs_server_stop(st->server);
    atomic_store(&st->done, 1);
    return NULL;
}

int rs_server_stop_or_signal(rs_server *server, const sigset_t *again)
{
    stopping st;
    st.server = server;
    atomic_init(&st.done, 0);
    pthread_t stopper;
    if (pthread_create(&stopper, NULL, stop_main, &st)) {
        stop_main(&st);
        return 0;
    }
    const struct timespec tick = {0, 50000000L};
    while (!atomic_load(&st.done)) {
        const int second = sigtimedwait(again, NULL, &tick);
        if (second > 0)
            return second;
    }
    pthread_join(stopper, NULL);
    return 0;
}
