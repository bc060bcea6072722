/* What the pieces of the HTTP server share (private to src/serve/; the
 * public interface is serve.h): the server, a request, the queues and
 * workers, an open connection, and the functions one piece calls in another.
 *
 *   serve.c        the options, starting and stopping
 *   access.c       addresses, and who may ask (Host, Origin, Fetch Metadata, token)
 *   requests.c     the polling thread: routes, the body kept up to its limit, the log
 *   body.c         a request's body parsed (on a worker), with the request limits
 *   jobs.c         the queues and the threads that take from them (workers, reader)
 *   answers.c      the JSON texts and the HTTP answers that carry them
 *   push.c         the attention pushed (POST /api/push): explain's step, answered
 *   connections.c  open connections: the whole-request deadline and the drain
 *
 * Lifetimes: the server from rs_server_start to rs_server_stop; a request
 * from its headers to on_completed (see `request`); an open connection from
 * libmicrohttpd's notice that it started to the one that it closed. */
#ifndef RS_SERVE_SERVER_H
#define RS_SERVE_SERVER_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common/error.h"
#include "search/translate.h"
#include "serve/serve.h"

typedef enum {
    ROUTE_PAGE,
    ROUTE_MODELS,
    ROUTE_TRANSLATE,
    ROUTE_ALIGN,
    ROUTE_PUSH, /* POST /api/push: step i's attention pushed, decoding on */
    ROUTE_RUN,
    ROUTE_RUN_WATCH,
    ROUTE_ONMT_TRANSLATE, /* OpenNMT-py's REST server: POST /translator/translate */
    ROUTE_ONMT_MODELS,    /* and GET /translator/models */
    ROUTE_NONE
} route;
typedef enum { RECEIVING, QUEUED, DECODED } request_state;

/* One HTTP request (libmicrohttpd's con_cls). It is made by the polling
 * thread when the headers are in and freed by it in rs_serve_on_completed.
 * While a worker has it, its connection is suspended, so libmicrohttpd
 * neither calls us for it nor closes it: a request is never freed under a
 * worker. Everything a worker writes into the request is read by the
 * polling thread only after MHD_resume_connection. */
typedef struct {
    struct MHD_Connection *connection;
    route route;
    request_state state;
    double start;    /* monotonic seconds when the headers were in */
    char method[40]; /* for the log: cut, control and non-ASCII bytes as \xNN */
    char path[160];  /* the same */
    char *body;      /* [len] the body so far (capacity cap) */
    size_t len, cap;
    int too_big;
    int close_after; /* answer with Connection: close */
    /* The job, once the body is parsed. */
    int model;
    char *text, *target; /* align: source (text) and target */
    char **texts;        /* [count] translate: the sentences, in the request's order */
    int count;
    int batch; /* 1: "text" was a list, answered as {"results": [...]} */
    int beam, n_best, svg, words;
    int step, attend, has_attend; /* push: step i, position j (from 1), or alpha */
    double *alpha;                /* [n_alpha] push: α_i as given, or NULL */
    int n_alpha;
    uint64_t from; /* /api/run/watch: the byte offset asked for */
    /* The answer. */
    int status;  /* HTTP status sent (0: none yet) */
    char *reply; /* a worker's answer, JSON */
    size_t reply_len;
} request;

/* A numeric IPv4 or IPv6 address. */
typedef union {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
} address;

/* Requests waiting for a thread, in a ring; guarded by the server's lock. */
typedef struct {
    request **ring; /* [size] waiting requests, from head */
    int size, head, count;
    pthread_cond_t wake;
} job_queue;

typedef struct {
    rs_server *server;
    job_queue *queue; /* where it takes its requests from */
    pthread_t thread;
    int started;
    rs_translator *tr; /* [n_models], a decoding worker's own workspaces; NULL: the reader */
} worker;

struct rs_server {
    rs_serve_options opt;
    const rs_serve_model *models;
    const rs_ready **model_ptrs; /* [n_models]: models[i].model, for rs_translator_init */
    int n_models;
    struct MHD_Daemon *daemon;
    struct MHD_Response *page;
    atomic_int port;      /* set once the daemon runs: a request in between reads 0 */
    worker *workers;      /* [opt.threads] */
    worker reader;        /* reads the run files for the training view */
    pthread_mutex_t lock; /* guards the queues and stopping */
    job_queue decode;     /* translate and align requests, for the workers */
    job_queue reads;      /* /api/run and /api/run/watch, for the reader */
    int stopping;
    address listening; /* the address listened on */
    int any_address;   /* listening on every address (0.0.0.0, ::) */
    /* The open connections, for the whole-request deadline and the drain
     * at stop; guarded by conn_lock (polling thread and reaper). */
    pthread_mutex_t conn_lock;
    pthread_cond_t conn_wake;
    struct open_connection *conns;
    int n_conns, draining, reaper_stop, reaper_started;
    pthread_t reaper;
};

/* One open connection: `since` is when it opened or last finished an answer.
 * While `busy` (a request queued, decoded or being answered) the deadline
 * does not run; otherwise a whole request must arrive within opt.timeout of
 * `since`, or the reaper shuts the socket down (libmicrohttpd's own timeout
 * restarts with every byte, so a client sending one header line a second
 * would otherwise hold its connection forever). */
typedef struct open_connection {
    struct open_connection *prev, *next;
    int fd;
    double since;
    int busy;
    int url_nul; /* the request line's path or query decoded to a NUL (polling thread only) */
} open_connection;

/* A text of at most `cap` bytes written through a FILE (fmemopen on a
 * buffer of cap + 1): writing past the cap is an error of the stream, so no
 * answer, however many hypotheses and pictures it is asked for, takes more
 * memory than its cap. NULL from rs_serve_membuf_close: out of memory or over the cap. */
typedef struct {
    FILE *f;
    char *text;
    size_t cap;
} membuf;

/* The "alignment" member (alignment.h's JSON record: labels with </s>, the
 * matrix row by row) and, when asked, the "svg" member (the same picture
 * `rnnsearch align --format svg` draws). */
typedef struct {
    int id, svg;       /* the record's id; 1: the SVG picture too */
    int words;         /* SentencePiece pieces merged into words (alignment.h) */
    const char *title; /* of the picture */
    size_t cap;        /* bytes of the whole answer: the record and the picture take what is left */
} alignment_answer;

/* A translation's "hypotheses" member: each hypothesis with its alignment
 * (and picture) as alignment_answer says, or the reason it has none. */
typedef struct {
    int svg, words;
    int alignment; /* 0: the model has none (--attention none) */
    size_t cap;    /* bytes of the whole answer */
} hypotheses_answer;

/* A translate request's answer: the model's name, the sentences as sent,
 * how they were asked for. */
typedef struct {
    const char *model;
    const char *const *texts; /* [count] */
    int count;
    int onmt;  /* 1: OpenNMT-py's lists */
    int batch; /* 1: {"results": [...]} */
    int beam, n_best;
    hypotheses_answer ha;
} translations_answer;

/* ---- access.c ---- */

/* 0 with *a filled (family, address; port 0), or -1: not a numeric address. */
int rs_serve_parse_address(const char *host, address *a);
/* Every address: 0.0.0.0, :: (however written), ::ffff:0.0.0.0. */
int rs_serve_unspecified(const address *a);
/* The name of a Host value or of an origin's authority into name[size]; 0 or -1. */
int rs_serve_host_name(const char *authority, char *name, size_t size);
/* 0, or the HTTP status (message in msg) of a request refused on its headers. */
int rs_serve_refused(const rs_server *s, request *rq, const char *version, int get, char *msg,
                     size_t size);
/* 1 when the body is sent as application/json. */
int rs_serve_json_content_type(struct MHD_Connection *c);
/* A client's bytes as the log may show them, into dst[size]. */
void rs_serve_escape_for_log(char *dst, size_t size, const char *src);

/* ---- requests.c ---- */

/* libmicrohttpd's callbacks for a request, on the polling thread. */
enum MHD_Result rs_serve_on_request(void *cls, struct MHD_Connection *connection, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls);
void rs_serve_on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                           enum MHD_RequestTerminationCode toe);

/* ---- body.c ---- */

/* The body of a translate or align request into rq's job fields (on a
 * worker); 0, or an HTTP status with the message in err. */
int rs_serve_parse_job(const rs_server *s, request *rq, rs_error *err);
/* How messages name sentence i of rq ('text', 'text'[i], sentence i's 'src'). */
void rs_serve_text_name(const request *rq, int i, char *name, size_t size);

/* ---- jobs.c ---- */

/* A whole request to its queue (its connection suspended), or 503. */
enum MHD_Result rs_serve_submit(rs_server *s, request *rq);
/* The reader and opt.threads decoding workers (each with a translator per
 * model); -1 with err, leaving what started to rs_serve_stop_workers. */
int rs_serve_start_workers(rs_server *s, rs_error *err);
/* Lets the threads answer what is queued, joins them, frees their translators. */
void rs_serve_stop_workers(rs_server *s);

/* ---- answers.c ---- */

/* A text within a cap (membuf above): open, write to m->f, close. */
int rs_serve_membuf_open(membuf *m, size_t cap);
char *rs_serve_membuf_close(membuf *m, size_t *len);
/* Whole JSON answers, malloc'd (the caller's); NULL when out of memory or over the cap. */
char *rs_serve_error_json(const char *message, int status, size_t *len);
char *rs_serve_models_json(const rs_server *s, size_t *len);
/* GET /translator/models: the models as OpenNMT-py's server lists them. */
char *rs_serve_onmt_models_json(const rs_server *s, size_t *len);
/* Parts of an answer: a number (null when not finite); the "alignment" member
 * (and "svg" when asked), or -1 with err when they would not fit in aa->cap. */
void rs_serve_json_number(FILE *out, double x);
int rs_serve_write_alignment(FILE *out, const char *const *tgt, int tgt_count,
                             const char *const *src, int src_count, const float *w,
                             const alignment_answer *aa, rs_error *err);
/* A translate request's answer, its sentences t[ta->count] (without the
 * closing brace and "ms" of an answer of one object): one object, a list
 * ({"results": [...]}) or OpenNMT-py's lists. It stops at the first
 * sentence or hypothesis that finds the answer at its cap (nothing after it
 * is drawn): 0, or the HTTP status of the failure (413 over the cap) with
 * err. */
int rs_serve_write_translations(FILE *out, const rs_translated *t, const translations_answer *ta,
                                rs_error *err);
/* Bytes left of cap in the answer written so far to out (flushed): 0 when it
 * is at or past its cap or its stream failed (a membuf's, past its cap). */
size_t rs_serve_answer_room(FILE *out, size_t cap);
/* Fails with the message for an answer over cap bytes; returns -1. */
int rs_serve_answer_too_large(rs_error *err, size_t cap);
/* HTTP answers; rs_serve_send_json takes body (NULL: MHD_NO) and frees it. */
enum MHD_Result rs_serve_send_json(request *rq, int status, char *body, size_t len);
enum MHD_Result rs_serve_send_error(request *rq, int status, const char *message);
enum MHD_Result rs_serve_send_page(rs_server *s, request *rq);
void rs_serve_page_headers(struct MHD_Response *r);

/* ---- push.c ---- */

/* A push request's answer into out (rq's text, step and attend or alpha,
 * read by body.c): 0, or -1 with err and *status the HTTP status (400: the
 * request, 413: over the answer's cap, 500). */
int rs_serve_push_job(const rs_server *s, const request *rq, FILE *out, rs_error *err, int *status);

/* ---- connections.c ---- */

/* libmicrohttpd's notice of a connection started or closed. */
void rs_serve_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                            enum MHD_ConnectionNotificationCode code);
/* The thread that closes connections past their deadline (and idle ones while draining). */
void *rs_serve_reaper_main(void *arg);
/* libmicrohttpd's unescaping of the path and query (MHD_http_unescape), noting
 * on the connection a %00 that decoded to a NUL; rs_serve_take_url_nul says
 * whether the request's line had one, and forgets it. */
size_t rs_serve_unescape(void *cls, struct MHD_Connection *c, char *s);
int rs_serve_take_url_nul(struct MHD_Connection *c);
/* Marks a request's connection busy (no deadline) or idle (the deadline starts now). */
void rs_serve_set_busy(rs_server *s, struct MHD_Connection *c, int busy);

#endif
