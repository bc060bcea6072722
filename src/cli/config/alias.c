/* Joey NMT's and OpenNMT-py's names for our settings: one table, read once
 * after the file is parsed (rs_config_aliases), so that every later rule
 * (sections, repeats, the command line winning) sees only our names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/config/alias.h"
#include "cli/config/edit.h"
#include "cli/config/rules.h"
#include "model/config.h"
#include "model/vocab.h"

typedef struct {
    const char *section; /* as the file has it (Joey's testing: is read as translation:);
                            NULL: the top level, OpenNMT-py's flat files */
    const char *key;     /* Joey's nested keys dotted: "encoder.hidden_size" */
    const char *ours_section, *ours; /* ours NULL: rnnsearch has no such setting */
    /* ours given: "from=to|…" maps values (others are refused with note), NULL
     * passes any value; ours NULL: the values that say what rnnsearch does
     * anyway ("*": any), the key then dropped. */
    const char *values;
    int plus; /* added to an integer value: Joey's vocabulary limits count no reserved ids */
    const char *note; /* what rnnsearch does instead, when the value is refused */
} alias;

/* Joey NMT's word level splits at spaces (str.split), not at punctuation as
 * our word tokenizer does: tokenizer: space. */
#define LEVEL "word=space|char=char|bpe=space"
#define EMB_SCALE "rnnsearch does not scale embeddings by sqrt(emb)"
#define ONE_DROPOUT "rnnsearch has one dropout rate (dropout:)"
#define NORMALIZE                                                                                  \
    "rnnsearch normalises text to Unicode NFC only, without Moses' punctuation normalizer"
#define INITIALIZER "rnnsearch initialises every weight uniformly in [-init_scale, init_scale]"
#define TRANSFORMER "a Transformer's setting; rnnsearch is recurrent"
#define MIN_FREQ "0=1|*"
#define SPECIALS "rnnsearch's special tokens are <unk>, <pad>, <s> and </s>"
#define RESET "continue a run with 'rnnsearch train --resume' (--new-data for other data)"
#define FREEZE "rnnsearch trains every weight"
#define OPTIMIZERS "adam=adam|sgd=sgd|adadelta=adadelta|adagrad=adagrad"
#define JOEY_LR "3.0e-4" /* Joey NMT 2.3's learning_rate when none is given */
#define NO "false|False|FALSE|no"
#define CPU "rnnsearch computes on CPUs, in float32; read as false"
#define OPTIMIZER_NOTE "rnnsearch's optimizers are adam, sgd, adadelta and adagrad"

static const alias aliases[] = {
    /* Joey NMT: data. */
    {"data", "trg", "data", "tgt", NULL, 0, NULL},
    {"data", "src.lang", "data", "src", NULL, 0, NULL},
    {"data", "trg.lang", "data", "tgt", NULL, 0, NULL},
    {"data", "level", "data", "tokenizer", LEVEL, 0,
     "levels are word, char and bpe (text already split into pieces: tokenizer: space)"},
    {"data", "src.level", "data", "tokenizer", LEVEL, 0, "levels are word, char and bpe"},
    {"data", "trg.level", "data", "tokenizer", LEVEL, 0, "levels are word, char and bpe"},
    {"data", "src.lowercase", "data", "lowercase", NULL, 0, NULL},
    {"data", "trg.lowercase", "data", "lowercase", NULL, 0, NULL},
    {"data", "max_sent_length", "data", "max_len", NULL, 0, NULL},
    {"data", "src.max_length", "data", "max_len", NULL, 0, NULL},
    {"data", "trg.max_length", "data", "max_len", NULL, 0, NULL},
    {"data", "src_voc_limit", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {"data", "trg_voc_limit", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {"data", "src.voc_limit", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {"data", "trg.voc_limit", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {"data", "trg_vocab", "data", "tgt_vocab", NULL, 0, NULL},
    {"data", "src.voc_file", "data", "src_vocab", NULL, 0, NULL},
    {"data", "trg.voc_file", "data", "tgt_vocab", NULL, 0, NULL},
    /* Joey counts a token seen min_freq times or more: 0 is 1. */
    {"data", "src_voc_min_freq", "data", "min_freq", MIN_FREQ, 0, NULL},
    {"data", "trg_voc_min_freq", "data", "min_freq", MIN_FREQ, 0, NULL},
    {"data", "src.voc_min_freq", "data", "min_freq", MIN_FREQ, 0, NULL},
    {"data", "trg.voc_min_freq", "data", "min_freq", MIN_FREQ, 0, NULL},
    {"data", "test", NULL, NULL, NULL, 0,
     "training evaluates no test set; translate it with 'rnnsearch translate' and score it "
     "with 'rnnsearch bleu'"},
    {"data", "src.normalize", NULL, NULL, "false|False|FALSE|no", 0, NORMALIZE},
    {"data", "trg.normalize", NULL, NULL, "false|False|FALSE|no", 0, NORMALIZE},
    {"data", "dataset_type", NULL, NULL, "plain", 0,
     "rnnsearch reads plain files (src:/tgt:) or TSV pairs (train: PAIRS.tsv)"},
    /* Joey NMT 2.3: what every config of it says, where it says what rnnsearch does. */
    {"data", "special_symbols.unk_token", NULL, NULL, "<unk>", 0, SPECIALS},
    {"data", "special_symbols.pad_token", NULL, NULL, "<pad>", 0, SPECIALS},
    {"data", "special_symbols.bos_token", NULL, NULL, "<s>", 0, SPECIALS},
    {"data", "special_symbols.eos_token", NULL, NULL, "</s>", 0, SPECIALS},
    /* Their ids are the model's business: text in and out is the same. */
    {"data", "special_symbols.unk_id", NULL, NULL, "*", 0, NULL},
    {"data", "special_symbols.pad_id", NULL, NULL, "*", 0, NULL},
    {"data", "special_symbols.bos_id", NULL, NULL, "*", 0, NULL},
    {"data", "special_symbols.eos_id", NULL, NULL, "*", 0, NULL},
    {"data", "sample_train_subset", NULL, NULL, "-1", 0,
     "rnnsearch trains on every pair each epoch (sample_train_subset: -1)"},
    {"data", "sample_dev_subset", NULL, NULL, "-1", 0,
     "rnnsearch evaluates every dev pair (sample_dev_subset: -1)"},
    {"data", "src.min_length", NULL, NULL, "0|1", 0,
     "rnnsearch leaves out pairs with an empty side only (min_length: 1)"},
    {"data", "trg.min_length", NULL, NULL, "0|1", 0,
     "rnnsearch leaves out pairs with an empty side only (min_length: 1)"},
    {"translation", "load_model", NULL, NULL, NULL, 0,
     "rnnsearch translates the model -m MODEL names, else the one this file trains (model_dir)"},
    {"translation", "min_output_length", NULL, NULL, "0|1", 0,
     "rnnsearch's translations have no minimum length (min_output_length: 1)"},
    {"translation", "return_prob", NULL, NULL, "none", 0,
     "rnnsearch translate prints scores with --n-best; 'rnnsearch score' scores references"},
    {"translation", "return_attention", NULL, NULL, NO, 0,
     "rnnsearch translate --alignment prints the attention"},
    {"translation", "generate_unk", NULL, NULL, "true|True|TRUE|yes", 0,
     "rnnsearch may translate into <unk> (--replace-unk puts the attended source word there)"},
    {"translation", "no_repeat_ngram_size", NULL, NULL, "-1|0", 0,
     "rnnsearch's beam search blocks no repeated n-grams"},
    {"translation", "repetition_penalty", NULL, NULL, "-1", 0,
     "rnnsearch's beam search has no repetition penalty"},
    {"translation", "sacrebleu_cfg.whitespace", NULL, NULL, NO, 0,
     "chrF is 'rnnsearch bleu --chrf', without whitespace"},
    {"training", "reset_best_ckpt", NULL, NULL, NO, 0, RESET},
    {"training", "reset_scheduler", NULL, NULL, NO, 0, RESET},
    {"training", "reset_optimizer", NULL, NULL, NO, 0, RESET},
    {"training", "reset_iter_state", NULL, NULL, NO, 0, RESET},
    {"model", "encoder.embeddings.freeze", NULL, NULL, NO, 0, FREEZE},
    {"model", "decoder.embeddings.freeze", NULL, NULL, NO, 0, FREEZE},
    {"model", "encoder.freeze", NULL, NULL, NO, 0, FREEZE},
    {"model", "decoder.freeze", NULL, NULL, NO, 0, FREEZE},
    /* A Transformer layer's; Joey's recurrent encoder and decoder take none. */
    {"model", "encoder.activation", NULL, NULL, "*", 0, NULL},
    {"model", "decoder.activation", NULL, NULL, "*", 0, NULL},
    {"model", "embed_init_weight", NULL, NULL, NULL, 0, INITIALIZER},
    {"model", "init_rnn_orthogonal", NULL, NULL, NO, 0, INITIALIZER},
    /* An LSTM's (its rnn_type is refused): nothing of a GRU. */
    {"model", "lstm_forget_gate", NULL, NULL, "*", 0, NULL},
    /* Joey NMT: training. */
    {"training", "model_dir", "training", "out", NULL, 0, NULL},
    {"training", "learning_rate", "training", "lr", NULL, 0, NULL},
    {"training", "random_seed", "training", "seed", NULL, 0, NULL},
    {"training", "batch_multiplier", "training", "accumulate", NULL, 0, NULL},
    {"training", "validation_freq", "training", "eval_every", NULL, 0, NULL},
    {"training", "logging_freq", "training", "log_every", NULL, 0, NULL},
    {"training", "updates", "training", "max_steps", NULL, 0, NULL},
    {"training", "clip_grad_norm", "training", "clip", NULL, 0, NULL},
    {"training", "decrease_factor", "training", "lr_decay", NULL, 0, NULL},
    {"training", "early_stopping_metric", "training", "dev_bleu",
     "bleu=true|eval_metric=true|loss=false|ppl=false", 0,
     "rnnsearch selects best.ckpt on dev BLEU with dev_bleu: true (--dev-bleu), else on dev "
     "loss"},
    {"training", "eval_metric", NULL, NULL, "bleu", 0,
     "rnnsearch's dev metric is BLEU (dev_bleu: true); chrF is 'rnnsearch bleu --metric chrf'"},
    {"training", "optimizer", "training", "optimizer", OPTIMIZERS, 0, OPTIMIZER_NOTE},
    {"training", "momentum", NULL, NULL, "0|0.0|0.", 0, "rnnsearch's SGD has no momentum"},
    {"training", "scheduling", "training", "lr_schedule",
     "plateau=plateau|noam=noam|warmupinversesquareroot=inverse-sqrt", 0,
     "rnnsearch's schedules are plateau, noam and warmupinversesquareroot (lr_schedule: "
     "plateau, noam, inverse-sqrt), or constant"},
    {"training", "learning_rate_warmup", "training", "warmup", NULL, 0, NULL},
    {"training", "patience", NULL, NULL, "0", 0,
     "Joey's patience is the plateau schedule's (evaluations without improvement before the "
     "learning rate decreases); rnnsearch decreases it after each one (lr_decay), and its "
     "patience stops training"},
    {"training", "batch_type", NULL, NULL, "sentence", 0,
     "rnnsearch's batch_size counts sentences; batch_tokens caps the tokens of a batch"},
    {"training", "clip_grad_val", NULL, NULL, NULL, 0,
     "rnnsearch clips the gradients' global norm (clip: X), not each value"},
    {"training", "adam_betas", NULL, NULL, NULL, 0, "give beta1: and beta2:"},
    {"training", "loss", NULL, NULL, "crossentropy", 0, "rnnsearch's loss is cross-entropy"},
    {"training", "weight_decay", NULL, NULL, "0|0.0|0.", 0, "rnnsearch has no weight decay"},
    {"training", "shuffle", NULL, NULL, "true|True|TRUE|yes", 0,
     "rnnsearch shuffles the training pairs each epoch"},
    {"training", "overwrite", NULL, NULL, "false|False|FALSE|no", 0,
     "only the command line gives --overwrite"},
    {"training", "keep_best_ckpts", NULL, NULL, NULL, 0,
     "rnnsearch keeps one best.ckpt; keep_last: N keeps the last N saves"},
    {"training", "load_model", NULL, NULL, NULL, 0,
     "continue a run with 'rnnsearch train --resume' (--new-data for other data)"},
    {"training", "normalization", NULL, NULL, "tokens", 0,
     "rnnsearch's loss is the mean over a batch's target tokens (normalization: tokens)"},
    {"training", "learning_rate_min", NULL, NULL, NULL, 0,
     "Joey stops when the plateau schedule's rate falls below it; rnnsearch stops after "
     "patience: N dev evaluations without improvement, or at max_steps:"},
    {"training", "max_output_length", NULL, NULL, NULL, 0,
     "Joey NMT 1's length of dev translations; rnnsearch's stop at 2 x source + 10 (translate's "
     "max_len: is in translation:)"},
    {"training", "print_valid_sents", NULL, NULL, NULL, 0,
     "rnnsearch prints dev translations with dev_translate: true"},
    /* Joey NMT: model. */
    {"model", "bias_initializer", NULL, NULL, NULL, 0, INITIALIZER},
    {"model", "init_gain", NULL, NULL, NULL, 0, INITIALIZER},
    {"model", "embed_initializer", NULL, NULL, "uniform", 0, INITIALIZER},
    {"model", "embed_init_gain", NULL, NULL, NULL, 0, INITIALIZER},
    {"model", "encoder.num_heads", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "decoder.num_heads", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "encoder.ff_size", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "decoder.ff_size", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "encoder.layer_norm", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "decoder.layer_norm", NULL, NULL, NULL, 0, TRANSFORMER},
    {"model", "encoder.embeddings.scale", NULL, NULL, "false|False|FALSE|no", 0, EMB_SCALE},
    {"model", "decoder.embeddings.scale", NULL, NULL, "false|False|FALSE|no", 0, EMB_SCALE},
    {"model", "encoder.emb_scale", NULL, NULL, "false|False|FALSE|no", 0, EMB_SCALE},
    {"model", "decoder.emb_scale", NULL, NULL, "false|False|FALSE|no", 0, EMB_SCALE},
    {"model", "encoder.embeddings.dropout", NULL, NULL, "0|0.0|0.", 0, ONE_DROPOUT},
    {"model", "decoder.embeddings.dropout", NULL, NULL, "0|0.0|0.", 0, ONE_DROPOUT},
    {"model", "decoder.hidden_dropout", NULL, NULL, "0|0.0|0.", 0, ONE_DROPOUT},
    {"model", "encoder.hidden_size", "model", "hidden", NULL, 0, NULL},
    {"model", "decoder.hidden_size", "model", "hidden", NULL, 0, NULL},
    {"model", "encoder.embeddings.embedding_dim", "model", "emb", NULL, 0, NULL},
    {"model", "decoder.embeddings.embedding_dim", "model", "emb", NULL, 0, NULL},
    {"model", "dropout", "training", "dropout", NULL, 0, NULL},
    {"model", "encoder.dropout", "training", "dropout", NULL, 0, NULL},
    {"model", "decoder.dropout", "training", "dropout", NULL, 0, NULL},
    {"model", "init_weight", "training", "init_scale", NULL, 0, NULL},
    {"model", "tied_softmax", "model", "tie_embeddings", NULL, 0, NULL},
    {"model", "decoder.attention", "model", "attention", "bahdanau=additive|luong=general", 0,
     "attention is bahdanau (additive) or luong (general)"},
    {"model", "initializer", NULL, NULL, "uniform", 0,
     "rnnsearch initialises uniformly in [-init_scale, init_scale]"},
    {"model", "tied_embeddings", NULL, NULL, "false|False|FALSE|no", 0,
     "rnnsearch's source and target embeddings are separate (tie_embeddings ties the output "
     "layer to the target embeddings: Joey's tied_softmax)"},
    {"model", "encoder.type", NULL, NULL, "recurrent", 0, "rnnsearch is recurrent"},
    {"model", "decoder.type", NULL, NULL, "recurrent", 0, "rnnsearch is recurrent"},
    {"model", "encoder.rnn_type", NULL, NULL, "gru|GRU", 0, "rnnsearch's RNN is a GRU"},
    {"model", "decoder.rnn_type", NULL, NULL, "gru|GRU", 0, "rnnsearch's RNN is a GRU"},
    {"model", "encoder.bidirectional", NULL, NULL, "true|True|TRUE|yes", 0,
     "rnnsearch's encoder is bidirectional"},
    {"model", "encoder.num_layers", NULL, NULL, "1", 0, "rnnsearch has one layer"},
    {"model", "decoder.num_layers", NULL, NULL, "1", 0, "rnnsearch has one layer"},
    {"model", "decoder.init_hidden", NULL, NULL, "bridge", 0,
     "rnnsearch's decoder starts from a layer of the encoder's first backward state (bridge)"},
    {"model", "decoder.input_feeding", NULL, NULL, "false|False|FALSE|no", 0,
     "rnnsearch's decoder reads the context of the current step (Bahdanau et al.), not the "
     "previous attentional vector"},
    /* Joey NMT: testing (read as translation). */
    {"translation", "beam_size", "translation", "beam", NULL, 0, NULL},
    {"translation", "max_output_length", "translation", "max_len", NULL, 0, NULL},
    {"translation", "alpha", "translation", "length_penalty", "-1=0|0=0", 0,
     "Joey divides by ((5 + length) / 6)^alpha, rnnsearch's length_penalty by length^alpha"},
    {"translation", "beam_alpha", "translation", "length_penalty", "-1=0|0=0", 0,
     "Joey divides by ((5 + length) / 6)^alpha, rnnsearch's length_penalty by length^alpha"},
    {"translation", "batch_type", NULL, NULL, "sentence", 0,
     "rnnsearch's batch_size counts sentences"},
    {"translation", "eval_metrics", NULL, NULL, "bleu", 0, "rnnsearch's dev metric is BLEU"},
    {"translation", "sacrebleu_cfg.tokenize", NULL, NULL, "13a", 0,
     "rnnsearch's dev BLEU tokenizes as 13a; 'rnnsearch bleu --tokenize' scores a test set "
     "otherwise"},
    {"translation", "sacrebleu_cfg.lowercase", NULL, NULL, "false|False|FALSE|no", 0,
     "rnnsearch's dev BLEU is cased; 'rnnsearch bleu --lowercase' scores a test set lowercased"},
    /* Joey NMT 2.3: the run's own keys at the top level. */
    {NULL, "model_dir", "training", "out", NULL, 0, NULL},
    {NULL, "random_seed", "training", "seed", NULL, 0, NULL},
    /* OpenNMT-py: one flat mapping. */
    {NULL, "learning_rate", "training", "lr", NULL, 0, NULL},
    {NULL, "train_steps", "training", "max_steps", NULL, 0, NULL},
    {NULL, "valid_steps", "training", "eval_every", NULL, 0, NULL},
    {NULL, "save_checkpoint_steps", "training", "save_every", NULL, 0, NULL},
    {NULL, "keep_checkpoint", "training", "keep_last", NULL, 0, NULL},
    {NULL, "early_stopping", "training", "patience", NULL, 0, NULL},
    {NULL, "max_grad_norm", "training", "clip", NULL, 0, NULL},
    {NULL, "param_init", "training", "init_scale", NULL, 0, NULL},
    {NULL, "adam_beta1", "training", "beta1", NULL, 0, NULL},
    {NULL, "adam_beta2", "training", "beta2", NULL, 0, NULL},
    {NULL, "accum_count", "training", "accumulate", NULL, 0, NULL},
    {NULL, "report_every", "training", "log_every", NULL, 0, NULL},
    {NULL, "word_vec_size", "model", "emb", NULL, 0, NULL},
    /* rnn_size, hidden_size and encoder_type: src/cli/config/opennmt.c. */
    {NULL, "warmup_steps", "training", "warmup", NULL, 0, NULL},
    {NULL, "decay_method", "training", "lr_schedule", "noam=noam|none=exponential", 0,
     "rnnsearch's schedules are noam, inverse-sqrt, plateau, exponential (OpenNMT-py's "
     "decay_method: none) and constant (lr_schedule)"},
    {NULL, "share_vocab", "data", "shared_vocab", NULL, 0, NULL},
    {NULL, "src_words_min_frequency", "data", "min_freq", NULL, 0, NULL},
    {NULL, "tgt_words_min_frequency", "data", "min_freq", NULL, 0, NULL},
    {NULL, "src_seq_length", "data", "max_len", NULL, 0, NULL},
    {NULL, "global_attention", "model", "attention", "mlp=additive|general=general", 0,
     "global_attention is mlp (additive) or general"},
    {NULL, "beam_size", "translation", "beam", NULL, 0, NULL},
    {NULL, "rnn_type", NULL, NULL, "GRU|gru", 0, "rnnsearch's RNN is a GRU"},
    {NULL, "joeynmt_version", NULL, NULL, "*", 0, NULL},
    /* OpenNMT-py 3 (data: corpora, transforms, brnn sizes, dropout lists:
     * src/cli/config/opennmt.c and subword.c). */
    {NULL, "save_model", "training", "out", NULL, 0, NULL},
    {NULL, "src_vocab_size", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {NULL, "tgt_vocab_size", "data", "max_vocab", NULL, RS_RESERVED, NULL},
    {NULL, "tgt_seq_length", "data", "max_len", NULL, 0, NULL},
    {NULL, "log_file", "training", "log", NULL, 0, NULL},
    {NULL, "optim", "training", "optimizer", OPTIMIZERS, 0, OPTIMIZER_NOTE},
    {NULL, "adagrad_accumulator_init", "training", "adagrad_init", NULL, 0, NULL},
    {NULL, "batch_type", NULL, NULL, "sents", 0,
     "rnnsearch's batch_size counts sentences; for batches of N tokens write batch_tokens: N "
     "and leave batch_type out"},
    {NULL, "layers", NULL, NULL, "1", 0,
     "rnnsearch has one GRU layer in the encoder (each direction) and one in the decoder"},
    {NULL, "enc_layers", NULL, NULL, "1", 0, "rnnsearch's encoder has one layer each direction"},
    {NULL, "dec_layers", NULL, NULL, "1", 0, "rnnsearch's decoder has one layer"},
    /* Where onmt_build_vocab writes samples, and how many it reads: nothing
     * training reads. */
    {NULL, "save_data", NULL, NULL, "*", 0, NULL},
    {NULL, "n_sample", NULL, NULL, "*", 0, NULL},
    {NULL, "overwrite", NULL, NULL, "false|False|FALSE|no", 0,
     "only the command line gives --overwrite"},
    {NULL, "input_feed", NULL, NULL, "0", 0,
     "rnnsearch's decoder reads the context of the current step (Bahdanau et al.), not the "
     "previous attentional vector: input_feed: 0"},
    {NULL, "model_type", NULL, NULL, "text", 0, "rnnsearch translates text"},
    {NULL, "decoder_type", NULL, NULL, "rnn", 0,
     "rnnsearch's decoder is a GRU with attention (decoder_type: rnn)"},
    {NULL, "dropout_steps", NULL, NULL, "0", 0,
     "OpenNMT-py changes dropout at dropout_steps; rnnsearch has one rate (dropout:)"},
    {NULL, "attention_dropout", NULL, NULL, "0|0.0|0.", 0,
     "rnnsearch has one dropout rate (dropout:), not one for attention"},
    /* OpenNMT-py's exponential decay (without decay_method: lr_schedule exponential). */
    {NULL, "learning_rate_decay", "training", "decay_rate", NULL, 0, NULL},
    {NULL, "start_decay_steps", "training", "decay_start", NULL, 0, NULL},
    {NULL, "decay_steps", "training", "decay_steps", NULL, 0, NULL},
    {NULL, "src_seq_length_trunc", NULL, NULL, "0", 0,
     "rnnsearch leaves longer pairs out (src_seq_length: its max_len), never cuts them"},
    {NULL, "tgt_seq_length_trunc", NULL, NULL, "0", 0,
     "rnnsearch leaves longer pairs out (tgt_seq_length: its max_len), never cuts them"},
    {NULL, "copy_attn", NULL, NULL, NO, 0,
     "rnnsearch has no copy attention (--replace-unk puts the attended source word for <unk>)"},
    {NULL, "reuse_copy_attn", NULL, NULL, NO, 0, "rnnsearch has no copy attention"},
    {NULL, "copy_loss_by_seqlength", NULL, NULL, NO, 0, "rnnsearch has no copy attention"},
    {NULL, "bridge", NULL, NULL, "true|True|TRUE|yes", 0,
     "rnnsearch's decoder starts from a layer of the encoder's first backward state (bridge: "
     "true)"},
    /* How many dev pairs a batch scores: the same numbers either way. */
    {NULL, "valid_batch_size", NULL, NULL, "*", 0, NULL},
    {NULL, "tensorboard", NULL, NULL, "false|False|FALSE|no", 0,
     "rnnsearch logs to train.log and train.loss.tsv"},
};
enum { ALIASES = sizeof aliases / sizeof *aliases };


int rs_config_alias_entry(int i, const char **section, const char **key, const char **ours)
{
    if (i < 0 || i >= ALIASES)
        return 0;
    *section = aliases[i].section;
    *key = aliases[i].key;
    *ours = aliases[i].ours;
    return 1;
}

static const alias *find_alias(const rs_setting *it)
{
    for (int i = 0; i < ALIASES; i++) {
        const alias *a = &aliases[i];
        if (!strcmp(a->key, it->key) &&
            (a->section ? it->section && !strcmp(a->section, it->section) : !it->section))
            return a;
    }
    return NULL;
}

/* Whether `value` is one of the '|'-separated items of list ("*": any); the
 * item's text after '=' (a map's) in *to. */
static int value_in(const char *list, const char *value, char *to, size_t size)
{
    for (const char *p = list; p && *p;) {
        const size_t n = strcspn(p, "|");
        const char *eq = memchr(p, '=', n);
        const size_t from = eq ? (size_t)(eq - p) : n;
        if ((from == 1 && *p == '*') || (strlen(value) == from && !strncasecmp(p, value, from))) {
            /* An item without '=' ("*" among maps) keeps the value as it is. */
            if (eq)
                snprintf(to, size, "%.*s", (int)(n - from - 1), eq + 1);
            else
                snprintf(to, size, "%s", value);
            return 1;
        }
        p += n + (p[n] == '|');
    }
    return 0;
}

/* Keys read whatever their value, with a notice when it asks for what
 * rnnsearch does not do (Joey NMT 1's in training:, Joey NMT 2.3's at the
 * top level, where every current Joey config has them). */
static const struct {
    const char *section, *key, *values, *note;
} noticed[] = {
    {"training", "use_cuda", NO, CPU},
    {"training", "fp16", NO, CPU},
    {NULL, "use_cuda", NO, CPU},
    {NULL, "fp16", NO, CPU},
    /* OpenNMT-py's GPUs: any gpu_ranks, a world_size other than 1. */
    {NULL, "gpu_ranks", "", "rnnsearch computes on CPUs (threads: N shards each batch)"},
    {NULL, "world_size", "1", "rnnsearch computes on CPUs (threads: N shards each batch)"},
};

/* Whether it is one of noticed[]: dropped (*drop = 1), with a notice when
 * its value is not one of the table's. */
static int read_noticed(const rs_setting *it, const char *path, int *drop)
{
    for (size_t k = 0; k < sizeof noticed / sizeof *noticed; k++) {
        if (strcmp(noticed[k].key, it->key) ||
            (noticed[k].section ? !it->section || strcmp(noticed[k].section, it->section)
                                : it->section != NULL))
            continue;
        /* a list as written: gpu_ranks: [0, 1] */
        char value[256] = "";
        for (int v = 0; v < it->count; v++)
            snprintf(value + strlen(value), sizeof value - strlen(value), "%s%s",
                     v             ? ", "
                     : it->is_list ? "["
                                   : "",
                     it->values[v]);
        if (it->is_list)
            snprintf(value + strlen(value), sizeof value - strlen(value), "]");
        char to[64];
        if (it->is_list || !value_in(noticed[k].values, value, to, sizeof to))
            rs_config_note("%s:%d: '%s: %s': %s", path, it->line, it->key, value, noticed[k].note);
        return *drop = 1;
    }
    return 0;
}

/* One setting: renamed (*renamed = 1), to be dropped (*drop = 1), or left. */
static int apply_alias(rs_setting *it, const alias *a, const char *path, int *renamed, int *drop,
                       rs_error *err)
{
    char to[64] = "";
    const char *value = it->count == 1 && !it->is_list ? it->values[0] : NULL;
    if (!a->ours) {
        /* A list (eval_metrics: [bleu]) is read as its one value. */
        if (!value && it->count == 1)
            value = it->values[0];
        if (a->values && value && value_in(a->values, value, to, sizeof to))
            return *drop = 1, 0;
        return rs_config_refuse(it, err, "%s:%d: '%s%s%s' (Joey NMT/OpenNMT-py): %s", path,
                                it->line, it->key, value ? ": " : "", value ? value : "", a->note);
    }
    if (a->values || a->plus) {
        if (!value)
            return rs_config_refuse(it, err, "%s:%d: '%s' takes one value, not a list", path,
                                    it->line, it->key);
        if (a->values && !value_in(a->values, value, to, sizeof to))
            return rs_config_refuse(it, err, "%s:%d: '%s: %s' (Joey NMT/OpenNMT-py): %s", path,
                                    it->line, it->key, value, a->note);
        char *end;
        const long n = a->plus ? strtol(value, &end, 10) : 0;
        if (a->plus && (end == value || *end || n < 1 || n > 100000000))
            return rs_config_refuse(it, err, "%s:%d: '%s: %s' is not a vocabulary size (1 or more)",
                                    path, it->line, it->key, value);
        if (a->plus)
            snprintf(to, sizeof to, "%ld", n + a->plus);
        if (rs_config_replace(&it->values[0], to, err))
            return -1;
    }
    *renamed = 1;
    if (rs_config_replace(&it->key, a->ours, err) ||
        rs_config_replace(&it->section, a->ours_section, err))
        return -1;
    return 0;
}

static int same_place(const rs_setting *x, const rs_setting *y)
{
    return !strcmp(x->key, y->key) &&
           (x->section ? y->section && !strcmp(x->section, y->section) : !y->section);
}

/* Whether two values say the same: the same text, or the same number
 * written two ways (lr: 0.1 and learning_rate: 1e-1), each a number the
 * settings take: 8 and 0x8 differ, so that which key comes first cannot
 * decide whether the file is refused. */
static int same_value(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return 1;
    if (!rs_config_plain_number(a) || !rs_config_plain_number(b))
        return 0;
    char *end_a, *end_b;
    const double x = strtod(a, &end_a), y = strtod(b, &end_b);
    return end_a != a && !*end_a && end_b != b && !*end_b && isfinite(x) && x == y;
}

/* Several keys made one of ours (encoder.hidden_size, decoder.hidden_size):
 * kept once when they agree. given[i]: setting i's key as the file has it,
 * or NULL when it was not renamed; drop[i] set for the repeats. Renamed
 * settings are few, so each is compared with every setting. */
static int merge_renamed(rs_settings *s, char **given, int *drop, const char *path, rs_error *err)
{
    for (int i = 0; i < s->count; i++) {
        rs_setting *x = &s->items[i];
        if (!given[i] || drop[i] || x->problem)
            continue;
        for (int j = 0; j < s->count; j++) {
            const rs_setting *y = &s->items[j];
            if (j == i || drop[j] || y->problem || !same_place(x, y) || (given[j] && j > i))
                continue;
            const int agree = x->count == 1 && y->count == 1 && !x->is_list && !y->is_list &&
                              same_value(x->values[0], y->values[0]);
            if (!agree) {
                if (rs_config_refuse(x, err,
                                     "%s:%d: '%s' and '%s' (line %d) both give rnnsearch's '%s', "
                                     "with different values (rnnsearch has one)",
                                     path, x->line, given[i], given[j] ? given[j] : y->key, y->line,
                                     x->key))
                    return -1;
            } else {
                drop[i] = 1;
            }
            break;
        }
    }
    return 0;
}

/* The side a per-side key names: 's' (src…), 't' (trg… as Joey NMT writes
 * it, tgt… as OpenNMT-py does), or 0. */
static char side_of(const char *key)
{
    if (key[3] != '.' && key[3] != '_')
        return 0;
    return !strncmp(key, "src", 3)                              ? 's'
           : !strncmp(key, "trg", 3) || !strncmp(key, "tgt", 3) ? 't'
                                                                : 0;
}

/* Per-side keys (Joey's src.lowercase, trg_voc_limit, OpenNMT-py's
 * src_vocab_size, …) that become one setting of ours applying to both
 * sides: given for one side alone, the key would change the other side too,
 * where the toolkit keeps its default, so it is refused, saying to give the
 * other side the same value. */
static int one_side_only(rs_settings *s, char *const *given, const int *drop, const char *path,
                         rs_error *err)
{
    static const char *const both_sides[] = {"lowercase", "max_len", "max_vocab", "min_freq"};
    for (int i = 0; i < s->count; i++) {
        rs_setting *x = &s->items[i];
        const char *g = given[i];
        const char side = g ? side_of(g) : 0;
        if (!side || drop[i] || x->problem)
            continue;
        int shared = 0;
        for (size_t k = 0; k < sizeof both_sides / sizeof *both_sides; k++)
            shared |= !strcmp(x->key, both_sides[k]);
        int found = 0;
        for (int j = 0; j < s->count && shared && !found; j++)
            found = j != i && given[j] && side_of(given[j]) && side_of(given[j]) != side &&
                    same_place(x, &s->items[j]);
        if (shared && !found &&
            rs_config_refuse(x, err,
                             "%s:%d: '%s' is for the %s side alone, and rnnsearch's '%s' "
                             "applies to both sides: give the %s side's key the same value too",
                             path, x->line, g, side == 's' ? "source" : "target", x->key,
                             side == 's' ? "target" : "source"))
            return -1;
    }
    return 0;
}

/* Joey's data files: train: PREFIX with src: LANG and trg: LANG are
 * PREFIX.LANG (and dev: likewise). Only when trg (or trg.lang) was given:
 * our own train: with src:/tgt: stays the error it is. And a top-level name:
 * beside Joey's model_dir is the experiment's label, not where to save. */
static int joey_files(rs_settings *s, char **given, int *drop, rs_error *err)
{
    rs_setting *src = NULL, *tgt = NULL, *train = NULL, *dev = NULL;
    int joey_tgt = 0, model_dir = -1;
    for (int i = 0; i < s->count; i++)
        if (given[i] && !strcmp(given[i], "model_dir"))
            model_dir = i;
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        if (!it->section && !strcmp(it->key, "name") && model_dir >= 0)
            drop[i] = 1;
        if (drop[i] || !it->section || strcmp(it->section, "data") || it->is_list || it->count != 1)
            continue;
        rs_setting **slot = !strcmp(it->key, "src")     ? &src
                            : !strcmp(it->key, "tgt")   ? &tgt
                            : !strcmp(it->key, "train") ? &train
                            : !strcmp(it->key, "dev")   ? &dev
                                                        : NULL;
        if (slot)
            *slot = it;
        if (slot == &tgt && given[i])
            joey_tgt = 1;
    }
    if (!joey_tgt || !src || !tgt || !train)
        return 0;
    char src_path[4200], tgt_path[4200];
    snprintf(src_path, sizeof src_path, "%s.%s", train->values[0], src->values[0]);
    snprintf(tgt_path, sizeof tgt_path, "%s.%s", train->values[0], tgt->values[0]);
    if (dev) {
        /* dev: PREFIX becomes dev_src: PREFIX.SRC, dev_tgt: PREFIX.TGT, in the
         * places of dev and train (train's own files go to src and tgt). */
        char dev_src[4200], dev_tgt[4200];
        snprintf(dev_src, sizeof dev_src, "%s.%s", dev->values[0], src->values[0]);
        snprintf(dev_tgt, sizeof dev_tgt, "%s.%s", dev->values[0], tgt->values[0]);
        if (rs_config_replace(&dev->values[0], dev_src, err) ||
            rs_config_replace(&dev->key, "dev_src", err) ||
            rs_config_replace(&train->values[0], dev_tgt, err) ||
            rs_config_replace(&train->key, "dev_tgt", err))
            return -1;
    } else {
        drop[train - s->items] = 1;
    }
    return rs_config_replace(&src->values[0], src_path, err) ||
                   rs_config_replace(&tgt->values[0], tgt_path, err)
               ? -1
               : 0;
}

/* Whether the file gave `key` (its own name, before renaming), in any section. */
static int had(const rs_settings *s, char *const *given, const char *key)
{
    for (int i = 0; i < s->count; i++)
        if (!strcmp(given[i] ? given[i] : s->items[i].key, key))
            return 1;
    return 0;
}

/* Whether the file is Joey NMT's: a key of the table's Joey sections that is
 * not one of ours too (patience, epochs and batch_size are both), a nested
 * key, or one of Joey NMT 2's own at the top level. */
static int is_joey(const rs_settings *s, char *const *given)
{
    static const char *const top[] = {"joeynmt_version", "model_dir", "random_seed", NULL};
    rs_config ours;
    rs_config_defaults(&ours);
    for (int i = 0; i < s->count; i++) {
        const rs_setting *it = &s->items[i];
        const char *key = given[i] ? given[i] : it->key;
        char value[64];
        if (!it->section
                ? rs_config_name_index(top, key) >= 0
                : strchr(key, '.') || ((given[i] || find_alias(it)) &&
                                       rs_config_format(&ours, key, value, sizeof value) != 0))
            return 1;
    }
    return 0;
}

/* What the file's toolkit would have done where the file is silent and
 * rnnsearch does otherwise: one notice each (and what rnnsearch took over
 * from OpenNMT-py's defaults, opennmt.c). */
static void toolkit_notices(const rs_settings *s, char *const *given, int joey, int opennmt)
{
    rs_config d;
    rs_config_defaults(&d);
    if (joey) {
        if (!had(s, given, "clip_grad_norm") && !had(s, given, "clip_grad_val") &&
            !had(s, given, "clip"))
            rs_config_note("Joey NMT clips no gradient unless clip_grad_norm is given; rnnsearch "
                           "clips their global norm at %g (clip: 0 for none)",
                           (double)d.train.clip);
        if (!had(s, given, "initializer"))
            rs_config_note("Joey NMT initialises the weights with Xavier unless initializer "
                           "says otherwise; rnnsearch draws them uniformly from [-%g, %g] "
                           "(init_scale)",
                           (double)d.train.init_scale, (double)d.train.init_scale);
        if (!had(s, given, "optimizer"))
            rs_config_note("optimizer not given: Joey NMT's SGD, as Joey NMT trains (its "
                           "learning_rate " JOEY_LR " unless given; no momentum)");
        else if (!had(s, given, "learning_rate") && !had(s, given, "lr"))
            rs_config_note("learning_rate not given: Joey NMT's " JOEY_LR ", as Joey NMT trains "
                           "with any optimizer (rnnsearch's own rates are in docs/model.md)");
        if (!had(s, given, "normalization"))
            rs_config_note("Joey NMT divides the loss by the batch's sentences unless "
                           "normalization says otherwise; rnnsearch by its target tokens");
    }
    if (opennmt) {
        if (!had(s, given, "optim"))
            rs_config_note("optim not given: OpenNMT-py's SGD, as OpenNMT-py trains "
                           "(its learning_rate 1 unless given)");
        if (!had(s, given, "decay_method"))
            rs_config_note("decay_method not given: OpenNMT-py's exponential decay "
                           "(learning_rate_decay, start_decay_steps, decay_steps)");
        if (!had(s, given, "hidden_size") && !had(s, given, "rnn_size") &&
            !had(s, given, "word_vec_size") && !had(s, given, "hidden") && !had(s, given, "emb"))
            rs_config_note("OpenNMT-py's default model is a 2-layer LSTM encoder and decoder of "
                           "500 units with 500-dimension embeddings and input feeding; rnnsearch "
                           "trains its own: a bidirectional GRU of %d units per direction, "
                           "%d-dimension embeddings, one layer (hidden:, emb:; OpenNMT-py's "
                           "encoder_type: brnn, hidden_size, word_vec_size)",
                           d.model.hidden, d.model.emb);
        if (!had(s, given, "global_attention") && !had(s, given, "attention"))
            rs_config_note("OpenNMT-py's attention is general (Luong) unless global_attention "
                           "says otherwise; rnnsearch's is additive (Bahdanau; attention:)");
        if (!had(s, given, "dropout"))
            rs_config_note("OpenNMT-py's dropout is 0.3 unless given; rnnsearch's %g",
                           (double)d.train.dropout);
        if (!had(s, given, "batch_size"))
            rs_config_note("OpenNMT-py's batch_size is 64 sentences unless given; rnnsearch's %d",
                           d.train.batch_size);
        if (!had(s, given, "src_seq_length") && !had(s, given, "tgt_seq_length") &&
            !had(s, given, "max_len"))
            rs_config_note("OpenNMT-py leaves no pair out by length without its filtertoolong "
                           "transform; rnnsearch leaves out pairs of more than %d tokens "
                           "(max_len: 0 keeps them all)",
                           d.train.max_len);
        if (!had(s, given, "valid_steps") && !had(s, given, "eval_every"))
            rs_config_note("OpenNMT-py evaluates every 10000 steps unless valid_steps says; "
                           "rnnsearch at each epoch's end (eval_every:)");
        if (!had(s, given, "save_checkpoint_steps") && !had(s, given, "save_every"))
            rs_config_note("OpenNMT-py saves every 5000 steps unless save_checkpoint_steps says; "
                           "rnnsearch at each epoch's end (save_every:)");
        if (!had(s, given, "train_steps") && !had(s, given, "max_steps"))
            rs_config_note("OpenNMT-py trains 100000 steps unless train_steps says; rnnsearch "
                           "%d epochs (epochs:, max_steps:)",
                           d.train.epochs);
    }
}

/* Joey NMT 2.3's build_optimizer (joeynmt/builders.py): optimizer "sgd" and
 * learning_rate 3.0e-4, whatever the optimizer, unless the file says
 * otherwise (momentum 0, which rnnsearch's SGD is). Added as if the file had them, after the file's own
 * keys are settled, so the command line still wins. */
static int joey_defaults(rs_settings *s, int sgd, int rate, rs_error *err)
{
    if (sgd && rs_settings_add(s, "training", "optimizer", "sgd", 0, err))
        return -1;
    return rate ? rs_settings_add(s, "training", "lr", JOEY_LR, 0, err) : 0;
}

static int file_is_opennmt;

int rs_config_is_opennmt(void)
{
    return file_is_opennmt;
}

static void drop_settings(rs_settings *s, const int *drop)
{
    int kept = 0;
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        if (!drop[i]) {
            s->items[kept++] = *it;
            continue;
        }
        rs_setting_free(it);
    }
    s->count = kept;
}

int rs_config_aliases(rs_settings *s, const char *path, rs_error *err)
{
    const int n = s->count;
    rs_config_notices_clear();
    /* The reader's notes (a key given again) first, line by line. */
    for (const char *p = s->notes; p && *p;) {
        const size_t len = strcspn(p, "\n");
        rs_config_note("%.*s", (int)len, p);
        p += len + (p[len] == '\n');
    }
    if (!s->yaml || !n)
        return 0;
    char **given = calloc((size_t)n, sizeof *given);
    int *drop = calloc((size_t)n, sizeof *drop);
    int status = given && drop ? 0 : rs_fail(err, "out of memory"), opennmt = 0;
    for (int i = 0; i < s->count && !status; i++) {
        rs_setting *it = &s->items[i];
        if (it->section && !strcmp(it->section, "testing"))
            status = rs_config_replace(&it->section, "translation", err);
    }
    if (!status)
        status = rs_config_subwords(s, path, given, drop, err);
    if (!status)
        status = rs_config_opennmt(s, path, given, drop, &opennmt, err);
    for (int i = 0; i < s->count && !status; i++) {
        rs_setting *it = &s->items[i];
        /* Settled by a rule: renamed, dropped or refused. */
        if (!given[i] && !drop[i] && !it->problem && read_noticed(it, path, &drop[i]))
            continue;
        const alias *a = given[i] || drop[i] || it->problem ? NULL : find_alias(it);
        if (!a)
            continue;
        if (!(given[i] = strdup(it->key)))
            status = rs_fail(err, "out of memory");
        int renamed = 0;
        if (!status)
            status = apply_alias(it, a, path, &renamed, &drop[i], err);
        if (!renamed) {
            free(given[i]);
            given[i] = NULL;
        }
    }
    if (!status)
        status = one_side_only(s, given, drop, path, err);
    if (!status)
        status = merge_renamed(s, given, drop, path, err);
    if (!status)
        status = joey_files(s, given, drop, err);
    const int joey = !status && is_joey(s, given) && !opennmt;
    /* Joey's SGD where the file names no optimizer; its rate, whatever the
     * optimizer, where the file gives none. */
    const int joey_sgd = joey && !had(s, given, "optimizer");
    const int joey_rate = !had(s, given, "learning_rate") && !had(s, given, "lr");
    if (!status)
        toolkit_notices(s, given, joey, opennmt);
    file_is_opennmt = opennmt;
    if (!status)
        drop_settings(s, drop);
    if (!status && opennmt)
        status = rs_config_opennmt_defaults(s, err);
    if (!status && joey)
        status = joey_defaults(s, joey_sgd, joey_rate, err);
    for (int i = 0; given && i < n; i++)
        free(given[i]);
    free(given);
    free(drop);
    return status;
}
