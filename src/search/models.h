/* The models a decoding command is given (repeated -m): one model, or an
 * ensemble whose members decode together (search/decode.h), each loaded
 * ready to decode as search/ready.h loads it. */
#ifndef RS_MODELS_H
#define RS_MODELS_H

#include "search/ready.h"

#define RS_MAX_MODELS 16

typedef struct {
    int count, loaded;
    const char *args[RS_MAX_MODELS]; /* as -m gives them: files, directories or names */
    rs_model models[RS_MAX_MODELS];
    const rs_model *members[RS_MAX_MODELS]; /* &models[k], as the pipeline takes them */
    rs_ready_options ready;                 /* what every model is readied with (--int8) */
} rs_models;

/* Loads every model of args not loaded yet, and the first one's text codec
 * into codec (NULL: none); fails naming the file. */
int rs_models_load(rs_models *m, rs_codec *codec, rs_error *err);

void rs_models_free(rs_models *m);

#endif
