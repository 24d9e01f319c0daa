"""The build backend of adbc-driver-clickhouse (PEP 517), standard library only.

The wheel holds a C-ABI shared library (no CPython extension), so it is tagged
``py3-none-<platform>``: one wheel serves every CPython 3.x on that platform.

Where the library comes from, in order:
  1. ``CHNATIVE_ADBC_LIBRARY`` (environment) or the config setting ``library``: a library
     already built (cargo test passes the one it built for its own tests);
  2. otherwise ``cargo build --release -p chnative-adbc`` in the repository this folder
     belongs to (``CARGO_TARGET_DIR`` honoured).

``CHNATIVE_WHEEL_PLATFORM`` (or the config setting ``platform``) overrides the platform tag,
for example ``manylinux_2_28_x86_64`` for a library built in a manylinux container.
"""

import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

NAME = "adbc_driver_clickhouse"
DIST = "adbc-driver-clickhouse"
LIBRARY = "libadbc_driver_clickhouse.so"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
REPO = os.path.dirname(HERE)
# Zip entries get a fixed time, so the same inputs make the same wheel byte for byte.
EPOCH = (2020, 1, 1, 0, 0, 0)


def _setting(config_settings, key, env):
    if config_settings and config_settings.get(key):
        return config_settings[key]
    return os.environ.get(env) or None


def _version():
    with open(os.path.join(REPO, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[workspace.package]", 1)[1]
    return re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)


def _cargo_library():
    lib = "chnative_adbc"
    name = {"darwin": f"lib{lib}.dylib", "win32": f"{lib}.dll"}.get(sys.platform, f"lib{lib}.so")
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
    cmd = ["cargo", "build", "--release", "-p", "chnative-adbc", "--lib", "--target-dir", target]
    print("adbc-driver-clickhouse:", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=REPO, check=True)
    return os.path.join(target, "release", name)


def _platform(config_settings):
    plat = _setting(config_settings, "platform", "CHNATIVE_WHEEL_PLATFORM")
    return plat or sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata(version):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {DIST}",
        f"Version: {version}",
        "Summary: An ADBC driver for ClickHouse over the native TCP protocol (chnative): Arrow results "
        "for pyarrow, Polars, pandas and DuckDB.",
        "License: Apache-2.0 OR MIT",
        "Keywords: clickhouse,adbc,arrow,dbapi,polars,pandas",
        "Requires-Python: >=3.9",
        "Requires-Dist: adbc-driver-manager>=1.9",
        "Provides-Extra: dbapi",
        'Requires-Dist: pyarrow>=14; extra == "dbapi"',
        "Provides-Extra: test",
    ]
    lines += [f'Requires-Dist: {p}; extra == "test"' for p in ("pytest", "pyarrow>=14", "polars", "pandas", "duckdb")]
    lines += ["Description-Content-Type: text/markdown", "", readme]
    return "\n".join(lines)


def _wheel_meta(tag):
    return f"Wheel-Version: 1.0\nGenerator: adbc-driver-clickhouse _build/backend.py\nRoot-Is-Purelib: false\nTag: {tag}\n"


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _manifest_placeholder(version):
    sys.path.insert(0, HERE)
    try:
        import _adbc_driver_clickhouse_manifest as m
    finally:
        sys.path.pop(0)
    # A bare library name until the first interpreter start rewrites it to the installed
    # path (an empty one would stop the driver manager's search with an error).
    return m.render(LIBRARY, version)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: build the wheel into wheel_directory and return its file name."""
    version = _version()
    library = _setting(config_settings, "library", "CHNATIVE_ADBC_LIBRARY") or _cargo_library()
    if not os.path.isfile(library):
        raise FileNotFoundError(f"the driver library {library} does not exist")
    tag = f"py3-none-{_platform(config_settings)}"
    dist_info = f"{NAME}-{version}.dist-info"
    data = f"{NAME}-{version}.data/data"

    files = []  # (archive name, bytes, executable)
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "py.typed":
            body = _read(os.path.join(pkg, name))
            if name == "_version.py":
                body = f'__version__ = "{version}"\n'.encode()
            files.append((f"{NAME}/{name}", body, False))
    files.append((f"{NAME}/{LIBRARY}", _read(library), True))
    files.append(("_adbc_driver_clickhouse_manifest.py", _read(os.path.join(HERE, "_adbc_driver_clickhouse_manifest.py")), False))
    files.append(
        (f"{NAME}.pth", b"import _adbc_driver_clickhouse_manifest; _adbc_driver_clickhouse_manifest.ensure()\n", False)
    )
    files.append((f"{data}/etc/adbc/drivers/clickhouse.toml", _manifest_placeholder(version).encode(), False))
    for lic in ("LICENSE-APACHE", "LICENSE-MIT"):
        files.append((f"{dist_info}/licenses/{lic}", _read(os.path.join(REPO, lic)), False))
    files.append((f"{dist_info}/METADATA", _metadata(version).encode(), False))
    files.append((f"{dist_info}/WHEEL", _wheel_meta(tag).encode(), False))
    files.append((f"{dist_info}/top_level.txt", f"{NAME}\n_adbc_driver_clickhouse_manifest\n".encode(), False))

    record = io.StringIO()
    for name, body, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(body)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    files.append((f"{dist_info}/RECORD", record.getvalue().encode(), False))

    filename = f"{NAME}-{version}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, filename)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for name, body, executable in files:
            info = zipfile.ZipInfo(name, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(info, body)
    os.replace(tmp, path)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    """PEP 517: nothing beyond the standard library (and cargo, unless a library is given)."""
    return []


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: not offered; the driver is built from the Rust workspace, not from this folder."""
    raise NotImplementedError(
        "adbc-driver-clickhouse has no sdist: build the wheel from a clone of the repository "
        "(pip wheel ./python), which runs cargo"
    )
