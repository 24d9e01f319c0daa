//! The Python package (`python/`, `adbc-driver-clickhouse`) as a Python user gets it: the
//! wheel built by pip from the driver library cargo just built, installed into a venv, and
//! the pytest suite of `python/tests` run against the shared test server (Polars, pandas,
//! DuckDB, ingest, parameters, cancel, errors, and the conformance suite).
//!
//! Two venvs:
//! - the test requirements (`python/requirements-test.txt`: adbc-driver-manager, pyarrow,
//!   polars, pandas, duckdb, pytest) in `~/.cache/chnative/venv-python-tests-<hash>`, keyed by
//!   a hash of that file and the Python version, made on first use (pip downloads them once)
//!   in a temporary directory and renamed into place, so concurrent runs never see half a
//!   venv. `CHNATIVE_PYTHON_TESTS_VENV` names another one.
//! - a small venv of this run under the target dir (`python-tests/venv`, made without pip in
//!   a fraction of a second) that sees the cached one's packages (a `.pth` line) and gets the
//!   wheel installed into it (`pip install --prefix`), so the manifest the wheel installs lands
//!   in its `etc/adbc/drivers`, and runs of other worktrees sharing the cached venv never
//!   install over each other.
//!
//! cargo builds the library before this test (the crate's cdylib, in `deps/`); the wheel is
//! built from that file (`CHNATIVE_ADBC_LIBRARY`), so no cargo runs inside cargo. If pip
//! cannot install the requirements the test fails saying so; it is never skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The profile dir (`target/debug`) this test binary was built into.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// The driver's shared library, built by cargo with this test. `cargo test` writes it into
/// `deps/` (only `cargo build` copies it up a level), so the newer of the two is the one
/// just built.
fn driver_library() -> PathBuf {
    let name = format!("{}chnative_adbc{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    let dir = profile_dir();
    let built = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    [dir.join("deps").join(&name), dir.join(&name)]
        .into_iter()
        .filter_map(|p| built(&p).map(|t| (t, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
        .unwrap_or_else(|| {
            panic!("the driver library {name} is not in {} (cargo builds it with this test)", dir.display())
        })
}

fn output(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: could not run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(cmd: &mut Command, what: &str) -> String {
    String::from_utf8_lossy(&output(cmd, what).stdout).trim().to_string()
}

/// FNV-1a: a stable hash (std's may change between Rust releases) for the cache key.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn base_python() -> String {
    std::env::var("CHNATIVE_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn python_in(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// The cached venv with the test requirements, made if missing.
fn requirements_venv(requirements: &Path) -> PathBuf {
    if let Some(v) = std::env::var_os("CHNATIVE_PYTHON_TESTS_VENV") {
        return PathBuf::from(v);
    }
    let base = base_python();
    let version = stdout(Command::new(&base).args(["-c", "import sys; print(sys.version)"]), "python3 --version");
    let mut key = std::fs::read(requirements).expect("read python/requirements-test.txt");
    key.extend_from_slice(version.as_bytes());
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let cache = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).unwrap_or_else(|| home.join(".cache"));
    let venv = cache.join("chnative").join(format!("venv-python-tests-{:016x}", fnv1a(&key)));
    if python_in(&venv).exists() {
        return venv;
    }
    std::fs::create_dir_all(venv.parent().unwrap()).expect("create the cache dir");
    let tmp = venv.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    output(Command::new(&base).args(["-m", "venv"]).arg(&tmp), &format!("creating the venv {}", tmp.display()));
    output(
        Command::new(python_in(&tmp))
            .args(["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r"])
            .arg(requirements),
        &format!(
            "pip install -r {} (the Python tests need the package registry once; \
             CHNATIVE_PYTHON_TESTS_VENV names a venv that has them)",
            requirements.display()
        ),
    );
    // Another run may have finished first: keep its venv, drop ours.
    if std::fs::rename(&tmp, &venv).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    assert!(python_in(&venv).exists(), "the venv {} was not made", venv.display());
    venv
}

#[test]
fn python_package_pytest() {
    let server = chnative_testkit::server::server();
    let library = driver_library();
    let python_dir = Path::new(REPO).join("python");
    let requirements = python_dir.join("requirements-test.txt");
    let base_venv = requirements_venv(&requirements);
    let base_python = python_in(&base_venv);

    let work = profile_dir().join("python-tests");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the work dir");
    let wheels = work.join("wheels");

    // The wheel, as `pip wheel ./python` builds it, from the library cargo built.
    output(
        Command::new(&base_python)
            .args([
                "-m",
                "pip",
                "wheel",
                "--disable-pip-version-check",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
            ])
            .arg(&wheels)
            .arg(&python_dir)
            .env("CHNATIVE_ADBC_LIBRARY", &library),
        "building the wheel (pip wheel python/)",
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("the wheel dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("pip wheel made no .whl");
    let name = wheel.file_name().unwrap().to_string_lossy().to_string();
    assert!(name.starts_with("adbc_driver_clickhouse-") && name.contains("-py3-none-"), "{name}");

    // This run's venv: the cached packages through a .pth line, the wheel installed into it.
    let venv = work.join("venv");
    output(Command::new(&base_python).args(["-m", "venv", "--without-pip"]).arg(&venv), "creating this run's venv");
    let python = python_in(&venv);
    let site = |py: &Path| {
        stdout(Command::new(py).args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]), "site dir")
    };
    std::fs::write(Path::new(&site(&python)).join("_chnative_test_requirements.pth"), site(&base_python) + "\n")
        .expect("write the .pth");
    output(
        Command::new(&base_python)
            .args(["-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-deps", "--prefix"])
            .arg(&venv)
            .arg(&wheel),
        "installing the wheel",
    );

    // pytest from the work dir (`python -m` puts the current dir on sys.path: never the
    // source folder, so the installed package is the one tested).
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-c"])
        .arg(python_dir.join("pytest.ini"))
        .arg("--rootdir")
        .arg(&python_dir)
        .arg(python_dir.join("tests"))
        .current_dir(&work)
        .env("CHNATIVE_TCP_PORT", server.tcp_port.to_string())
        .env("CHNATIVE_HTTP_PORT", server.http_port.to_string())
        .env_remove("VIRTUAL_ENV")
        .env_remove("PYTHONPATH")
        .output()
        .expect("run pytest");
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{so}");
    assert!(out.status.success(), "the Python package's pytest suite failed ({}):\n{so}\n{se}", out.status);
}
