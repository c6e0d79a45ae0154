#!/bin/sh
# Create or refresh the course's environment - what `make venv` does, and every make target that needs .venv.
#
#   PYTHON=python3 PYTHON_GIVEN= VENV=.venv EXTRAS=dev [UV=uv] sh scripts/venv.sh   (the Makefile passes these)
#   sh scripts/venv.sh --accepted                                         (prints the Pythons the course accepts)
#
# PYTHON: the Python to make the environment with; PYTHON_GIVEN: non-empty when PYTHON was given (on make's
# command line or in the environment), so the environment must have that Python; VENV: its folder; EXTRAS:
# the pyproject.toml extras asked for, comma-separated (GPU=1 adds gpu).
#
# The stamp $VENV/.course-installed records what was installed - "python 3.12" and "extras dev,gpu" - and the
# environment is up to date when that is what is wanted now and the stamp is newer than pyproject.toml and
# constraints/course.txt (the exact versions installed: pip install -c constraints/course.txt).
# Otherwise:
# - a new environment when there is none, when PYTHON names another Python than the environment's, or when
#   the environment's Python is one the course does not accept (requires-python in pyproject.toml) or not the
#   one it was made with (a Python that stops here with a message saying which Pythons work and how to get one);
# - then pip install -c constraints/course.txt -e ".[extras]" with the extras asked for plus those installed
#   before: GPU=1 once is enough. UV=PATH (optional, CI sets it): uv at PATH installs the same instead of pip.
set -eu

STAMP_NAME=.course-installed

spec=$(sed -n 's/^requires-python *= *"\([^"]*\)".*/\1/p' pyproject.toml)
min=$(printf '%s\n' "$spec" | sed -n 's/.*>= *3\.\([0-9][0-9]*\).*/\1/p')
end=$(printf '%s\n' "$spec" | sed -n 's/.*< *3\.\([0-9][0-9]*\).*/\1/p')
if [ -z "$min" ] || [ -z "$end" ]; then
    echo "scripts/venv.sh reads requires-python as \">=3.N,<3.M\"; pyproject.toml has \"$spec\"" >&2
    exit 2
fi
accepted="3.$min-3.$((end - 1))"
if [ "${1:-}" = --accepted ]; then
    echo "$accepted"
    exit 0
fi

# One at a time: make test's two lanes may both ask (flock, util-linux, where there is one; a second call waits).
if [ -z "${VENV_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
    mkdir -p build
    VENV_LOCKED=1 exec flock build/venv.lock sh "$0" "$@"
fi

PYTHON=${PYTHON:-python3}
PYTHON_GIVEN=${PYTHON_GIVEN:-}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-dev}
STAMP=$VENV/$STAMP_NAME

version_of() {  # "3.12" for a Python that runs, nothing otherwise
    "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

supported() {
    case "$1" in
        3.*) minor=${1#3.} ;;
        *) return 1 ;;
    esac
    case "$minor" in
        '' | *[!0-9]*) return 1 ;;
    esac
    [ "$minor" -ge "$min" ] && [ "$minor" -lt "$end" ]
}

refuse() {  # $1: what is wrong with the Python at hand
    cat >&2 <<EOF
The course needs Python $accepted (requires-python in pyproject.toml): $1.
Install one of those and name it, for example:  make venv PYTHON=python3.12
On Ubuntu 22.04, whose Python is 3.10, docs/wsl2.md (step 6) shows how to get one the course accepts.
EOF
    exit 1
}

have=""  # the Python of the environment there is, if it runs
if [ -x "$VENV/bin/python" ]; then
    have=$(version_of "$VENV/bin/python")
fi
recorded_python=""
recorded_extras=""
if [ -s "$STAMP" ]; then
    recorded_python=$(sed -n 's/^python //p' "$STAMP")
    recorded_extras=$(sed -n 's/^extras //p' "$STAMP")
elif [ -f "$STAMP" ]; then  # empty: made when make only touched the stamp, after installing .[dev]
    recorded_python=$have
    recorded_extras=dev
fi

new=""  # why a new environment is needed; empty: keep this one
if [ -z "$have" ]; then
    if [ -e "$VENV" ]; then new="$VENV has no Python that runs"; else new="there is no $VENV yet"; fi
elif [ -n "$PYTHON_GIVEN" ] && [ "$(version_of "$PYTHON")" != "$have" ]; then
    new="$VENV has Python $have, and PYTHON=$PYTHON was asked for"
elif ! supported "$have"; then
    new="$VENV was made with Python $have, which the course does not accept"
elif [ -n "$recorded_python" ] && [ "$recorded_python" != "$have" ]; then
    new="$VENV was made with Python $recorded_python but now runs Python $have"
fi

if [ -n "$new" ]; then
    version=$(version_of "$PYTHON")
    if [ -z "$version" ]; then
        refuse "$new, and $PYTHON is not a Python that runs here"
    fi
    if ! supported "$version"; then
        refuse "$new, and $PYTHON is Python $version"
    fi
    if [ -e "$VENV" ]; then
        if [ ! -f "$VENV/pyvenv.cfg" ]; then
            echo "$new; $VENV is not a virtual environment (no pyvenv.cfg), so it is left alone: move it away." >&2
            exit 1
        fi
        echo "$new: making it again with $PYTHON (Python $version)"
        rm -rf "$VENV"
    fi
    if [ -n "${UV:-}" ]; then  # uv puts pip in below, the newest: ensurepip's copy took 3.5 s more on 2 cores
        "$PYTHON" -m venv "$VENV" --without-pip
    else
        "$PYTHON" -m venv "$VENV"
    fi
    have=$version
fi

# Two packages: course-utils (pyproject.toml: the student's; extras lab, gpu, profile) and the tools, course-tools
# (tools/pyproject.toml; extras class, site, dev). EXTRAS names extras of either; "tools" means the tools alone.
tools_extra() {  # is $1 an extra of the tools package (or the tools themselves)?
    [ "$1" = tools ] || grep -q "^$1 = \[" tools/pyproject.toml
}
included_by() {  # the extras that extra $1 brings along: "course-utils[a,b]" / "course-tools[a,b]" in its list
    file=pyproject.toml
    if tools_extra "$1"; then
        file=tools/pyproject.toml
        [ "$1" = tools ] || echo tools
    fi
    awk -v name="$1" '
        $0 ~ "^" name " = \\[" { inside = 1 }
        inside && match($0, /course-(utils|tools)\[[^]]*\]/) { print substr($0, RSTART + 13, RLENGTH - 14) }
        inside && /\][[:space:]]*$/ { inside = 0 }' "$file" | tr ',' '\n'
}
# An extra asked for that an installed one brings along is there already: make lab after make test installs nothing.
covered=$(for extra in $(printf '%s' "$recorded_extras" | tr ',' ' '); do included_by "$extra"; done)
asked=""
for extra in $(printf '%s' "$EXTRAS" | tr ',' ' '); do
    printf '%s\n' "$covered" | grep -qxF "$extra" || asked="$asked,$extra"
done
# the extras asked for plus those installed before, sorted, once each
extras=$(printf '%s,%s\n' "$asked" "$recorded_extras" | tr ',' '\n' | sed '/^ *$/d' | sort -u | paste -sd, -)
want=$(printf 'python %s\nextras %s' "$have" "$extras")
if [ -z "$new" ] && [ -f "$STAMP" ] && [ ! pyproject.toml -nt "$STAMP" ] &&
    [ ! constraints/course.txt -nt "$STAMP" ] && [ ! tools/pyproject.toml -nt "$STAMP" ] && [ "$recorded_python" = "$have" ] &&
    [ "$recorded_extras" = "$extras" ]; then
    [ "$(cat "$STAMP")" = "$want" ] || printf '%s\n' "$want" > "$STAMP"  # an empty stamp gets its content
    exit 0  # up to date
fi

# What to install: the student's package with its extras; the tools' package too when an extra of it was asked for.
own="" tools="" with_tools=""
for extra in $(printf '%s' "$extras" | tr ',' ' '); do
    if tools_extra "$extra"; then
        with_tools=1
        [ "$extra" = tools ] || tools="$tools,$extra"
    else
        own="$own,$extra"
    fi
done
set -- -e ".${own:+[${own#,}]}"
[ -z "$with_tools" ] || set -- "$@" -e "./tools${tools:+[${tools#,}]}"
echo "Installing the course into $VENV: Python $have, extras $extras (a few minutes the first time)"
if [ -n "${UV:-}" ]; then  # the same pins, installed by uv: several times faster than pip (CI sets UV)
    # --compile-bytecode: write the .pyc files as pip does. uv skips them by default, and where PYTHONDONTWRITEBYTECODE
    # is set Python never writes them either, so every process compiled TensorFlow anew (import: 8.7 s of CPU, not 4.2).
    "$UV" pip install --quiet --compile-bytecode --python "$VENV/bin/python" -c constraints/course.txt "$@"
    # pip too, for the commands a student types into the environment; only where it has none (a venv made above)
    "$VENV/bin/python" -c 'import pip' 2>/dev/null ||
        "$UV" pip install --quiet --python "$VENV/bin/python" pip
else
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -c constraints/course.txt "$@"
fi
printf '%s\n' "$want" > "$STAMP"
tf=$("$VENV/bin/python" -c 'import tensorflow as tf; print("TensorFlow", tf.__version__)' 2>/dev/null || true)
echo "Environment ready: $VENV (${tf:-TensorFlow not importable}; Python $have, extras $extras)"
