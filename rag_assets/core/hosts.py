"""Whether a host only reaches this machine: the one rule of the contextual chunker's
endpoint check and of the server's exposure check (`trecho serve --host`), in a module
light enough for a server to import before it listens."""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """Whether a host name or address only reaches this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
