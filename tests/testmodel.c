#include <check.h>

#include "testmodel.h"

void testmodel_make(rs_model *m, int hidden, const char *src_token, uint64_t seed)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.src_vocab = 6;
    cfg.tgt_vocab = 5;
    cfg.emb = 3;
    cfg.hidden = hidden;
    cfg.att = 5;
    cfg.maxout = 2;
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err));
    ck_assert(!rs_vocab_init(&m->tgt_vocab, &err));
    ck_assert_int_eq(rs_vocab_add(&m->src_vocab, "das", &err), RS_RESERVED);
    ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src_token, &err), RS_RESERVED + 1);
    ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, "the", &err), RS_RESERVED);
    rs_rng rng;
    rs_rng_seed(&rng, seed);
    for (size_t k = 0; k < m->layout.total; k++)
        m->params[k] = (float)(2.0 * rs_rng_uniform(&rng) - 1.0);
}
