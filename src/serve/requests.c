/* Requests, on libmicrohttpd's one polling thread: the routes, each
 * request checked on its headers (who may ask: access.c; the method, the
 * content type, a declared length), its body kept up to the limit, then
 * queued whole for a worker (jobs.c) or answered at once; the log line when
 * it is done. The body is parsed by the worker that takes it (body.c).
 *
 * Lifetimes: a request is made here (request_new) when its headers are in
 * and freed here (rs_serve_on_completed), both on the polling thread; while
 * it is queued or decoded its connection is suspended, so no callback here
 * runs for it until the worker resumes it (see `request` in server.h). */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "serve/server.h"

static route route_of(const char *url)
{
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return ROUTE_PAGE;
    if (!strcmp(url, "/api/models"))
        return ROUTE_MODELS;
    if (!strcmp(url, "/api/translate"))
        return ROUTE_TRANSLATE;
    if (!strcmp(url, "/api/align"))
        return ROUTE_ALIGN;
    if (!strcmp(url, "/api/push"))
        return ROUTE_PUSH;
    if (!strcmp(url, "/api/run"))
        return ROUTE_RUN;
    if (!strcmp(url, "/api/run/watch"))
        return ROUTE_RUN_WATCH;
    if (!strcmp(url, "/translator/translate"))
        return ROUTE_ONMT_TRANSLATE;
    if (!strcmp(url, "/translator/models"))
        return ROUTE_ONMT_MODELS;
    return ROUTE_NONE;
}

/* Keeps the body, up to max_body bytes; past the limit the rest is read and
 * thrown away and the answer is 413. */
static void receive(const rs_server *s, request *rq, const char *data, size_t size)
{
    if (!rq->too_big && rq->len + size > s->opt.max_body)
        rq->too_big = 1;
    if (rq->too_big) {
        free(rq->body);
        rq->body = NULL;
        rq->len = rq->cap = 0;
        return;
    }
    if (rq->len + size > rq->cap) {
        size_t cap = rq->cap ? rq->cap : 1024;
        while (cap < rq->len + size)
            cap *= 2;
        char *grown = realloc(rq->body, cap);
        if (!grown) {
            rq->too_big = 1; /* answered 413: the server has no room for it now */
            return;
        }
        rq->body = grown;
        rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, size);
    rq->len += size;
}

static request *request_new(struct MHD_Connection *connection, const char *url, const char *method)
{
    request *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NULL;
    rq->connection = connection;
    rq->start = rs_clock_seconds();
    rq->route = route_of(url);
    rs_serve_escape_for_log(rq->method, sizeof rq->method, method);
    rs_serve_escape_for_log(rq->path, sizeof rq->path, url);
    return rq;
}

/* A training-view request checked on its headers: it goes to the reader
 * (read_job) once whole, or is answered here. */
static enum MHD_Result check_run(rs_server *s, request *rq, int get)
{
    if (!get)
        return rs_serve_send_error(rq, 405, "use GET");
    if (!s->opt.run_dir)
        return rs_serve_send_error(rq, 404,
                                   "this server shows no training run (start it with --run DIR, or "
                                   "-m with a model directory)");
    rq->from = 0;
    if (rq->route == ROUTE_RUN_WATCH) {
        const char *from = NULL;
        if (MHD_lookup_connection_value_n(rq->connection, MHD_GET_ARGUMENT_KIND, "from", 4, &from,
                                          NULL) == MHD_YES) {
            /* After decoding, digits only (strtoull alone would take "+5" and
             * " 5"), and within 64 bits. */
            const size_t digits = from ? strspn(from, "0123456789") : 0;
            errno = 0;
            if (digits == 0 || from[digits] || digits > 20 ||
                (rq->from = strtoull(from, NULL, 10), errno))
                return rs_serve_send_error(rq, 400, "'from' is a byte offset: digits only");
        }
    }
    return MHD_YES;
}

/* The first call for a request: its headers are in. */
static enum MHD_Result on_headers(rs_server *s, request *rq, const char *method,
                                  const char *version)
{
    const int get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    const int post = !strcmp(method, MHD_HTTP_METHOD_POST);
    size_t len = 0;
    char *body, msg[512];
    int status = rs_serve_refused(s, rq, version, get, msg, sizeof msg);
    if (status)
        return rs_serve_send_error(rq, status, msg);
    switch (rq->route) {
    case ROUTE_NONE:
        return rs_serve_send_error(
            rq, 404,
            "no such page: the API is POST /api/translate, POST /api/align, "
            "POST /api/push, GET /api/models, GET /api/run and GET /api/run/watch, and OpenNMT-py's "
            "POST /translator/translate and GET /translator/models; the explorer "
            "is GET /");
    case ROUTE_PAGE:
        if (!get)
            return rs_serve_send_error(rq, 405, "use GET");
        return rs_serve_send_page(s, rq);
    case ROUTE_MODELS:
    case ROUTE_ONMT_MODELS:
        if (!get)
            return rs_serve_send_error(rq, 405, "use GET");
        body = rq->route == ROUTE_MODELS ? rs_serve_models_json(s, &len)
                                         : rs_serve_onmt_models_json(s, &len);
        return rs_serve_send_json(rq, 200, body, len);
    case ROUTE_RUN:
    case ROUTE_RUN_WATCH: return check_run(s, rq, get);
    case ROUTE_TRANSLATE:
    case ROUTE_ONMT_TRANSLATE:
    case ROUTE_ALIGN:
    case ROUTE_PUSH: {
        if (!post)
            return rs_serve_send_error(rq, 405, "use POST with a JSON body");
        if (!rs_serve_json_content_type(rq->connection))
            return rs_serve_send_error(rq, 415, "send the body as Content-Type: application/json");
        const char *cl = MHD_lookup_connection_value(rq->connection, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->opt.max_body) {
            snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
            return rs_serve_send_error(rq, 413, msg);
        }
        return MHD_YES;
    }
    }
    return MHD_NO;
}

enum MHD_Result rs_serve_on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq) {
        if (!(rq = request_new(connection, url, method)))
            return MHD_NO;
        *con_cls = rq;
        return on_headers(s, rq, method, version);
    }
    if (rq->state == DECODED) {
        char *reply = rq->reply;
        rq->reply = NULL;
        return rs_serve_send_json(rq, rq->status, reply, rq->reply_len);
    }
    if (*upload_data_size) {
        receive(s, rq, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->status) /* answered on the headers already */
        return MHD_YES;
    if (rq->too_big) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body is longer than %zu bytes", s->opt.max_body);
        return rs_serve_send_error(rq, 413, msg);
    }
    return rs_serve_submit(s, rq);
}

void rs_serve_on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
    rs_server *s = cls;
    request *rq = *con_cls;
    if (!rq)
        return;
    rs_serve_set_busy(s, connection, 0);
    if (s->opt.log) {
        char line[320];
        snprintf(line, sizeof line, "%s %s %d %.1f ms%s", rq->method, rq->path, rq->status,
                 1e3 * (rs_clock_seconds() - rq->start),
                 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed early)");
        s->opt.log(s->opt.log_ctx, line);
    }
    free(rq->body);
    free(rq->text);
    free(rq->target);
    for (int i = 0; rq->texts && i < rq->count; i++)
        free(rq->texts[i]);
    free(rq->texts);
    free(rq->alpha);
    free(rq->reply);
    free(rq);
    *con_cls = NULL;
}
