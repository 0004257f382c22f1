"""Keeps an aiortc peer on the loopback interface, so the test peers never send to another address.

aioice leaves 127.0.0.1 out of its host candidates and aiortc asks a public STUN server by
default; importing this module makes every aiortc connection of the process gather exactly one
host candidate, 127.0.0.1 (IPv4 only), and `configuration()` gives an RTCConfiguration without
ICE servers. Import it before any RTCPeerConnection is made.
"""

import aioice.ice
from aiortc import RTCConfiguration


def _loopback_only(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    return ["127.0.0.1"] if use_ipv4 else []


aioice.ice.get_host_addresses = _loopback_only


def configuration() -> RTCConfiguration:
    """No STUN or TURN server: host candidates on 127.0.0.1 only."""
    return RTCConfiguration(iceServers=[])
