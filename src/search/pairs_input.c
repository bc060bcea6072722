/* Pairs given to a model (pairs_input.h). */
#include <stdlib.h>
#include <string.h>

#include "search/forced.h"
#include "search/pairs_input.h"

const char *rs_pairs_input_name(const rs_pairs_input *in)
{
    return in->tsv ? (strcmp(in->tsv, "-") ? in->tsv : "<stdin>") : in->src;
}

int rs_pairs_input_open(const rs_pairs_input *in, int empty_target, rs_pair_reader *r,
                        rs_error *err)
{
    if (in->tsv)
        return rs_pair_reader_open_tsv(r, in->tsv, in->swap, empty_target, err);
    return in->swap ? rs_pair_reader_open_parallel(r, in->tgt, in->src, empty_target, err)
                    : rs_pair_reader_open_parallel(r, in->src, in->tgt, empty_target, err);
}

int rs_pairs_cut_sources(rs_tokenized *tok, const char *name, const rs_pairs_ids *ids,
                         rs_error *err)
{
    int *cut = rs_calloc((size_t)tok->count + 1, sizeof(int), err);
    if (!cut)
        return -1;
    rs_cut_sources(tok, ids->max_src_len, cut);
    for (int i = 0; i < tok->count && ids->warn; i++)
        if (cut[i])
            fprintf(ids->warn, "%s: %s: pair %ld: source cut to its first %d tokens (%d more)\n",
                    ids->prog, strcmp(name, "-") ? name : "<stdin>", tok->first + i + 1,
                    ids->max_src_len, cut[i]);
    free(cut);
    return 0;
}

int rs_pairs_input_dataset(const rs_pairs_input *in, const rs_pairs *pairs, const rs_pairs_ids *ids,
                           rs_dataset *data, rs_error *err)
{
    const rs_model *model = ids->model;
    rs_tokenized tok = {0};
    int status =
        rs_tokenize_pairs(&tok, pairs, ids->codec, rs_pairs_input_name(in), err) ||
                rs_pairs_cut_sources(&tok, in->tsv ? in->tsv : in->src, ids, err) ||
                rs_dataset_build(data, &tok, &model->src_vocab, &model->tgt_vocab, 0, NULL, err)
            ? -1
            : 0;
    rs_tokenized_free(&tok);
    return status;
}

int rs_pairs_input_read(const rs_pairs_input *in, const rs_pairs_ids *ids, rs_dataset *data,
                        rs_error *err)
{
    rs_pairs pairs = {0};
    int status = in->tsv    ? rs_pairs_read_tsv(in->tsv, in->swap, &pairs, err)
                 : in->swap ? rs_pairs_read_parallel(in->tgt, in->src, &pairs, err)
                            : rs_pairs_read_parallel(in->src, in->tgt, &pairs, err);
    if (!status)
        status = rs_pairs_input_dataset(in, &pairs, ids, data, err);
    rs_pairs_free(&pairs);
    return status ? -1 : 0;
}
