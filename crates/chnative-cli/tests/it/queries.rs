//! Running queries with `chn` as a person would: flags, URLs, parameters,
//! settings, several statements, errors and exit codes.

use crate::common;
use common::*;

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

#[test]
fn url_instead_of_flags() {
    let url = format!("clickhouse://default@127.0.0.1:{}/system", server().tcp_port);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chn"))
        .args([url.as_str(), "--query", "SELECT currentDatabase()"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "system\n");
    // --url works the same; a host in both places is refused.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chn"))
        .args(["--url", url.as_str(), "--host", "127.0.0.1", "-q", "SELECT 1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not both"));
}

#[test]
fn several_hosts_fail_over_to_one_that_answers() {
    // Port 1 refuses at once; the second host is the server.
    let hosts = format!("127.0.0.1:1,127.0.0.1:{}", server().tcp_port);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chn"))
        .args(["--host", hosts.as_str(), "-q", "SELECT 42"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
}

#[test]
fn parameters_fill_placeholders_as_given() {
    let out = chn_ok(
        &[
            "--query",
            "SELECT {n:UInt8} + 1, {s:String}, {a:Array(String)}, {d:Date}",
            "--param_n=41",
            "--param_s",
            "it's a\\ttab",
            "--param_a=['x','y']",
            "--param_d=2024-02-29",
        ],
        None,
    );
    assert_eq!(text(out), "42\tit\\'s a\\ttab\t['x','y']\t2024-02-29\n");
}

#[test]
fn unknown_flags_are_settings() {
    let out = chn_ok(
        &[
            "--query",
            "SELECT getSetting('max_threads'), getSetting('max_block_size')",
            "--max_threads=3",
            "--max_block_size",
            "1000",
        ],
        None,
    );
    assert_eq!(text(out), "3\t1000\n");
    let out = chn(&["--query", "SELECT 1", "--no_such_setting_xyz=1"], None);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("UNKNOWN_SETTING"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn statements_from_stdin_split_at_semicolons_outside_quotes_and_comments() {
    let input = "SELECT 'a;b' AS x; -- a comment; with a semicolon\nSELECT `c;d` FROM (SELECT 1 AS `c;d`);\n\
                 /* block; comment */ SELECT \"e;f\" FROM (SELECT 2 AS \"e;f\")\n";
    assert_eq!(text(chn_ok(&[], Some(input.as_bytes()))), "a;b\n1\n2\n");
}

#[test]
fn queries_file_and_several_statements_in_one_query() {
    let dir = std::env::temp_dir().join(unique("qf"));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("q.sql");
    std::fs::write(&f, "SELECT 1;\nSELECT 'two';\n").unwrap();
    let out = chn_ok(&["--queries-file", f.to_str().unwrap(), "--query", "SELECT 0; SELECT 0.5"], None);
    assert_eq!(text(out), "0\n0.5\n1\ntwo\n");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_server_error_is_one_line_with_its_code_name_and_a_failing_exit() {
    let out = chn(&["--query", "SELECT 1; SELECT * FROM cli_no_such_table_anywhere; SELECT 3"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "stops at the failing statement");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("UNKNOWN_TABLE (60)"), "{err}");
}

#[test]
fn a_connection_error_says_what_to_check() {
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_chn")).args(["--port", "1", "-q", "SELECT 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:1") && err.contains("--port"), "{err}");
}

#[test]
fn time_prints_the_elapsed_seconds_on_stderr() {
    let out = chn(&["--query", "SELECT 1", "--time"], None);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let err = String::from_utf8_lossy(&out.stderr);
    let secs: f64 = err.trim().parse().unwrap_or_else(|_| panic!("not seconds: {err:?}"));
    assert!(secs >= 0.0);
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let out = chn(&["--query", "SELECT count() FROM numbers(10000000)"], None);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "10000000\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "nothing on stderr");
}

#[test]
fn password_from_the_environment_and_a_warning_for_the_flag() {
    // scripts/server.sh makes the user chn_pw with password `secret`.
    let q = ["--user", "chn_pw", "--query", "SELECT currentUser()"];
    let out = chn_command().args(q).env("CLICKHOUSE_PASSWORD", "secret").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "chn_pw\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");

    let out = chn_command().args(q).arg("--password").arg("secret").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("process list"));

    let out = chn_command().args(q).env("CLICKHOUSE_PASSWORD", "wrong").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("AUTHENTICATION_FAILED") && err.contains("CLICKHOUSE_PASSWORD"), "{err}");
}

#[test]
fn closing_the_output_early_stops_quietly() {
    use std::io::Read;
    let mut child = chn_command()
        .args(["--query", "SELECT number FROM numbers(100000000)"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn ignore_error_runs_on_and_echo_prints_each_statement() {
    let out = chn(&["--ignore-error", "--echo", "--query", "SELECT 1; SELECT nope; SELECT 2"], None);
    assert_eq!(out.status.code(), Some(1), "the exit code is the failure's");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "SELECT 1\n1\nSELECT nope\nSELECT 2\n2\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("UNKNOWN_IDENTIFIER"));
    // Without --ignore-error the run stops at the failure.
    let out = chn(&["--query", "SELECT 1; SELECT nope; SELECT 2"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
}
