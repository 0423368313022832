"""Units and explicit converters.

hieropt works internally in bytes, ns, GB/s per NPU per dimension and $. With 1 GB = 1e9 bytes,
1 GB/s = 1 byte/ns, so ``time_ns = bytes / bw_gbps``. Other conventions are converted only here.
"""

from __future__ import annotations

GB = 1e9
"""Bytes in one GB (decimal, as LIBRA and hieropt use)."""
GIB = 2.0**30
"""Bytes in one GiB (the ASTRA-sim 2.0 analytical backend's 'GB')."""
NS_PER_S = 1e9


def gbit_to_gbyte(gbit_per_s: float) -> float:
    """Convert Gb/s (vendor NIC ratings, bits) to GB/s (bytes): divide by 8."""
    return gbit_per_s / 8.0


def gbps_decimal_to_binary(gbps: float) -> float:
    """Convert GB/s with 1 GB = 1e9 bytes to 'GB/s' with 1 GB = 2^30 bytes (ASTRA-sim 2.0 analytical)."""
    return gbps * GB / GIB


def gbps_binary_to_decimal(gib_per_s: float) -> float:
    """Inverse of :func:`gbps_decimal_to_binary`."""
    return gib_per_s * GIB / GB
