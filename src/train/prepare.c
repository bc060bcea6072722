/* A training run before its first step: the directory claimed, the data read
 * and tokenized, the codec and the model made, the datasets built. */
#include "train/prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/rng.h"
#include "model/params.h"
#include "model/vocab.h"
#include "text/spm.h"
#include "text/text.h"
#include "train/dist.h"
#include "train/output.h"
#include "train/rundir.h"
#include "train/segmented.h"

int rs_train_claim_dir(const char *dir, int resume, int overwrite, int *lock, rs_error *err)
{
    char foreign[256];
    if (!dir[0])
        return rs_fail(err, "the model directory's name is empty"), RS_TRAIN_REFUSED;
    if (!resume && !overwrite && rs_rundir_foreign(dir, foreign, sizeof foreign)) {
        rs_fail(err,
                "%s holds %s, which no training writes: a new run starts in a new or empty "
                "directory (or one a run left)",
                dir, foreign);
        return RS_TRAIN_REFUSED;
    }
    if (rs_train_lock(dir, lock, err))
        return -1;
    if (!resume && rs_train_dir_has_model(dir)) {
        if (!overwrite) {
            rs_fail(err,
                    "%s already holds a model; give --resume to continue it or "
                    "--overwrite to replace it",
                    dir);
            return RS_TRAIN_REFUSED;
        }
        return rs_train_clear_dir(dir, err);
    }
    char ckpt[4200];
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", dir);
    if (resume && access(ckpt, F_OK) && rs_train_dir_has_model(dir)) {
        rs_fail(err,
                "%s has no last.ckpt to resume (training stopped before its first save); "
                "start again with --overwrite",
                dir);
        return RS_TRAIN_REFUSED;
    }
    return 0;
}

int rs_train_claim_dir_agreed(const char *dir, int resume, int overwrite, int *lock, int *made,
                              rs_error *err)
{
    *made = rs_dist_rank() == 0 && access(dir, F_OK) != 0;
    int status = rs_dist_rank() == 0 ? rs_train_claim_dir(dir, resume, overwrite, lock, err) : 0;
    rs_dist_check_exit(&status, err);
    return status;
}

const char *rs_train_needs_dev_set(const rs_train_config *cfg)
{
    return cfg->dev_bleu           ? "--dev-bleu"
           : cfg->dev_translate    ? "--dev-translate"
           : cfg->patience > 0     ? "--patience"
           : cfg->lr_decay != 1.0f ? "--lr-decay"
                                   : NULL;
}

void rs_train_run_init(rs_train_run *run)
{
    memset(run, 0, sizeof *run);
    run->lock = -1;
}

void rs_train_run_free(rs_train_run *run)
{
    rs_train_unlock(run->lock);
    run->lock = -1;
    rs_watch_free(&run->watch);
    free(run->spm_blob[0]);
    free(run->spm_blob[1]);
    run->spm_blob[0] = run->spm_blob[1] = NULL;
    rs_codec_free(&run->codec);
    rs_dataset_free(&run->train);
    rs_dataset_free(&run->dev);
    rs_tokenized_free(&run->train_tok);
    rs_tokenized_free(&run->dev_tok);
    rs_pairs_free(&run->train_pairs);
    rs_pairs_free(&run->dev_pairs);
    rs_train_state_free(&run->state);
    rs_model_free(&run->model);
}

/* The pairs of a TSV, or of a source and a target file; pairs with an empty
 * side are left out and noted unless in->strict. what: "training", "dev". */
static int read_pairs(const rs_train_inputs *in, const char *tsv, const char *src, const char *tgt,
                      const char *what, rs_pairs *out, rs_error *err)
{
    rs_pairs_skipped skipped, *sk = in->strict ? NULL : &skipped;
    const int rc = tsv        ? rs_pairs_read_tsv_lenient(tsv, in->swap, sk, out, err)
                   : in->swap ? rs_pairs_read_parallel_lenient(tgt, src, sk, out, err)
                              : rs_pairs_read_parallel_lenient(src, tgt, sk, out, err);
    if (rc == 0 && sk && skipped.count && in->note && rs_dist_rank() == 0) {
        char note[4400];
        snprintf(note, sizeof note,
                 "warning: %s: %d %s pair%s with an empty side left out, the first at line %ld "
                 "(--strict stops at them)",
                 skipped.first_file, skipped.count, what, skipped.count == 1 ? "" : "s",
                 skipped.first_line);
        in->note(in->note_ctx, note);
    }
    return rc;
}

/* The file of one side of the training text, for messages. */
static const char *side_file(const rs_train_inputs *in, int side)
{
    return in->train_tsv                    ? in->train_tsv
           : (side == 0) != (in->swap != 0) ? in->train_src
                                            : in->train_tgt;
}

/* "FILE: [the source side ]looks segmented by KIND (MARK on N% of lines)" */
static void describe_segmentation(const rs_train_inputs *in, int side, rs_segmentation seg,
                                  char *out, size_t size)
{
    snprintf(out, size, "%s: %slooks segmented by %s (%s on %.0f%% of lines)", side_file(in, side),
             !in->train_tsv ? ""
             : side == 0    ? "the source side "
                            : "the target side ",
             rs_segmentation_name(seg.kind), rs_segmentation_mark(seg.kind), 100.0 * seg.share);
}

/* A new run's training text that looks segmented into subwords: refused
 * (RS_TRAIN_REFUSED) unless --tokenizer was given, whichever side it is.
 * With --tokenizer space and no post-processing given, the output is joined
 * as the target side's kind says: post_process acts on translations, so a
 * segmented source with a plain (or differently segmented) target does not
 * decide it. */
static int check_segmentation(const rs_train_inputs *in, rs_config *cfg, const rs_pairs *pairs,
                              rs_error *err)
{
    rs_segmentation seg[2];
    char looks[4400], note[4600] = "";
    for (int side = 0; side < 2; side++)
        seg[side] = rs_detect_segmentation(side == 0 ? pairs->src : pairs->tgt, pairs->count);
    const int side = seg[0].kind != RS_POST_NONE ? 0 : 1;
    if (seg[side].kind == RS_POST_NONE)
        return 0;
    if (!in->tokenizer_given) {
        describe_segmentation(in, side, seg[side], looks, sizeof looks);
        rs_fail(err, "%s; pass %s (or --tokenizer word to tokenize it as raw text)", looks,
                rs_segmentation_advice(seg[side].kind));
        return RS_TRAIN_REFUSED;
    }
    if (cfg->model.tokenizer != RS_TOKENIZER_SPACE || in->post_process_given)
        return 0;
    if (seg[1].kind != RS_POST_NONE) {
        cfg->model.post_process = seg[1].kind;
        describe_segmentation(in, seg[0].kind == seg[1].kind ? 0 : 1, seg[1], looks, sizeof looks);
        snprintf(note, sizeof note,
                 "%s: dev BLEU and translate join the pieces (post_process=%s; "
                 "--post-process none keeps them)",
                 looks, rs_post_process_names[seg[1].kind]);
    } else {
        describe_segmentation(in, 0, seg[0], looks, sizeof looks);
        snprintf(note, sizeof note,
                 "%s; the target side does not, so translations are left as they are "
                 "(post_process=none)",
                 looks);
    }
    if (in->note && rs_dist_rank() == 0)
        in->note(in->note_ctx, note);
    return 0;
}

/* SentencePiece models for both sides: read from files, or trained on the
 * normalised training sentences with cfg->model.subwords pieces each. */
static int obtain_subwords(const rs_config *cfg, const rs_pairs *pairs, const rs_train_inputs *in,
                           char *blob[2], size_t len[2], rs_error *err)
{
    if (in->spm_src) {
        rs_spm *spm;
        if (rs_spm_load_file(&spm, in->spm_src, &blob[0], &len[0], err))
            return -1;
        rs_spm_free(spm);
        if (rs_spm_load_file(&spm, in->spm_tgt, &blob[1], &len[1], err))
            return -1;
        rs_spm_free(spm);
        return 0;
    }
    char **text = rs_calloc((size_t)pairs->count + 1, sizeof(char *), err);
    if (!text)
        return -1;
    int status = 0;
    for (int side = 0; side < 2 && status == 0; side++) {
        char *const *raw = side == 0 ? pairs->src : pairs->tgt;
        for (int i = 0; i < pairs->count && status == 0; i++)
            status = rs_text_normalize(raw[i], strlen(raw[i]), cfg->model.lowercase, &text[i], err);
        if (status == 0) {
            if (in->note) {
                char note[128];
                snprintf(note, sizeof note,
                         "training a %d-piece SentencePiece model for the %s side",
                         cfg->model.subwords, side == 0 ? "source" : "target");
                in->note(in->note_ctx, note);
            }
            status = rs_spm_train((const char *const *)text, pairs->count, cfg->model.subwords,
                                  "unigram", &blob[side], &len[side], err);
        }
        for (int i = 0; i < pairs->count; i++) {
            free(text[i]);
            text[i] = NULL;
        }
    }
    free(text);
    return status;
}

/* The text codec: the resumed model's, or a new one from the configuration,
 * with SentencePiece models read or trained by rank 0 and sent to the others. */
static int make_codec(const rs_train_inputs *in, const rs_config *cfg, int resume,
                      rs_train_run *run, rs_error *err)
{
    if (resume)
        return rs_codec_for_model(&run->codec, &run->model, err);
    if (rs_codec_init(&run->codec, &cfg->model, err))
        return -1;
    if (cfg->model.tokenizer == RS_TOKENIZER_SPM &&
        (rs_dist_check(rs_dist_rank() == 0 ? obtain_subwords(cfg, &run->train_pairs, in,
                                                             run->spm_blob, run->spm_len, err)
                                           : 0,
                       err) ||
         rs_dist_broadcast_blob(&run->spm_blob[0], &run->spm_len[0], err) ||
         rs_dist_broadcast_blob(&run->spm_blob[1], &run->spm_len[1], err)))
        return -1;
    for (int side = 0; side < 2 && run->spm_blob[0]; side++)
        if (rs_codec_set_spm(&run->codec, side, run->spm_blob[side], run->spm_len[side], err))
            return -1;
    return 0;
}

/* A vocabulary file as OpenNMT-py reads one (in->opennmt_vocabs): its
 * first max_size tokens, reserved ones included (onmt_build_vocab writes the
 * most frequent first); otherwise as it is. */
static int read_vocab_file(rs_vocab *out, const char *file, const rs_train_inputs *in, int max_size,
                           rs_error *err)
{
    if (rs_vocab_read_file(out, file, err))
        return -1;
    if (!in->opennmt_vocabs || max_size <= 0 || out->size <= max_size)
        return 0;
    rs_vocab cut;
    if (rs_vocab_init(&cut, err)) {
        rs_vocab_free(out);
        return -1;
    }
    for (int id = 0; id < max_size; id++)
        if (rs_vocab_read_token(&cut, id, out->tokens[id], err)) {
            rs_vocab_free(&cut);
            rs_vocab_free(out);
            return -1;
        }
    rs_vocab_free(out);
    *out = cut;
    return 0;
}

/* One vocabulary: a file's, or the training tokens of side (both sides for
 * a shared one) counted and selected by cfg->train.min_freq and cfg->train.max_vocab. */
static int side_vocab(rs_vocab *out, const char *file, const rs_train_inputs *in,
                      const rs_tokenized *tok, int both, int side, const rs_config *cfg,
                      rs_error *err)
{
    if (file)
        return read_vocab_file(out, file, in, cfg->train.max_vocab, err);
    rs_vocab counts;
    if (rs_vocab_init(&counts, err))
        return -1;
    int status = 0;
    if (both || side == RS_SIDE_SRC)
        status = rs_count_tokens(&counts, tok, RS_SIDE_SRC, err);
    if (!status && (both || side == RS_SIDE_TGT))
        status = rs_count_tokens(&counts, tok, RS_SIDE_TGT, err);
    if (!status)
        status = rs_vocab_select(out, &counts, cfg->train.min_freq, cfg->train.max_vocab, err);
    rs_vocab_free(&counts);
    return status ? -1 : 0;
}

/* A vocabulary file not built yet (in->opennmt_vocabs): the training tokens of
 * side (both sides: both) counted and written there as token<TAB>count by
 * rank 0, said in a note; then read as any vocabulary file. */
static int build_vocab_file(const rs_train_inputs *in, const char *file, const rs_tokenized *tok,
                            int both, int side, rs_error *err)
{
    if (!file || !in->opennmt_vocabs)
        return 0;
    int status = 0;
    if (rs_dist_rank() == 0 && access(file, F_OK) != 0) {
        rs_vocab counts;
        status = rs_vocab_init(&counts, err);
        if (!status && (both || side == RS_SIDE_SRC))
            status = rs_count_tokens(&counts, tok, RS_SIDE_SRC, err);
        if (!status && (both || side == RS_SIDE_TGT))
            status = rs_count_tokens(&counts, tok, RS_SIDE_TGT, err);
        rs_atomic_file af;
        if (!status && !(status = rs_atomic_open(&af, file, err))) {
            if (rs_vocab_write_counts(&counts, af.f, &af.errnum, err)) {
                rs_atomic_abort(&af);
                status = -1;
            } else {
                status = rs_atomic_commit(&af, err);
            }
        }
        if (!status && in->note) {
            char note[4400];
            snprintf(note, sizeof note,
                     "%s did not exist: built from the training data's %s as onmt_build_vocab "
                     "would (%d tokens with their counts) and written there",
                     file,
                     both                  ? "two sides"
                     : side == RS_SIDE_SRC ? "source side"
                                           : "target side",
                     counts.size - RS_RESERVED);
            in->note(in->note_ctx, note);
        }
        if (counts.tokens)
            rs_vocab_free(&counts);
    }
    return rs_dist_check(status, err);
}

/* A new model's vocabularies: files or the data's, one for both sides with
 * cfg->model.shared_vocab (stored twice, so the checkpoint format stays as it is). */
static int make_vocabs(const rs_train_inputs *in, const rs_config *cfg, const rs_tokenized *tok,
                       rs_vocab *src, rs_vocab *tgt, rs_error *err)
{
    if (cfg->model.shared_vocab) {
        const char *file = in->src_vocab ? in->src_vocab : in->tgt_vocab;
        if (build_vocab_file(in, file, tok, 1, RS_SIDE_SRC, err) ||
            side_vocab(src, file, in, tok, 1, RS_SIDE_SRC, cfg, err))
            return -1;
        return rs_vocab_copy(tgt, src, err);
    }
    if (build_vocab_file(in, in->src_vocab, tok, 0, RS_SIDE_SRC, err) ||
        build_vocab_file(in, in->tgt_vocab, tok, 0, RS_SIDE_TGT, err) ||
        side_vocab(src, in->src_vocab, in, tok, 0, RS_SIDE_SRC, cfg, err))
        return -1;
    return side_vocab(tgt, in->tgt_vocab, in, tok, 0, RS_SIDE_TGT, cfg, err);
}

/* With resume: a vocabulary file given again must hold the checkpoint's
 * vocabulary, id for id. */
static int check_vocab_file(const char *file, const rs_train_inputs *in, int max_size,
                            const rs_vocab *have, const char *side, rs_error *err)
{
    rs_vocab v;
    if (!file || read_vocab_file(&v, file, in, max_size, err))
        return file ? -1 : 0;
    int id = 0;
    while (id < v.size && id < have->size && !strcmp(v.tokens[id], have->tokens[id]))
        id++;
    const int same = id == v.size && id == have->size;
    if (!same && id < v.size && id < have->size)
        rs_fail(err,
                "%s is not the %s vocabulary the checkpoint was trained with (id %d is '%s' "
                "there, '%s' in the checkpoint): with --resume give none, or the run's own",
                file, side, id, v.tokens[id], have->tokens[id]);
    else if (!same)
        rs_fail(err,
                "%s is not the %s vocabulary the checkpoint was trained with (%d tokens there, "
                "%d in the checkpoint): with --resume give none, or the run's own",
                file, side, v.size, have->size);
    rs_vocab_free(&v);
    return same ? 0 : RS_TRAIN_REFUSED;
}

/* A new model: vocabularies (files or the training data's), weights from the seed. */
static int new_model(const rs_train_inputs *in, rs_config *cfg, rs_train_run *run, rs_error *err)
{
    rs_vocab src_vocab = {0}, tgt_vocab = {0};
    int status = -1;
    if (make_vocabs(in, cfg, &run->train_tok, &src_vocab, &tgt_vocab, err))
        goto done;
    cfg->model.src_vocab = src_vocab.size;
    cfg->model.tgt_vocab = tgt_vocab.size;
    if (rs_model_alloc(&run->model, cfg, err))
        goto done;
    run->model.src_vocab = src_vocab;
    run->model.tgt_vocab = tgt_vocab;
    memset(&src_vocab, 0, sizeof src_vocab);
    memset(&tgt_vocab, 0, sizeof tgt_vocab);
    run->model.spm_src = run->spm_blob[0], run->model.spm_src_len = run->spm_len[0];
    run->model.spm_tgt = run->spm_blob[1], run->model.spm_tgt_len = run->spm_len[1];
    run->spm_blob[0] = run->spm_blob[1] = NULL;
    rs_rng init_rng;
    rs_rng_seed(&init_rng, (uint64_t)cfg->train.seed ^ 0x5eedULL);
    rs_model_init_random(&run->model, &init_rng);
    status = rs_train_state_alloc(&run->state, &run->model, err);
done:
    rs_vocab_free(&src_vocab);
    rs_vocab_free(&tgt_vocab);
    return status;
}

/* The watched sentences (a file, else the first dev pairs) and the dev gold
 * links. A model with --attention none has no alignment to watch: --watch
 * and --dev-align are refused, and the default watch is off (said in a note). */
static int setup_watch(const rs_train_inputs *in, const rs_config *cfg, rs_train_run *run,
                       rs_error *err)
{
    rs_watch *w = &run->watch;
    const rs_pairs *dev = &run->dev_pairs;
    w->threshold = in->align_threshold;
    w->codec = &run->codec;
    if (cfg->model.attention == RS_ATT_NONE) {
        if (in->watch_file || in->dev_align)
            return rs_fail(err, "%s: %s", in->watch_file ? "--watch" : "--dev-align",
                           RS_NO_ALIGNMENT_WHY);
        if (in->note && !in->no_watch && dev->count > 0)
            in->note(in->note_ctx, "no watch.jsonl: " RS_NO_ALIGNMENT_WHY);
        return 0;
    }
    if (in->watch_file ? rs_watch_read_file(w, in->watch_file, err)
                       : !in->no_watch && rs_watch_from_pairs(w, dev->src, dev->tgt, dev->count,
                                                              RS_WATCH_DEFAULT_COUNT, err))
        return -1;
    return in->dev_align ? rs_watch_read_gold(w, in->dev_align, dev->count, err) : 0;
}

int rs_train_prepare(const rs_train_inputs *in, rs_config *cfg, int resume, rs_train_run *run,
                     rs_error *err)
{
    int rc;
    if (rs_dist_check(read_pairs(in, in->train_tsv, in->train_src, in->train_tgt, "training",
                                 &run->train_pairs, err),
                      err))
        return -1;
    /* Refused here, before the first step, so that a run that cannot begin
     * leaves no directory behind. */
    const char *train_file = in->train_tsv ? in->train_tsv : in->train_src;
    if (run->train_pairs.count == 0)
        return rs_fail(err, "%s: no training pairs (every pair has an empty side)", train_file);
    if (!resume && (rc = check_segmentation(in, cfg, &run->train_pairs, err)))
        return rc;
    if (make_codec(in, cfg, resume, run, err) ||
        rs_tokenize_pairs(&run->train_tok, &run->train_pairs, &run->codec, train_file, err))
        return -1;
    const char *dev_file = in->dev_tsv ? in->dev_tsv : in->dev_src;
    if (dev_file &&
        rs_dist_check(
            read_pairs(in, in->dev_tsv, in->dev_src, in->dev_tgt, "dev", &run->dev_pairs, err) ||
                rs_tokenize_pairs(&run->dev_tok, &run->dev_pairs, &run->codec, dev_file, err),
            err))
        return -1;
    /* A dev set asked for and left empty would train without one (or stop at
     * the first evaluation, its directory written): refused before it. */
    if (dev_file && run->dev_pairs.count == 0)
        return rs_fail(err, "%s: no dev pairs (every pair has an empty side)", dev_file);
    if (setup_watch(in, cfg, run, err))
        return -1;
    if (!resume && new_model(in, cfg, run, err))
        return -1;
    int refused;
    if (resume && ((refused = check_vocab_file(in->src_vocab, in, cfg->train.max_vocab,
                                               &run->model.src_vocab, "source", err)) ||
                   (refused = check_vocab_file(in->tgt_vocab, in, cfg->train.max_vocab,
                                               &run->model.tgt_vocab, "target", err))))
        return refused;
    const rs_model *m = &run->model;
    if (rs_dataset_build(&run->train, &run->train_tok, &m->src_vocab, &m->tgt_vocab,
                         cfg->train.max_len, &run->skipped, err) ||
        rs_dataset_build(&run->dev, &run->dev_tok, &m->src_vocab, &m->tgt_vocab, 0, NULL, err))
        return -1;
    if (run->train.count == 0)
        return rs_fail(err, "%s: no training pairs: all %d are longer than --max-len %d tokens",
                       train_file, run->skipped, cfg->train.max_len);
    rs_tokenized_free(&run->train_tok);
    rs_tokenized_free(&run->dev_tok);
    return 0;
}

int rs_train_log_check(const rs_train_inputs *in, const char *config_path, const char *log_path,
                       rs_error *err)
{
    const char *inputs[] = {in->train_tsv,  in->train_src, in->train_tgt, in->dev_tsv,
                            in->dev_src,    in->dev_tgt,   in->spm_src,   in->spm_tgt,
                            in->watch_file, in->dev_align, config_path,   in->src_vocab,
                            in->tgt_vocab};
    rs_output_rule rule;
    rs_output_rule_init(&rule, RS_OUTPUT_TEXT, RS_TEXT_LOG);
    int status = 0;
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs && !status; i++)
        status = rs_output_add_input(&rule, inputs[i], err);
    if (!status)
        status = rs_output_check(&rule, log_path, err);
    rs_output_rule_free(&rule);
    return status ? -1 : 0;
}

int rs_train_copy_config(const char *dir, const char *config_path, const char *text, size_t size,
                         rs_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, RS_CONFIG_COPY);
    if (rs_same_file(config_path, path))
        return 0;
    return rs_output_copy(text, size, config_path, path, RS_CONFIG_COPY, err);
}
