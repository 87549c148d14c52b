"""Where a table location points, by pylance 14's rules (layer L3; pure, no IO).

pylance first tries the location as a URL (the WHATWG rules of Rust's ``url`` crate) and
takes it as a local path only when that fails. So:

* a location without a scheme (``t.lance``, ``/data/a b.lance``, ``./ab:t.lance``,
  ``1a:t.lance``) is a local path, taken literally: ``%20``, ``#``, ``?`` and ``:`` are
  characters of the name; relative paths are relative to the working directory;
* ``scheme:...`` is a URI, whatever follows: ``ab:t.lance`` names scheme ``ab``, for which
  pylance has no store (an error, here too);
* a ``file:`` URI is decoded: ``%XX`` escapes (``%20`` a space, ``%2F`` a ``/``), a ``\\``
  is a ``/``, ``?`` and ``#`` end the path (query, fragment), ``.`` and ``..`` segments (also
  spelt ``%2e``) are resolved, tabs and newlines are dropped, leading and trailing spaces
  trimmed; the host is ignored, and a host no URL may have (``file://h:80/...``) makes the
  whole string a local path again;
* object store URIs (``s3://bucket/key``) decode their key the same way; obstore parses
  them with the same crate, so :mod:`.remote_store` takes the key from there;
* a ``scheme://`` location whose authority is no URL's (a space, ``<``, ``^``, ``|``, ``[``
  or ``]`` in the bucket, a port that is not a number up to 65535, a user or a port without
  a host) is a local path too, whatever the scheme: pylance 14 writes ``s3://bk t/x`` to
  the directory ``./s3:/bk t/x``.

A path with control characters, or escapes that do not decode to UTF-8, is refused (pylance:
"Failed to parse path").
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

from ..errors import InvalidUriError, NotSupportedYetError

__all__ = ["Location", "parse_location", "REMOTE_SCHEMES"]

#: object store schemes this library serves, all through obstore (only ``s3`` is tested,
#: against SeaweedFS); pylance 14 has no store for ``s3a`` or ``abfs``
REMOTE_SCHEMES = ("s3", "gs", "az", "abfss")
#: schemes pylance 14 has a store for that this library does not serve
_LANCE_ONLY_SCHEMES = (
    "memory",
    "hf",
    "oss",
    "cos",
    "tos",
    "goosefs",
    "file+uring",
    "file-object-store",
    "shared-memory",
    "s3+ddb",
)

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
#: characters a URL parser trims from both ends, and drops anywhere
_TRIMMED = "".join(chr(c) for c in range(0x21))
_DROPPED = str.maketrans("", "", "\t\n\r")
#: characters no host of a file URL may hold (the whole string is then a local path)
_FORBIDDEN_HOST = frozenset(" #%/:<>?@[\\]^|")
#: characters no host of another URL may hold (WHATWG's forbidden host code points that can
#: be part of an authority: ``/``, ``?`` and ``#`` end it; tabs and newlines are dropped)
_FORBIDDEN_OPAQUE_HOST = frozenset(" <>[\\]^|:@\x00")
_AUTHORITY = re.compile(r"//([^/?#]*)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class Location:
    """A table location: ``scheme`` is ``"file"`` for the local file system, with ``path``
    the absolute local path; else an object store scheme, with ``path`` the URI as given."""

    scheme: str
    path: str

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"


def parse_location(uri: str) -> Location:
    """The location ``uri`` names, by pylance's rules (module docstring).

    >>> parse_location("file:///data/a%20b.lance?x#y")
    Location(scheme='file', path='/data/a b.lance')
    >>> parse_location("/data/a%20b#1.lance")
    Location(scheme='file', path='/data/a%20b#1.lance')
    >>> parse_location("s3://bucket/t.lance")
    Location(scheme='s3', path='s3://bucket/t.lance')
    >>> parse_location("ab:t.lance")
    Traceback (most recent call last):
    ...
    lance_semantic.errors.InvalidUriError: invalid table location 'ab:t.lance': no object \
store for the scheme 'ab' (a location with a scheme is a URI)
    """
    text = uri.strip(_TRIMMED).translate(_DROPPED)
    match = _SCHEME.match(text)
    if match is None:
        return _local(uri, uri)
    scheme = match.group(1).lower()
    rest = text[match.end() :]
    if scheme == "file":
        path = _file_url_path(uri, rest)
        return _local(uri, uri) if path is None else _local(uri, path)
    authority = _AUTHORITY.match(rest)
    if authority is not None and not _is_authority(authority.group(1)):
        return _local(uri, uri)  # no URL: a local path, as in pylance
    if scheme in REMOTE_SCHEMES:
        if not rest.startswith("//") or not re.match(r"//[^/?#]", rest):
            raise InvalidUriError(
                uri, f"an {scheme}:// URI names its bucket: {scheme}://bucket/path"
            )
        return Location(scheme, uri)
    if scheme in _LANCE_ONLY_SCHEMES:
        raise NotSupportedYetError(f"object store URI {scheme}://")
    raise InvalidUriError(
        uri, f"no object store for the scheme {scheme!r} (a location with a scheme is a URI)"
    )


def _local(uri: str, path: str) -> Location:
    if _CONTROL.search(path):
        raise InvalidUriError(uri, "the path holds control characters")
    return Location("file", os.path.abspath(path))


def _is_authority(authority: str) -> bool:
    """Whether ``authority`` (between ``scheme://`` and the path) is one a URL of a scheme
    other than ``file`` may have: ``[user[:password]@]host[:port]``, the host opaque (any
    character but the forbidden ones; ``%`` and non-ASCII letters are fine) or an IPv6
    address in brackets, the port a number up to 65535; no user or port without a host.

    >>> _is_authority("bucket"), _is_authority("u:p@b:9000"), _is_authority("")
    (True, True, True)
    >>> _is_authority("bk t"), _is_authority("b:x"), _is_authority("u@"), _is_authority("[zz]")
    (False, False, False, False)
    """
    credentials, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return False
        host, after = hostport[: end + 1], hostport[end + 1 :]
        if after and not after.startswith(":"):
            return False
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        port = after[1:] if after else None
    else:
        host, colon, port_text = hostport.partition(":")
        if _FORBIDDEN_OPAQUE_HOST.intersection(host):
            return False
        port = port_text if colon else None
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return False
    return bool(host) or not (at or port is not None)


def _file_url_path(uri: str, rest: str) -> str | None:
    """The decoded local path of the ``file:`` URL ``uri`` (``rest`` follows ``file:``), or
    None when the string is no URL (its host is not one a URL may have)."""
    rest = rest.replace("\\", "/")
    if rest.startswith("//"):
        host = re.match(r"[^/?#]*", rest[2:]).group(0)  # type: ignore[union-attr]
        rest = rest[2 + len(host) :]
        if re.fullmatch(r"[A-Za-z]:", host):  # "file://C:/x" is the path /C:/x
            rest = f"/{host}{rest}"
        elif not (host.startswith("[") and host.endswith("]")) and _FORBIDDEN_HOST.intersection(
            host
        ):
            return None
    path = _split_at(rest, "?#")[0]
    segments: list[str] = []
    parts = path.lstrip("/").split("/") if path.strip("/") else []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        dots = part.lower().replace("%2e", ".")
        if dots == "..":
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif dots == ".":
            if last:
                segments.append("")
        else:
            segments.append(part)
    raw = ("/" + "/".join(segments)).encode("utf-8")
    try:
        return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidUriError(uri, "its percent-escapes do not decode to UTF-8 text") from None


def _split_at(text: str, stops: str) -> tuple[str, str, str]:
    """``text`` cut at the first of ``stops``: (before, the stop or "", after)."""
    for i, c in enumerate(text):
        if c in stops:
            return text[:i], c, text[i + 1 :]
    return text, "", ""
