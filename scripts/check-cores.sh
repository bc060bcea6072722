#!/bin/sh
# The test suite under each of OpenBLAS's x86-64 kernel families that our
# users' processors pick: OPENBLAS_CORETYPE=CORE makes OpenBLAS use CORE's
# kernels on any processor that has the instructions they need. Kernels sum
# in different orders, so a comparison that holds on one core only (an
# absolute tolerance, a fixture of one core's bits) fails here.
#
#   sh scripts/check-cores.sh [CORE ...]
#   (default: Haswell SkylakeX Cooperlake Zen Sandybridge Prescott)
#
# Each family also runs the element-wise kernels its processors take
# (RNNSEARCH_KERNELS: avx512, avx2 or portable).
#
# Runs, for each core, the Check suites (build/run_tests) and the library's
# and Python package's checks against a model trained under that core. A
# core whose instructions this processor lacks (SkylakeX needs AVX-512) is
# left out, saying so: OpenBLAS would stop on an illegal instruction (OpenBLAS
# 0.3.21 runs SapphireRapids as Cooperlake, so Cooperlake stands for both). Run
# from the checkout's top after the build `make check` makes.
set -u
cores=${*:-Haswell SkylakeX Cooperlake Zen Sandybridge Prescott}
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { for f in "$@"; do case " $flags " in *" $f "*) ;; *) return 1 ;; esac; done; }
needs() {
    case $1 in
    SkylakeX) echo avx512f avx512bw avx512dq avx512vl ;;
    Cooperlake) echo avx512f avx512bw avx512dq avx512vl avx512_bf16 ;;
    Haswell | Zen) echo avx2 fma ;;
    Sandybridge) echo avx ;;
    *) echo ;;
    esac
}
# The element-wise kernels' level (accel/kernels.h) a processor of each
# family takes, so that the suite runs each level (the same bits) as well.
kernels() {
    case $1 in
    SkylakeX | Cooperlake) echo avx512 ;;
    Haswell | Zen) echo avx2 ;;
    *) echo portable ;;
    esac
}
make=${MAKE:-make}
failed="" ran="" left_out=""
# One family: NAME, the instructions it needs, then the environment that
# selects it; the Check suites, the library's and the Python package's checks.
family() {
    name=$1 need=$2
    shift 2
    # shellcheck disable=SC2086 # the list of flags splits on purpose
    if [ -n "$flags" ] && ! has $need; then
        echo "check-cores: $name left out: this processor lacks $need"
        left_out="$left_out $name"
        return
    fi
    echo "check-cores: $*"
    if env "$@" RNNSEARCH=./rnnsearch OPENBLAS_NUM_THREADS=1 build/run_tests &&
        env "$@" $make --no-print-directory CHECK_MODEL="build/check-$name/dates" check-lib check-python; then
        ran="$ran $name"
    else
        failed="$failed $name"
    fi
}
for core in $cores; do
    family "$core" "$(needs "$core")" RNNSEARCH_GEMM=openblas OPENBLAS_CORETYPE="$core" \
        RNNSEARCH_KERNELS="$(kernels "$core")"
done
# oneDNN's road (accel/gemm_road.h), where this build has it, limited to each
# instruction-set family it runs on our users' processors (DNNL_MAX_CPU_ISA:
# AVX512_CORE, and AVX2 for a processor without AVX-512), as `make check`
# already runs it with this processor's best.
if [ -z "${CHECK_CORES_NO_ONEDNN:-}" ] && RNNSEARCH_GEMM=onednn ./rnnsearch info --help >/dev/null 2>&1; then
    family onednn-AVX512_CORE "avx512f avx512bw avx512dq avx512vl" RNNSEARCH_GEMM=onednn DNNL_MAX_CPU_ISA=AVX512_CORE RNNSEARCH_KERNELS=avx512
    family onednn-AVX2 "avx2 fma" RNNSEARCH_GEMM=onednn DNNL_MAX_CPU_ISA=AVX2 RNNSEARCH_KERNELS=avx2
fi
echo "check-cores: passed on:${ran:- none}${failed:+; failed on:$failed}${left_out:+; left out:$left_out}"
[ -z "$failed" ]
