#!/bin/sh
# Installs what rnnsearch needs to build and test, from Debian/Ubuntu packages.
# Does nothing when everything is present; elsewhere, says exactly what is missing.
# With --mpi, also Open MPI (training across machines under mpirun; CI tests it).
set -e
PKGS="build-essential g++ pkg-config libopenblas-dev libdnnl-dev libutf8proc-dev libsentencepiece-dev zlib1g-dev libmicrohttpd-dev libyaml-dev check libxml2-utils help2man man-db zsh python3 python3-numpy python3-pytest python3-matplotlib python3-pip python3-setuptools"
[ "${1:-}" = --mpi ] && PKGS="$PKGS libopenmpi-dev openmpi-bin"

missing=""
command -v cc >/dev/null 2>&1 || missing="$missing cc"
command -v c++ >/dev/null 2>&1 || missing="$missing c++"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
    for p in openblas libutf8proc sentencepiece zlib libmicrohttpd yaml-0.1 check; do
        pkg-config --exists "$p" || missing="$missing $p"
    done
fi
# oneDNN, the faster GEMM road (src/accel/gemm_road.h): a header, no pkg-config file.
printf '#include <oneapi/dnnl/dnnl.h>\n' | cc -E -x c - >/dev/null 2>&1 || missing="$missing oneDNN"
command -v xmllint >/dev/null 2>&1 || missing="$missing xmllint"
# make install: manual pages from --help; its test renders them and loads the zsh completion.
command -v help2man >/dev/null 2>&1 || missing="$missing help2man"
command -v man >/dev/null 2>&1 || missing="$missing man"
command -v zsh >/dev/null 2>&1 || missing="$missing zsh"
# The Python package's tests (make check-python): Debian's python3 and its modules.
for m in numpy pytest matplotlib pip setuptools; do
    /usr/bin/python3 -c "import $m" >/dev/null 2>&1 || missing="$missing python3-$m"
done
if [ "${1:-}" = --mpi ]; then
    pkg-config --exists ompi-c 2>/dev/null || missing="$missing ompi-c"
    command -v mpirun >/dev/null 2>&1 || missing="$missing mpirun"
fi
[ -z "$missing" ] && exit 0

echo "rnnsearch: missing:$missing" >&2
if ! command -v apt-get >/dev/null 2>&1; then
    echo "rnnsearch: install a C++ compiler, OpenBLAS, oneDNN, utf8proc, SentencePiece, zlib, libmicrohttpd, libyaml, Check, pkg-config, xmllint, help2man, man, zsh and Python 3 with NumPy, pytest and matplotlib with your package manager" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=sudo
    else
        echo "rnnsearch: run as root:  apt-get update && apt-get install -y $PKGS" >&2
        exit 1
    fi
fi
echo "rnnsearch: installing $PKGS" >&2
${SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get update -q
${SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $PKGS
