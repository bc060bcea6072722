/* Open connections: the whole-request deadline and the drain at stop.
 * libmicrohttpd's own timeout restarts with every byte, so a client sending
 * one header line a second would hold its connection forever; here every
 * open connection is listed with when it opened or last finished an answer,
 * and a reaper thread shuts down, several times a second, every idle one
 * that has not brought in a whole request within the time limit (and, while
 * the server drains, every idle one at once).
 *
 * Lifetimes: an open_connection is made when libmicrohttpd says the
 * connection started and freed when it says it is closing, both on the
 * polling thread, which is also the only one to reach it through the
 * connection (rs_serve_set_busy). The list and every entry's fields are
 * guarded by the server's conn_lock, so the reaper never sees a closed
 * descriptor (libmicrohttpd notifies before it closes the socket). */
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/clock.h"
#include "serve/server.h"

static open_connection *connection_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* Decoded as libmicrohttpd decodes (%HH), and a NUL among the bytes noted:
 * the path and query would otherwise read shorter than sent. Both run on
 * the polling thread (the request line is parsed before the request's
 * first callback). */
size_t rs_serve_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    const size_t n = MHD_http_unescape(s);
    open_connection *conn = connection_of(c);
    if (strlen(s) != n && conn)
        conn->url_nul = 1;
    return n;
}

int rs_serve_take_url_nul(struct MHD_Connection *c)
{
    open_connection *conn = connection_of(c);
    if (!conn)
        return 0;
    const int had = conn->url_nul;
    conn->url_nul = 0;
    return had;
}

/* Marks the request's connection busy (the deadline stops: the request is
 * in) or idle again (the deadline starts anew from now). */
void rs_serve_set_busy(rs_server *s, struct MHD_Connection *c, int busy)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    open_connection *conn = info ? info->socket_context : NULL;
    if (!conn)
        return;
    pthread_mutex_lock(&s->conn_lock);
    conn->busy = busy;
    conn->since = rs_clock_seconds();
    pthread_mutex_unlock(&s->conn_lock);
}

void rs_serve_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                            enum MHD_ConnectionNotificationCode code)
{
    rs_server *s = cls;
    open_connection *conn = *socket_context;
    pthread_mutex_lock(&s->conn_lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info && (conn = calloc(1, sizeof *conn))) {
            conn->fd = info->connect_fd;
            conn->since = rs_clock_seconds();
            conn->next = s->conns;
            if (s->conns)
                s->conns->prev = conn;
            s->conns = conn;
            s->n_conns++;
            *socket_context = conn;
        }
    } else if (conn) {
        /* libmicrohttpd notifies before it closes the socket: once this
         * returns, the reaper no longer knows the descriptor. */
        if (conn->prev)
            conn->prev->next = conn->next;
        else
            s->conns = conn->next;
        if (conn->next)
            conn->next->prev = conn->prev;
        s->n_conns--;
        free(conn);
        *socket_context = NULL;
        pthread_cond_broadcast(&s->conn_wake);
    }
    pthread_mutex_unlock(&s->conn_lock);
}

/* Several times a second: shuts down every connection that has not brought
 * in a whole request within the time limit (and, while draining, every idle
 * one at once); libmicrohttpd then sees the socket end and closes it. */
void *rs_serve_reaper_main(void *arg)
{
    rs_server *s = arg;
    pthread_mutex_lock(&s->conn_lock);
    while (!s->reaper_stop) {
        const double now = rs_clock_seconds();
        for (open_connection *c = s->conns; c; c = c->next)
            if (!c->busy && (s->draining || now - c->since > s->opt.timeout)) {
                shutdown(c->fd, SHUT_RDWR);
                c->since = INFINITY; /* once */
            }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conn_wake, &s->conn_lock, &until);
    }
    pthread_mutex_unlock(&s->conn_lock);
    return NULL;
}
