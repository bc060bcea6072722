/* `rnnsearch serve`: an HTTP server (libmicrohttpd) that puts the one
 * translation pipeline (translate.h) and forced decoding (forced.h) behind a
 * JSON API, and serves the explorer page (serve_page.html). The API is
 * specified in docs/serve.md.
 *
 * Threads: libmicrohttpd's one polling thread reads requests, answers the
 * cheap ones (the page, /api/models, every malformed request) itself, and
 * hands a valid translate (one sentence, a list of them, or OpenNMT-py's
 * request) or align request to a bounded queue, suspending its connection;
 * `threads` workers, each with its own rs_translator (its own decoding
 * workspace) per model, take requests from the queue, decode them against
 * the shared read-only models, and resume the connection with the answer. The training view's reads of the run files (/api/run,
 * /api/run/watch) go the same way to a queue of their own and one reader
 * thread, so that no file, however slow or large, holds up the polling
 * thread. A full queue is answered at once with 503.
 *
 * Limits, so that no client can hold a worker or the server for long:
 *   - a body of more than max_body bytes: 413 (at once when Content-Length
 *     says so, else once the body has been read and thrown away);
 *   - a text, source or target of more than max_chars characters: 413;
 *   - a translate request of more than max_batch sentences: 413;
 *   - beam and n_best from 1 to max_beam;
 *   - timeout seconds: a connection idle that long is closed; a body that
 *     takes longer to arrive is answered 408 once it is in (libmicrohttpd
 *     cannot answer before the end of a body), and its connection is closed
 *     if it is still arriving after 3 × timeout; a request that waited that
 *     long in the queue is answered 503 without being decoded. Decoding
 *     itself is bounded by the length limits (translate.h cuts a source to
 *     max_src_len tokens and an output to 2·source + 10).
 * A client that stops sending in the middle of a request, or half-closes
 * its connection there, is closed without an answer (libmicrohttpd gives no
 * chance to answer an unfinished request); it never reaches a worker. */
#ifndef RS_SERVE_H
#define RS_SERVE_H

#include <signal.h>
#include <stddef.h>

#include "model/codec.h"
#include "common/error.h"
#include "model/model.h"
#include "search/ready.h"

typedef struct {
    const char *name;      /* what requests call it ({"model": name}) */
    const rs_ready *model; /* read-only, shared by all workers; not owned */
    const rs_codec *codec; /* its text settings; not owned */
} rs_serve_model;

typedef struct {
    const char *host;  /* numeric IPv4 or IPv6 address to listen on (rs_serve_loopback) */
    int port;          /* 0: a free port (rs_server_port tells which) */
    int threads;       /* decoding workers */
    int queue;         /* requests waiting for a worker, at most */
    int connections;   /* open connections, at most */
    size_t max_body;   /* request body, bytes */
    int timeout;       /* seconds (see above) */
    int max_chars;     /* characters of a text, source or target */
    int max_batch;     /* sentences of one translate request, at most */
    int max_beam;      /* largest beam and n_best a request may ask for */
    size_t max_answer; /* bytes of one answer, at most (alignments and SVG included) */
    /* Host names accepted besides the loopback names and the listening
     * address (any name when listening on every address: 0.0.0.0, ::). */
    const char *const *allow_hosts;
    int n_allow_hosts;
    /* When not NULL, every request must carry it: "Authorization: Bearer T",
     * "?token=T" (the page then sets a cookie for its own requests) or that cookie. */
    const char *token;
    /* A host that is not loopback needs a token unless this is 1 (then
     * anyone who can reach the port may use the server). */
    int no_token;
    /* Called (from the server's threads, one at a time) with one line per
     * answered request: "METHOD PATH STATUS MS"; NULL: no log. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
    /* A training run's model directory whose train.log.tsv and watch.jsonl
     * GET /api/run and /api/run/watch read (serve/run.h); NULL: none. */
    const char *run_dir;
} rs_serve_options;

/* 127.0.0.1:8080, 2 workers, queue 64, 64 connections, 64 KiB bodies,
 * 10 s, 1000 characters, 64 sentences a request, beams up to 16. */
void rs_serve_options_default(rs_serve_options *opt);

/* 1 when host, a numeric address, is a loopback one: 127.0.0.0/8, ::1, or
 * 127.0.0.0/8 mapped into IPv6 (::ffff:127.0.0.1); 0 for every other address,
 * the unspecified ones (0.0.0.0, ::, ::0, 0:0:0:0:0:0:0:0) included; -1 when
 * host is not a numeric IPv4 or IPv6 address. Decided on the parsed address,
 * never on its spelling. */
int rs_serve_loopback(const char *host);

/* 1 when host is every address (0.0.0.0, :: however written, ::ffff:0.0.0.0),
 * 0 for any other numeric address, -1 for anything else. */
int rs_serve_any_address(const char *host);

/* 0 when token is 8 to 128 of A-Z a-z 0-9 - _ . (what a request can carry
 * in a URL and a header unchanged), else -1 with the rule in err. */
int rs_serve_token_check(const char *token, rs_error *err);

/* A new token: 32 hex digits from /dev/urandom in token[size >= 33]; -1 when
 * the random source cannot be read. */
int rs_serve_token_new(char *token, size_t size);

typedef struct rs_server rs_server;

/* Starts listening and the workers. models[0] is the default model; names
 * must differ. The models must outlive the server. A host that is not
 * loopback is refused without a token (or no_token). */
int rs_server_start(rs_server **out, const rs_serve_model *models, int n_models,
                    const rs_serve_options *opt, rs_error *err);

/* The port the server listens on. */
int rs_server_port(const rs_server *server);

/* Answers what is queued, stops the workers and the listener, frees all. */
void rs_server_stop(rs_server *server);

/* rs_server_stop on a thread beside the caller, which meanwhile waits for a
 * signal of `again` (blocked in every thread): 0 once the server is stopped,
 * or the signal as soon as one comes, the stop still under way (the caller
 * then ends the program at once). */
int rs_server_stop_or_signal(rs_server *server, const sigset_t *again);

#endif
