/* rnnsearch translate: sentences in, translations out (greedy or beam search,
 * batched), optionally n-best lists and a BLEU score against references. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alignment.h"
#include "beam.h"
#include "bleu.h"
#include "checkpoint.h"
#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "corpus.h"
#include "decode.h"
#include "fileio.h"

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
            "  --beam K               beam search with K hypotheses (default: 1, greedy)\n"
            "  --length-penalty A     rank hypotheses by log p / length^A (default: 1.0)\n"
            "  --n-best N             print N hypotheses per sentence, Moses style:\n"
            "                         'id ||| translation ||| score' (default: 1, plain)\n"
            "  --batch-size N         sentences decoded together (default: 32)\n"
            "  --max-len N            longest output in tokens (default: 2 x source + 10)\n"
            "  --replace-unk          replace <unk> by the source token it attends to most\n"
            "  --alignment[=WHAT]     append ' ||| ' and the alignment, as Marian does: hard\n"
            "                         (default: 'i-j' source-target links, argmax per target\n"
            "                         token), a threshold X in (0, 1] (links of weight >= X)\n"
            "                         or soft (each target token's weights, ',' between)\n"
            "  --ref FILE             score the translations against references (BLEU, chrF)\n"
            "  --threads N            BLAS threads (default: OpenBLAS's choice)\n"
            "  --help                 this help\n");
}

typedef struct {
    rs_model model;
    rs_codec codec;
    rs_decoder decoder;
    rs_beam_search beam;
    rs_beam_options opt;
    int batch_size, max_len, replace_unk;
    int alignment;         /* 0 none, 1 hard, 2 soft (--alignment) */
    float align_threshold; /* hard: 0 = argmax, else links of weight >= it */
} translator;

/* Replaces each <unk> in the output by the source token with the largest
 * attention weight at that step (the source's </s> column excluded). */
static void replace_unknowns(const rs_translation *t, const rs_tokens *source, const char **words)
{
    for (int i = 0; i < t->len; i++) {
        if (t->ids[i] != RS_UNK || source->count == 0 || !t->alignment)
            continue;
        const float *row = t->alignment + (size_t)i * t->src_len;
        int best = 0;
        for (int j = 1; j < source->count; j++)
            if (row[j] > row[best])
                best = j;
        words[i] = source->tokens[best];
    }
}

/* Translates lines[0..count) into text[count × n_best] (malloc'd strings;
 * NULL where fewer hypotheses were found) and scores[count × n_best]. */
static int translate_lines(translator *tr, char **lines, int count, char **text, double *scores,
                           rs_error *err)
{
    const int nbest = tr->opt.n_best, use_beam = tr->opt.beam > 1 || nbest > 1;
    int status = -1;
    rs_tokens *sources = rs_calloc((size_t)count, sizeof(rs_tokens), err);
    int **ids = rs_calloc((size_t)count, sizeof(int *), err);
    int *len = rs_calloc((size_t)count, sizeof(int), err);
    rs_translation *res = rs_calloc((size_t)tr->batch_size * nbest, sizeof *res, err);
    double *norm = rs_calloc((size_t)tr->batch_size * nbest, sizeof(double), err);
    const char **words = NULL;
    if (!sources || !ids || !len || !res || !norm)
        goto done;
    int longest = 0;
    for (int i = 0; i < count; i++) {
        rs_error inner;
        if (rs_codec_tokens(&tr->codec, RS_SIDE_SRC, lines[i], &sources[i], &inner)) {
            rs_fail(err, "line %d of this chunk: %s", i + 1, inner.msg);
            goto done;
        }
        ids[i] = rs_calloc((size_t)sources[i].count + 1, sizeof(int), err);
        if (!ids[i])
            goto done;
        for (int k = 0; k < sources[i].count; k++)
            ids[i][k] = rs_vocab_id(&tr->model.src_vocab, sources[i].tokens[k]);
        len[i] = sources[i].count;
        if (len[i] > longest)
            longest = len[i];
    }
    /* Workspaces grow to the longest sentence seen. */
    if (longest + 1 > tr->decoder.max_S) {
        int max_S = 2 * (longest + 1);
        rs_decoder_free(&tr->decoder);
        if (rs_decoder_init(&tr->decoder, &tr->model, tr->batch_size, max_S, err))
            goto done;
        if (use_beam) {
            rs_beam_free(&tr->beam);
            if (rs_beam_init(&tr->beam, &tr->model, tr->batch_size, tr->opt.beam, max_S, err))
                goto done;
        }
    }
    for (int from = 0; from < count; from += tr->batch_size) {
        int B = count - from < tr->batch_size ? count - from : tr->batch_size;
        int max_len = tr->max_len;
        if (max_len <= 0) {
            int longest_here = 0;
            for (int b = 0; b < B; b++)
                if (len[from + b] > longest_here)
                    longest_here = len[from + b];
            max_len = 2 * longest_here + 10;
        }
        int rc;
        if (use_beam) {
            rs_beam_options opt = tr->opt;
            opt.max_len = max_len;
            opt.want_alignment = tr->replace_unk || tr->alignment;
            rc = rs_beam_translate(&tr->beam, B, (const int *const *)ids + from, len + from, &opt,
                                   res, norm, err);
        } else {
            rc = rs_greedy(&tr->decoder, B, (const int *const *)ids + from, len + from, max_len,
                           tr->replace_unk || tr->alignment, res, err);
            for (int b = 0; b < B; b++)
                norm[b] = res[b].logprob;
        }
        if (rc)
            goto done;
        for (int k = 0; k < B * nbest; k++) {
            rs_translation *t = &res[k];
            int i = from + k / nbest;
            if (!t->ids) {
                text[(size_t)i * nbest + k % nbest] = NULL;
                continue;
            }
            free(words);
            words = rs_calloc((size_t)t->len + 1, sizeof(char *), err);
            if (!words)
                goto done;
            rs_ids_to_tokens(&tr->model.tgt_vocab, t->ids, t->len, words);
            if (tr->replace_unk)
                replace_unknowns(t, &sources[i], words);
            scores[(size_t)i * nbest + k % nbest] = norm[k];
            rc = rs_codec_text(&tr->codec, RS_SIDE_TGT, words, t->len,
                               &text[(size_t)i * nbest + k % nbest], err);
            if (!rc && tr->alignment)
                rc = rs_alignment_append_marian(&text[(size_t)i * nbest + k % nbest], t->alignment,
                                                t->len + 1, t->src_len, tr->alignment == 2,
                                                tr->align_threshold, err);
            rs_translation_free(t);
            if (rc)
                goto done;
        }
    }
    status = 0;
done:
    free(words);
    for (int i = 0; i < count; i++) {
        if (sources)
            rs_tokens_free(&sources[i]);
        if (ids)
            free(ids[i]);
    }
    for (int k = 0; res && k < tr->batch_size * nbest; k++)
        rs_translation_free(&res[k]);
    free(sources);
    free(ids);
    free(len);
    free(res);
    free(norm);
    return status;
}

int cmd_translate(int argc, char **argv)
{
    enum { OPT_BATCH = 1000, OPT_MAXLEN, OPT_THREADS, OPT_BEAM, OPT_LP, OPT_NBEST, OPT_REF,
           OPT_UNK, OPT_ALIGN, OPT_HELP };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"max-len", required_argument, NULL, OPT_MAXLEN},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"beam", required_argument, NULL, OPT_BEAM},
        {"length-penalty", required_argument, NULL, OPT_LP},
        {"n-best", required_argument, NULL, OPT_NBEST},
        {"ref", required_argument, NULL, OPT_REF},
        {"replace-unk", no_argument, NULL, OPT_UNK},
        {"alignment", optional_argument, NULL, OPT_ALIGN},
        {"help", no_argument, NULL, OPT_HELP},
        {0},
    };
    const char *model_arg = NULL, *output = NULL, *ref_path = NULL;
    int threads = 0;
    translator tr = {.batch_size = 32, .opt = {.beam = 1, .length_penalty = 1.0f, .n_best = 1}};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "m:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model_arg = optarg; break;
        case 'o': output = optarg; break;
        case OPT_BATCH: if (rs_cli_int(PROG, "--batch-size", optarg, 1, 1000000, &tr.batch_size)) return RS_EXIT_USAGE; break;
        case OPT_MAXLEN: if (rs_cli_int(PROG, "--max-len", optarg, 1, 1000000, &tr.max_len)) return RS_EXIT_USAGE; break;
        case OPT_THREADS: if (rs_cli_int(PROG, "--threads", optarg, 1, 1000000, &threads)) return RS_EXIT_USAGE; break;
        case OPT_BEAM: if (rs_cli_int(PROG, "--beam", optarg, 1, 1000000, &tr.opt.beam)) return RS_EXIT_USAGE; break;
        case OPT_NBEST: if (rs_cli_int(PROG, "--n-best", optarg, 1, 1000000, &tr.opt.n_best)) return RS_EXIT_USAGE; break;
        case OPT_LP: {
            char *end;
            tr.opt.length_penalty = strtof(optarg, &end);
            if (*end || end == optarg || !isfinite(tr.opt.length_penalty)) {
                fprintf(stderr, PROG ": --length-penalty: '%s' is not a number\n", optarg);
                return RS_EXIT_USAGE;
            }
            break;
        }
        case OPT_REF: ref_path = optarg; break;
        case OPT_UNK: tr.replace_unk = 1; break;
        case OPT_ALIGN: {
            char *end = NULL;
            double x = optarg ? strtod(optarg, &end) : 0.0;
            tr.alignment = optarg && !strcmp(optarg, "soft") ? 2 : 1;
            if (optarg && strcmp(optarg, "soft") && strcmp(optarg, "hard")) {
                if (*end || end == optarg || !(x > 0.0 && x <= 1.0)) {
                    fprintf(stderr, PROG ": --alignment: '%s' is not hard, soft or a number in (0, 1]\n", optarg);
                    return RS_EXIT_USAGE;
                }
                tr.align_threshold = (float)x;
            }
            break;
        }
        case OPT_HELP: usage(stdout); return RS_EXIT_OK;
        default:
            return rs_cli_bad_option(PROG, argv[optind - 1]);
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
    if (tr.opt.n_best > tr.opt.beam) {
        fprintf(stderr, PROG ": --n-best %d needs --beam of at least %d\n", tr.opt.n_best, tr.opt.n_best);
        return RS_EXIT_USAGE;
    }
    if (tr.alignment && ref_path) {
        fprintf(stderr, PROG ": --alignment and --ref do not go together (the score would include the alignment)\n");
        return RS_EXIT_USAGE;
    }
    const char *input = optind < argc ? argv[optind] : "-";
    rs_error same;
    if (rs_check_output_not_input(output, input, &same) || rs_check_output_not_input(output, ref_path, &same)) {
        fprintf(stderr, PROG ": %s\n", same.msg);
        return RS_EXIT_USAGE;
    }
    if (threads > 0)
        openblas_set_num_threads(threads);

    const int nbest = tr.opt.n_best;
    rs_error err;
    rs_line_reader reader = {0};
    rs_lines refs = {0};
    rs_bleu_stats bleu;
    rs_chrf_stats chrf;
    rs_bleu_stats_init(&bleu);
    rs_chrf_stats_init(&chrf);
    FILE *out = stdout;
    int status = RS_EXIT_FAIL, reader_open = 0, chunk = 0;
    long line_no = 0;
    char **lines = NULL, **results = NULL;
    double *scores = NULL;
    if (rs_cli_load_model(model_arg, &tr.model, &tr.codec, &err) ||
        rs_decoder_init(&tr.decoder, &tr.model, tr.batch_size, 64, &err) ||
        ((tr.opt.beam > 1 || nbest > 1) &&
         rs_beam_init(&tr.beam, &tr.model, tr.batch_size, tr.opt.beam, 64, &err)))
        goto fail;
    if (ref_path && rs_lines_read(ref_path, &refs, &err))
        goto fail;
    if (rs_line_reader_open(&reader, input, &err))
        goto fail;
    reader_open = 1;
    if (output && !(out = fopen(output, "w"))) {
        rs_fail(&err, "%s: cannot open for writing", output);
        goto fail;
    }
    /* Interactive input is translated line by line; files in chunks. */
    chunk = isatty(fileno(reader.file)) ? 1 : 64 * tr.batch_size;
    lines = rs_calloc((size_t)chunk, sizeof(char *), &err);
    results = rs_calloc((size_t)chunk * nbest, sizeof(char *), &err);
    scores = rs_calloc((size_t)chunk * nbest, sizeof(double), &err);
    if (!lines || !results || !scores)
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
            if (translate_lines(&tr, lines, count, results, scores, &inner)) {
                rs_fail(&err, "%s (lines %ld-%ld): %s", reader.name, line_no + 1, line_no + count, inner.msg);
                goto fail;
            }
            for (int i = 0; i < count; i++, line_no++) {
                for (int r = 0; r < nbest; r++) {
                    const char *hyp = results[(size_t)i * nbest + r];
                    if (nbest > 1 && hyp)
                        fprintf(out, "%ld ||| %s ||| %.6f\n", line_no, hyp, scores[(size_t)i * nbest + r]);
                    else if (nbest == 1)
                        fprintf(out, "%s\n", hyp ? hyp : "");
                }
                if (ref_path) {
                    if (line_no >= refs.count) {
                        rs_fail(&err, "%s has fewer lines (%d) than the input", ref_path, refs.count);
                        goto fail;
                    }
                    const char *hyp = results[(size_t)i * nbest] ? results[(size_t)i * nbest] : "";
                    const char *ref = refs.lines[line_no];
                    if (rs_bleu_stats_add(&bleu, hyp, &ref, 1, NULL, &err) ||
                        rs_chrf_stats_add(&chrf, hyp, &ref, 1, NULL, &err))
                        goto fail;
                }
                for (int r = 0; r < nbest; r++) {
                    free(results[(size_t)i * nbest + r]);
                    results[(size_t)i * nbest + r] = NULL;
                }
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
    if (ref_path) {
        if (line_no != refs.count) {
            rs_fail(&err, "%s has %d lines but the input has %ld", ref_path, refs.count, line_no);
            goto fail;
        }
        rs_bleu_result b;
        rs_chrf_result cr;
        char text[256];
        rs_bleu_compute(&bleu, &b);
        rs_bleu_format(&b, text, sizeof text);
        fprintf(stderr, "%s\n", text);
        rs_chrf_compute(&chrf, &cr);
        rs_chrf_format(&cr, text, sizeof text);
        fprintf(stderr, "%s\n", text);
    }
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    if (out && out != stdout)
        fclose(out);
    for (int i = 0; lines && i < chunk; i++)
        free(lines[i]);
    free(lines);
    for (int i = 0; results && i < chunk * nbest; i++)
        free(results[i]);
    free(results);
    free(scores);
    rs_lines_free(&refs);
    if (reader_open)
        rs_line_reader_close(&reader);
    rs_beam_free(&tr.beam);
    rs_decoder_free(&tr.decoder);
    rs_codec_free(&tr.codec);
    rs_model_free(&tr.model);
    return status;
}
