"""SSRF guard: schemes, metadata hosts, link-local and metadata addresses,
checked on resolved addresses (names resolved through an injected resolver,
so nothing leaves the machine)."""

from __future__ import annotations

import socket

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from aioeval.errors import EndpointError
from aioeval.generation.netguard import GuardedResolver, address_problem, check_endpoint


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("127.0.0.1", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("192.168.1.10", False),
        ("8.8.8.8", False),
        ("169.254.169.254", True),
        ("169.254.0.1", True),
        ("169.254.170.2", True),
        ("100.100.100.200", True),
        ("fd00:ec2::254", True),
        ("fe80::1", True),
        ("fe80::1%eth0", True),
        ("::ffff:169.254.169.254", True),
        ("not-an-ip", True),
    ],
)
def test_address_table(address: str, refused: bool) -> None:
    assert (address_problem(address) is not None) is refused


FAKE_DNS = {
    "evil.example": ["93.184.216.34", "169.254.169.254"],
    "good.example": ["127.0.0.1"],
    "v6.example": ["fe80::2"],
}


async def fake_resolve(host: str, port: int) -> list[str]:
    if host not in FAKE_DNS:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return FAKE_DNS[host]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://127.0.0.1/v1", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http:///v1", "no host"),
        ("http://user:pw@127.0.0.1/v1", "credentials in the URL"),
        ("http://169.254.169.254/latest/meta-data", "metadata address"),
        ("http://[fd00:ec2::254]/", "metadata address"),
        ("http://100.100.100.200/", "metadata address"),
        ("http://169.254.1.1:8000/v1", "link-local"),
        ("http://[fe80::1]:8000/v1", "link-local"),
        ("http://metadata.google.internal/computeMetadata/v1", "metadata host"),
        ("http://METADATA.GOOGLE.INTERNAL./", "metadata host"),
        ("http://evil.example/v1", "evil.example resolves to 169.254.169.254"),
        ("http://v6.example/v1", "link-local"),
        ("http://nowhere.invalid/v1", "cannot resolve"),
        ("http://127.0.0.1:99999/v1", "invalid URL"),
    ],
)
async def test_refused(url: str, message: str) -> None:
    with pytest.raises(EndpointError) as info:
        await check_endpoint(url, resolve=fake_resolve)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "https://[::1]:8443/v1",
        "http://good.example/v1",
        "http://10.0.0.5/v1",
    ],
)
async def test_allowed(url: str) -> None:
    await check_endpoint(url, resolve=fake_resolve)


@pytest.mark.anyio
async def test_localhost_resolves_with_the_system_resolver() -> None:
    await check_endpoint("http://localhost:8000/v1")


class _Rebinding(AbstractResolver):
    """Answers a metadata address, as a rebinding DNS server would mid-run."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host="169.254.169.254",
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=0,
            )
        ]

    async def close(self) -> None:
        pass


@pytest.mark.anyio
async def test_guarded_resolver_refuses_rebinding_at_connect_time() -> None:
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(_Rebinding()))
    async with aiohttp.ClientSession(connector=connector) as session:
        with pytest.raises(aiohttp.ClientConnectorError) as info:
            async with session.get("http://innocent.example:9/v1/models"):
                pass
    assert "forbidden" in str(info.value.os_error)
