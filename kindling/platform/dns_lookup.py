"""TXT lookups through the configured DNS resolvers (DNS_NAMESERVERS, else the system's)."""

from __future__ import annotations

import dns.exception
import dns.name
import dns.nameserver
import dns.rdtypes.ANY.TXT
import dns.resolver


class DnsUnavailable(Exception):
    """No resolver gave an answer in time (they failed, refused, or did not answer); the message says which."""


def txt_values(name: str, *, nameservers: tuple[tuple[str, int], ...], timeout: float) -> list[str]:
    """The TXT values at `name`, each record's strings joined as RFC 7208 §3.3 joins them; none
    when the name or its TXT records do not exist. CNAMEs are followed; nothing is cached, so a
    record just published is seen as soon as the resolvers see it."""
    try:
        resolver = dns.resolver.Resolver(configure=not nameservers)
    except dns.resolver.NoResolverConfiguration:
        raise DnsUnavailable("the system has no DNS resolver configured (set DNS_NAMESERVERS)") from None
    if nameservers:
        resolver.nameservers = [dns.nameserver.Do53Nameserver(address, port) for address, port in nameservers]
    try:
        answer = resolver.resolve(dns.name.from_text(name), "TXT", search=False, lifetime=timeout)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer, dns.resolver.YXDOMAIN):
        return []
    except dns.resolver.LifetimeTimeout:
        raise DnsUnavailable(f"the DNS resolvers did not answer within {timeout:g} s") from None
    except dns.resolver.NoNameservers:
        raise DnsUnavailable("every DNS resolver failed or refused the lookup") from None
    except dns.exception.DNSException as exc:
        raise DnsUnavailable(f"the DNS lookup failed ({type(exc).__name__})") from None
    return [
        b"".join(record.strings).decode("utf-8", "replace")
        for record in answer
        if isinstance(record, dns.rdtypes.ANY.TXT.TXT)
    ]
