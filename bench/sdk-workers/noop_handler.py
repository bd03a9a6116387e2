"""The Python worker's handler for bench/sdk-workers: does nothing, so the SDK is what is measured."""


def noop(job):
    return None
