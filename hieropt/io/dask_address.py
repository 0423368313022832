"""The address of a Dask scheduler (``--dask``), checked before any connection is tried: a malformed
address is one line naming the option and the fix, not a traceback from deep inside
``distributed``."""

from __future__ import annotations

import re

from ..errors import InputError

__all__ = ["DASK_SCHEMES", "check_dask_address"]

DASK_SCHEMES = ("tcp", "tls")
"""The schemes a scheduler on another process or host is reached by (``inproc://`` is the same
process only; ``ucx://`` needs UCX, which hieropt does not install)."""

_ADDRESS = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+)"
    r":(?P<port>[0-9]+)$"
)

_FIX = (
    "give the scheduler's address as tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786), or "
    "tls://HOST:PORT with TLS set up"
)


def check_dask_address(address: str, source: str = "dask") -> str:
    """``address`` (``HOST:PORT``, ``tcp://HOST:PORT`` or ``tls://HOST:PORT``; HOST a name, an IPv4
    address or an IPv6 address in brackets; PORT 1-65535) with its scheme written out (``tcp://``
    when none is given).

    A ``tls://`` address needs the client's certificates in Dask's configuration
    (``distributed.comm.tls.ca-file``, ``distributed.comm.tls.client.cert``; see docs/dask.md);
    without them ``distributed`` fails with a TypeError deep in its connector, so it is refused
    here.

    Raises:
        InputError: naming ``source`` (the library argument ``dask``; the command line shows
            ``--dask``), the address, what is wrong and the fix.
    """
    text = address.strip()
    if not text:
        raise InputError(source, None, "the scheduler address is empty", _FIX)
    scheme, _, rest = text.rpartition("://")
    scheme = scheme.lower() or "tcp"
    if scheme not in DASK_SCHEMES:
        why = (
            "an in-process address names a scheduler inside this same process, not one to "
            "connect to"
            if scheme == "inproc"
            else f"the scheme {scheme}:// is not supported"
        )
        raise InputError(source, repr(address), why, _FIX)
    m = _ADDRESS.match(text)
    if m is None:
        what = (
            "no HOST:PORT after the scheme"
            if not rest
            else "not a scheduler address (want HOST:PORT)"
        )
        raise InputError(source, repr(address), what, _FIX)
    port = int(m.group("port"))
    if not 1 <= port <= 65535:
        raise InputError(source, repr(address), f"port {port} is not in 1-65535", _FIX)
    if scheme == "tls" and not _tls_configured():
        raise InputError(
            source,
            repr(address),
            "a tls:// address needs the client's certificates, and Dask's "
            "configuration names none (distributed.comm.tls.ca-file, .client.cert, .client.key)",
            "set them (DASK_DISTRIBUTED__COMM__TLS__CA_FILE etc., see docs/dask.md) or use tcp://",
        )
    return f"{scheme}://{m.group('host')}:{port}"


def _tls_configured() -> bool:
    """Whether Dask's configuration names a CA file and a client certificate (dask is imported
    here)."""
    try:
        import dask.config
    except ImportError:  # (reported by the executor: Dask is not installed)
        return True
    get = dask.config.get
    return bool(
        get("distributed.comm.tls.ca-file", None) and get("distributed.comm.tls.client.cert", None)
    )
