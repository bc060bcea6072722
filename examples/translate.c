/* Translates lines with librnnsearch, as `rnnsearch translate` does.
 *
 *   translate MODEL [BEAM] < sentences.txt
 *
 * MODEL is a checkpoint, a model directory or a name (as -m takes it); BEAM
 * is the beam size (default 1: greedy). Each line of standard input gives
 * one line of output. Build against an installed library with
 *
 *   cc -o translate translate.c $(pkg-config --cflags --libs rnnsearch)
 */
#define _POSIX_C_SOURCE 200809L /* getline: a line of any length is one sentence */
#include <rnnsearch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s MODEL [BEAM] < sentences.txt\n", argv[0]);
        return 2;
    }
    rnnsearch_error err;
    rnnsearch_model *model;
    if (rnnsearch_model_load(argv[1], &model, &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        return 1;
    }
    rnnsearch_options opt;
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    if (argc == 3)
        opt.beam = atoi(argv[2]);
    rnnsearch_translator *tr;
    if (rnnsearch_translator_new(model, &opt, &tr, &err)) {
        fprintf(stderr, "translate: %s\n", err.message);
        rnnsearch_model_free(model);
        return 1;
    }
    int status = 0;
    char *line = NULL;
    size_t cap = 0;
    while (status == 0 && getline(&line, &cap, stdin) != -1) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *sources[1] = {line};
        rnnsearch_translation t;
        if (rnnsearch_translate(tr, 1, sources, &t, &err)) {
            fprintf(stderr, "translate: %s\n", err.message);
            status = 1;
            break;
        }
        printf("%s\n", t.hyps[0].text);
        rnnsearch_translation_free(&t);
    }
    free(line);
    rnnsearch_translator_free(tr);
    rnnsearch_model_free(model);
    return status;
}
