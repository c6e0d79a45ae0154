#!/bin/sh
# `make hosted`: the course under the versions Colab and Kaggle run (constraints/hosted.txt).
#
#   VENV=.venv-hosted OUT=build/ci/hosted CI_OUT=build/ci/course sh scripts/hosted.sh   (the Makefile passes these)
#
# 1. VENV gets the hosted runtime's packages, at exactly the versions constraints/hosted.txt lists.
# 2. The course package goes in the way the notebooks' Colab/Kaggle setup cell installs it:
#    pip install PACKAGE "tensorflow==<installed>" "keras==<installed>". Every package hosted.txt lists
#    must keep its version: the check fails and names the package otherwise (OUT/hosted-install.txt). This step
#    is always pip (the newest, as on Colab); steps 1 and 3, and putting pip itself into VENV, use uv when UV
#    names it (CI): the same versions, faster.
# 3. The runner goes in (the tools' package and a kernel - not JupyterLab, which the runner does not use; pytest, and
#    nbval for the option pyproject.toml's addopts names), the package is made editable, and `course run` runs the
#    Chinese notebooks in smoke mode into CI_OUT-zh, checked by tests/tiers/test_course_run.py (the Makefile sets
#    TF_ENABLE_ONEDNN_OPTS=1: Colab's CPUs have AVX-512, so oneDNN is on there).
# Steps 1-3 are skipped when VENV was made from the same constraints/hosted.txt and pyproject.toml.
set -eu

VENV=${VENV:-.venv-hosted}
OUT=${OUT:-build/ci/hosted}
CI_OUT=${CI_OUT:-build/ci/course}  # the Chinese run goes to CI_OUT-zh (the English one, nbval's, to CI_OUT)
PYTHON=${PYTHON:-python3}
STAMP=$VENV/.hosted-installed
want=$(cat constraints/hosted.txt pyproject.toml tools/pyproject.toml | cksum)
start=$(date +%s)

# the names (lower case, '_' as '-') and versions hosted.txt lists, as "name==version" lines
listed() {
    sed -e 's/#.*//' -e '/^ *$/d' constraints/hosted.txt | tr 'A-Z_' 'a-z-' | sort
}
put() {  # pip install --quiet ARGS into VENV; UV=PATH (optional, CI sets it): uv at PATH does it, faster
    if [ -n "${UV:-}" ]; then  # with the .pyc files pip writes (scripts/venv.sh says why)
        "$UV" pip install --quiet --compile-bytecode --python "$VENV/bin/python" "$@"
    else
        "$VENV/bin/python" -m pip install --quiet "$@"
    fi
}
installed() {  # the same names, at the versions VENV has now (one Python for all of them)
    listed | sed 's/==.*//' | "$VENV/bin/python" -c 'import sys
from importlib.metadata import PackageNotFoundError, version
for name in sys.stdin.read().split():
    try:
        print(f"{name}=={version(name)}")
    except PackageNotFoundError:
        print(f"{name}==missing")'
}

if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
    rm -rf "$VENV"
    if [ -n "${UV:-}" ]; then
        # The newest pip, put in by uv: ensurepip's old pip and then its upgrade took 6 s on a 2-core machine, this 0.3 s.
        "$PYTHON" -m venv --without-pip "$VENV"
        "$UV" pip install --quiet --python "$VENV/bin/python" --upgrade pip
    else
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
    fi
    echo "hosted 1/3: the runtime's packages (constraints/hosted.txt)"
    put -r constraints/hosted.txt
    mkdir -p "$OUT"
    installed > "$OUT/hosted-before.txt"
    echo "hosted 2/3: the course package, installed as the notebooks' Colab/Kaggle setup cell does"
    tf=$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('tensorflow'))")
    keras=$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('keras'))")
    "$VENV/bin/python" -m pip install --quiet . "tensorflow==$tf" "keras==$keras"
    installed > "$OUT/hosted-after.txt"
    if ! diff -u "$OUT/hosted-before.txt" "$OUT/hosted-after.txt" > "$OUT/hosted-install.txt"; then
        echo "Installing the course package changed the hosted runtime's packages (- before, + after):" >&2
        cat "$OUT/hosted-install.txt" >&2
        echo "Widen the ranges in pyproject.toml's dependencies to include constraints/hosted.txt's versions." >&2
        exit 1
    fi
    echo "   kept: $(tr '\n' ' ' < "$OUT/hosted-after.txt")" | tee "$OUT/hosted-install.txt"
    # The installed copy (not the checkout) imports and finds its bundled data, as on Colab: run outside the checkout.
    venv_python="$(cd "$VENV" && pwd)/bin/python"
    (cd "$(mktemp -d)" && COURSE_OFFLINE=1 "$venv_python" -c 'import course_utils.data as data
(x, y), _ = data.load("mnist", quiet=True)
assert "site-packages" in data.__file__ and len(x) > 0, data.__file__
print(f"   the installed package loads its bundled sample: {len(x):,} training images")')
    echo "hosted 3/3: the runner (the tools' package, a kernel, pytest) and an editable install for the tests"
    put -c constraints/hosted.txt -e . -e ./tools "ipykernel>=7.4,<8" "pytest>=9,<10" "pytest-timeout>=2.4,<3" \
        "nbval>=0.11,<0.12"
    installed > "$OUT/hosted-final.txt"
    if ! diff -u "$OUT/hosted-before.txt" "$OUT/hosted-final.txt" >&2; then
        echo "The runner's tools changed the hosted runtime's packages (above); the tier would not test them." >&2
        exit 1
    fi
    printf '%s\n' "$want" > "$STAMP"
fi

install_s=$(( $(date +%s) - start ))
echo "hosted: every Chinese notebook in smoke mode with $("$VENV/bin/python" -c \
    'import tensorflow as tf, keras; print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")' 2>/dev/null)"
# One run per edition: the nbval tier ran the English notebooks with the course's versions, oneDNN off; the Chinese
# ones run here, into CI_OUT-zh (the code is the same).
status=0
COURSE_OFFLINE=1 COURSE_CI_OUT="$PWD/$CI_OUT" "$VENV/bin/python" -m pytest tests/tiers/test_course_run.py \
    -m "notebook and not browser" -p no:cacheprovider || status=$?
echo "hosted: installs $install_s s (0 when $VENV was up to date), notebooks and checks $(( $(date +%s) - start - install_s )) s"
exit $status
