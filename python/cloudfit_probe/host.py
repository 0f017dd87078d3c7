"""The machine a CPU run reports in its `device` event: the processor's
model name and the memory size, from /proc (Linux). No PyTorch needed:
examples/engine_twin.py (the NumPy probe's helper) uses it too."""


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU"


def memory_gib():
    """Physical memory in GiB, 0 when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0
