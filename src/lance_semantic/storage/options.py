"""``storage_options`` and the environment read as pylance 14 reads them (layer L3).

pylance hands its options to the Rust ``object_store`` crate after a few rules of its own;
obstore wraps the same crate but takes a different shape (store keys in ``config``, HTTP
client keys in ``client_options``, booleans as booleans), and panics on an HTTP client key
in ``config``. This module turns pylance-style options into obstore's, by pylance's rules
(each checked against pylance 14 and a local S3 server):

* every value is a ``str``; anything else is refused (pylance: ``TypeError``);
* keys are case-insensitive, and a key no store knows is ignored;
* the S3 keys have aliases (``aws_endpoint`` = ``aws_endpoint_url`` = ``endpoint`` =
  ``endpoint_url``; ``aws_region`` = ``region``; ...), and the HTTP client keys
  (``allow_http``, ``timeout``, ...) may carry an ``aws_`` prefix (``aws_allow_http``);
* every environment variable whose lower-cased name is such a key fills in a key the options
  leave out: ``AWS_ENDPOINT``, ``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_S3``, ``AWS_REGION``,
  ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ... and, as in
  pylance, the same names without ``AWS_`` (``ENDPOINT``, ``REGION``, ``TOKEN``);
* ``AWS_ALLOW_HTTP`` in the environment overrides the ``allow_http`` option; plain HTTP is
  allowed when any option whose name contains ``allow_http`` is true (``1``, ``true``,
  ``yes``, ``on``, ``y``, any case; a client key whose value is no boolean is an error);
* ``aws_endpoint_url_s3`` wins over the other endpoint keys; with an endpoint and no region,
  the region is ``AWS_DEFAULT_REGION`` or ``us-west-2`` (pylance's default, where obstore's
  is ``us-east-1``);
* an endpoint that is no URL of a server (``localhost:9000``, a space, no host, a port past
  65535) is refused here, naming the option or variable: pylance 14 panics on it;
* requests are retried ``client_max_retries`` times (3) for ``client_retry_timeout``
  seconds (180); ``OBJECT_STORE_CLIENT_MAX_RETRIES`` / ``_RETRY_TIMEOUT`` override them.

Not modelled: AWS profiles (``AWS_PROFILE``, ``~/.aws/``), and the bucket-region lookup
pylance makes for an AWS bucket given without region or endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..errors import InvalidStorageOptionError

__all__ = ["StoreSettings", "check_values", "store_settings", "relevant_environment"]

#: S3 keys by the name obstore takes, with the other spellings pylance accepts (a key
#: ``aws_x`` not listed here is also spelt ``x``)
_S3_ALIASES: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("access_key_id",),
    "aws_secret_access_key": ("secret_access_key",),
    "aws_default_region": ("default_region",),
    "aws_region": ("region",),
    "aws_bucket": ("aws_bucket_name", "bucket_name", "bucket"),
    "aws_endpoint": ("aws_endpoint_url", "endpoint_url", "endpoint"),
    "aws_endpoint_url_s3": (),
    "aws_session_token": ("aws_token", "session_token", "token"),
    "aws_endpoint_url_sts": ("endpoint_url_sts",),
}
_S3_KEYS = (
    *_S3_ALIASES,
    "aws_virtual_hosted_style_request",
    "aws_s3_express",
    "aws_imdsv1_fallback",
    "aws_metadata_endpoint",
    "aws_unsigned_payload",
    "aws_checksum_algorithm",
    "aws_container_credentials_relative_uri",
    "aws_container_credentials_full_uri",
    "aws_container_authorization_token_file",
    "aws_web_identity_token_file",
    "aws_role_arn",
    "aws_role_session_name",
    "aws_skip_signature",
    "aws_copy_if_not_exists",
    "aws_conditional_put",
    "aws_disable_tagging",
    "aws_disable_bulk_delete",
    "aws_request_payer",
    "aws_server_side_encryption",
    "aws_sse_kms_key_id",
    "aws_sse_bucket_key_enabled",
    "aws_sse_customer_key_base64",
)

#: the HTTP client's keys (obstore's ``client_options``), and which of them are booleans
_CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "default_content_type",
        "http1_only",
        "http2_only",
        "http2_keep_alive_interval",
        "http2_keep_alive_timeout",
        "http2_keep_alive_while_idle",
        "http2_max_frame_size",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "randomize_addresses",
        "read_timeout",
        "timeout",
        "user_agent",
    }
)
_BOOLEAN_CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "http1_only",
        "http2_only",
        "http2_keep_alive_while_idle",
        "randomize_addresses",
    }
)

#: every spelling of an S3 or client key -> ("s3" | "client", the name obstore takes)
_SPELLINGS: dict[str, tuple[str, str]] = {}
for _key in _S3_KEYS:
    for _spelling in (_key, *_S3_ALIASES.get(_key, (_key[4:],))):
        _SPELLINGS[_spelling] = ("s3", _key)
for _key in _CLIENT_KEYS:
    _SPELLINGS[_key] = _SPELLINGS[f"aws_{_key}"] = ("client", _key)

_TRUE = frozenset({"1", "true", "on", "yes", "y"})
_FALSE = frozenset({"0", "false", "off", "no", "n"})

#: environment variables that replace the ``allow_http`` option (the last one set wins)
_ALLOW_HTTP_ENV = ("AZURE_STORAGE_ALLOW_HTTP", "AZURE_STORAGE_USE_HTTP", "AWS_ALLOW_HTTP")
_RETRIES_ENV = "OBJECT_STORE_CLIENT_MAX_RETRIES"
_RETRY_TIMEOUT_ENV = "OBJECT_STORE_CLIENT_RETRY_TIMEOUT"
_DEFAULT_RETRIES = 3
_DEFAULT_RETRY_TIMEOUT = 180
#: an endpoint that HTTP requests can be made to (pylance 14 panics on any other: a space
#: or a letter that is not ASCII anywhere, no ``scheme://``, no host, a port past 65535)
_ENDPOINT = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://"
    r"(?:[^@/?#\s\\]*@)?"
    r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=]+)"
    r"(?::(?:6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[0-5]?\d{0,4}))?"
    r"(?:[/?#][\x21-\x5b\x5d-\x7e]*)?"
)
#: pylance's region for a custom endpoint when none is configured
_DEFAULT_ENDPOINT_REGION = "us-west-2"


def check_values(options: Mapping[Any, Any]) -> dict[str, str]:
    """``options`` as a ``dict[str, str]``; a key or value of another type is an
    :class:`~lance_semantic.errors.InvalidStorageOptionError` (pylance 14 refuses them with
    a ``TypeError``, ``True`` included).

    >>> check_values({"region": "us-east-1"})
    {'region': 'us-east-1'}
    >>> check_values({"allow_http": True})
    Traceback (most recent call last):
    ...
    lance_semantic.errors.InvalidStorageOptionError: invalid storage option 'allow_http' = \
True: the value must be a str, not bool (pylance takes strings: 'true')
    """
    out: dict[str, str] = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise InvalidStorageOptionError(
                None, repr(key), f"a key must be a str, not {type(key).__name__}"
            )
        if not isinstance(value, str):
            hint = f"'{str(value).lower()}'" if isinstance(value, bool) else "a str"
            raise InvalidStorageOptionError(
                key,
                repr(value),
                f"the value must be a str, not {type(value).__name__} (pylance takes "
                f"strings: {hint})",
            )
        out[key] = value
    return out


def _boolean(key: str, value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise InvalidStorageOptionError(
        key, repr(value), "not a boolean (true/false, 1/0, yes/no, on/off, y/n)"
    )


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """What obstore is given for one store: ``config`` (store keys), ``client`` (HTTP
    client keys) and the retry policy, each hashable (a client cache key)."""

    config: tuple[tuple[str, str], ...]
    client: tuple[tuple[str, str | bool], ...]
    max_retries: int
    retry_timeout: int

    def retry_config(self) -> dict[str, Any]:
        """obstore's ``retry_config``."""
        return {
            "max_retries": self.max_retries,
            "retry_timeout": timedelta(seconds=self.retry_timeout),
        }


def _count(raw: str | None, default: int) -> int:
    """A non-negative integer option; anything else gives ``default`` (as pylance)."""
    try:
        number = int(raw) if raw is not None else default
    except ValueError:
        return default
    return number if number >= 0 else default


def store_settings(
    scheme: str, options: Mapping[str, str], environ: Mapping[str, str]
) -> StoreSettings:
    """obstore's configuration of a ``scheme`` store for pylance-style ``options`` and the
    environment ``environ`` (the module docstring has the rules; S3 keys are the modelled
    ones, other stores get the client keys split off and the rest as given).

    >>> s = store_settings("s3", {"Endpoint": "http://localhost:9000"}, {"AWS_ALLOW_HTTP": "1"})
    >>> s.config
    (('aws_endpoint', 'http://localhost:9000'), ('aws_region', 'us-west-2'))
    >>> s.client
    (('allow_http', True),)
    """
    lowered = {key.lower(): value for key, value in options.items()}
    spelt = {key.lower(): key for key in options}
    s3 = scheme == "s3"
    config: dict[str, str] = {}
    client: dict[str, str | bool] = {}
    #: where each S3 key's value came from (the option as spelt, or the variable)
    origin: dict[str, str] = {}
    for key, value in lowered.items():
        if s3:
            kind, name = _SPELLINGS.get(key, (None, key))
            if kind == "client":
                client[name] = value
            elif kind == "s3":
                config[name] = value
                origin[name] = spelt[key]
            # else a key the S3 store does not know: ignored, as in pylance
            continue
        bare = key.split("_", 1)[1] if key.startswith(("google_", "azure_")) else key
        if bare in _CLIENT_KEYS:
            client[bare] = value
        else:
            config[key] = value
    if s3:
        for var, value in environ.items():
            kind, name = _SPELLINGS.get(var.lower(), (None, ""))
            if kind == "s3" and name not in config:
                config[name] = value
                origin[name] = var
            elif kind == "client" and name not in client and name != "allow_http":
                client[name] = value
        if "aws_endpoint_url_s3" in config:
            origin["aws_endpoint"] = origin["aws_endpoint_url_s3"]
        _resolve_s3(config, environ)
        endpoint = config.get("aws_endpoint")
        if endpoint is not None and not _ENDPOINT.fullmatch(endpoint):
            raise InvalidStorageOptionError(
                origin["aws_endpoint"],
                repr(endpoint),
                "not a URL of a server: scheme://host[:port][/path] (pylance 14 panics on it)",
            )
    allow = _allow_http(lowered, environ)
    client.pop("allow_http", None)
    for key in sorted(_BOOLEAN_CLIENT_KEYS.intersection(client)):
        client[key] = _boolean(key, str(client[key]))
    if allow is not None:
        client["allow_http"] = allow
    retries = environ.get(_RETRIES_ENV, lowered.get("client_max_retries"))
    timeout = environ.get(_RETRY_TIMEOUT_ENV, lowered.get("client_retry_timeout"))
    return StoreSettings(
        tuple(sorted(config.items())),
        tuple(sorted(client.items())),
        _count(retries, _DEFAULT_RETRIES),
        _count(timeout, _DEFAULT_RETRY_TIMEOUT),
    )


def _resolve_s3(config: dict[str, str], environ: Mapping[str, str]) -> None:
    """The endpoint and region pylance ends up with; the bucket comes from the URI."""
    config.pop("aws_bucket", None)
    s3_endpoint = config.pop("aws_endpoint_url_s3", None)
    if s3_endpoint is not None:
        config["aws_endpoint"] = s3_endpoint
    if "aws_region" not in config and "aws_endpoint" in config:
        region = environ.get("AWS_DEFAULT_REGION") or _DEFAULT_ENDPOINT_REGION
        config["aws_region"] = region
        config.pop("aws_default_region", None)


def _allow_http(options: Mapping[str, str], environ: Mapping[str, str]) -> bool | None:
    """Whether plain HTTP is allowed (None: nothing says). ``AWS_ALLOW_HTTP`` (or Azure's
    variables) replaces the option; else any option naming ``allow_http`` that is true
    allows it (a real client key whose value is no boolean is refused)."""
    said = [(var, environ[var]) for var in _ALLOW_HTTP_ENV if var in environ][-1:]
    if said:
        pairs = [("allow_http", said[0][1])]
    else:
        pairs = [(k, v) for k, v in options.items() if "allow_http" in k]
        if not pairs and "ALLOW_HTTP" in environ:
            pairs = [("allow_http", environ["ALLOW_HTTP"])]
    if not pairs:
        return None
    allowed = False
    for key, value in pairs:
        if _SPELLINGS.get(key) == ("client", "allow_http"):
            allowed |= _boolean(key, value)
        else:
            allowed |= value.strip().lower() in _TRUE
    return allowed


def relevant_environment(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of ``environ`` that configure an object store (pylance's or ours):
    part of what a cached client or file session is kept by."""
    return tuple(
        sorted(
            (k, v)
            for k, v in environ.items()
            if k.startswith(("AWS_", "GOOGLE_", "AZURE_", "OBJECT_STORE_"))
            or k.lower() in _SPELLINGS
        )
    )
