/* The alignment matrix of a translation, or of a given target (forced
 * decoding), with librnnsearch.
 *
 *   align MODEL SOURCE [TARGET]
 *
 * Prints the log-probability, then one row per target token (and </s>):
 * the token and its weights over the source tokens (and </s>), which sum
 * to 1. Build against an installed library with
 *
 *   cc -o align align.c $(pkg-config --cflags --libs rnnsearch)
 */
#include <rnnsearch.h>
#include <stdio.h>

static void print_matrix(char **src, int src_count, char **tgt, int tgt_count, const float *w)
{
    printf("%-12s", "");
    for (int j = 0; j <= src_count; j++)
        printf(" %8.8s", j < src_count ? src[j] : "</s>");
    printf("\n");
    for (int i = 0; i <= tgt_count; i++) {
        printf("%-12.12s", i < tgt_count ? tgt[i] : "</s>");
        for (int j = 0; j <= src_count; j++)
            printf(" %8.4f", w[i * (src_count + 1) + j]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s MODEL SOURCE [TARGET]\n", argv[0]);
        return 2;
    }
    rnnsearch_error err;
    rnnsearch_model *model;
    if (rnnsearch_model_load(argv[1], &model, &err)) {
        fprintf(stderr, "align: %s\n", err.message);
        return 1;
    }
    int status = 0;
    if (argc == 4) {
        rnnsearch_forced f;
        if (rnnsearch_force(model, argv[2], argv[3], &f, &err)) {
            fprintf(stderr, "align: %s\n", err.message);
            status = 1;
        } else {
            printf("log p = %.6f\n", f.logprob);
            print_matrix(f.source_tokens, f.source_count, f.target_tokens, f.target_count,
                         f.alignment);
            rnnsearch_forced_free(&f);
        }
    } else {
        rnnsearch_options opt;
        rnnsearch_options_init(&opt, sizeof opt, NULL);
        opt.alignment = 1;
        rnnsearch_translator *tr;
        rnnsearch_translation t;
        const char *sources[1] = {argv[2]};
        if (rnnsearch_translator_new(model, &opt, &tr, &err) ||
            rnnsearch_translate(tr, 1, sources, &t, &err)) {
            fprintf(stderr, "align: %s\n", err.message);
            status = 1;
        } else {
            const rnnsearch_hypothesis *h = &t.hyps[0];
            printf("%s\nlog p = %.6f\n", h->text, h->logprob);
            if (h->alignment)
                print_matrix(t.source_tokens, t.source_count, h->tokens, h->count, h->alignment);
            rnnsearch_translation_free(&t);
        }
        rnnsearch_translator_free(tr);
    }
    rnnsearch_model_free(model);
    return status;
}
