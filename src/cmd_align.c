/* rnnsearch align: the alignment matrices of translations (greedy) or of
 * given pairs (forced decoding), as text, TSV, JSON, Pharaoh, SVG or HTML. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alignment.h"
#include "checkpoint.h"
#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "corpus.h"
#include "dataset.h"
#include "decode.h"

#define PROG "rnnsearch align"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " -m MODEL [OPTIONS] [FILE]\n\n"
            "Shows where the decoder looked. Each line of FILE (default: standard input)\n"
            "is a source sentence: it is translated greedily and the alignment matrix of\n"
            "the output printed (rows: target tokens and </s>, columns: source tokens\n"
            "and </s>). With --pairs, lines are source<TAB>target and the given target is\n"
            "force-decoded instead. Formats are described in docs/alignment.md.\n\n"
            "  -m, --model MODEL      checkpoint file or models/NAME directory (required)\n"
            "  -f, --format FMT       text, tsv, json, pharaoh, svg or html (default: text)\n"
            "  --pairs                input is source<TAB>target pairs (forced decoding)\n"
            "  --swap                 with --pairs: exchange source and target\n"
            "  --threshold X          pharaoh: every link of weight >= X, in (0, 1]\n"
            "                         (default: the argmax source token of each target token)\n"
            "  --numbers              text, html: print the weights instead of shading only\n"
            "  --words                merge SentencePiece pieces into words (a target word's\n"
            "                         row is the mean of its pieces' rows, a source word's\n"
            "                         column the sum of its pieces' columns)\n"
            "  --color WHEN           text: auto, always or never (default: auto = when\n"
            "                         writing to a terminal, NO_COLOR is unset and TERM\n"
            "                         advertises 256 colours)\n"
            "  -o, --out PATH         write here (default: standard output). svg: a directory\n"
            "                         that receives 0001.svg, 0002.svg, ... (one per sentence),\n"
            "                         or a FILE.svg when there is one sentence\n"
            "  --title TEXT           svg, html: the title (default: \"alignment\" and the model)\n"
            "  --batch-size N         sentences decoded together (default: 32)\n"
            "  --max-len N            longest output in tokens (default: 2 x source + 10, at most 500)\n"
            "  --threads N            BLAS threads (default: OpenBLAS's choice)\n"
            "  --help                 this help\n");
}

/* Where and how the alignments go. */
typedef struct {
    int format, flags, words, svg_dir;
    float threshold;
    const char *out_path, *title;
    FILE *out;
    int written;
} sink;

static int is_directory(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Writes one sentence's alignment (id: 1-based line number). */
static int emit(sink *sk, const rs_alignment *given, int id, rs_error *err)
{
    rs_alignment merged;
    const rs_alignment *a = given;
    if (sk->words) {
        if (rs_alignment_to_words(given, &merged, err))
            return -1;
        a = &merged;
    }
    int rc = 0;
    const char *where = sk->out_path ? sk->out_path : "<stdout>";
    char path[4200], title[512];
    switch (sk->format) {
    case RS_ALIGN_TEXT: rc = rs_alignment_write_text(sk->out, a, sk->flags); break;
    case RS_ALIGN_TSV: rc = rs_alignment_write_tsv(sk->out, a, id); break;
    case RS_ALIGN_JSON: rc = rs_alignment_write_json(sk->out, a, id); break;
    case RS_ALIGN_PHARAOH: rc = rs_alignment_write_pharaoh(sk->out, a, sk->threshold); break;
    case RS_ALIGN_HTML: rc = rs_alignment_write_html(sk->out, a, id, sk->flags); break;
    case RS_ALIGN_SVG:
        snprintf(title, sizeof title, "%s, sentence %d", sk->title, id);
        if (!sk->svg_dir) {
            rc = rs_alignment_write_svg(sk->out, a, title);
            break;
        }
        snprintf(path, sizeof path, "%s/%04d.svg", sk->out_path, id);
        FILE *f = fopen(path, "w");
        if (!f) {
            rc = rs_fail(err, "%s: cannot open for writing", path);
            goto done;
        }
        rc = rs_alignment_write_svg(f, a, title);
        if (fclose(f))
            rc = -1;
        where = path;
        break;
    }
    if (rc)
        rs_fail(err, "%s: write failed", where);
    else
        sk->written++;
done:
    if (a == &merged)
        rs_alignment_free(&merged);
    return rc;
}

/* Greedy translation of every line, batch by batch, each alignment emitted. */
static int align_translations(const rs_model *model, const rs_codec *codec, const rs_lines *lines,
                              int batch_size, int max_len_opt, sink *sk, rs_error *err)
{
    const int count = lines->count;
    rs_tokens *tok = rs_calloc((size_t)(count ? count : 1), sizeof *tok, err);
    int **ids = rs_calloc((size_t)(count ? count : 1), sizeof(int *), err);
    int *len = rs_calloc((size_t)(count ? count : 1), sizeof(int), err);
    rs_translation *res = rs_calloc((size_t)batch_size, sizeof *res, err);
    const char **words = NULL;
    rs_decoder dec = {0};
    int status = -1, longest = 0, have_decoder = 0;
    if (!tok || !ids || !len || !res)
        goto done;
    for (int i = 0; i < count; i++) {
        rs_error inner;
        if (rs_codec_tokens(codec, RS_SIDE_SRC, lines->lines[i], &tok[i], &inner)) {
            rs_fail(err, "line %d: %s", i + 1, inner.msg);
            goto done;
        }
        if (!(ids[i] = rs_calloc((size_t)tok[i].count + 1, sizeof(int), err)))
            goto done;
        for (int k = 0; k < tok[i].count; k++)
            ids[i][k] = rs_vocab_id(&model->src_vocab, tok[i].tokens[k]);
        len[i] = tok[i].count;
        if (len[i] > longest)
            longest = len[i];
    }
    if (rs_decoder_init(&dec, model, batch_size, longest + 1, err))
        goto done;
    have_decoder = 1;
    for (int from = 0; from < count; from += batch_size) {
        const int B = count - from < batch_size ? count - from : batch_size;
        int max_len = max_len_opt;
        if (max_len <= 0) {
            int here = 0;
            for (int b = 0; b < B; b++)
                if (len[from + b] > here)
                    here = len[from + b];
            max_len = 2 * here + 10 < 500 ? 2 * here + 10 : 500;
        }
        if (rs_greedy(&dec, B, (const int *const *)ids + from, len + from, max_len, 1, res, err))
            goto done;
        int rc = 0;
        for (int b = 0; b < B; b++) {
            rs_alignment a;
            free(words);
            words = rs_calloc((size_t)res[b].len + 1, sizeof(char *), err);
            if (!rc && !words)
                rc = -1;
            if (!rc) {
                rs_ids_to_tokens(&model->tgt_vocab, res[b].ids, res[b].len, words);
                rc = rs_alignment_make(&a, words, res[b].len,
                                       (const char *const *)tok[from + b].tokens,
                                       tok[from + b].count, res[b].alignment, err);
                if (!rc) {
                    rc = emit(sk, &a, from + b + 1, err);
                    rs_alignment_free(&a);
                }
            }
            rs_translation_free(&res[b]);
        }
        if (rc)
            goto done;
    }
    status = 0;
done:
    free(words);
    for (int i = 0; tok && i < count; i++)
        rs_tokens_free(&tok[i]);
    for (int i = 0; ids && i < count; i++)
        free(ids[i]);
    free(tok);
    free(ids);
    free(len);
    free(res);
    if (have_decoder)
        rs_decoder_free(&dec);
    return status;
}

/* Forced decoding of the given pairs, each alignment emitted. */
static int align_pairs(const rs_model *model, const rs_tokenized *tok, int batch_size, sink *sk,
                       rs_error *err)
{
    rs_dataset data = {0};
    float **m = NULL;
    int status = -1;
    if (rs_dataset_build(&data, tok, &model->src_vocab, &model->tgt_vocab, 0, NULL, err))
        return -1;
    if (!(m = rs_calloc((size_t)(data.count ? data.count : 1), sizeof(float *), err)) ||
        rs_forced_alignments(model, &data, batch_size, m, err))
        goto done;
    for (int i = 0; i < data.count; i++) {
        rs_alignment a;
        if (rs_alignment_make(&a, (const char *const *)tok->tgt[i].tokens, tok->tgt[i].count,
                              (const char *const *)tok->src[i].tokens, tok->src[i].count, m[i],
                              err))
            goto done;
        int rc = emit(sk, &a, i + 1, err);
        rs_alignment_free(&a);
        if (rc)
            goto done;
    }
    status = 0;
done:
    for (int i = 0; m && i < data.count; i++)
        free(m[i]);
    free(m);
    rs_dataset_free(&data);
    return status;
}

static int want_color(const char *when, int to_stdout)
{
    if (!strcmp(when, "always"))
        return 1;
    if (!strcmp(when, "never") || !to_stdout || !isatty(STDOUT_FILENO))
        return 0;
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM"), *ct = getenv("COLORTERM");
    if (no && *no)
        return 0;
    return (term && strstr(term, "256color")) ||
           (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")));
}

int cmd_align(int argc, char **argv)
{
    enum { OPT_PAIRS = 1000, OPT_SWAP, OPT_THRESHOLD, OPT_NUMBERS, OPT_WORDS, OPT_COLOR, OPT_TITLE,
           OPT_BATCH, OPT_MAXLEN, OPT_THREADS, OPT_HELP };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"format", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"pairs", no_argument, NULL, OPT_PAIRS},
        {"swap", no_argument, NULL, OPT_SWAP},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"numbers", no_argument, NULL, OPT_NUMBERS},
        {"words", no_argument, NULL, OPT_WORDS},
        {"color", required_argument, NULL, OPT_COLOR},
        {"title", required_argument, NULL, OPT_TITLE},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"max-len", required_argument, NULL, OPT_MAXLEN},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"help", no_argument, NULL, OPT_HELP},
        {0},
    };
    const char *model_arg = NULL, *color = "auto", *title = NULL;
    int pairs_mode = 0, swap = 0, batch_size = 32, max_len = 0, threads = 0;
    sink sk = {.format = RS_ALIGN_TEXT};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "m:f:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model_arg = optarg; break;
        case 'f':
            if ((sk.format = rs_align_format_parse(optarg)) < 0) {
                fprintf(stderr, PROG ": --format: '%s' is not one of text, tsv, json, pharaoh, svg, html\n",
                        optarg);
                return RS_EXIT_USAGE;
            }
            break;
        case 'o': sk.out_path = optarg; break;
        case OPT_PAIRS: pairs_mode = 1; break;
        case OPT_SWAP: swap = 1; break;
        case OPT_THRESHOLD: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || end == optarg || !(v > 0.0 && v <= 1.0)) {
                fprintf(stderr, PROG ": --threshold: '%s' is not a number in (0, 1]\n", optarg);
                return RS_EXIT_USAGE;
            }
            sk.threshold = (float)v;
            break;
        }
        case OPT_NUMBERS: sk.flags |= RS_ALIGN_NUMBERS; break;
        case OPT_WORDS: sk.words = 1; break;
        case OPT_COLOR:
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never")) {
                fprintf(stderr, PROG ": --color: '%s' is not auto, always or never\n", optarg);
                return RS_EXIT_USAGE;
            }
            color = optarg;
            break;
        case OPT_TITLE: title = optarg; break;
        case OPT_BATCH: if (rs_cli_int(PROG, "--batch-size", optarg, 1, 1000000, &batch_size)) return RS_EXIT_USAGE; break;
        case OPT_MAXLEN: if (rs_cli_int(PROG, "--max-len", optarg, 1, 1000000, &max_len)) return RS_EXIT_USAGE; break;
        case OPT_THREADS: if (rs_cli_int(PROG, "--threads", optarg, 1, 1000000, &threads)) return RS_EXIT_USAGE; break;
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
    if (swap && !pairs_mode) {
        fprintf(stderr, PROG ": --swap needs --pairs\n");
        return RS_EXIT_USAGE;
    }
    if (sk.threshold > 0.0f && sk.format != RS_ALIGN_PHARAOH) {
        fprintf(stderr, PROG ": --threshold applies to --format pharaoh only\n");
        return RS_EXIT_USAGE;
    }
    const char *input = optind < argc ? argv[optind] : "-";
    if (threads > 0)
        openblas_set_num_threads(threads);
    if (sk.format == RS_ALIGN_TEXT && want_color(color, !sk.out_path))
        sk.flags |= RS_ALIGN_COLOR;

    rs_error err;
    rs_model model = {0};
    rs_codec codec = {0};
    rs_lines lines = {0};
    rs_pairs pairs = {0};
    rs_tokenized tok = {0};
    char path[4200], default_title[4200];
    int status = RS_EXIT_FAIL, count;
    sk.out = stdout;
    if (rs_cli_load_model(model_arg, &model, &codec, &err))
        goto fail;
    if (sk.words && model.cfg.tokenizer != RS_TOKENIZER_SPM) {
        fprintf(stderr, PROG ": --words: %s has no SentencePiece subwords (tokenizer %s)\n", model_arg,
                rs_tokenizer_names[model.cfg.tokenizer]);
        status = RS_EXIT_USAGE;
        goto done;
    }
    snprintf(default_title, sizeof default_title, "alignment, %s", model_arg);
    sk.title = title ? title : default_title;
    if (pairs_mode) {
        if (rs_pairs_read_tsv(input, swap, &pairs, &err) ||
            rs_tokenize_pairs(&tok, &pairs, &codec, strcmp(input, "-") ? input : "<stdin>", &err))
            goto fail;
        count = tok.count;
    } else {
        if (rs_lines_read(input, &lines, &err))
            goto fail;
        count = lines.count;
    }
    if (sk.format == RS_ALIGN_SVG) {
        if (!sk.out_path && count != 1) {
            fprintf(stderr, PROG ": svg of %d sentences needs --out DIR (one file per sentence)\n",
                    count);
            status = RS_EXIT_USAGE;
            goto done;
        }
        sk.svg_dir = sk.out_path && (is_directory(sk.out_path) || !ends_with(sk.out_path, ".svg"));
        if (sk.out_path && !sk.svg_dir && count != 1) {
            fprintf(stderr, PROG ": %s: %d sentences need a directory, not one .svg file\n",
                    sk.out_path, count);
            status = RS_EXIT_USAGE;
            goto done;
        }
        if (sk.svg_dir) {
            snprintf(path, sizeof path, "%s/0001.svg", sk.out_path);
            if (rs_make_parent_dirs(path, &err))
                goto fail;
        }
    }
    if (sk.out_path && !sk.svg_dir && !(sk.out = fopen(sk.out_path, "w"))) {
        sk.out = stdout;
        rs_fail(&err, "%s: cannot open for writing", sk.out_path);
        goto fail;
    }
    if (sk.format == RS_ALIGN_TSV && rs_alignment_write_tsv_header(sk.out))
        goto write_failed;
    if (sk.format == RS_ALIGN_HTML && rs_alignment_html_begin(sk.out, sk.title))
        goto write_failed;
    if (pairs_mode ? align_pairs(&model, &tok, batch_size, &sk, &err)
                   : align_translations(&model, &codec, &lines, batch_size, max_len, &sk, &err))
        goto fail;
    if (sk.format == RS_ALIGN_HTML && rs_alignment_html_end(sk.out))
        goto write_failed;
    if (fflush(sk.out) || ferror(sk.out))
        goto write_failed;
    if (sk.out != stdout) {
        FILE *f = sk.out;
        sk.out = stdout;
        if (fclose(f))
            goto write_failed;
    }
    if (sk.svg_dir)
        fprintf(stderr, PROG ": wrote %d pictures to %s/\n", sk.written, sk.out_path);
    status = RS_EXIT_OK;
    goto done;
write_failed:
    rs_fail(&err, "%s: write failed", sk.out_path && !sk.svg_dir ? sk.out_path : "<stdout>");
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    if (sk.out && sk.out != stdout)
        fclose(sk.out);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_lines_free(&lines);
    rs_codec_free(&codec);
    rs_model_free(&model);
    return status;
}
