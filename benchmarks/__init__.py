"""wink's benchmarks: cost over the raw SDKs, import time, behaviour under throttling.

Run with `nox -s bench` or `python -m benchmarks [--quick] [--only NAME ...]`. Every figure
is a ratio against a baseline measured in the same run, interleaved with it, as the median
of several repetitions (min and max shown). Traffic goes to the wink emulator, run in its
own process on 127.0.0.1 so that its CPU does not share the client's interpreter.
"""
