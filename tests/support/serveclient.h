/* What the suites of tests/serve/ share: the tiny model they serve (trained
 * by the program once per test case, before the forked tests), a server of
 * it on loopback with the tests' usual options, a plain socket client and
 * its answers, and `rnnsearch serve` as a process. */
#ifndef RS_TEST_SERVECLIENT_H
#define RS_TEST_SERVECLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/json.h"
#include "model/checkpoint.h"
#include "serve/serve.h"

extern char model_dir[64];

extern rs_model model;

/* model as the server reads it: as it is, without faster forms */
extern rs_ready model_ready;

extern rs_codec codec;

/* Trains the tiny model once per test case, before the (forked) tests. */
void train_model(void);

void free_model(void);

/* The test's usual options: any free port, 200 characters, 4 KiB bodies, beams to 8. */
rs_serve_options test_options(int threads, int queue, int timeout);

rs_server *start_with(const rs_serve_options *opt);

rs_server *start(int threads, int queue, int timeout);

double now(void);

int connect_to(int port);

void send_all(int fd, const char *data, size_t len);

typedef struct {
    int status;                  /* HTTP status; -1: closed without an answer */
    char text[(1 << 21) + 8192]; /* a --max-answer of 2 MiB and its head */
    char *body;                  /* into text */
    double seconds;              /* from the call to the end of the answer */
} answer;

/* Reads until the server closes (every request says Connection: close) or
 * `wait` seconds pass (a failure: the server must never leave a client hanging). */
void read_answer(int fd, answer *a, double start, double wait);

/* One raw request; shut_wr half-closes the connection after sending. */
void raw(int port, const char *data, size_t len, int shut_wr, answer *a);

void request(int port, const char *method, const char *path, const char *body, answer *a);

/* The answer's JSON (to rs_json_free), checked to be an object. */
rs_json *json_of(const answer *a);

/* A 4xx answer with a JSON {"error": "...", "status": N}. */
void expect_error(const answer *a, int status, const char *words, const char *what);

const rs_json *item(const rs_json *array, size_t k);

const char *str(const rs_json *obj, const char *key);

double num(const rs_json *obj, const char *key);

extern const char *const sentence;

/* The answers of the test that runs (the client threads have their own). */
extern answer answers[2];

/* A raw request with the given headers (each ending in \r\n) and body. */
void with_headers(int port, const char *method, const char *path, const char *headers,
                  const char *body, answer *a);

/* `rnnsearch serve` as a process: its port read from the line it prints. */
typedef struct {
    pid_t pid;
    int port;
    char log[256];
} server_process;

/* `rnnsearch serve -m MODEL --port 0 --quiet OPTIONS`, its port read from its log. */
void spawn_server_with(server_process *p, const char *model_arg, const char *options);

void spawn_server(server_process *p, const char *options);

char *read_log(const server_process *p);

int wait_exit(pid_t pid, double seconds);

extern const char *const batch_sentences[3];

#endif
