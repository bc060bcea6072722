#!/usr/bin/python3
"""Where a greedy decoder step goes in the PyTorch twin (../shared/bench/torch_rnnsearch.py),
by part of the model, under cProfile: the same categories as dev/profile-decode.sh.

  /usr/bin/python3 dev/profile-decode-torch.py MODEL.safetensors SOURCE.tok BATCH

MODEL is an `rnnsearch export`; SOURCE the tokenized sources (as ab-decode.sh gives the twin).
The twin's readout is split into its two halves (the same operations) so that the deep output
(maxout) and the output layer's product are told apart. cProfile adds about a microsecond per
call, which weighs on the twin's many small operations at batch 1: the shares, not the wall
time, are the result (the wall time without the profiler is printed beside them).
Needs python3-torch and the twin, which is not in a clone: ../shared/bench beside the checkout,
or the directory TWIN_DIR names."""
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The twin lives outside the checkout: ../shared/bench beside it, or TWIN_DIR.
TWIN_DIR = os.environ.get('TWIN_DIR') or os.path.join(HERE, '..', '..', 'shared', 'bench')
if not os.path.isfile(os.path.join(TWIN_DIR, 'torch_rnnsearch.py')):
    sys.exit('profile-decode-torch: no torch_rnnsearch.py in %s (the PyTorch twin, ../shared/bench '
             'beside the checkout; set TWIN_DIR)' % TWIN_DIR)
sys.path.insert(0, TWIN_DIR)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_rnnsearch as tr  # noqa: E402


def readout_maxout(self, s, emb, c):
    tt = (F.linear(s, self.P('out.U')) + F.linear(emb, self.P('out.V'))
          + F.linear(c, self.P('out.C'), self.P('out.b')))
    return tt.unflatten(-1, (self.l, 2)).max(-1)[0]


def readout_logits(self, t):
    return F.linear(t, self.P('out.W'), self.P('out.bw'))


def readout(self, s, emb, c):
    return readout_logits(self, readout_maxout(self, s, emb, c))


def main():
    model_path, src_path, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', '1')))
    T, meta = tr.load_safetensors(model_path)
    import json
    n, m, a, l = (int(meta[k]) for k in ('n', 'm', 'a', 'l'))
    s_itos, t_itos = json.loads(meta['src_vocab']), json.loads(meta['tgt_vocab'])
    s_stoi = {w: i for i, w in reversed(list(enumerate(s_itos)))}
    model = tr.ModelMD(n, m, a, l, len(s_itos), len(t_itos), 'exact')
    model.load(T)
    tr.ModelMD.readout = readout
    src = [[s_stoi.get(w, tr.UNK) for w in toks] for toks in tr.read_tok(src_path)]
    _, wall, steps = tr.decode_file(model, src, bs)
    prof = cProfile.Profile()
    prof.enable()
    _, pwall, _ = tr.decode_file(model, src, bs)
    prof.disable()
    st = pstats.Stats(prof).stats

    def find(name, file_part=None):
        return [k for k in st if k[2] == name and (file_part is None or file_part in k[0])]

    def cum(name):
        return sum(st[k][3] for k in find(name, '.py'))

    def under(caller, names):   # time of the built-ins `names` called directly by `caller`
        total = 0.0
        for k, v in st.items():
            if any(x in k[2] for x in names):
                for ck, cv in v[4].items():
                    if ck[2] == caller:
                        total += cv[3]
        return total

    enc, att, gru = cum('encode'), cum('attend'), cum('gru_exact')
    gru += under('greedy', ['embedding', 'linear', 'addmm'])
    maxout, logits = cum('readout_maxout'), cum('readout_logits')
    softmax = under('greedy', ['log_softmax', 'argmax'])
    greedy_total = cum('greedy')
    search = greedy_total - enc - att - gru - maxout - logits - softmax
    rest = pwall - greedy_total
    rows = [('encoder', enc), ('attention over the source', att),
            ('GRU step (embedding, input and recurrent products)', gru),
            ('deep output (3 products, maxout)', maxout),
            ('output layer: [l x V] product', logits), ('output layer: log-softmax, argmax', softmax),
            ('search (greedy loop: masks, gather, stack, ...)', search),
            ('rest (batching, outside the model)', rest)]
    print(f'torch batch {bs}: {wall:.2f} s without the profiler ({len(src) / wall:.1f} sent/s, '
          f'{steps} steps), {pwall:.2f} s under it')
    for name, t in rows:
        print(f'  {name:55s} {t:8.2f} s {100 * t / pwall:5.1f} %')


if __name__ == '__main__':
    main()
