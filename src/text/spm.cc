// The C interface of spm.h over the SentencePiece C++ library. No exception
// leaves this file: every entry point catches everything and reports it
// through rs_fail.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "text/spm.h"
}

namespace sps = sentencepiece;

struct rs_spm {
    sps::SentencePieceProcessor sp;
};

namespace
{

// rnnsearch's reserved tokens, in the order of their ids (vocab.h).
const char *const reserved[] = {"<pad>", "<unk>", "<s>", "</s>"};

bool is_reserved(const std::string &s)
{
    for (const char *r : reserved)
        if (s == r)
            return true;
    return false;
}

// The sentences of rs_spm_train, one after another.
class Sentences : public sps::SentenceIterator
{
  public:
    Sentences(const char *const *sentences, int count) : sentences_(sentences), count_(count)
    {
        load();
    }
    bool done() const override
    {
        return next_ >= count_;
    }
    void Next() override
    {
        next_++;
        load();
    }
    const std::string &value() const override
    {
        return current_;
    }
    sps::util::Status status() const override
    {
        return sps::util::Status();
    }

  private:
    void load()
    {
        if (next_ < count_)
            current_.assign(sentences_[next_]);
    }
    const char *const *sentences_;
    int count_;
    int next_ = 0;
    std::string current_;
};

// Copies s into a new malloc'd buffer (never NULL on success, even when empty).
int copy_out(const std::string &s, char **out, size_t *len, int terminate, rs_error *err)
{
    char *p = static_cast<char *>(malloc(s.size() + 1));
    if (!p)
        return rs_fail(err, "out of memory (%zu bytes)", s.size() + 1);
    memcpy(p, s.data(), s.size());
    if (terminate)
        p[s.size()] = '\0';
    *out = p;
    if (len)
        *len = s.size();
    return 0;
}

// Fails unless plain pieces avoid the reserved strings (see spm.h).
int check_pieces(const sps::SentencePieceProcessor &sp, rs_error *err)
{
    for (int id = 0; id < sp.GetPieceSize(); id++) {
        const std::string &piece = sp.IdToPiece(id);
        if (sp.IsControl(id) || !is_reserved(piece))
            continue;
        if (sp.IsUnknown(id) && piece == "<unk>")
            continue;
        return rs_fail(err,
                       "sentencepiece model: piece %d is \"%s\", which rnnsearch reserves "
                       "(only a control piece or the unknown piece \"<unk>\" may be)",
                       id, piece.c_str());
    }
    return 0;
}

int push(rs_tokens *out, const std::string &s, rs_error *err)
{
    return rs_tokens_push(out, s.data(), s.size(), err);
}

// Appends an unknown run of text (a piece the model does not have) so that it
// cannot be taken for a reserved token or a piece of the model: whole when
// that is safe, else one code point per piece, else (a code point that is
// itself a control piece) as the unknown piece.
int push_unknown(const sps::SentencePieceProcessor &sp, const std::string &s, rs_tokens *out,
                 rs_error *err)
{
    const int unk = sp.unk_id();
    auto clashes = [&](const std::string &t) {
        return is_reserved(t) || sp.PieceToId(t) != unk || t == sp.IdToPiece(unk);
    };
    if (!clashes(s))
        return push(out, s, err);
    size_t pos = 0;
    while (pos < s.size()) {
        size_t len = 1;
        while (pos + len < s.size() && (static_cast<unsigned char>(s[pos + len]) & 0xC0) == 0x80)
            len++;
        std::string cp = s.substr(pos, len);
        if (push(out, clashes(cp) ? sp.IdToPiece(unk) : cp, err))
            return -1;
        pos += len;
    }
    return 0;
}

} // namespace

extern "C" int rs_spm_train(const char *const *sentences, int count, int vocab_size,
                            const char *model_type, char **blob, size_t *blob_len, rs_error *err)
{
    *blob = NULL;
    *blob_len = 0;
    if (!model_type)
        model_type = "unigram";
    if (strcmp(model_type, "unigram") && strcmp(model_type, "bpe"))
        return rs_fail(err, "sentencepiece: model type \"%s\" is neither unigram nor bpe",
                       model_type);
    if (vocab_size <= 4)
        return rs_fail(err,
                       "sentencepiece: vocabulary size %d leaves no room besides the "
                       "4 reserved pieces",
                       vocab_size);
    if (count <= 0)
        return rs_fail(err, "sentencepiece: no sentences to train on");
    for (int i = 0; i < count; i++) {
        if (!sentences[i])
            return rs_fail(err, "sentencepiece: sentence %d is NULL", i + 1);
        if (rs_utf8_validate(sentences[i], strlen(sentences[i]), err))
            return -1;
    }
    try {
        const std::unordered_map<std::string, std::string> args = {
            {"model_type", model_type},
            {"vocab_size", std::to_string(vocab_size)},
            {"normalization_rule_name", "identity"},
            {"character_coverage", "1.0"},
            {"byte_fallback", "false"},
            {"pad_id", "0"},
            {"unk_id", "1"},
            {"bos_id", "2"},
            {"eos_id", "3"},
            {"pad_piece", reserved[0]},
            {"unk_piece", reserved[1]},
            {"bos_piece", reserved[2]},
            {"eos_piece", reserved[3]},
            // Determinism: every sentence, in order, on one thread.
            {"num_threads", "1"},
            {"input_sentence_size", "0"},
            {"shuffle_input_sentence", "false"},
            {"self_test_sample_size", "0"},
            {"max_sentence_length", "65536"},
            {"minloglevel", "2"},
        };
        Sentences it(sentences, count);
        std::string model;
        sps::util::Status st = sps::SentencePieceTrainer::Train(args, &it, &model);
        if (!st.ok())
            return rs_fail(err, "sentencepiece: training failed: %s", st.ToString().c_str());
        if (model.empty())
            return rs_fail(err, "sentencepiece: training produced no model");
        return copy_out(model, blob, blob_len, 0, err);
    } catch (const std::exception &e) {
        return rs_fail(err, "sentencepiece: training failed: %s", e.what());
    } catch (...) {
        return rs_fail(err, "sentencepiece: training failed");
    }
}

extern "C" int rs_spm_load(rs_spm **out, const char *blob, size_t blob_len, rs_error *err)
{
    *out = NULL;
    rs_spm *m = NULL;
    try {
        m = new rs_spm;
        sps::util::Status st = m->sp.LoadFromSerializedProto(std::string(blob, blob_len));
        if (!st.ok()) {
            rs_fail(err, "sentencepiece: not a usable model: %s", st.ToString().c_str());
            delete m;
            return -1;
        }
        if (check_pieces(m->sp, err)) {
            delete m;
            return -1;
        }
        *out = m;
        return 0;
    } catch (const std::exception &e) {
        delete m;
        return rs_fail(err, "sentencepiece: cannot load the model: %s", e.what());
    } catch (...) {
        delete m;
        return rs_fail(err, "sentencepiece: cannot load the model");
    }
}

extern "C" int rs_spm_load_file(rs_spm **out, const char *path, char **blob, size_t *blob_len,
                                rs_error *err)
{
    *out = NULL;
    *blob = NULL;
    *blob_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    std::string bytes;
    try {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            bytes.append(buf, n);
    } catch (...) {
        fclose(f);
        return rs_fail(err, "%s: out of memory reading the model", path);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return rs_fail(err, "%s: read error", path);
    if (rs_spm_load(out, bytes.data(), bytes.size(), err)) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return rs_fail(err, "%s: %s", path, msg);
    }
    if (copy_out(bytes, blob, blob_len, 0, err)) {
        rs_spm_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

extern "C" int rs_spm_encode(const rs_spm *spm, const char *text, rs_tokens *out, rs_error *err)
{
    rs_tokens_clear(out);
    size_t len = strlen(text);
    if (rs_utf8_validate(text, len, err))
        return -1;
    try {
        const sps::SentencePieceProcessor &sp = spm->sp;
        sps::ImmutableSentencePieceText spt;
        sps::util::Status st = sp.Encode(std::string(text, len), spt.mutable_proto());
        if (!st.ok())
            return rs_fail(err, "sentencepiece: cannot encode: %s", st.ToString().c_str());
        for (size_t i = 0; i < spt.pieces_size(); i++) {
            auto piece = spt.pieces(static_cast<int>(i));
            int id = static_cast<int>(piece.id());
            int rc = sp.IsUnknown(id) ? push_unknown(sp, piece.piece(), out, err)
                                      : push(out, piece.piece(), err);
            if (rc) {
                rs_tokens_clear(out);
                return -1;
            }
        }
        return 0;
    } catch (const std::exception &e) {
        rs_tokens_clear(out);
        return rs_fail(err, "sentencepiece: cannot encode: %s", e.what());
    } catch (...) {
        rs_tokens_clear(out);
        return rs_fail(err, "sentencepiece: cannot encode");
    }
}

extern "C" int rs_spm_decode(const rs_spm *spm, const char *const *pieces, int count, char **out,
                             rs_error *err)
{
    *out = NULL;
    if (count < 0)
        return rs_fail(err, "sentencepiece: %d pieces to decode", count);
    try {
        std::vector<std::string> v;
        v.reserve(static_cast<size_t>(count));
        for (int i = 0; i < count; i++) {
            if (!pieces[i])
                return rs_fail(err, "sentencepiece: piece %d is NULL", i + 1);
            v.emplace_back(pieces[i]);
        }
        std::string text;
        sps::util::Status st = spm->sp.Decode(v, &text);
        if (!st.ok())
            return rs_fail(err, "sentencepiece: cannot decode: %s", st.ToString().c_str());
        return copy_out(text, out, NULL, 1, err);
    } catch (const std::exception &e) {
        return rs_fail(err, "sentencepiece: cannot decode: %s", e.what());
    } catch (...) {
        return rs_fail(err, "sentencepiece: cannot decode");
    }
}

extern "C" int rs_spm_vocab_size(const rs_spm *spm)
{
    return spm->sp.GetPieceSize();
}

extern "C" const char *rs_spm_piece(const rs_spm *spm, int id)
{
    const sps::SentencePieceProcessor &sp = spm->sp;
    if (id < 0 || id >= sp.GetPieceSize() || sp.IsControl(id) || sp.IsUnknown(id) ||
        sp.IsUnused(id))
        return NULL;
    return sp.IdToPiece(id).c_str();
}

extern "C" void rs_spm_free(rs_spm *spm)
{
    delete spm;
}
