"""DB-API 2.0 (PEP 249) interface of the ClickHouse ADBC driver.

The connection and cursor are adbc_driver_manager's: ``cursor.execute(sql, params)``,
``fetch_arrow_table()``, ``fetch_df()``, ``fetch_record_batch()``, ``adbc_ingest()``,
``adbc_get_objects()``, ``adbc_cancel()``, ...

Parameters are ClickHouse's ``{name:Type}`` placeholders, filled by name from a mapping or
by position (in order of first appearance) from a sequence; values travel as query
parameters, never spliced into the SQL.
"""

import typing

import adbc_driver_manager
import adbc_driver_manager.dbapi

import adbc_driver_clickhouse

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]

apilevel = adbc_driver_manager.dbapi.apilevel
threadsafety = adbc_driver_manager.dbapi.threadsafety
# ClickHouse's `{name:Type}` placeholders fit none of PEP 249's styles; "named" is closest.
paramstyle = "named"

Warning = adbc_driver_manager.dbapi.Warning
Error = adbc_driver_manager.dbapi.Error
InterfaceError = adbc_driver_manager.dbapi.InterfaceError
DatabaseError = adbc_driver_manager.dbapi.DatabaseError
DataError = adbc_driver_manager.dbapi.DataError
OperationalError = adbc_driver_manager.dbapi.OperationalError
IntegrityError = adbc_driver_manager.dbapi.IntegrityError
InternalError = adbc_driver_manager.dbapi.InternalError
ProgrammingError = adbc_driver_manager.dbapi.ProgrammingError
NotSupportedError = adbc_driver_manager.dbapi.NotSupportedError

Date = adbc_driver_manager.dbapi.Date
Time = adbc_driver_manager.dbapi.Time
Timestamp = adbc_driver_manager.dbapi.Timestamp
DateFromTicks = adbc_driver_manager.dbapi.DateFromTicks
TimeFromTicks = adbc_driver_manager.dbapi.TimeFromTicks
TimestampFromTicks = adbc_driver_manager.dbapi.TimestampFromTicks
STRING = adbc_driver_manager.dbapi.STRING
BINARY = adbc_driver_manager.dbapi.BINARY
NUMBER = adbc_driver_manager.dbapi.NUMBER
DATETIME = adbc_driver_manager.dbapi.DATETIME
ROWID = adbc_driver_manager.dbapi.ROWID

Connection = adbc_driver_manager.dbapi.Connection
Cursor = adbc_driver_manager.dbapi.Cursor


def connect(
    uri: typing.Optional[str] = None,
    db_kwargs: typing.Optional[typing.Mapping[str, str]] = None,
    conn_kwargs: typing.Optional[typing.Mapping[str, str]] = None,
    *,
    autocommit: bool = True,
    **kwargs: str,
) -> Connection:
    """Connect to ClickHouse, returning a DB-API 2.0 connection.

    ``uri`` is the connection string (``clickhouse://user:password@host:9000/db``);
    ``db_kwargs`` and keyword arguments are database options, ``conn_kwargs`` connection
    options. ClickHouse has no transactions, so the connection is in autocommit mode
    (``autocommit=False`` warns that it cannot be turned off, as PEP 249 asks).
    """
    db = None
    conn = None
    try:
        db = adbc_driver_clickhouse.connect(uri, db_kwargs, **kwargs)
        conn = adbc_driver_manager.AdbcConnection(db, **(conn_kwargs or {}))
        return Connection(db, conn, conn_kwargs, autocommit=autocommit)
    except Exception:
        if conn:
            conn.close()
        if db:
            db.close()
        raise
