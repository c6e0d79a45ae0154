"""The note codes the doctor's recommendations give, for the tests that check them."""

# Every note code ``recommend()`` and ``routes()`` give, and what it means. A code whose text is a rule of
# versions.json (``table.rule(code)["text"]``) is named after that rule.
NOTE_CODES: dict[str, str] = {
    "python-unreadable": "the Python version given is not a version; any supported Python is assumed",
    "no-gpu-build-for-python": "no tested build supports the Python asked for; the commands use a tested Python",
    "python-limits-tensorflow": "the Python asked for gets an older TensorFlow than the newest tested one",
    "tested-python-range": "no Python was asked for: the Pythons the recommended build was tested with",
    "macos": "rule 'macos': no CUDA on macOS; TensorFlow, and the course, run on the CPU there",
    "macos-metal": "rule 'macos-metal': Apple's Metal plugin needs TF <= 2.18 and Python 3.9-3.12, in its own env",
    "macos-no-metal-for-python": "tensorflow-metal has no wheel for the Python asked for: no Metal GPU with it",
    "macos-intel": "rule 'macos-intel': TF 2.16 was the last release for Intel Macs",
    "windows-native-gpu-last": "rule 'windows-native-gpu-last', plus the build's tested CUDA, cuDNN and Python",
    "system-cuda-needed": "the build predates tensorflow[and-cuda]: CUDA and cuDNN must be installed on the system",
    "pip-symlink-step": "rule 'pip-symlink-step': the pip guide's symlink step if the GPU is still not found",
    "wsl2": "rule 'wsl2': the Windows build and Windows NVIDIA driver WSL2 needs",
    "wsl2-no-linux-driver": "rule 'wsl2-no-linux-driver': no Linux NVIDIA driver inside WSL2",
    "cpu-only-install": "no NVIDIA GPU on the machine: the CPU-only wheel",
    "numpy-2": "rule 'numpy-2': the commands pin numpy<2 for a TensorFlow built against NumPy 1",
    "keras-2-only": "rule 'keras-2-only': the TensorFlow offered (or its fallback) has Keras 2; the course needs 3",
    "gpu-too-old": "the GPU's generation is older than the newest builds cover: what still covers it, or what to do",
    "gpu-known-failure": "the GPU's generation is a known failure with the current wheels (issue threads)",
    "gpu-generation-unknown": "the GPU's name does not tell its generation: how to read its compute capability",
    "driver-unreadable": "the driver version given is not a version; the route's minimum is stated",
    "driver-minimum": "no driver version given: the minimum NVIDIA driver the route needs",
    "driver-too-old": "the driver given is older than the route needs; names the fallback build if one runs",
    "ptx-driver": "rule 'ptx-driver': a GPU covered only by the build's PTX needs a driver of the build's CUDA",
}
