#!/usr/bin/python3
"""Beam search for the PyTorch twin (../shared/bench/torch_rnnsearch.py), with rnnsearch's rules
(src/search/beam.c, decode.c, translate.c), so that `rnnsearch translate --beam K` has a PyTorch
figure beside it and the two outputs can be compared token for token.

  /usr/bin/python3 dev/torch-beam.py --load MODEL.safetensors --decode SOURCE.tok \\
      --beam 5 --batch-size 32 --threads 1 --hyp-out FILE

MODEL is an `rnnsearch export` of a default (model.md) model; SOURCE the tokenized sources, one
sentence a line (what ab-decode.sh gives the twin: `rnnsearch tokenize --lowercase --tokenizer
word` of the raw text). The model, the loading of the export, the attention, the GRU cell and the
deep output are the twin's (imported, not copied); this script adds only the search.

The rules, as rnnsearch applies them:
- Order: the input is read in chunks of 16 * batch-size lines (translate's reader); within a
  chunk the sentences are sorted by source length (ties: input order), the empty ones first, which
  are not decoded (empty output), and the rest cut into batches of batch-size. Sources longer than
  --max-src-len (250) tokens are cut to their first 250.
- Output limit per sentence: --max-len tokens before </s>, or 2 * source tokens + 10 when it is 0
  (the default), the sentence's own length, not the batch's longest.
- Beam (K >= 2): each sentence keeps K rows, all starting from s_0 and <s>; at the first step only
  row 0 expands. A step ranks every (live row, word) of the sentence by the running log p in
  float32, (score - lse) + logit, words <unk>, </s>, 4 ... V-1 (never <pad> or <s>), at the limit
  step only </s>; ties go to the lower row, then the lower word id. The 2K best are walked best
  first: one that ends in </s> finishes (ranked by log p / (tokens + 1)^alpha, </s> counted, in
  double, alpha = --length-penalty), the others fill the K rows of the next step, until K rows are
  filled or the sentence has K finished hypotheses. The sentence's search is over (its rows leave
  the batch) when it has K finished hypotheses or no row continues (at its limit every live row
  ends in </s>); there is no other early stop. Unfilled rows carry -inf and feed <pad> (they are
  still computed, as in rnnsearch). The output is the finished hypothesis of the best normalised
  score, the first finished among equals. --scores-out writes its log p and score.
  The K rows of a sentence read its annotations and keys from a copy per row, made once per batch
  after the encoder (rnnsearch reads them in place); the K*V candidates of a sentence are ranked
  with one topk.
- Greedy (--beam 1, as `translate --beam 1`): per row the largest logit but <pad> and <s>, </s>
  winning a tie with <unk>, the first of the largest otherwise; at the limit </s>. Finished rows
  leave the batch once they are a quarter of it (rs_greedy's rule).

Timed (the seconds of the BEAM line): the decoding loop over all batches, from the first batch's
tensor construction to the last batch's hypotheses as token ids: per batch the source tensors,
the encoder, every decoder step, the selection of the beam and the walk back along the
back-pointers. Not timed: importing torch, loading the export, reading and mapping the source
file to ids, the chunking and sorting of sentence indices, writing the hypotheses. (The twin's
DECODE line times its greedy loop the same way.)

Threads: torch.set_num_threads(--threads); OPENBLAS_NUM_THREADS, OMP_NUM_THREADS (to --threads)
and OMP_WAIT_POLICY=PASSIVE are set unless already in the environment, as ab-decode.sh sets them.
"""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TWIN_DIR = os.path.join(HERE, '..', '..', 'shared', 'bench')


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--load', required=True, help='rnnsearch export (safetensors)')
    ap.add_argument('--decode', required=True, help='tokenized source file')
    ap.add_argument('--beam', type=int, default=5, help='K; 1 is greedy search')
    ap.add_argument('--batch-size', type=int, default=32)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--length-penalty', type=float, default=1.0, help='alpha')
    ap.add_argument('--max-len', type=int, default=0, help='0: 2 * source tokens + 10')
    ap.add_argument('--max-src-len', type=int, default=250)
    ap.add_argument('--hyp-out', default='', help='write the hypotheses here, in input order')
    ap.add_argument('--scores-out', default='',
                    help='beam: write "logprob score" of each output here, in input order '
                         '(translate --n-best 1 prints the same two numbers)')
    ap.add_argument('--twin', default=TWIN_DIR, help='directory of torch_rnnsearch.py')
    a = ap.parse_args()
    if a.beam < 1 or a.batch_size < 1 or a.max_len < 0 or a.max_src_len < 1:
        ap.error('--beam and --batch-size are at least 1, --max-len at least 0')
    return a


A = parse_args()
for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS'):
    os.environ.setdefault(var, str(A.threads))
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
sys.path.insert(0, os.path.abspath(A.twin))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_rnnsearch as tw  # noqa: E402

PAD, UNK, BOS, EOS = tw.PAD, tw.UNK, tw.BOS, tw.EOS
NEG = float('-inf')


def output_limit(max_len, src_count):
    """rs_output_limit: max_len tokens before </s>, or 2 * source tokens + 10."""
    return max_len if max_len > 0 else 2 * src_count + 10


def batch_plan(lengths, batch_size):
    """translate's order: chunks of 16 * batch_size lines, each sorted by (length, index); the
    empty sentences are left out (they translate to an empty line), the rest cut into batches."""
    chunk = 16 * batch_size
    batches = []
    for c0 in range(0, len(lengths), chunk):
        order = sorted(range(c0, min(c0 + chunk, len(lengths))), key=lambda i: (lengths[i], i))
        order = [i for i in order if lengths[i] > 0]
        batches += [order[k:k + batch_size] for k in range(0, len(order), batch_size)]
    return batches


class Stepper:
    """One decoder step of the twin's model (model.md) for rows of hypotheses, each row reading
    its own sentence's annotations, keys and mask (rows of the same sentence share them)."""

    def __init__(self, model):
        self.model, n, m = model, model.n, model.m
        W, U = model.P('dec.W'), model.P('dec.U')
        self.W_e, self.W_c, self.b = W[:, :m], W[:, m:], model.P('dec.b')
        self.U_zr, self.U_g = U[:2 * n], U[2 * n:]
        self.emb = model.P('tgt_emb')

    def __call__(self, prev, s, Hb, keys, smask):
        """prev (R,) words y_{i-1}, s (R,n) s_{i-1}; returns s_i and the logits (R,V)."""
        model = self.model
        emb = F.embedding(prev, self.emb)
        c, _ = model.attend(s, Hb, keys, smask)
        xp = torch.addmm(F.linear(emb, self.W_e, self.b), c, self.W_c.t())
        s = tw.gru_exact(xp, s, self.U_zr, self.U_g, model.n)
        return s, model.readout(s, emb, c)


@torch.no_grad()
def greedy_batch(model, step, srcs, max_len):
    """rs_greedy on one batch: token id lists, without </s>."""
    B = len(srcs)
    X, xlen, xmask = tw.make_src(srcs)
    Hb, keys, s = model.encode(X, xlen, xmask)
    smask = xmask.t()
    limit = torch.tensor([output_limit(max_len, len(x)) for x in srcs])
    rows = torch.arange(B)                     # the sentence of each live row
    prev = torch.full((B,), BOS, dtype=torch.long)
    out = [[] for _ in range(B)]
    done = torch.zeros(B, dtype=torch.bool)    # of the rows, not yet left
    live = B
    stepno = 0
    while live > 0:
        s, logits = step(prev, s, Hb, keys, smask)
        lg = logits.clone()
        lg[:, PAD] = NEG
        lg[:, BOS] = NEG
        best = lg.argmax(1)                    # first largest: <unk> before </s> before words
        best = torch.where((best == UNK) & (logits[:, EOS] == logits[:, UNK]),
                           torch.full_like(best, EOS), best)
        best = torch.where(stepno < limit[rows], best, torch.full_like(best, EOS))
        best = torch.where(done, torch.full_like(best, PAD), best)
        for r, w in zip(rows.tolist(), best.tolist()):
            if w != PAD:
                out[r].append(w)
        done = done | (best == EOS)
        prev = best
        live = int((~done).sum())
        nrows = len(rows)
        if live > 0 and live <= nrows - (nrows + 3) // 4:
            keep = (~done).nonzero().squeeze(1)
            rows, prev, s = rows[keep], prev[keep], s[keep]
            Hb, keys, smask = Hb[keep], keys[keep], smask[keep]
            done = done[keep]
        stepno += 1
    return [o[:-1] if o and o[-1] == EOS else o for o in out]


def best_candidates(flat, n):
    """Per row of flat (sentences, K*V), the n best (value, index), best first, equal values in
    index order: what rnnsearch's keep_best leaves after enumerating the candidates row by row,
    word by word (a tie at the n-th place keeps the first enumerated)."""
    vals, idx = flat.topk(min(n + 1, flat.shape[1]), 1)
    o = idx.argsort(1)                                 # ties: sorted by index, then stably
    vals, idx = vals.gather(1, o), idx.gather(1, o)    # by value
    o = torch.sort(vals, stable=True, dim=1, descending=True)[1]
    vals, idx = vals.gather(1, o), idx.gather(1, o)
    if vals.shape[1] <= n:
        return vals, idx
    # A tie across the n-th place: topk may have kept any of the equal candidates. Redo those
    # rows over all their candidates at least as good (rare: equal float32 scores).
    for bi in ((vals[:, n - 1] == vals[:, n]) & (vals[:, n] > NEG)).nonzero().squeeze(1).tolist():
        ii = (flat[bi] >= vals[bi, n]).nonzero().squeeze(1)        # ascending index
        vv = flat[bi, ii]
        o = torch.sort(vv, stable=True, descending=True)[1][:n]
        vals[bi, :n], idx[bi, :n] = vv[o], ii[o]
    return vals[:, :n], idx[:, :n]


@torch.no_grad()
def beam_batch(model, step, srcs, K, max_len, alpha):
    """rs_beam_translate on one batch (n-best 1): per sentence the best hypothesis's token ids,
    its log p (float32 sum, </s> included) and its score log p / (tokens + 1)^alpha."""
    B, V = len(srcs), model.Vt
    alpha = float(torch.tensor(alpha, dtype=torch.float32))   # rnnsearch holds alpha as a float
    X, xlen, xmask = tw.make_src(srcs)
    Hb, keys, s0 = model.encode(X, xlen, xmask)
    # K rows per sentence, grouped by sentence; a row reads its sentence's source side.
    Hb = Hb.repeat_interleave(K, 0)
    keys = keys.repeat_interleave(K, 0)
    smask = xmask.t().repeat_interleave(K, 0)
    s = s0.repeat_interleave(K, 0)
    limits = [output_limit(max_len, len(x)) for x in srcs]
    steps = max(limits) + 1
    alive = torch.arange(B)                    # the sentences still searched, in batch order
    limit = torch.tensor(limits)
    scores = torch.full((B, K), NEG)
    scores[:, 0] = 0.0
    prev = torch.full((B * K,), BOS, dtype=torch.long)
    hist_tok = torch.zeros((steps, B, K), dtype=torch.long)   # tokens[step] of row k
    hist_par = torch.zeros((steps, B, K), dtype=torch.long)   # the row of step - 1 it extends
    finished = [[] for _ in range(B)]          # (norm, logprob, step, row), in order found
    done_count = torch.zeros(B, dtype=torch.long)
    for stepno in range(steps):
        if len(alive) == 0:
            break
        Bl = len(alive)
        s, logits = step(prev, s, Hb, keys, smask)
        lse = torch.logsumexp(logits, 1)
        cand = (scores.reshape(-1) - lse).unsqueeze(1) + logits          # (rows, V), float32
        cand[:, PAD] = NEG
        cand[:, BOS] = NEG
        at_limit = limit[alive] == stepno
        if bool(at_limit.any()):
            rl = at_limit.repeat_interleave(K)
            eos = cand[rl, EOS]
            cand[rl] = NEG
            cand[rl, EOS] = eos
        vals, idx = best_candidates(cand.view(Bl, K * V), 2 * K)
        tok, row = idx % V, idx // V
        valid = vals > NEG
        is_eos = valid & (tok == EOS)
        word = valid & (tok != EOS)
        words_before = word.cumsum(1) - word.long()
        eos_before = is_eos.cumsum(1) - is_eos.long()
        dc = done_count[alive].unsqueeze(1)
        reached = valid & (words_before < K) & (dc + eos_before < K)
        take_eos, take_word = reached & is_eos, reached & word
        new_done = dc.squeeze(1) + take_eos.sum(1)
        nxt = take_word.sum(1)
        over = (new_done >= K) | (nxt == 0)
        done_count[alive] = new_done
        if bool(take_eos.any()):
            for bi, ci in take_eos.nonzero().tolist():    # in candidate order per sentence
                lp = float(vals[bi, ci])
                finished[int(alive[bi])].append(
                    (lp / math.pow(stepno + 1, alpha), lp, stepno, int(row[bi, ci])))
        # the next step's rows: the words taken, in order; the rest -inf, <pad>, from row 0
        slot = torch.where(take_word, words_before, torch.full_like(words_before, K))
        new_scores = torch.full((Bl, K + 1), NEG).scatter_(1, slot, vals)[:, :K]
        new_prev = torch.full((Bl, K + 1), PAD, dtype=torch.long).scatter_(1, slot, tok)[:, :K]
        new_par = torch.zeros((Bl, K + 1), dtype=torch.long).scatter_(1, slot, row)[:, :K]
        hist_tok[stepno, alive] = new_prev
        hist_par[stepno, alive] = new_par
        src_rows = (torch.arange(Bl).unsqueeze(1) * K + new_par)    # rows of this step
        if bool(over.any()):
            keep = (~over).nonzero().squeeze(1)
            alive = alive[keep]
            new_scores, new_prev, src_rows = new_scores[keep], new_prev[keep], src_rows[keep]
            krow = (keep.unsqueeze(1) * K + torch.arange(K)).view(-1)
            Hb, keys, smask = Hb[krow], keys[krow], smask[krow]
        s = s[src_rows.view(-1)]
        scores, prev = new_scores, new_prev.reshape(-1)
    hist_tok, hist_par = hist_tok.numpy(), hist_par.numpy()
    out = []
    for b in range(B):
        if not finished[b]:
            out.append(([], NEG, NEG))
            continue
        best = sorted(finished[b], key=lambda f: -f[0])[0]   # stable: first found among equals
        norm, logprob, length, r = best
        ids = [0] * length
        for t in range(length - 1, -1, -1):
            ids[t] = int(hist_tok[t, b, r])
            r = int(hist_par[t, b, r])
        out.append((ids, logprob, norm))
    return out


def main():
    a = A
    torch.set_num_threads(a.threads)
    T, meta = tw.load_safetensors(a.load)
    assert meta.get('model') == 'rnnsearch-default', meta.get('model')
    n, m, at, l = (int(meta[k]) for k in ('n', 'm', 'a', 'l'))
    s_itos, t_itos = json.loads(meta['src_vocab']), json.loads(meta['tgt_vocab'])
    s_stoi = {w: i for i, w in reversed(list(enumerate(s_itos)))}
    model = tw.ModelMD(n, m, at, l, len(s_itos), len(t_itos), 'exact')
    model.load(T)
    model.eval()
    print(f'torch {torch.__version__} threads={torch.get_num_threads()} '
          f'OPENBLAS_NUM_THREADS={os.environ.get("OPENBLAS_NUM_THREADS")} '
          f'OMP_WAIT_POLICY={os.environ.get("OMP_WAIT_POLICY")} '
          f'loaded {a.load}: n={n} m={m} a={at} l={l} Vs={len(s_itos)} Vt={len(t_itos)}', flush=True)

    src = [[s_stoi.get(w, UNK) for w in toks][:a.max_src_len] for toks in tw.read_tok(a.decode)]
    batches = batch_plan([len(x) for x in src], a.batch_size)
    step = Stepper(model)
    hyps = [[] for _ in src]
    scores = [(0.0, 0.0) for _ in src]     # an empty line's: not decoded
    t0 = time.perf_counter()
    for idx in batches:
        srcs = [src[i] for i in idx]
        if a.beam == 1:
            res = greedy_batch(model, step, srcs, a.max_len)
        else:
            res = beam_batch(model, step, srcs, a.beam, a.max_len, a.length_penalty)
            for i, (_, logprob, norm) in zip(idx, res):
                scores[i] = (logprob, norm)
            res = [r[0] for r in res]
        for i, r in zip(idx, res):
            hyps[i] = r
    seconds = time.perf_counter() - t0
    out_tok = sum(len(h) + 1 for h, x in zip(hyps, src) if x)
    print(f'BEAM beam={a.beam} batch={a.batch_size} sentences={len(src)} seconds={seconds:.2f} '
          f'sent/s={len(src) / seconds:.2f} out_tok(incl </s>)={out_tok} '
          f'peak_rss_MB={tw.peak_rss_mb():.0f}', flush=True)
    if a.hyp_out:
        with open(a.hyp_out, 'w', encoding='utf-8') as f:
            for h in hyps:
                f.write(' '.join(t_itos[i] for i in h) + '\n')
    if a.scores_out and a.beam > 1:
        with open(a.scores_out, 'w', encoding='utf-8') as f:
            for logprob, norm in scores:
                f.write(f'{logprob:.6f} {norm:.6f}\n')


if __name__ == '__main__':
    main()
