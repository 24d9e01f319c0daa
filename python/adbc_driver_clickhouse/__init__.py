"""An ADBC driver for ClickHouse over the native TCP protocol (chnative).

``connect(uri)`` returns a low-level :class:`adbc_driver_manager.AdbcDatabase`;
:mod:`adbc_driver_clickhouse.dbapi` gives a DB-API 2.0 connection on top of it.

The URI is chnative's connection string,
``clickhouse://user:password@host:9000/database?option=value`` (``clickhouses://`` for TLS).
Database options besides ``uri``: ``username``, ``password``, and
``adbc.clickhouse.<option>`` for any option of the connection string (``compression``,
``secure``, ``tls_ca_file``, ``set_<setting>``, ...).
"""

import enum
import functools
import os
import typing

import adbc_driver_manager

import _adbc_driver_clickhouse_manifest

from ._version import __version__

__all__ = ["DatabaseOptions", "connect", "driver_path", "__version__"]

#: The file name of the bundled driver library, the same on every platform (like the Arrow
#: project's own driver wheels).
LIBRARY = "libadbc_driver_clickhouse.so"


class DatabaseOptions(enum.Enum):
    """Database options of the ClickHouse driver (besides ``uri``)."""

    #: The user name, overriding the URI's.
    USERNAME = "username"
    #: The password, overriding the URI's.
    PASSWORD = "password"
    #: The compression of blocks on the wire: ``lz4``, ``zstd`` or ``none``.
    COMPRESSION = "adbc.clickhouse.compression"
    #: ``true`` for TLS (as ``clickhouses://`` does).
    SECURE = "adbc.clickhouse.secure"
    #: A PEM file of the certificate authorities to trust for TLS.
    TLS_CA_FILE = "adbc.clickhouse.tls_ca_file"


@functools.lru_cache(maxsize=None)
def driver_path() -> str:
    """The path of the driver's shared library bundled in this package."""
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY)
    if os.path.isfile(bundled):
        return bundled
    # An installation without the bundled library (a distribution's package): let the
    # driver manager search its paths for a manifest or library of this name.
    return "adbc_driver_clickhouse"


def connect(
    uri: typing.Optional[str] = None,
    db_kwargs: typing.Optional[typing.Mapping[str, str]] = None,
    **kwargs: str,
) -> adbc_driver_manager.AdbcDatabase:
    """Create a low-level ADBC database handle for ClickHouse.

    ``uri`` is the connection string; ``db_kwargs`` and keyword arguments are further
    database options (see :class:`DatabaseOptions`).
    """
    options = {k.value if isinstance(k, DatabaseOptions) else k: v for k, v in (db_kwargs or {}).items()}
    options.update(kwargs)
    if uri is not None:
        options["uri"] = uri
    return adbc_driver_manager.AdbcDatabase(driver=driver_path(), entrypoint="AdbcDriverInit", **options)


# Keep the driver manager's manifest pointing at this installation's library (cheap: one
# small read; see _adbc_driver_clickhouse_manifest).
_adbc_driver_clickhouse_manifest.ensure()
