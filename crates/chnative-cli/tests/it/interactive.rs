//! The interactive prompt in a pseudo-terminal: type a query, see the table;
//! Ctrl-C cancels a long query on the server; the history persists.

use crate::common;
use common::*;

use std::time::{Duration, Instant};

/// `chn` at the prompt in a pseudo-terminal, with its own home (history file).
fn prompt(home: &std::path::Path) -> rexpect::session::PtySession {
    let mut cmd = chn_command();
    cmd.env("HOME", home).env("TERM", "xterm").env("COLUMNS", "200");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn chn in a pty");
    p.exp_string("chn :) ").expect("the prompt");
    p
}

/// What rexpect shows of `s`: it reads the terminal byte by byte, each byte
/// as one char, so a box-drawing character arrives as its UTF-8 bytes.
fn seen(s: &str) -> String {
    s.bytes().map(char::from).collect()
}

fn home(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(unique(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether a query holding `marker` is in system.processes (over HTTP).
fn running(marker: &str) -> bool {
    http(&format!(
        "SELECT count() FROM system.processes WHERE query LIKE '%{marker}%' AND query NOT LIKE '%system.processes%' FORMAT TSV"
    ))
    .trim()
        != "0"
}

#[test]
fn a_query_typed_over_two_lines_shows_a_table_and_goes_into_the_history() {
    let home = home("hist");
    let mut p = prompt(&home);
    // Enter without `;` continues the statement on the next line.
    p.send_line("SELECT number AS n, toString(number) AS s").unwrap();
    p.send_line("FROM numbers(2);").unwrap();
    p.exp_string(&seen("┃ n ┃ s ┃")).expect("the Pretty header");
    p.exp_string(&seen("1. │ 0 │ 0 │")).expect("row 1");
    p.exp_string(&seen("2. │ 1 │ 1 │")).expect("row 2");
    p.exp_string("2 rows in set.").expect("the summary");
    p.exp_string("chn :) ").unwrap();
    // `\G` ends a statement too, with vertical output.
    p.send_line("SELECT 'v' AS col\\G").unwrap();
    p.exp_string("Row 1:").unwrap();
    p.exp_string("col: v").unwrap();
    p.exp_string("chn :) ").unwrap();
    // An error is one line and the prompt goes on.
    p.send_line("SELECT * FROM cli_missing_table_xyz;").unwrap();
    p.exp_string("UNKNOWN_TABLE (60)").unwrap();
    p.exp_string("chn :) ").unwrap();
    p.send_line("exit").unwrap();
    p.exp_eof().unwrap();
    let history = std::fs::read_to_string(home.join(".chn_history")).expect("~/.chn_history written");
    assert!(history.contains("FROM numbers(2);"), "{history}");
    assert!(history.contains("SELECT 'v' AS col\\\\G") || history.contains("SELECT 'v' AS col\\G"), "{history}");

    // The next session finds it: Ctrl-R searches it.
    let mut p = prompt(&home);
    p.send_control('r').unwrap();
    p.send("AS col").unwrap();
    p.flush().unwrap();
    p.exp_string("SELECT 'v' AS col").expect("reverse search shows the entry");
    p.send_line("").unwrap();
    p.exp_string("col: v").expect("the found statement runs");
    p.exp_string("chn :) ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    std::fs::remove_dir_all(home).unwrap();
}

#[test]
fn ctrl_c_cancels_the_query_on_the_server_and_the_prompt_goes_on() {
    let home = home("cancel");
    let mut p = prompt(&home);
    let marker = unique("cancel_marker");
    p.send_line(&format!("SELECT count() FROM numbers(100000000000) WHERE '{marker}' != '';")).unwrap();
    // The progress line shows while it runs.
    p.exp_string("Progress:").expect("a progress line");
    let start = Instant::now();
    while !running(&marker) {
        assert!(start.elapsed() < Duration::from_secs(20), "the query never showed in system.processes");
        std::thread::sleep(Duration::from_millis(50));
    }
    p.send_control('c').unwrap();
    p.exp_string("Query was cancelled.").expect("the cancel is reported");
    p.exp_string("Processed").unwrap();
    // The server has let it go: it is no longer in system.processes.
    let start = Instant::now();
    while running(&marker) {
        assert!(start.elapsed() < Duration::from_secs(5), "the query still runs 5 s after Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    }
    p.exp_string("chn :) ").expect("the prompt comes back");
    // The connection is fine for the next query.
    p.send_line("SELECT 40 + 2 AS answer;").unwrap();
    p.exp_string("42").unwrap();
    p.exp_string("chn :) ").unwrap();
    p.send_line("quit").unwrap();
    p.exp_eof().unwrap();
    std::fs::remove_dir_all(home).unwrap();
}

#[test]
fn a_second_ctrl_c_quits() {
    let home = home("quit");
    let mut p = prompt(&home);
    let marker = unique("quit_marker");
    // sleepEachRow keeps the server busy: a Cancel takes effect after the
    // current 3-second row, time enough for the second press.
    p.send_line(&format!("SELECT sleepEachRow(3), '{marker}' FROM numbers(30) SETTINGS max_block_size = 1;")).unwrap();
    let start = Instant::now();
    while !running(&marker) {
        assert!(start.elapsed() < Duration::from_secs(20), "the query never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    p.send_control('c').unwrap();
    p.exp_string("Cancelling the query").unwrap();
    p.send_control('c').unwrap();
    p.exp_eof().expect("chn quits");
    let status = p.process_mut().wait().unwrap();
    assert!(matches!(status, rexpect::process::wait::WaitStatus::Exited(_, 130)), "{status:?}");
    let start = Instant::now();
    while running(&marker) {
        assert!(start.elapsed() < Duration::from_secs(10), "the query outlived the client");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::remove_dir_all(home).unwrap();
}

#[test]
fn insert_data_from_a_pipe_with_the_progress_line_hidden() {
    // Not a terminal: no prompt, no progress line, just the work.
    let t = Table::create("pipe", "a UInt8");
    let out = chn(&["--query", &format!("INSERT INTO {} FORMAT TSV", t.0)], Some(b"1\n2\n"));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(http(&format!("SELECT sum(a) FROM {} FORMAT TSV", t.0)), "3\n");
}

#[test]
fn a_pager_gets_the_result_and_quitting_it_early_cancels_the_query() {
    let dir = home("pager");
    let paged = dir.join("paged.txt");
    // --pager on the command line, standard output a terminal.
    let mut cmd = chn_command();
    cmd.env("HOME", &dir).env("TERM", "xterm").env("COLUMNS", "200");
    cmd.arg("--pager").arg(format!("cat > {}", paged.display()));
    cmd.arg("--query").arg("SELECT number AS n FROM numbers(3)");
    let mut s = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn chn in a pty");
    s.exp_eof().unwrap();
    let text = std::fs::read_to_string(&paged).expect("the pager wrote its input");
    for n in ["0", "1", "2"] {
        assert!(text.lines().any(|l| l.split_whitespace().any(|w| w == n)), "{text}");
    }

    // A pager that stops reading after a few bytes: chn ends quietly and the
    // endless query leaves the server.
    let marker = unique("pager_quit");
    let mut cmd = chn_command();
    cmd.env("HOME", &dir).env("TERM", "xterm");
    cmd.arg("--pager").arg("head -c 100 > /dev/null");
    cmd.arg("--query").arg(format!("SELECT number, '{marker}' FROM system.numbers"));
    let started = Instant::now();
    let mut s = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn chn in a pty");
    let rest = s.exp_eof().expect("chn ended after the pager quit");
    assert!(!rest.contains("chn:"), "an error was printed: {rest}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(&marker) {
        assert!(Instant::now() < deadline, "the query is still running on the server");
        std::thread::sleep(Duration::from_millis(100));
    }
}
