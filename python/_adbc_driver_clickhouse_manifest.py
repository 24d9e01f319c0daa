"""The ADBC driver manifest (``<venv>/etc/adbc/drivers/clickhouse.toml``).

adbc_driver_manager (>= 1.9), running in a virtual environment, looks a driver name up as
``<sys.prefix>/etc/adbc/drivers/<name>.toml``; a bare ``clickhouse://`` URI is the driver
name ``clickhouse``. A manifest names the library by absolute path, which a wheel cannot
know when it is built, so the wheel installs the manifest with a placeholder and this module
rewrites it to the installed library's path. It runs at interpreter start (the wheel's
``adbc_driver_clickhouse.pth`` imports this top-level module, not the package, which would
load the driver manager) and on ``import adbc_driver_clickhouse``: one read of a small file
when the manifest is already right. It never raises, and never creates
a manifest that is not there (an uninstall removes it).

Standard library only.
"""

import os
import sys

NAME = "clickhouse"
LIBRARY = "libadbc_driver_clickhouse.so"


def render(library: str, version: str) -> str:
    """The manifest's text for a library path."""
    return (
        "manifest_version = 1\n"
        'name = "ClickHouse (chnative, native TCP protocol)"\n'
        f'version = "{version}"\n'
        'source = "adbc-driver-clickhouse"\n'
        "\n"
        "[Driver]\n"
        'entrypoint = "AdbcDriverInit"\n'
        # A TOML basic string: escape backslashes and quotes of unusual paths.
        "shared = \"{}\"\n".format(library.replace("\\", "\\\\").replace('"', '\\"'))
    )


def ensure() -> None:
    """Point the installed manifest at this installation's library, if it does not already."""
    try:
        package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adbc_driver_clickhouse")
        library = os.path.join(package, LIBRARY)
        manifest = os.path.join(sys.prefix, "etc", "adbc", "drivers", NAME + ".toml")
        try:
            with open(manifest, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            return
        if 'source = "adbc-driver-clickhouse"' not in current or not os.path.isfile(library):
            return  # someone else's manifest, or a broken installation: leave it alone
        wanted = render(library, _version_of(package))
        if current != wanted:
            tmp = f"{manifest}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(wanted)
            os.replace(tmp, manifest)
    except Exception:  # noqa: BLE001 - never break interpreter start
        pass


def _version_of(package_dir: str) -> str:
    try:
        with open(os.path.join(package_dir, "_version.py"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("__version__"):
                    return line.split("=", 1)[1].strip().strip("\"'")
    except OSError:
        pass
    return ""
