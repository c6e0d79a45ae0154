"""The core band: what every other part of the package is built on; it imports nothing above it.

Each concept lives here once (CONTRIBUTING.md, "Layout", lists the modules). Importing them is cheap: none
imports TensorFlow, and psutil is imported where it is used.
"""
