/* The models a decoding command is given (repeated -m): one model, or an
 * ensemble whose members decode together (search/decode.h), each loaded
 * ready to decode as search/ready.h loads it. */
#ifndef RS_MODELS_H
#define RS_MODELS_H

#include "search/lexicon.h"
#include "search/ready.h"
#include "search/translate.h"

#define RS_MAX_MODELS 16

typedef struct {
    int count, loaded;
    const char *args[RS_MAX_MODELS];        /* as -m gives them: files, directories or names */
    rs_ready models[RS_MAX_MODELS];         /* each model with its copies */
    const rs_ready *members[RS_MAX_MODELS]; /* &models[k], as the pipeline takes them */
    rs_ready_options ready;                 /* what every model is readied with (--int8) */
    rs_lexicon lexicon;                     /* a shortlist's table (rs_models_translator) */
} rs_models;

/* Loads every model of args not loaded yet, and the first one's text codec
 * into codec (NULL: none); fails naming the file. */
int rs_models_load(rs_models *m, rs_codec *codec, rs_error *err);

/* The models loaded (rs_models_load) and a translator made of them as topt
 * asks, with the shortlist's table read from shortlist_path (NULL: none)
 * against the first model's vocabularies into m->lexicon and topt's
 * shortlist. A model of SentencePiece pieces gives decoded text: topt's
 * remove_bpe sentencepiece is refused for it (taking its spaces out would
 * join every word). tr must be freed before m. */
int rs_models_translator(rs_models *m, rs_codec *codec, const char *shortlist_path,
                         rs_translate_options *topt, rs_translator *tr, rs_error *err);

/* Frees the models and the shortlist's table. */
void rs_models_free(rs_models *m);

#endif
