//! The differential conformance suite (issue 29): every statement of
//! `tests/conformance/*.sql` goes through `chn` in each format it writes (and
//! through the library's dynamic rows) and through the server's HTTP
//! interface, and the outputs are compared byte for byte, with and without
//! the output-format settings, and with `session_timezone`.
//!
//! A difference is either listed in `tests/conformance/known.txt` (with its
//! reason) or fails the test. The test prints its counts: compared, equal,
//! different, listed.
//!
//! What is normalised before comparing (both sides alike):
//! - `elapsed` in the statistics of JSON, JSONCompact, JSONStrings, … and XML
//!   is the time measured by each side (clickhouse-client also prints its own
//!   watch's); it is replaced by 0. `rows_read` and `bytes_read` are compared.
//! - The `{"progress":…}` lines of the WithProgress formats depend on when
//!   the server sent its Progress packets; they are dropped (chn writes none).
//!
//! Each format runs the statements in one `chn --ignore-error --echo
//! --queries-file` process (the echoed statements, each with a marker
//! comment, split its output), so the run stays within seconds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Stdio;
use std::sync::Mutex;

use crate::common;
use common::*;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance");

/// Every format `chn` writes (Null aside).
const ALL_FORMATS: &[&str] = &[
    "TSV",
    "TSVWithNames",
    "TSVWithNamesAndTypes",
    "TSVRaw",
    "CSV",
    "CSVWithNames",
    "JSON",
    "JSONCompact",
    "JSONStrings",
    "JSONCompactStrings",
    "JSONEachRow",
    "JSONStringsEachRow",
    "JSONCompactEachRow",
    "JSONCompactStringsEachRow",
    "JSONCompactEachRowWithNames",
    "JSONEachRowWithProgress",
    "JSONStringsEachRowWithProgress",
    "Vertical",
    "Pretty",
    "PrettyCompact",
    "PrettyNoEscapes",
    "PrettyCompactNoEscapes",
    "Markdown",
    "Values",
    "XML",
    "TSKV",
    "ODBCDriver2",
];

/// Whether a statement has totals or extremes, or output settings of its
/// own (every format runs those).
fn totals(s: &Stmt) -> bool {
    s.sql.contains("TOTALS") || s.sql.contains("extremes") || s.sql.contains(" SETTINGS ")
}

/// The formats that run every statement of a profile; the others run those
/// of types.sql and the ones with totals, extremes or settings of their own
/// (they share the code paths of these).
const CORE_FORMATS: &[&str] =
    &["TSV", "CSV", "JSONEachRow", "JSON", "Vertical", "Pretty", "PrettyCompact", "Values", "XML", "Markdown"];

/// The formats the output-format settings change.
const SETTING_FORMATS: &[&str] = &[
    "TSV",
    "TSVWithNames",
    "TSVRaw",
    "CSV",
    "CSVWithNames",
    "JSON",
    "JSONEachRow",
    "JSONStringsEachRow",
    "Vertical",
    "Pretty",
    "PrettyCompact",
    "Markdown",
    "Values",
    "XML",
    "TSKV",
];

/// A set of settings given to both sides (chn's `--name=value`, the URL's
/// `?name=value`), and the formats it runs in.
struct Profile {
    name: &'static str,
    settings: &'static [(&'static str, &'static str)],
    formats: &'static [&'static str],
    /// Whether the library's dynamic rows are compared too.
    dynamic_rows: bool,
    /// The statements it runs: those of these files (`None`: all) holding
    /// one of these words (empty: all).
    files: Option<&'static [&'static str]>,
    words: &'static [&'static str],
}

impl Profile {
    fn takes(&self, s: &Stmt) -> bool {
        self.files.is_none_or(|f| f.iter().any(|f| s.place.starts_with(f)))
            && (self.words.is_empty() || self.words.iter().any(|w| s.sql.contains(w)))
    }
}

/// The words of statements whose output a zone or the DateTime format changes.
const DATE_WORDS: &[&str] = &["Date", "date", "Time", "time", "Unix"];

const PROFILES: &[Profile] = &[
    Profile { name: "default", settings: &[], formats: ALL_FORMATS, dynamic_rows: true, files: None, words: &[] },
    Profile {
        name: "settings",
        settings: &[
            ("bool_true_representation", "Y"),
            ("bool_false_representation", "N"),
            ("date_time_output_format", "iso"),
            ("format_csv_null_representation", "NUL"),
            ("format_tsv_null_representation", "-"),
            ("output_format_csv_crlf_end_of_line", "1"),
            ("output_format_tsv_crlf_end_of_line", "1"),
            ("output_format_json_array_of_rows", "1"),
            ("output_format_pretty_max_rows", "3"),
            ("output_format_pretty_color", "1"),
            ("output_format_json_quote_64bit_integers", "1"),
            ("output_format_pretty_row_numbers", "0"),
            ("output_format_pretty_max_value_width", "12"),
        ],
        formats: SETTING_FORMATS,
        dynamic_rows: false,
        files: Some(&["queries.sql"]),
        words: &[],
    },
    Profile {
        name: "unix_timestamp",
        settings: &[("date_time_output_format", "unix_timestamp"), ("output_format_write_statistics", "0")],
        formats: &["TSV", "CSV", "JSONEachRow", "JSON", "Pretty", "XML"],
        dynamic_rows: false,
        files: None,
        words: DATE_WORDS,
    },
    Profile {
        name: "session_timezone",
        settings: &[("session_timezone", "Europe/Amsterdam")],
        formats: &["TSV", "JSONEachRow", "Vertical", "PrettyCompact"],
        dynamic_rows: true,
        files: None,
        words: DATE_WORDS,
    },
];

/// One statement of the data files.
struct Stmt {
    /// `file:line`.
    place: String,
    sql: String,
}

fn statements() -> Vec<Stmt> {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .expect("tests/conformance")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read a statements file");
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let mut cur = String::new();
        let mut first = 0;
        for (n, line) in text.lines().enumerate() {
            if cur.is_empty() && (line.trim().is_empty() || line.starts_with("--")) {
                continue;
            }
            if cur.is_empty() {
                first = n + 1;
            }
            cur.push_str(line);
            cur.push('\n');
            if line.trim_end().ends_with(';') {
                let sql = cur.trim_end().trim_end_matches(';').to_string();
                out.push(Stmt { place: format!("{name}:{first}"), sql });
                cur.clear();
            }
        }
        assert!(cur.trim().is_empty(), "{name}: the last statement has no `;`");
    }
    out
}

/// A listed difference: formats, profiles, a piece of the statement, and why.
struct Known {
    formats: String,
    profiles: String,
    needle: String,
    reason: String,
    used: std::sync::atomic::AtomicU32,
}

fn known() -> Vec<Known> {
    let text = std::fs::read_to_string(format!("{DIR}/known.txt")).expect("tests/conformance/known.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.splitn(4, '\t').collect();
            assert!(
                f.len() == 4 && !f[3].trim().is_empty(),
                "known.txt: `{l}` is not formats<TAB>profiles<TAB>statement part<TAB>reason"
            );
            Known {
                formats: f[0].into(),
                profiles: f[1].into(),
                needle: f[2].into(),
                reason: f[3].into(),
                used: Default::default(),
            }
        })
        .collect()
}

fn matches(list: &str, name: &str) -> bool {
    list == "*" || list.split(',').any(|x| x.trim() == name)
}

impl Known {
    fn covers(&self, format: &str, profile: &str, sql: &str) -> bool {
        matches(&self.formats, format) && matches(&self.profiles, profile) && sql.contains(&self.needle)
    }
}

/// What both sides' outputs go through before the comparison (see the module doc).
fn normalise(out: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(out);
    if !(text.contains("\"elapsed\"") || text.contains("<elapsed>") || text.contains("{\"progress\":")) {
        return out.to_vec();
    }
    let mut res = Vec::with_capacity(out.len());
    for line in out.split_inclusive(|&b| b == b'\n') {
        let l = String::from_utf8_lossy(line);
        if l.starts_with("{\"progress\":") {
            continue;
        }
        if let Some(at) = l.find("\"elapsed\": ") {
            res.extend_from_slice(format!("{}\"elapsed\": 0,\n", &l[..at]).as_bytes());
        } else if let Some(at) = l.find("<elapsed>") {
            res.extend_from_slice(format!("{}<elapsed>0</elapsed>\n", &l[..at]).as_bytes());
        } else {
            res.extend_from_slice(line);
        }
    }
    res
}

fn marker(i: usize) -> String {
    format!("chn-conformance-{i}")
}

/// The outputs of `chn` for each statement in one format and profile: one
/// process runs them all (`--ignore-error`), `--echo` printing each
/// statement, which starts with a marker comment, before its result.
fn run_chn(stmts: &[&Stmt], format: &str, profile: &Profile) -> Vec<Option<Vec<u8>>> {
    let texts: Vec<String> = stmts.iter().enumerate().map(|(i, s)| format!("-- {}\n{}", marker(i), s.sql)).collect();
    let mut file = String::new();
    for t in &texts {
        let _ = writeln!(file, "{t};");
    }
    let path =
        std::env::temp_dir().join(format!("chn-conformance-{}-{}-{format}.sql", std::process::id(), profile.name));
    std::fs::write(&path, file).expect("write the queries file");
    let mut c = chn_command();
    c.args(["--ignore-error", "--echo", "--format", format, "--queries-file"]).arg(&path);
    for (k, v) in profile.settings {
        c.arg(format!("--{k}={v}"));
    }
    let out = c.stdin(Stdio::null()).stderr(Stdio::null()).output().expect("run chn");
    let _ = std::fs::remove_file(&path);
    let stdout = out.stdout;
    // Each statement's output runs from the end of its echo to the start of the next echo.
    let mut bounds = Vec::new();
    let mut from = 0;
    for t in &texts {
        let echo = format!("{t}\n");
        match find(&stdout[from..], echo.as_bytes()) {
            Some(p) => {
                bounds.push(Some((from + p, from + p + echo.len())));
                from += p + echo.len();
            }
            None => bounds.push(None),
        }
    }
    (0..stmts.len())
        .map(|i| {
            let (_, body) = bounds[i]?;
            let end = bounds[i + 1..].iter().flatten().next().map_or(stdout.len(), |(start, _)| *start);
            (body <= end).then(|| stdout[body..end].to_vec())
        })
        .collect()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A keep-alive HTTP/1.1 connection to the server's HTTP interface (a new
/// connection per request costs as much as the request).
struct Http {
    conn: Option<std::io::BufReader<std::net::TcpStream>>,
}

impl Http {
    fn new() -> Http {
        Http { conn: None }
    }

    /// The status line and the body of a POST, or `None` when the connection failed.
    fn post(&mut self, path: &str, body: &str) -> Option<(String, Vec<u8>)> {
        use std::io::{BufRead, Read, Write};
        for _attempt in 0..2 {
            if self.conn.is_none() {
                let s = server();
                let sock = std::net::TcpStream::connect((s.host.as_str(), s.http_port)).ok()?;
                self.conn = Some(std::io::BufReader::new(sock));
            }
            let r = self.conn.as_mut()?;
            let req =
                format!("POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n{body}", body.len());
            if r.get_mut().write_all(req.as_bytes()).is_err() {
                self.conn = None;
                continue;
            }
            let mut status = String::new();
            if r.read_line(&mut status).ok()? == 0 {
                self.conn = None;
                continue;
            }
            let (mut length, mut chunked, mut close) = (None, false, false);
            loop {
                let mut line = String::new();
                r.read_line(&mut line).ok()?;
                let l = line.trim_end().to_ascii_lowercase();
                if l.is_empty() {
                    break;
                }
                if let Some(v) = l.strip_prefix("content-length:") {
                    length = v.trim().parse::<usize>().ok();
                } else if l.starts_with("transfer-encoding:") && l.contains("chunked") {
                    chunked = true;
                } else if l.starts_with("connection:") && l.contains("close") {
                    close = true;
                }
            }
            let mut out = Vec::new();
            if chunked {
                loop {
                    let mut size = String::new();
                    r.read_line(&mut size).ok()?;
                    let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
                    let mut chunk = vec![0; n + 2];
                    r.read_exact(&mut chunk).ok()?;
                    chunk.truncate(n);
                    out.extend_from_slice(&chunk);
                    if n == 0 {
                        break;
                    }
                }
            } else if let Some(n) = length {
                out.resize(n, 0);
                r.read_exact(&mut out).ok()?;
            } else {
                r.read_to_end(&mut out).ok()?;
                close = true;
            }
            if close {
                self.conn = None;
            }
            return Some((status, out));
        }
        None
    }
}

/// The server's output over HTTP, or `None` when it refuses the statement.
fn run_http(http: &mut Http, sql: &str, format: &str, profile: &Profile) -> Option<Vec<u8>> {
    let mut path = String::from("/");
    for (k, (name, value)) in profile.settings.iter().enumerate() {
        path.push(if k == 0 { '?' } else { '&' });
        path.push_str(name);
        path.push('=');
        path.push_str(&value.replace('/', "%2F"));
    }
    let (status, body) = http.post(&path, &format!("{sql}\nFORMAT {format}"))?;
    if !status.starts_with("HTTP/1.1 200") {
        return None;
    }
    // An error after the first bytes of the answer comes at its end.
    if find(&body, b"DB::Exception").is_some() && !sql.contains("Exception") {
        return None;
    }
    Some(body)
}

/// The library's dynamic rows as TSVRaw writes them: values tab-separated,
/// strings as their bytes, NULL as `\N`, everything else as `Display` (the
/// server's toString).
fn dynamic_rows(
    rt: &tokio::runtime::Runtime,
    conn: &mut chnative::Connection,
    sql: &str,
    profile: &Profile,
) -> Result<Vec<u8>, String> {
    rt.block_on(async {
        let mut q = chnative::Query::new(sql.to_string());
        for (k, v) in profile.settings {
            q = q.setting(*k, *v);
        }
        let rows = conn.fetch_all_values(q).await.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for row in rows {
            for (k, v) in row.values().iter().enumerate() {
                if k > 0 {
                    out.push(b'\t');
                }
                match v {
                    chnative::Value::Null => out.extend_from_slice(b"\\N"),
                    chnative::Value::String(b) | chnative::Value::FixedString(b) => out.extend_from_slice(b),
                    v => out.extend_from_slice(v.to_string().as_bytes()),
                }
            }
            out.push(b'\n');
        }
        Ok(out)
    })
}

#[derive(Default)]
struct Tally {
    compared: u64,
    equal: u64,
    listed: u64,
    /// Differences not listed: what, where, and both outputs.
    unlisted: Vec<String>,
    /// Statements the server refused.
    server_errors: u64,
    per_format: BTreeMap<String, (u64, u64, u64)>,
}

impl Tally {
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        known: &[Known],
        stmt: &Stmt,
        format: &str,
        profile: &str,
        ours: Option<&[u8]>,
        theirs: &[u8],
    ) {
        self.compared += 1;
        let e = self.per_format.entry(format.to_string()).or_default();
        e.0 += 1;
        let ours = ours.map(normalise);
        let theirs = normalise(theirs);
        if ours.as_deref() == Some(&theirs[..]) {
            self.equal += 1;
            e.1 += 1;
            return;
        }
        e.2 += 1;
        if let Some(k) = known.iter().find(|k| k.covers(format, profile, &stmt.sql)) {
            k.used.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.listed += 1;
            return;
        }
        let show = |b: &[u8]| {
            let s = String::from_utf8_lossy(b);
            let s: String = s.chars().take(1500).collect();
            s.replace('\t', "⇥").replace('\r', "␍")
        };
        self.unlisted.push(format!(
            "--- {} [{format}, {profile}]\n{}\n--- chn:\n{}\n--- server:\n{}",
            stmt.place,
            stmt.sql,
            ours.as_deref().map_or("(failed)".to_string(), show),
            show(&theirs)
        ));
    }
}

#[test]
fn chn_and_the_library_show_what_the_server_shows() {
    server();
    let stmts = statements();
    let known = known();
    let tally = Mutex::new(Tally::default());
    // (profile, format) jobs, run by a few threads: chn runs while the HTTP answers are fetched.
    let mut jobs: Vec<(&Profile, Option<&str>)> = Vec::new();
    for p in PROFILES {
        for f in p.formats {
            jobs.push((p, Some(f)));
        }
        if p.dynamic_rows {
            jobs.push((p, None));
        }
    }
    // For working on it: CHN_CONFORMANCE_ONLY=profile/format,… runs those jobs only.
    if let Ok(only) = std::env::var("CHN_CONFORMANCE_ONLY") {
        jobs.retain(|(p, f)| {
            only.split(',').any(|o| o == p.name || o == format!("{}/{}", p.name, f.unwrap_or("dynamic-rows")))
        });
    }
    let jobs = Mutex::new(jobs.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| loop {
                let Some((profile, format)) = jobs.lock().unwrap().next() else { return };
                let mut http = Http::new();
                let Some(format) = format else {
                    // The library's dynamic rows against the server's TSVRaw.
                    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
                    let url = chnative_testkit::server::url("");
                    let mut conn = rt.block_on(chnative::Connection::connect(&url)).expect("connect");
                    for s in stmts.iter().filter(|s| profile.takes(s)) {
                        let Some(mut theirs) = run_http(&mut http, &s.sql, "TSVRaw", profile) else {
                            tally.lock().unwrap().server_errors += 1;
                            continue;
                        };
                        // Dynamic rows are the data rows: the server's totals and extremes
                        // (after a blank line) are not among them.
                        if s.sql.contains("TOTALS") || s.sql.contains("extremes") {
                            if theirs.starts_with(b"\n") {
                                theirs.clear();
                            } else if let Some(p) = find(&theirs, b"\n\n") {
                                theirs.truncate(p + 1);
                            }
                        }
                        let ours = match dynamic_rows(&rt, &mut conn, &s.sql, profile) {
                            Ok(o) => Some(o),
                            Err(_) => {
                                // A failed query may leave the connection unusable: a new one.
                                conn = rt.block_on(chnative::Connection::connect(&url)).expect("connect");
                                None
                            }
                        };
                        tally.lock().unwrap().record(&known, s, "dynamic-rows", profile.name, ours.as_deref(), &theirs);
                    }
                    continue;
                };
                let core = CORE_FORMATS.contains(&format);
                let mine: Vec<&Stmt> = stmts
                    .iter()
                    .filter(|s| profile.takes(s) && (core || s.place.starts_with("types.sql") || totals(s)))
                    .collect();
                let ours = std::thread::scope(|inner| {
                    let chn = inner.spawn(|| run_chn(&mine, format, profile));
                    let theirs: Vec<Option<Vec<u8>>> =
                        mine.iter().map(|s| run_http(&mut http, &s.sql, format, profile)).collect();
                    (chn.join().expect("chn thread"), theirs)
                });
                let (ours, theirs) = ours;
                let mut t = tally.lock().unwrap();
                for (k, s) in mine.iter().enumerate() {
                    match &theirs[k] {
                        None => t.server_errors += 1,
                        Some(theirs) => t.record(&known, s, format, profile.name, ours[k].as_deref(), theirs),
                    }
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    eprintln!(
        "conformance: {} statements; {} compared, {} equal, {} different ({} listed in known.txt, {} not); {} refused by the server",
        stmts.len(),
        t.compared,
        t.equal,
        t.compared - t.equal,
        t.listed,
        t.unlisted.len(),
        t.server_errors
    );
    for (f, (c, e, d)) in &t.per_format {
        eprintln!("  {f:32} compared {c:5}  equal {e:5}  different {d:4}");
    }
    for k in &known {
        if k.used.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            eprintln!(
                "conformance: known.txt entry matched no difference (fixed?): {}\t{}\t{}\t{}",
                k.formats, k.profiles, k.needle, k.reason
            );
        }
    }
    // CHN_CONFORMANCE_OUT=file: every unlisted difference, in full.
    if let Ok(path) = std::env::var("CHN_CONFORMANCE_OUT") {
        let _ = std::fs::write(path, t.unlisted.join("\n"));
    }
    assert!(
        t.unlisted.is_empty(),
        "{} differences not listed in tests/conformance/known.txt:\n{}",
        t.unlisted.len(),
        t.unlisted.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
