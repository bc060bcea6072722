/* The models a server serves, loaded from -m arguments, and the name
 * requests call each by: "models/dates", "models/dates/best.ckpt" and
 * "dates" are all "dates"; "x/other.ckpt" is "other". */
#ifndef RS_SERVE_MODELS_H
#define RS_SERVE_MODELS_H

#include <stddef.h>

#include "search/ready.h"
#include "serve/serve.h"

#define RS_SERVE_MAX_MODELS 16

typedef struct {
    rs_ready models[RS_SERVE_MAX_MODELS];
    rs_codec codecs[RS_SERVE_MAX_MODELS];
    char names[RS_SERVE_MAX_MODELS][256];
    rs_serve_model served[RS_SERVE_MAX_MODELS]; /* what rs_server_start takes */
    int loaded;
} rs_serve_models;

/* The request name of a -m argument, in name[size]. */
void rs_serve_model_name(const char *model_arg, char *name, size_t size);

/* args[0..count) loaded ready to decode as `ready` asks, each with its codec
 * and name; on failure those loaded so far stay for rs_serve_models_free. */
int rs_serve_models_load(rs_serve_models *m, const char *const *args, int count,
                         const rs_ready_options *ready, rs_error *err);
void rs_serve_models_free(rs_serve_models *m);

#endif
