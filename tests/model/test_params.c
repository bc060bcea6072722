/* The parameter table (src/model/params.c): sizes and shapes of every tensor from
 * model.md for each attention kind, contiguous offsets, views into one
 * buffer, tied embeddings, name lookup, attention names, and refused
 * configurations. */
#include <check.h>
#include <string.h>

#include "model/params.h"

static void sizes(rs_config *cfg, const char *attention)
{
    rs_config_defaults(cfg);
    cfg->model.src_vocab = 11, cfg->model.tgt_vocab = 7, cfg->model.emb = 3, cfg->model.hidden = 4,
    cfg->model.att = 5;
    cfg->model.maxout = 2;
    cfg->model.attention = rs_attention_kind_parse(attention);
}

/* The kinds a model can have ('dot' makes no model: names_and_refusals;
 * none has no att.* tensor at all). */
static const int kinds[] = {RS_ATT_ADDITIVE, RS_ATT_GENERAL, RS_ATT_SCALED_DOT, RS_ATT_NONE};
enum { KINDS = sizeof kinds / sizeof *kinds };

START_TEST(layout_shapes_follow_the_model)
{
    const char *kind = rs_attention_kind_name(kinds[_i]);
    rs_config cfg;
    rs_error err;
    rs_layout layout;
    sizes(&cfg, kind);
    ck_assert_msg(rs_layout_init(&layout, &cfg.model, &err) == 0, "%s", err.msg);
    const int Vs = 11, Vt = 7, m = 3, n = 4, a = 5, l = 2, additive = kinds[_i] == RS_ATT_ADDITIVE;
    const int keyed = kinds[_i] == RS_ATT_GENERAL || kinds[_i] == RS_ATT_SCALED_DOT;
    /* model.md's table, with att.K [n, 2n] for general and scaled-dot, and
     * no att.* for none. */
    const struct {
        const char *name;
        int rows, cols;
    } want[] = {
        {"src_emb", Vs, m},
        {"tgt_emb", Vt, m},
        {"enc_fwd.W", 3 * n, m},
        {"enc_fwd.U", 3 * n, n},
        {"enc_fwd.b", 3 * n, 0},
        {"enc_bwd.W", 3 * n, m},
        {"enc_bwd.U", 3 * n, n},
        {"enc_bwd.b", 3 * n, 0},
        {"init.W", n, n},
        {"init.b", n, 0},
        {"att.W", additive * a, n},
        {"att.U", additive * a, 2 * n},
        {"att.b", additive * a, 0},
        {"att.v", additive * a, 0},
        {"att.K", keyed * n, 2 * n},
        {"dec.W", 3 * n, m + 2 * n},
        {"dec.U", 3 * n, n},
        {"dec.b", 3 * n, 0},
        {"out.U", 2 * l, n},
        {"out.V", 2 * l, m},
        {"out.C", 2 * l, 2 * n},
        {"out.b", 2 * l, 0},
        {"out.W", Vt, l},
        {"out.bw", Vt, 0},
    };
    ck_assert_int_eq(sizeof want / sizeof *want, RS_NUM_PARAMS);
    size_t offset = 0;
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &layout.info[i];
        ck_assert_str_eq(t->name, want[i].name);
        ck_assert_int_eq(rs_param_index(want[i].name), i);
        size_t size = (size_t)want[i].rows * (want[i].cols ? want[i].cols : 1);
        ck_assert_msg(t->size == size, "%s %s: size %zu, want %zu", kind, t->name, t->size, size);
        if (size) {
            ck_assert_int_eq(t->rows, want[i].rows);
            ck_assert_int_eq(t->cols, want[i].cols);
        }
        ck_assert_msg(t->offset == offset, "%s: offset %zu, want %zu", t->name, t->offset, offset);
        offset += size;
    }
    ck_assert_uint_eq(layout.total, offset);

    /* Views point at their offsets in one buffer; absent tensors are NULL. */
    float buffer[2000];
    ck_assert_uint_le(layout.total, 2000);
    rs_tensors views;
    rs_tensors_bind(&views, &layout, buffer);
    ck_assert_ptr_eq(views.src_emb, buffer);
    ck_assert_ptr_eq(views.dec_W, buffer + layout.info[RS_P_dec_W].offset);
    ck_assert_ptr_eq(views.out_bw, buffer + layout.info[RS_P_out_bw].offset);
    if (additive) {
        ck_assert_ptr_eq(views.att_v, buffer + layout.info[RS_P_att_v].offset);
        ck_assert_ptr_null(views.att_K);
    } else if (!keyed) {
        ck_assert_ptr_null(views.att_W);
        ck_assert_ptr_null(views.att_U);
        ck_assert_ptr_null(views.att_b);
        ck_assert_ptr_null(views.att_v);
        ck_assert_ptr_null(views.att_K);
    } else {
        ck_assert_ptr_null(views.att_W);
        ck_assert_ptr_eq(views.att_K, buffer + layout.info[RS_P_att_K].offset);
    }
}
END_TEST

START_TEST(names_and_refusals)
{
    /* 'dot' still parses (old configurations name it) but makes no model. */
    rs_config cfg;
    rs_layout layout;
    rs_error err = {{0}};
    sizes(&cfg, "dot");
    ck_assert_int_eq(cfg.model.attention, RS_ATT_DOT);
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), -1);
    ck_assert_msg(strstr(err.msg, "'dot' is no longer") && strstr(err.msg, "use 'general'"), "%s",
                  err.msg);
    cfg.model.attention = RS_ATT_GENERAL;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), 0);
    for (int k = 0; k <= RS_ATT_NONE; k++)
        ck_assert_int_eq(rs_attention_kind_parse(rs_attention_kind_name(k)), k);
    ck_assert_str_eq(rs_attention_kind_name(RS_ATT_SCALED_DOT), "scaled-dot");
    /* The names' indices are what checkpoints hold: none comes last. */
    ck_assert_int_eq(rs_attention_kind_parse("additive"), 0);
    ck_assert_int_eq(rs_attention_kind_parse("scaled-dot"), 3);
    ck_assert_int_eq(rs_attention_kind_parse("none"), 4);
    ck_assert_int_eq(rs_attention_kind_parse("Additive"), -1);
    ck_assert_int_eq(rs_attention_kind_parse(""), -1);
    ck_assert_int_eq(rs_param_index("att.w"), -1);
    ck_assert_int_eq(rs_param_index("att_W"), -1); /* the field, not the export name */

    sizes(&cfg, "additive");
    ck_assert_int_eq(rs_config_set(&cfg, "attention", "bahdanau", &err), -1); /* names: config.c */
    ck_assert_msg(strstr(err.msg, "bahdanau") != NULL, "%s", err.msg);
    cfg.model.attention = RS_ATT_NONE + 1;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), -1);
    sizes(&cfg, "additive");
    cfg.model.tgt_vocab = 3;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), -1);
    ck_assert_msg(strstr(err.msg, "reserved") != NULL, "%s", err.msg);
    sizes(&cfg, "additive");
    cfg.model.maxout = 0;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), -1);
    ck_assert_msg(strstr(err.msg, "l=0") != NULL, "%s", err.msg);
    /* a only matters to additive attention. */
    sizes(&cfg, "general");
    cfg.model.att = 0;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), 0);
    sizes(&cfg, "none");
    cfg.model.att = 0;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), 0);
    sizes(&cfg, "additive");
    cfg.model.att = 0;
    ck_assert_int_eq(rs_layout_init(&layout, &cfg.model, &err), -1);
}
END_TEST

/* Tied embeddings: out.W absent from the buffer, its view (in any buffer of
 * the layout) at tgt_emb; every other offset as untied less out.W; l != m
 * refused. */
START_TEST(tied_out_w_is_tgt_emb)
{
    rs_config cfg;
    rs_error err;
    rs_layout untied, tied;
    sizes(&cfg, "additive");
    cfg.model.maxout = cfg.model.emb;
    ck_assert_msg(rs_layout_init(&untied, &cfg.model, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(untied.info[RS_P_out_W].shares, -1);
    ck_assert_ptr_eq(rs_tensor_storage(&untied, RS_P_out_W), &untied.info[RS_P_out_W]);
    ck_assert_ptr_null(rs_tensor_storage(&untied, RS_P_att_K));
    cfg.model.tie_embeddings = 1;
    ck_assert_msg(rs_layout_init(&tied, &cfg.model, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(tied.info[RS_P_out_W].size, 0);
    ck_assert_int_eq(tied.info[RS_P_out_W].shares, RS_P_tgt_emb);
    ck_assert_ptr_eq(rs_tensor_storage(&tied, RS_P_out_W), &tied.info[RS_P_tgt_emb]);
    ck_assert_uint_eq(tied.total, untied.total - untied.info[RS_P_out_W].size);
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (i != RS_P_out_W) {
            ck_assert_uint_eq(tied.info[i].size, untied.info[i].size);
            ck_assert_int_eq(tied.info[i].shares, -1);
        }
    ck_assert_uint_eq(tied.info[RS_P_out_bw].offset, untied.info[RS_P_out_W].offset);
    float buffer[2000];
    ck_assert_uint_le(tied.total, 2000);
    rs_tensors views;
    rs_tensors_bind(&views, &tied, buffer);
    ck_assert_ptr_eq(views.out_W, views.tgt_emb);
    ck_assert_ptr_eq(views.tgt_emb, buffer + tied.info[RS_P_tgt_emb].offset);
    cfg.model.maxout = cfg.model.emb + 1;
    ck_assert_int_eq(rs_layout_init(&tied, &cfg.model, &err), -1);
    ck_assert_msg(strstr(err.msg, "l == m") != NULL, "%s", err.msg);
}
END_TEST

Suite *params_suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("parameter table");
    tcase_add_loop_test(tc, layout_shapes_follow_the_model, 0, KINDS);
    tcase_add_test(tc, names_and_refusals);
    tcase_add_test(tc, tied_out_w_is_tgt_emb);
    suite_add_tcase(s, tc);
    return s;
}
