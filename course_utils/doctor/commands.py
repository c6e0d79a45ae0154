"""The shell commands of a recommendation: the pip requirement for a tested TensorFlow build, and the venv, pip and
verify lines around it (apart from ``recommend``: ``routes`` and the doctor's rules build the same lines)."""

from __future__ import annotations

from course_utils.doctor.versions import Build, load, parse_version

VERIFY = "python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\""


def tensorflow_requirement(build: Build, platform: str, gpu: bool) -> str:
    """``tensorflow[and-cuda]==2.21.*`` for a GPU build that has a working extra, the conda recipe's requirement on
    native Windows, else the plain wheel."""
    table = load()
    if platform == "windows" and gpu and build.minor == table.rule("windows-native-gpu-last")["last"]:
        return table.rule("windows-native-recipe")["requirement"]
    and_cuda = gpu and platform != "windows" and build.minor not in table.rule("and-cuda-uninstallable")["tensorflow"]
    and_cuda = and_cuda and parse_version(build.tensorflow) >= parse_version(table.rule("and-cuda")["since"])
    return f"tensorflow[and-cuda]=={build.minor}.*" if and_cuda else f"tensorflow=={build.minor}.*"


def pip_install(requirement: str, tensorflow: str) -> str:
    """The pip command for a TensorFlow requirement: ``pip install "tensorflow<2.11" "numpy<2"`` for a TensorFlow
    built against NumPy 1 (``tensorflow`` is its release, ``"2.10"``), else without the pin."""
    pin = load().numpy_pin(tensorflow)
    return f'pip install "{requirement}"' + (f' "{pin}"' if pin else "")


def in_venv(platform: str, python: str | None, *installs: str) -> list[str]:
    """Create and activate a virtual environment ``tf`` (with ``python``, else any Python 3), upgrade pip, run the
    ``installs`` and verify."""
    if platform == "windows":
        venv = [f"py -{python} -m venv tf" if python else "py -3 -m venv tf", r"tf\Scripts\activate"]
        return [*venv, "python -m pip install --upgrade pip", *installs, VERIFY]
    venv = [f"python{python or '3'} -m venv tf", "source tf/bin/activate"]
    return [*venv, "pip install --upgrade pip", *installs, VERIFY]


def install_build(build: Build, requirement: str) -> list[str]:
    """The pip commands for a tested build: the requirement (with its NumPy pin), then TensorBoard where the build no
    longer brings it."""
    install = [pip_install(requirement, build.minor)]
    if parse_version(build.tensorflow) >= parse_version(load().rule("tensorboard-separate")["since"]):
        install.append(f'pip install "tensorboard=={build.minor}.*"')
    return install


def conda_recipe(python: str, install: str) -> list[str]:
    """Native Windows's GPU route: the official conda recipe (CUDA and cuDNN from conda-forge) in an environment
    ``tf`` of ``python``, then ``install`` (the pip command for the TensorFlow)."""
    recipe = load().rule("windows-native-recipe")["conda"]
    return [f"conda create --name tf python={python}", "conda activate tf", recipe, "pip install --upgrade pip",
            install, VERIFY]
