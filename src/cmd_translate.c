/* rnnsearch translate: sentences in, translations out (greedy, batched). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "corpus.h"
#include "decode.h"

#define PROG "rnnsearch translate"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " -m MODEL [OPTIONS] [FILE]\n\n"
            "Translates each line of FILE (default: standard input) and prints one\n"
            "translation per line. MODEL is a checkpoint file or a directory models/NAME\n"
            "(its best.ckpt, else last.ckpt).\n\n"
            "  -m, --model MODEL      the model (required)\n"
            "  -o, --output FILE      write translations here (default: standard output)\n"
            "  --batch-size N         sentences decoded together (default: 32)\n"
            "  --max-len N            longest output in tokens (default: 2 × source + 10, at most 500)\n"
            "  --threads N            BLAS threads (default: OpenBLAS's choice)\n"
            "  --help                 this help\n");
}

typedef struct {
    rs_model model;
    rs_codec codec;
    rs_decoder decoder;
    int batch_size, max_len;
} translator;

/* Translates lines[0..count) into out[0..count) (malloc'd strings). */
static int translate_lines(translator *tr, char **lines, int count, char **out, rs_error *err)
{
    rs_tokens tokens = {0};
    int status = -1;
    int **ids = rs_calloc((size_t)count, sizeof(int *), err);
    int *len = rs_calloc((size_t)count, sizeof(int), err);
    rs_translation *res = rs_calloc((size_t)tr->batch_size, sizeof *res, err);
    const char **words = NULL;
    if (!ids || !len || !res)
        goto done;
    int longest = 0;
    for (int i = 0; i < count; i++) {
        rs_error inner;
        if (rs_codec_tokens(&tr->codec, RS_SIDE_SRC, lines[i], &tokens, &inner)) {
            rs_fail(err, "%s", inner.msg);
            goto done;
        }
        ids[i] = rs_calloc((size_t)tokens.count + 1, sizeof(int), err);
        if (!ids[i])
            goto done;
        for (int k = 0; k < tokens.count; k++)
            ids[i][k] = rs_vocab_id(&tr->model.src_vocab, tokens.tokens[k]);
        len[i] = tokens.count;
        if (len[i] > longest)
            longest = len[i];
    }
    if (longest + 1 > tr->decoder.max_S) {
        rs_decoder_free(&tr->decoder);
        if (rs_decoder_init(&tr->decoder, &tr->model, tr->batch_size, longest + 1, err))
            goto done;
    }
    for (int from = 0; from < count; from += tr->batch_size) {
        int B = count - from < tr->batch_size ? count - from : tr->batch_size;
        int max_len = tr->max_len;
        if (max_len <= 0) {
            int longest_here = 0;
            for (int b = 0; b < B; b++)
                if (len[from + b] > longest_here)
                    longest_here = len[from + b];
            max_len = 2 * longest_here + 10 < 500 ? 2 * longest_here + 10 : 500;
        }
        if (rs_greedy(&tr->decoder, B, (const int *const *)ids + from, len + from, max_len, 0, res, err))
            goto done;
        for (int b = 0; b < B; b++) {
            free(words);
            words = rs_calloc((size_t)res[b].len + 1, sizeof(char *), err);
            if (!words)
                goto done;
            rs_ids_to_tokens(&tr->model.tgt_vocab, res[b].ids, res[b].len, words);
            int rc = rs_codec_text(&tr->codec, RS_SIDE_TGT, words, res[b].len, &out[from + b], err);
            rs_translation_free(&res[b]);
            if (rc)
                goto done;
        }
    }
    status = 0;
done:
    free(words);
    rs_tokens_free(&tokens);
    for (int i = 0; ids && i < count; i++)
        free(ids[i]);
    free(ids);
    free(len);
    free(res);
    return status;
}

static int parse_count(const char *opt, const char *arg, int min, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || end == arg || v < min || v > 1000000) {
        fprintf(stderr, PROG ": %s: '%s' is not an integer of at least %d\n", opt, arg, min);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cmd_translate(int argc, char **argv)
{
    enum { OPT_BATCH = 1000, OPT_MAXLEN, OPT_THREADS, OPT_HELP };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"max-len", required_argument, NULL, OPT_MAXLEN},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"help", no_argument, NULL, OPT_HELP},
        {0},
    };
    const char *model_arg = NULL, *output = NULL;
    int batch_size = 32, max_len = 0, threads = 0;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "m:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model_arg = optarg; break;
        case 'o': output = optarg; break;
        case OPT_BATCH: if (parse_count("--batch-size", optarg, 1, &batch_size)) return RS_EXIT_USAGE; break;
        case OPT_MAXLEN: if (parse_count("--max-len", optarg, 1, &max_len)) return RS_EXIT_USAGE; break;
        case OPT_THREADS: if (parse_count("--threads", optarg, 1, &threads)) return RS_EXIT_USAGE; break;
        case OPT_HELP: usage(stdout); return RS_EXIT_OK;
        default:
            fprintf(stderr, PROG ": unknown option or missing value: %s\ntry '" PROG " --help'\n",
                    argv[optind - 1]);
            return RS_EXIT_USAGE;
        }
    }
    if (!model_arg) {
        fprintf(stderr, PROG ": no model given (-m MODEL)\n");
        return RS_EXIT_USAGE;
    }
    if (argc - optind > 1) {
        fprintf(stderr, PROG ": more than one input file given\n");
        return RS_EXIT_USAGE;
    }
    const char *input = optind < argc ? argv[optind] : "-";
    if (threads > 0)
        openblas_set_num_threads(threads);

    rs_error err;
    translator tr = {.batch_size = batch_size, .max_len = max_len};
    rs_line_reader reader = {0};
    FILE *out = stdout;
    char path[4096];
    int status = RS_EXIT_FAIL, reader_open = 0;
    char **lines = NULL, **results = NULL;
    if (rs_checkpoint_resolve(model_arg, path, sizeof path, &err) ||
        rs_checkpoint_load(path, &tr.model, NULL, &err) ||
        rs_codec_for_model(&tr.codec, &tr.model, &err) ||
        rs_decoder_init(&tr.decoder, &tr.model, batch_size, 64, &err))
        goto fail;
    if (rs_line_reader_open(&reader, input, &err))
        goto fail;
    reader_open = 1;
    if (output && !(out = fopen(output, "w"))) {
        rs_fail(&err, "%s: cannot open for writing", output);
        goto fail;
    }
    /* Interactive input is translated line by line; files in chunks. */
    const int chunk = isatty(fileno(reader.file)) ? 1 : 64 * batch_size;
    lines = rs_calloc((size_t)chunk, sizeof(char *), &err);
    results = rs_calloc((size_t)chunk, sizeof(char *), &err);
    if (!lines || !results)
        goto fail;
    for (;;) {
        int count = 0, rc = 0;
        char *line;
        size_t len;
        while (count < chunk && (rc = rs_line_reader_next(&reader, &line, &len, &err)) == 1) {
            if (!(lines[count] = strdup(line))) {
                rs_fail(&err, "out of memory");
                goto fail;
            }
            count++;
        }
        if (rc < 0)
            goto fail;
        if (count > 0) {
            rs_error inner;
            if (translate_lines(&tr, lines, count, results, &inner)) {
                rs_fail(&err, "%s:%ld: %s", reader.name, reader.line - count + 1, inner.msg);
                goto fail;
            }
            for (int i = 0; i < count; i++) {
                fprintf(out, "%s\n", results[i]);
                free(results[i]);
                results[i] = NULL;
                free(lines[i]);
                lines[i] = NULL;
            }
            fflush(out);
        }
        if (rc == 0)
            break;
    }
    if (ferror(out) || (out != stdout && fclose(out))) {
        out = stdout;
        rs_fail(&err, "%s: write failed", output ? output : "<stdout>");
        goto fail;
    }
    out = stdout;
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    if (out != stdout)
        fclose(out);
    for (int i = 0; lines && i < 64 * batch_size; i++)
        free(lines[i]);
    free(lines);
    for (int i = 0; results && i < 64 * batch_size; i++)
        free(results[i]);
    free(results);
    if (reader_open)
        rs_line_reader_close(&reader);
    rs_decoder_free(&tr.decoder);
    rs_codec_free(&tr.codec);
    rs_model_free(&tr.model);
    return status;
}
