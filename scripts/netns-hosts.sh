# Hosts emulated by network namespaces, for scripts/multihost.sh and
# scripts/scaling-curve.sh (sourced by bash; docs/scaling.md, "Across hosts").
#
# nh_setup NAME makes namespaces rsmh-PID-h1 … h4, each a host with its own
# address (10.231.0.1 … .4, on eth0) and hostname, joined by a bridge that
# lives in a namespace of its own (rsmh-PID-sw, ports vh1 … vh4, vctl);
# mpirun runs in rsmh-PID-ctl (10.231.0.254) and starts its daemons through an
# rsh agent that enters the host's namespace instead of ssh. MPI's traffic and
# the daemons' out-of-band traffic are restricted to that subnet, which
# exists only inside these namespaces: nothing leaves the machine, and runs
# with other PIDs do not see each other. Whatever happens, the namespaces,
# their links and the bridge go at exit (trap on EXIT, INT, TERM).
#
# Callers check first that they are root and have ip, tc, unshare, timeout and
# mpirun (nh_missing says what is not there).

P=rsmh-$$-   # the prefix of every namespace this run makes
NET=10.231.0 # a /24 that exists only inside those namespaces
SW=${P}sw
CTL=${P}ctl
NH_NAME=hosts
WORK=

# What this machine lacks for the namespaces, or nothing.
nh_missing() {
    [ "$(id -u)" = 0 ] || { echo "needs root to make network namespaces"; return; }
    local tool
    for tool in ip tc unshare timeout mpirun; do
        command -v $tool >/dev/null 2>&1 || { echo "$tool not found"; return; }
    done
    ip netns list >/dev/null 2>&1 || echo "ip netns does not work here"
}

# Every process left in our namespaces (a rank, a daemon) is ended, then the
# namespaces, which takes their links and the bridge with them.
nh_cleanup() {
    trap - EXIT INT TERM
    nh_remove_namespaces
    [ -n "$WORK" ] && rm -rf "$WORK"
}
nh_remove_namespaces() {
    local ns pid
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
}

# The bridge's namespace, mpirun's, and hosts 1..4: eth0 in each, its peer
# vhI (vctl) a port of br0. Host I is 10.231.0.I; mpirun is .254. WORK is a
# scratch directory, removed at exit.
nh_setup() {
    NH_NAME=$1
    trap nh_cleanup EXIT
    trap 'echo "$NH_NAME: interrupted"; exit 130' INT
    trap 'echo "$NH_NAME: terminated"; exit 143' TERM
    WORK=$(mktemp -d "/tmp/rsmh-$$.XXXXXX") || return 1
    # Namespaces of an earlier run with this PID, killed before its cleanup.
    nh_remove_namespaces
    ip netns add "$SW" || return 1
    ip -n "$SW" link set lo up &&
        ip -n "$SW" link add br0 type bridge &&
        ip -n "$SW" link set br0 up || return 1
    local name addr
    for name in ctl h1 h2 h3 h4; do
        case $name in ctl) addr=$NET.254 ;; *) addr=$NET.${name#h} ;; esac
        ip netns add "$P$name" &&
            ip -n "$SW" link add "v$name" type veth peer name eth0 netns "$P$name" &&
            ip -n "$SW" link set "v$name" master br0 up &&
            ip -n "$P$name" link set lo up &&
            ip -n "$P$name" addr add "$addr/24" dev eth0 &&
            ip -n "$P$name" link set eth0 up || return 1
    done
    # mpirun's rsh agent: "agent [options] HOST COMMAND..." runs COMMAND in
    # HOST's namespace, under the host's own hostname (a UTS namespace), as
    # ssh would run it on that machine.
    cat >"$WORK/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case \$host in
$NET.[1-4]) ns=${P}h\${host##*.} ;;
*) echo "rsh agent: \$host is not a host of this run" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns && \$*"
EOF
    chmod +x "$WORK/agent"
}

# nh_mpirun N T COMMAND...: mpirun over hosts 1..N (one slot each), in its
# namespace, bounded by `timeout T`. The out-of-band keepalive (3 s idle,
# then 3 probes 1 s apart) bounds how long a daemon behind a dead link goes
# unnoticed; Open MPI's default is 300 s + 9 × 20 s. RNNSEARCH_ALLREDUCE_OVERLAP,
# when set, reaches every rank (1: the all-reduce overlapped with the backward).
nh_mpirun() {
    local n=$1 t=$2 i
    shift 2
    : >"$WORK/hosts.$n"
    for i in $(seq "$n"); do echo "$NET.$i slots=1" >>"$WORK/hosts.$n"; done
    ip netns exec "$CTL" timeout -k 5 "$t" mpirun --allow-run-as-root \
        --hostfile "$WORK/hosts.$n" -np "$n" --map-by ppr:1:node --bind-to none \
        --mca plm_rsh_agent "$WORK/agent" --mca plm_rsh_no_tree_spawn 1 \
        --mca btl tcp,self --mca btl_tcp_if_include "$NET.0/24" \
        --mca oob_tcp_if_include "$NET.0/24" \
        --mca oob_tcp_keepalive_time 3 --mca oob_tcp_keepalive_intvl 1 \
        --mca oob_tcp_keepalive_probes 3 \
        -x OPENBLAS_NUM_THREADS=1 ${RNNSEARCH_ALLREDUCE_OVERLAP:+-x RNNSEARCH_ALLREDUCE_OVERLAP} \
        "$@"
}

# Bytes host I's port on the bridge carried (both ways).
nh_port_bytes() {
    ip netns exec "$SW" sh -c "echo \$((\$(cat /sys/class/net/v$1/statistics/rx_bytes) + \$(cat /sys/class/net/v$1/statistics/tx_bytes)))"
}
