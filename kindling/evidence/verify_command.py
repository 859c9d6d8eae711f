"""`kindling evidence verify`: checks a bundle with no server and no database."""

from __future__ import annotations

import json
import sys

from kindling.evidence.chain import BundleError, decode_public_key, verify_bundle


def verify_bundle_file(path: str, public_keys: list[str]) -> int:
    """Print what the bundle holds and whether it verifies; 0 when it does, 1 when not, 2 for bad input."""
    try:
        keys = [decode_public_key(key) for key in public_keys]
    except ValueError as exc:
        print(f"kindling: --public-key: {exc}", file=sys.stderr)
        return 2
    try:
        with open(path, "rb") as file:
            bundle = json.load(file)
    except (OSError, ValueError) as exc:
        print(f"kindling: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(bundle, dict):
        print(f"kindling: {path} is not an evidence bundle", file=sys.stderr)
        return 1
    try:
        check = verify_bundle(bundle, keys)
    except BundleError as exc:
        print(f"NOT VERIFIED: {exc}", file=sys.stderr)
        return 1
    head = bundle["head"]
    signature = (
        f"signature by key {bundle['signature']['keyId']} verified"
        if keys
        else f"signature by key {bundle['signature'].get('keyId')} NOT checked (give --public-key)"
    )
    print(f"verified: {check.events} events of organization {bundle['organizationId']}, head {head['seq']}:{head['hash']}; {signature}")
    return 0
