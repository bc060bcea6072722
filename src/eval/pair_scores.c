/* What `rnnsearch score` prints (pair_scores.h). */
#include "eval/pair_scores.h"

void rs_pair_scores_print(FILE *out, const rs_dataset *data, const rs_forced *scored,
                          const rs_vocab *vocab, int per_token)
{
    for (int i = 0; i < data->count; i++) {
        const rs_forced *f = &scored[i];
        fprintf(out, "%.6f", f->logprob);
        if (per_token) {
            fprintf(out, "\t%.6f\t", f->logprob / (f->tgt_len + 1));
            for (int t = 0; t < data->tgt_len[i]; t++) {
                const char *token;
                rs_ids_to_tokens(vocab, &data->tgt[i][t], 1, &token);
                fprintf(out, "%s ", token);
            }
            fprintf(out, "</s>\t");
            for (int t = 0; t <= f->tgt_len; t++)
                fprintf(out, t ? " %.6f" : "%.6f", f->token_logprobs[t]);
        }
        fputc('\n', out);
    }
}

/* Scores one chunk of pairs and writes their lines. */
static int score_chunk(FILE *out, const rs_pairs_input *in, const rs_pairs *pairs,
                       const rs_pairs_ids *ids, const rs_pair_scoring *how, rs_error *err)
{
    rs_dataset data = {0};
    rs_forced *scored = NULL;
    int status = -1;
    if (rs_pairs_input_dataset(in, pairs, ids, &data, err))
        goto done;
    scored = rs_calloc((size_t)(data.count ? data.count : 1), sizeof *scored, err);
    if (!scored || rs_forced_decode(how->models, how->n_models, &data, how->batch_size,
                                    how->per_token ? RS_FORCED_TOKENS : 0, scored, err))
        goto done;
    rs_pair_scores_print(out, &data, scored, &ids->model->tgt_vocab, how->per_token);
    status = 0;
    if (fflush(out) || ferror(out))
        status = rs_fail(err, "write to standard output failed");
done:
    rs_forced_free_all(scored, data.count);
    rs_dataset_free(&data);
    return status;
}

int rs_pair_scores_write(FILE *out, const rs_pairs_input *in, const rs_pairs_ids *ids,
                         const rs_pair_scoring *how, rs_error *err)
{
    rs_pair_reader reader;
    if (rs_pairs_input_open(in, 1, &reader, err))
        return -1;
    int status = 0, read = 0;
    for (;;) {
        rs_pairs pairs;
        const int n = rs_pair_reader_chunk(&reader, RS_SCORE_CHUNK, &pairs, err);
        read += n > 0 ? n : 0;
        if (n > 0)
            status = score_chunk(out, in, &pairs, ids, how, err);
        rs_pairs_free(&pairs);
        if (n <= 0 || status) {
            status = n < 0 ? -1 : status;
            break;
        }
    }
    rs_pair_reader_close(&reader);
    if (status == 0 && read == 0)
        rs_note_empty(ids->warn, ids->prog, rs_pairs_input_name(in), "pairs", "scored");
    return status;
}
