/* The models a decoding command is given (models.h). */
#include <string.h>

#include "search/models.h"

int rs_models_load(rs_models *m, rs_codec *codec, rs_error *err)
{
    for (; m->loaded < m->count; m->loaded++) {
        const int k = m->loaded;
        if (rs_ready_load(&m->models[k], m->args[k], &m->ready, k ? NULL : codec, NULL, 0, err))
            return -1;
        m->members[k] = &m->models[k];
    }
    return 0;
}

int rs_models_translator(rs_models *m, rs_codec *codec, const char *shortlist_path,
                         rs_translate_options *topt, rs_translator *tr, rs_error *err)
{
    if (rs_models_load(m, codec, err))
        return -1;
    if (topt->remove_bpe && !strcmp(topt->remove_bpe, RS_BPE_SENTENCEPIECE) &&
        m->models[0].model->cfg.tokenizer == RS_TOKENIZER_SPM)
        return rs_fail(err, "--remove-bpe=sentencepiece: the model's tokenizer is spm, whose "
                            "pieces are decoded already");
    if (shortlist_path) {
        const rs_model *first = m->models[0].model;
        if (rs_lexicon_read(&m->lexicon, shortlist_path, &first->src_vocab, &first->tgt_vocab, err))
            return -1;
        topt->shortlist.lex = &m->lexicon;
    }
    return rs_translator_init(tr, m->members, m->count, codec, topt, err);
}

void rs_models_free(rs_models *m)
{
    rs_lexicon_free(&m->lexicon);
    for (int k = 0; k < m->loaded; k++)
        rs_ready_free(&m->models[k]);
    m->loaded = 0;
}
