#!/bin/bash
# Data-parallel training across hosts, emulated on one machine: four network
# namespaces as hosts on a private bridge, mpirun in a fifth
# (scripts/netns-hosts.sh says how; nothing leaves the machine).
#
# Checks (docs/scaling.md, "Across hosts"):
#   hosts     a rank per host: rank r runs in namespace h(r+1), with its address
#   same      4 hosts train the model one process trains (losses per step to
#             2e-5, parameters within 2e-3 and 1e-3 in relative L2 norm, as
#             tests/train/test_mpi.c), and the gradients crossed the bridge
#   resume    2 hosts for the first epoch, 4 for the second: the same model
#   killed    one host's rank killed mid-run: mpirun ends the job naming the
#             host, last.ckpt loads, and training resumes on the other hosts
#   linkdown  one host's link taken down at the bridge mid-run: the job ends
#             within the out-of-band keepalive bound, and resumes likewise
#   slow      one host behind 20 ms of delay and 5 % loss (tc netem; where the
#             kernel has none, a 20 Mbit/s tc tbf and nftables dropping 5 %):
#             the job waits for it and still trains the same model
#   curve     scripts/scaling-curve.sh runs (2 steps) and times the all-reduce
#
# Usage: scripts/multihost.sh [CHECK ...]   (default: all; RNNSEARCH=./rnnsearch)
# Needs root, `ip netns`, tc, unshare, Open MPI's mpirun, python3 and an
# rnnsearch built with MPI; skips, saying why, without them. Prints
# "N passed, N failed"; about a minute.
set -u
cd "$(dirname "$0")/.."
RNNSEARCH=$(realpath "${RNNSEARCH:-./rnnsearch}")
CHECKS=${*:-hosts same resume killed linkdown slow curve}

# skip WHY [mpi]: ends the run, saying why. CI installs Open MPI
# (RNNSEARCH_NO_SKIPS=1): there, a missing one is a failure.
skip() {
    if [ "${RNNSEARCH_NO_SKIPS:-0}" = 1 ] && [ "${2:-}" = mpi ]; then
        echo "multihost: FAILED: $1 (RNNSEARCH_NO_SKIPS=1)"
        exit 1
    fi
    echo "multihost: skipped: $1"
    exit 0
}
. scripts/netns-hosts.sh
missing=$(nh_missing)
[ -z "$missing" ] || skip "$missing" "$(echo "$missing" | grep -q mpirun && echo mpi)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
[ -x "$RNNSEARCH" ] || skip "$RNNSEARCH not built (make rnnsearch)"
ldd "$RNNSEARCH" | grep -q libmpi || skip "$RNNSEARCH built without MPI (make MPI=1)" mpi

nh_setup multihost || { echo "multihost: the namespaces could not be made"; exit 1; }

# The tiny model of tests/train/test_mpi.c on 45 pairs of corpora/dates: 2 epochs of
# batches of 10, 10, 10, 10, 5 pairs, an evaluation after every step.
head -n 45 corpora/dates/train.tsv >"$WORK/train.tsv"
head -n 10 corpora/dates/dev.tsv >"$WORK/dev.tsv"
ARGS="--train $WORK/train.tsv --dev $WORK/dev.tsv --emb 8 --hidden 8 --att 8 --maxout 4
 --batch-size 10 --epochs 2 --eval-every 1 --threads 1 --lr 0.03 --lr-decay 0.5 --quiet"
# A long run that saves every 3 steps, for the faults.
LONG="--train $WORK/train.tsv --emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 10
 --epochs 100000 --save-every 3 --threads 1 --quiet"

# Models A and B of $WORK: the same per-step losses (train.log.tsv) and
# parameters (last.ckpt, exported as safetensors) within train/test_mpi.c's bounds.
same_model() {
    local a=$WORK/$1 b=$WORK/$2
    "$RNNSEARCH" export -m "$a/last.ckpt" -o "$WORK/$1.st" 2>/dev/null &&
        "$RNNSEARCH" export -m "$b/last.ckpt" -o "$WORK/$2.st" 2>/dev/null &&
        python3 scripts/compare-models.py "$a/train.log.tsv" "$b/train.log.tsv" \
            "$WORK/$1.st" "$WORK/$2.st"
}

# A training run until last.ckpt exists, then FAULT (a shell command), then
# the job must end with a failure within BOUND seconds, saying which host
# (the pattern HOSTSAID); the last checkpoint must load and training resume
# on the hosts left.
fault_run() {
    local name=$1 fault=$2 bound=$3 said=$4 out=$WORK/$1
    nh_mpirun 3 60 "$RNNSEARCH" train $LONG --out "$out" >"$out.log" 2>&1 &
    local job=$!
    for _ in $(seq 300); do [ -f "$out/last.ckpt" ] && break; sleep 0.1; done
    [ -f "$out/last.ckpt" ] || { echo "no checkpoint appeared"; kill $job; return 1; }
    sleep 0.5
    local t0=$SECONDS
    eval "$fault" || { echo "the fault could not be made"; return 1; }
    wait $job
    local rc=$? took=$((SECONDS - t0))
    echo "mpirun exit status $rc, ${took} s after the fault"
    tail -n 12 "$out.log" | sed 's/^/  | /'
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "status $rc: it did not fail, or hung (124)"; return 1; }
    [ $took -le "$bound" ] || { echo "ended after $took s, over the bound of $bound s"; return 1; }
    grep -Eq "$said" "$out.log" || { echo "the output names no host ($said)"; return 1; }
    # No rank outlives the job, not even behind a dead link: its daemon loses
    # mpirun (the same keepalive) and ends it.
    local left=
    for _ in $(seq 150); do
        left=$(for ns in ${P}h1 ${P}h2 ${P}h3 ${P}h4; do ip netns pids "$ns"; done)
        [ -z "$left" ] && break
        sleep 0.1
    done
    [ -z "$left" ] || { echo "processes left on the hosts: $left"; return 1; }
    echo "no process left on any host after $((SECONDS - t0)) s"
    "$RNNSEARCH" info -m "$out/last.ckpt" >"$out.info" || return 1
    local step
    step=$(sed -n "s/^# training: step \([0-9]*\),.*/\1/p" "$out.info")
    [ "${step:-0}" -gt 0 ] || { echo "no step in last.ckpt"; cat "$out.info"; return 1; }
    echo "last.ckpt loads: step $step; resuming on hosts 1 and 2"
    nh_mpirun 2 60 "$RNNSEARCH" train --train "$WORK/train.tsv" --out "$out" --resume \
        --max-steps $((step + 3)) --quiet >"$out.resume.log" 2>&1 ||
        { cat "$out.resume.log"; return 1; }
    grep -q "at step $((step + 3))" "$out.resume.log" || { cat "$out.resume.log"; return 1; }
}

# rank, hostname and address as each rank sees them
check_hosts() {
    nh_mpirun 4 30 sh -c 'echo "rank $OMPI_COMM_WORLD_RANK $(hostname) $(ip -4 -o addr show eth0 | awk "{print \$4}")"' \
        >"$WORK/ranks" 2>&1 || { cat "$WORK/ranks"; return 1; }
    sort "$WORK/ranks"
    for r in 0 1 2 3; do
        grep -qx "rank $r ${P}h$((r + 1)) $NET.$((r + 1))/24" "$WORK/ranks" ||
            { echo "rank $r is not on host $((r + 1))"; return 1; }
    done
    # mpirun's namespace has no other way out: its daemons' out-of-band
    # connections crossed the bridge.
    local ctl
    ctl=$(nh_port_bytes ctl)
    echo "mpirun's port on the bridge: $ctl bytes"
    [ "$ctl" -gt 0 ] || return 1
}

check_same() {
    "$RNNSEARCH" train $ARGS --out "$WORK/one" >"$WORK/one.log" 2>&1 || { cat "$WORK/one.log"; return 1; }
    local before=() i
    for i in 1 2 3 4; do before[i]=$(nh_port_bytes h$i); done
    nh_mpirun 4 60 "$RNNSEARCH" train $ARGS --out "$WORK/four" >"$WORK/four.log" 2>&1 ||
        { cat "$WORK/four.log"; return 1; }
    same_model one four || return 1
    # 10 all-reduces of 15 600 bytes: in any all-reduce each host sends at
    # least 2·(N−1)/N of the buffer (the ring's share, the least there is),
    # 234 kB in all, and receives as much.
    for i in 1 2 3 4; do
        local moved=$(($(nh_port_bytes h$i) - before[i]))
        echo "host $i: $moved bytes through its port"
        [ $moved -ge 234000 ] || { echo "host $i moved too little for 10 all-reduces"; return 1; }
    done
}

check_resume() {
    [ -f "$WORK/one/last.ckpt" ] || "$RNNSEARCH" train $ARGS --out "$WORK/one" >/dev/null 2>&1
    nh_mpirun 2 60 "$RNNSEARCH" train $ARGS --out "$WORK/parts" --max-steps 5 \
        >"$WORK/parts.log" 2>&1 || { cat "$WORK/parts.log"; return 1; }
    nh_mpirun 4 60 "$RNNSEARCH" train --train "$WORK/train.tsv" --dev "$WORK/dev.tsv" \
        --out "$WORK/parts" --resume --max-steps 0 --eval-every 1 --quiet \
        >>"$WORK/parts.log" 2>&1 || { cat "$WORK/parts.log"; return 1; }
    same_model one parts
}

check_killed() {
    fault_run killed 'kill -9 $(ip netns pids ${P}h2 | while read p; do
            [ "$(cat /proc/$p/comm 2>/dev/null)" = rnnsearch ] && echo $p; done)' \
        15 "rank 1 .*on node $NET.2|$NET.2.*rank 1"
}

check_linkdown() {
    fault_run linkdown 'ip -n $SW link set vh3 down' 15 "$NET.3|${P}h3"
    local status=$?
    ip -n "$SW" link set vh3 up # for the checks after this one
    return $status
}

# Host 2 made slow and lossy: tc netem (20 ms of delay, 5 % loss) where the
# kernel has it; elsewhere 5 % loss by nftables and a 20 Mbit/s link (tc tbf),
# saying so.
slow_host() {
    local ns=${P}h2
    if ip netns exec "$ns" tc qdisc add dev eth0 root netem delay 20ms loss 5% 2>/dev/null; then
        echo "host 2: tc netem delay 20ms loss 5%"
        return 0
    fi
    ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate 20mbit burst 32kb latency 50ms ||
        return 1
    echo "host 2: no tc netem in this kernel; tc tbf at 20 Mbit/s instead of the delay"
    if command -v nft >/dev/null 2>&1; then
        ip netns exec "$ns" nft -f - <<'NFT' || return 1
table inet rsmh {
    chain out {
        type filter hook output priority 0;
        oifname "eth0" numgen random mod 100 < 5 drop
    }
}
NFT
        echo "host 2: 5 % of its packets dropped (nftables)"
    else
        echo "host 2: no loss (neither tc netem nor nft here)"
    fi
}

check_slow() {
    [ -f "$WORK/one/last.ckpt" ] || "$RNNSEARCH" train $ARGS --out "$WORK/one" >/dev/null 2>&1
    slow_host || return 1
    local t0=$SECONDS
    nh_mpirun 4 60 "$RNNSEARCH" train ${ARGS/--quiet/} --out "$WORK/slow" >"$WORK/slow.log" 2>&1 ||
        { cat "$WORK/slow.log"; return 1; }
    echo "10 steps with host 2 slowed: $((SECONDS - t0)) s"
    grep -o "step [0-9.]* ms, all-reduce.*" "$WORK/slow.log" | tail -n 1
    same_model one slow
}

# scripts/scaling-curve.sh still runs: S for 2 steps, alone and on 2 hosts
# at 1 Gbit/s, on corpora/dates (its own namespaces, another prefix).
check_curve() {
    DATA="--train corpora/dates/train.tsv" STEPS=2 CONFIGS=S RANKS="1 2" \
        LINKS="1gbit:0.2ms" OUT="$WORK/curve" RNNSEARCH="$RNNSEARCH" \
        timeout 120 bash scripts/scaling-curve.sh || return 1
    [ "$(grep -c "^S	" "$WORK/curve/scaling.tsv")" = 2 ] &&
        awk -F'\t' '$1 == "S" && $2 == 2 && !($7 > 0) { exit 1 }' "$WORK/curve/scaling.tsv"
}

passed=0 failed=0
echo "multihost: hosts ${P}h1..h4 at $NET.1-4, mpirun in ${P}ctl at $NET.254"
for check in $CHECKS; do
    echo "multihost: $check"
    t0=$SECONDS
    if "check_$check" >"$WORK/$check.out" 2>&1; then
        passed=$((passed + 1))
        sed 's/^/  /' "$WORK/$check.out"
        echo "multihost: $check passed ($((SECONDS - t0)) s)"
    else
        failed=$((failed + 1))
        sed 's/^/  /' "$WORK/$check.out"
        echo "multihost: $check FAILED ($((SECONDS - t0)) s)"
    fi
done
echo "multihost: $passed passed, $failed failed"
[ $failed -eq 0 ]
