//! The driver as Python's ADBC driver manager loads it: tests/adbc_python.py (plain
//! asserts) run against the shared library cargo just built, in a venv under the
//! target dir with adbc-driver-manager, pyarrow, polars and duckdb. The venv is made
//! on first use (like scripts/server.sh makes the server's); if pip cannot install
//! the packages this test fails saying so, it is never skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

const PACKAGES: [&str; 4] = ["adbc-driver-manager", "pyarrow", "polars", "duckdb"];
const IMPORTS: &str = "import adbc_driver_manager, pyarrow, polars, duckdb";

fn start_server() -> (u16, u16) {
    let s = chnative_testkit::server::server();
    (s.tcp_port, s.http_port)
}

/// The profile dir (`target/debug`) this test binary was built into.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// The driver's shared library, built by cargo with this test. `cargo test`
/// writes it into `deps/` (only `cargo build` copies it up a level), so the newer
/// of the two is the one just built.
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

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: could not run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn has_packages(python: &Path) -> bool {
    python.exists() && Command::new(python).args(["-c", IMPORTS]).output().is_ok_and(|o| o.status.success())
}

/// The venv's python, making the venv first if it lacks the packages.
fn venv_python() -> PathBuf {
    let venv = std::env::var_os("CHNATIVE_ADBC_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile_dir().parent().expect("target dir").join("adbc-venv"));
    let python = venv.join("bin").join("python");
    if has_packages(&python) {
        return python;
    }
    let base = std::env::var("CHNATIVE_PYTHON").unwrap_or_else(|_| "python3".into());
    if !python.exists() {
        run(Command::new(&base).args(["-m", "venv"]).arg(&venv), &format!("creating the venv {}", venv.display()));
    }
    run(
        Command::new(&python).args(["-m", "pip", "install", "--disable-pip-version-check", "-q"]).args(PACKAGES),
        &format!(
            "pip install {} into {} (the ADBC tests need the package registry once; set CHNATIVE_ADBC_VENV to a venv that has them)",
            PACKAGES.join(" "),
            venv.display()
        ),
    );
    assert!(has_packages(&python), "the venv {} still cannot `{IMPORTS}` after pip install", venv.display());
    python
}

#[test]
fn python_adbc_driver_manager() {
    let (tcp, http) = start_server();
    let driver = driver_library();
    let python = venv_python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/adbc_python.py");
    let out = Command::new(&python)
        .arg(script)
        .env("CHNATIVE_ADBC_DRIVER", &driver)
        .env("CHNATIVE_TCP_PORT", tcp.to_string())
        .env("CHNATIVE_HTTP_PORT", http.to_string())
        .output()
        .expect("run the Python ADBC tests");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");
    assert!(out.status.success(), "the Python ADBC tests failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
