//! chn: a ClickHouse command-line client over the native TCP protocol, built
//! on the chnative library.

mod args;
mod connect;
mod format;
mod insert;
mod interactive;
mod output;
mod parse;
mod progress;
mod render;
mod split;

use std::io::{IsTerminal, Read, Write};
use std::sync::{Arc, Mutex};

use chnative::{CancelHandle, Config, Connection, Query, ToParam};

use crate::output::{Format, Output};
use crate::progress::Tracker;
use crate::render::FormatSettings;
use crate::split::Statement;

/// Exit codes.
mod exit {
    /// A query or the connection failed.
    pub const ERROR: i32 = 1;
    /// Bad command-line arguments.
    pub const USAGE: i32 = 2;
    /// Interrupted with Ctrl-C.
    pub const INTERRUPTED: i32 = 130;
    /// The output was closed (e.g. `| head`).
    pub const BROKEN_PIPE: i32 = 141;
}

/// How a statement failed.
#[derive(Debug)]
pub enum Failure {
    /// The library's error (server, connection, …).
    Client(chnative::Error),
    /// Something the user asked that cannot be done, or bad input data.
    Usage(String),
    /// The query was cancelled with Ctrl-C.
    Cancelled,
    /// The output was closed.
    BrokenPipe,
    /// Writing the output failed otherwise.
    Io(std::io::Error),
}

impl From<chnative::Error> for Failure {
    fn from(e: chnative::Error) -> Self {
        Failure::Client(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Io(e)
        }
    }
}

impl From<output::anyhow_like::Error> for Failure {
    fn from(e: output::anyhow_like::Error) -> Self {
        match e {
            output::anyhow_like::Error::Io(e) => e.into(),
            output::anyhow_like::Error::Client(e) => e.into(),
        }
    }
}

impl Failure {
    /// The message for stderr: one line, with a hint where one helps.
    fn message(&self) -> String {
        match self {
            Failure::Client(e) => {
                let hint = match (e.kind(), e.server_code()) {
                    (_, Some(516)) => {
                        " (set the password in CLICKHOUSE_PASSWORD, or use --ask-password; check --user)".to_string()
                    }
                    (chnative::ErrorKind::Io, _) | (chnative::ErrorKind::Timeout, _) if is_connect(e) => {
                        " (is the server running? check --host, --port and --secure)".to_string()
                    }
                    _ => String::new(),
                };
                format!("{e}{hint}")
            }
            Failure::Usage(m) => m.clone(),
            Failure::Cancelled => "query cancelled".into(),
            Failure::BrokenPipe => "the output was closed".into(),
            Failure::Io(e) => format!("writing the output: {e}"),
        }
    }

    fn exit_code(&self) -> i32 {
        match self {
            Failure::Cancelled => exit::INTERRUPTED,
            Failure::BrokenPipe => exit::BROKEN_PIPE,
            _ => exit::ERROR,
        }
    }
}

fn is_connect(e: &chnative::Error) -> bool {
    e.is_connect()
}

/// A parameter value passed as the text given (the server parses it for the
/// placeholder's type, as clickhouse-client's `--param_` does).
struct RawParam(String);

impl ToParam for RawParam {
    fn to_param(&self) -> String {
        self.0.clone()
    }
}

/// What Ctrl-C does right now.
#[derive(Default)]
struct SignalState {
    /// The running query's cancel handle and progress line.
    running: Option<(CancelHandle, Tracker)>,
    /// Ctrl-C presses since the query started.
    presses: u32,
}

/// The client: one connection (made again if it breaks) and the options.
pub struct App {
    conn: Option<Connection>,
    config: Config,
    settings: Vec<(String, String)>,
    params: Vec<(String, String)>,
    format_settings: FormatSettings,
    /// `--format` (or `--vertical`).
    format: Option<Format>,
    /// Whether the interactive prompt is running (the default format is then Pretty).
    interactive: bool,
    time: bool,
    show_progress: bool,
    /// `--pager` / `CHN_PAGER`: results go through it when stdout is a terminal.
    pager: Option<String>,
    batch_rows: usize,
    /// Standard input holds INSERT data (queries came from elsewhere).
    stdin_is_data: bool,
    signals: Arc<Mutex<SignalState>>,
    connected_once: bool,
    /// The output-format settings changed in the server's session (profile,
    /// `SET`), read once per connection and again after each `SET`.
    session_formats: Option<Vec<(String, String)>>,
    /// `--ignore-error`: a failing statement does not stop the ones after it.
    ignore_error: bool,
    /// `--echo`: each statement is printed before its result.
    echo: bool,
}

impl App {
    async fn conn(&mut self) -> Result<&mut Connection, Failure> {
        let usable = self.conn.as_ref().is_some_and(Connection::is_usable);
        if !usable {
            self.conn = None;
            let c = Connection::connect_with(self.config.clone()).await?;
            if self.connected_once && self.interactive {
                eprintln!("chn: reconnected (settings made with SET in the old session are gone)");
            }
            self.connected_once = true;
            self.conn = Some(c);
            self.session_formats = None;
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    fn default_format(&self) -> Format {
        if self.interactive {
            Format::Pretty
        } else {
            Format::Tsv
        }
    }

    /// The format settings changed in the server's session (its profile and
    /// `SET`s), as `system.settings` shows them.
    async fn session_formats(&mut self) -> Result<Vec<(String, String)>, Failure> {
        if let Some(s) = &self.session_formats {
            return Ok(s.clone());
        }
        let list = format::settings::NAMES.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
        let sql = format!("SELECT name, value FROM system.settings WHERE changed AND name IN ({list})");
        let conn = self.conn().await?;
        let mut found = Vec::new();
        let mut stream = conn.fetch_blocks(sql).await?;
        while let Some(block) = stream.next().await? {
            let cols = block.columns();
            if cols.len() != 2 {
                continue;
            }
            let (names, values) = (
                cols[0].view().as_strings().map_err(chnative::Error::from)?,
                cols[1].view().as_strings().map_err(chnative::Error::from)?,
            );
            for i in 0..block.rows() {
                found.push((
                    String::from_utf8_lossy(names.bytes(i)).into_owned(),
                    String::from_utf8_lossy(values.bytes(i)).into_owned(),
                ));
            }
        }
        drop(stream);
        self.session_formats = Some(found.clone());
        Ok(found)
    }

    /// The format settings of a statement: the server's session, then the
    /// command line, then the statement's own `SETTINGS`.
    async fn format_settings(&mut self, sql: &str) -> Result<FormatSettings, Failure> {
        let mut s = FormatSettings::default();
        // A session whose settings cannot be read (no access to system.settings) keeps the
        // defaults; a broken connection shows up on the statement itself.
        let session = match self.session_formats().await {
            Ok(found) => found,
            Err(_) => {
                self.session_formats = Some(Vec::new());
                Vec::new()
            }
        };
        for (k, v) in session {
            // A value the server holds is one it accepted; one chn cannot read keeps the default.
            let _ = s.apply(&k, &v);
        }
        for (k, v) in &self.settings {
            s.apply(k, v).map_err(Failure::Usage)?;
        }
        for (k, v) in format::settings::of_query(sql) {
            s.apply(&k, &v).map_err(Failure::Usage)?;
        }
        Ok(s)
    }

    /// Runs one statement and writes its result.
    async fn run(&mut self, stmt: &Statement) -> Result<(), Failure> {
        if let Some(ins) = insert::parse_statement(&stmt.sql).map_err(Failure::Usage)? {
            return self.insert(ins).await;
        }
        if format::settings::is_set(&stmt.sql) {
            // The session's settings change: read them again before the next result.
            self.session_formats = None;
            return self.run_query(stmt).await.inspect(|()| self.session_formats = None);
        }
        self.run_query(stmt).await
    }

    /// Runs a statement that is not an INSERT with data and writes its result.
    async fn run_query(&mut self, stmt: &Statement) -> Result<(), Failure> {
        let settings = self.format_settings(&stmt.sql).await?;
        let format = match query_format(&stmt.sql) {
            Some(name) => Format::parse(&name).ok_or_else(|| {
                Failure::Usage(format!("format {name} is not one chn writes; it writes {}", Format::NAMES))
            })?,
            None if stmt.vertical => Format::Vertical,
            None => self.format.unwrap_or_else(|| self.default_format()),
        };
        // A pager owns the terminal: no progress line drawn over it.
        let paging = self.pager.clone().filter(|_| std::io::stdout().is_terminal());
        let tracker = Tracker::start(self.show_progress && paging.is_none());
        let mut q = Query::new(stmt.sql.clone()).observer(tracker.clone());
        let user_settings = self.settings.clone();
        for (k, v) in &self.params {
            q = q.bind(k.clone(), RawParam(v.clone()));
        }
        let interactive = self.interactive;
        let time = self.time;
        let signals = self.signals.clone();
        let conn = match self.conn().await {
            Ok(c) => c,
            Err(e) => {
                tracker.finish();
                return Err(e);
            }
        };
        let info = conn.server_info();
        // JSON columns as text, from servers that know the setting (24.10 and later; an
        // older one would refuse the query with UNKNOWN_SETTING). The user's settings come
        // after it and can override it.
        if info.sends_json_as_text() {
            q = q.setting(chnative::proto::JSON_AS_STRING_SETTING, "1");
        }
        for (k, v) in user_settings {
            q = q.setting(k, v);
        }
        let width = if std::io::stdout().is_terminal() {
            console::Term::stdout().size_checked().map(|(_, w)| usize::from(w))
        } else {
            None
        };
        let mut stream = match conn.fetch_blocks(q).await {
            Ok(s) => s,
            Err(e) => {
                tracker.finish();
                return Err(e.into());
            }
        };
        if let Ok(mut s) = signals.lock() {
            s.running = Some((stream.cancel_handle(), tracker.clone()));
            s.presses = 0;
        }
        let mut pager = None;
        let sink: Box<dyn Write + Send> = match &paging {
            Some(cmd) => match Pager::start(cmd) {
                Ok(mut p) => {
                    let stdin = p.stdin();
                    pager = Some(p);
                    stdin
                }
                Err(e) => {
                    tracker.finish();
                    return Err(Failure::Usage(format!("starting the pager `{cmd}`: {e}")));
                }
            },
            None => Box::new(std::io::stdout()),
        };
        let writer = Suspending { bar: tracker.bar().cloned(), out: sink };
        // Zone-less DateTime columns in the zone the server used (SET, SETTINGS, profile).
        let tz = stream.timezone().to_string();
        let mut out = Output::new(format, settings, &tz, writer, width);
        let mut result: Result<(), Failure> = Ok(());
        loop {
            match stream.next().await {
                Ok(Some(block)) => {
                    if let Err(e) = out.block(block) {
                        result = Err(e.into());
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) if e.kind() == chnative::ErrorKind::Cancelled => {
                    result = Err(Failure::Cancelled);
                    break;
                }
                Err(e) => {
                    result = Err(e.into());
                    break;
                }
            }
        }
        if let Ok(mut s) = signals.lock() {
            s.running = None;
        }
        if result.is_ok() {
            if let Some(t) = stream.totals() {
                if let Err(e) = out.totals(t) {
                    result = Err(e.into());
                }
            }
            if let Some(x) = stream.extremes() {
                if let Err(e) = out.extremes(x) {
                    result = Err(e.into());
                }
            }
        }
        if result.is_ok() || matches!(result, Err(Failure::Cancelled)) {
            let progress = stream.progress();
            let trailer = format::Trailer {
                rows_before_limit: stream.profile_info().filter(|p| p.applied_limit).map(|p| p.rows_before_limit),
                elapsed: tracker.elapsed().as_secs_f64(),
                rows_read: progress.read_rows,
                bytes_read: progress.read_bytes,
                ..Default::default()
            };
            if let Err(e) = out.finish(stream.header(), trailer) {
                result = Err(e.into());
            }
        }
        tracker.finish();
        let rows = out.rows();
        drop(out);
        drop(stream);
        if let Some(p) = pager {
            // Its input is closed: wait until the user quits it. Quitting it
            // early closed the pipe, which is not an error when paging.
            p.wait();
            if matches!(result, Err(Failure::BrokenPipe)) {
                result = Ok(());
            }
        }
        let elapsed = tracker.elapsed();
        if matches!(result, Err(Failure::Cancelled)) {
            eprintln!(
                "Query was cancelled. {} rows received. Elapsed: {:.3} sec. Processed {}",
                rows,
                elapsed.as_secs_f64(),
                progress::processed(&tracker.total(), elapsed)
            );
        } else if result.is_ok() && interactive {
            eprintln!(
                "{} row{} in set. Elapsed: {:.3} sec. Processed {}",
                rows,
                if rows == 1 { "" } else { "s" },
                elapsed.as_secs_f64(),
                progress::processed(&tracker.total(), elapsed)
            );
        }
        if time && !interactive {
            eprintln!("{:.3}", elapsed.as_secs_f64());
        }
        result
    }

    /// `INSERT … FORMAT X` with the data on standard input (or inline).
    async fn insert(&mut self, ins: insert::InsertStatement) -> Result<(), Failure> {
        let data: Box<dyn std::io::BufRead> = match (&ins.inline, self.stdin_is_data) {
            (Some(text), _) => Box::new(std::io::Cursor::new(text.clone().into_bytes())),
            (None, true) => Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin())),
            (None, false) => {
                return Err(Failure::Usage(
                    "INSERT … FORMAT reads its data from standard input: run it with --query and the data on \
                     stdin (chn --query 'INSERT INTO t FORMAT CSV' < data.csv), or put the data after the \
                     format name"
                        .into(),
                ))
            }
        };
        if ins.format == insert::InFormat::Server {
            return self.insert_raw(ins, data).await;
        }
        let tracker = Tracker::start(self.show_progress);
        tracker.note("Inserting: reading the table's columns");
        let time = self.time;
        let settings = self.settings.clone();
        let batch_rows = self.batch_rows.max(1);
        let delimiter = self.format_settings.csv_delimiter;
        let result = async {
            let conn = self.conn().await?;
            let tz: Arc<str> = Arc::from(conn.server_info().timezone.as_str());
            let list = if ins.columns.is_empty() { "*".to_string() } else { ins.columns.join(", ") };
            let mut header = conn.fetch_blocks(format!("SELECT {list} FROM {} LIMIT 0", ins.table)).await?;
            while header.next().await?.is_some() {}
            let columns: insert::Columns = header
                .header()
                .map(|h| h.columns().iter().map(|c| (c.name().to_string(), c.data_type().clone())).collect())
                .unwrap_or_default();
            drop(header);
            let mut batcher = insert::Batcher::new(columns, tz).map_err(Failure::Usage)?;
            let mut reader = insert::RowReader::new(data, ins.format, delimiter);
            // Columns the statement leaves out get their DEFAULT (or the type's default), as the server does.
            let mut builder = conn.insert(&ins.table).allow_missing_columns();
            for (k, v) in settings.iter().chain(&ins.settings) {
                builder = builder.setting(k.clone(), v.clone());
            }
            let mut block_insert = builder.open().await?;
            let mut sent = 0u64;
            let mut bytes = 0u64;
            let started = std::time::Instant::now();
            let loaded = insert::load(&mut reader, &mut batcher, batch_rows, async |b: &insert::Batcher| {
                block_insert.write_columns(&b.data()).await?;
                sent += b.len() as u64;
                bytes += b.bytes() as u64;
                let secs = started.elapsed().as_secs_f64().max(1e-9);
                tracker.note(&format!(
                    "Inserted {} rows, {} ({} rows/s.)",
                    progress::quantity(sent as f64),
                    progress::size(bytes as f64),
                    progress::quantity(sent as f64 / secs)
                ));
                Ok(())
            })
            .await;
            match loaded {
                Ok(rows) => {
                    let summary = block_insert.end().await?;
                    Ok((rows, summary))
                }
                Err(e) => {
                    block_insert.abort();
                    Err(match e {
                        insert::LoadError::Input(e) => Failure::Usage(format!(
                            "{e}; the INSERT was aborted and nothing of the batch holding that line was sent"
                        )),
                        insert::LoadError::Client(e) => Failure::Client(e),
                    })
                }
            }
        }
        .await;
        tracker.finish();
        let (rows, _summary) = result?;
        if self.interactive {
            eprintln!("Ok. {rows} rows inserted. Elapsed: {:.3} sec.", tracker.elapsed().as_secs_f64());
        }
        if time && !self.interactive {
            eprintln!("{:.3}", tracker.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

impl App {
    /// `INSERT … FORMAT X` in a format chn does not read itself (Values,
    /// Parquet, …): the statement and the data, read whole, go to the server
    /// as one query text, and the server parses the data (its errors name
    /// the row). Memory holds the whole input.
    async fn insert_raw(
        &mut self,
        ins: insert::InsertStatement,
        mut data: Box<dyn std::io::BufRead>,
    ) -> Result<(), Failure> {
        let mut bytes = Vec::new();
        data.read_to_end(&mut bytes).map_err(|e| Failure::Usage(format!("reading the INSERT's data: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Failure::Usage(format!(
                "INSERT … FORMAT: chn sends data it does not parse itself as the query's text, which must be \
                 UTF-8; this input is not (convert it, or insert it over HTTP): {}",
                ins.head
            ))
        })?;
        let tracker = Tracker::start(self.show_progress);
        let mut q = Query::new(format!("{}\n{text}", ins.head));
        for (k, v) in &self.settings {
            q = q.setting(k.clone(), v.clone());
        }
        let result = async { self.conn().await?.execute(q).await.map_err(Failure::from) }.await;
        tracker.finish();
        result?;
        if self.interactive {
            eprintln!("Ok. Elapsed: {:.3} sec.", tracker.elapsed().as_secs_f64());
        }
        if self.time && !self.interactive {
            eprintln!("{:.3}", tracker.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

/// The format a query names at its end (`SELECT … FORMAT JSONEachRow`), if any.
fn query_format(sql: &str) -> Option<String> {
    let w = split::words(sql);
    let k = w.iter().rposition(|x| x.text == "FORMAT")?;
    let name = w.get(k + 1)?;
    // Only at the end, or before a SETTINGS clause.
    match w.get(k + 2) {
        None => {}
        Some(x) if x.text == "SETTINGS" => {}
        _ => return None,
    }
    Some(sql[name.start..name.end].trim_matches(['`', '"']).to_string())
}

/// A pager process (`sh -c COMMAND`) reading a result on its standard input.
struct Pager {
    child: std::process::Child,
}

impl Pager {
    fn start(command: &str) -> std::io::Result<Pager> {
        let child =
            std::process::Command::new("sh").arg("-c").arg(command).stdin(std::process::Stdio::piped()).spawn()?;
        Ok(Pager { child })
    }

    /// The pipe into the pager (taken once): dropping it ends the pager's input.
    fn stdin(&mut self) -> Box<dyn Write + Send> {
        match self.child.stdin.take() {
            Some(pipe) => Box::new(pipe),
            None => Box::new(std::io::sink()),
        }
    }

    /// Waits until the user quits the pager.
    fn wait(mut self) {
        let _ = self.child.wait();
    }
}

/// Writes to stdout (or a pager) with the progress line (on the same terminal) lifted.
struct Suspending {
    bar: Option<indicatif::ProgressBar>,
    out: Box<dyn Write + Send>,
}

impl Write for Suspending {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &self.bar {
            Some(bar) => bar.suspend(|| self.out.write(buf)),
            None => self.out.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match &self.bar {
            Some(bar) => bar.suspend(|| self.out.write_all(buf)),
            None => self.out.write_all(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Ctrl-C: the first press cancels the running query, the second quits; with
/// no query running it quits at once.
async fn watch_signals(mut interrupts: tokio::signal::unix::Signal, signals: Arc<Mutex<SignalState>>) {
    // One listener for the whole run: a press that comes while the previous
    // one is handled is kept, not lost between two listeners.
    loop {
        if interrupts.recv().await.is_none() {
            return;
        }
        let Ok(mut s) = signals.lock() else { return };
        s.presses += 1;
        match &s.running {
            Some((handle, tracker)) if s.presses == 1 => {
                handle.cancel();
                tracker.note("Cancelling the query (waiting for the server to stop it; Ctrl-C again quits)");
                if tracker.bar().is_none() {
                    eprintln!("Cancelling the query (Ctrl-C again quits)");
                }
            }
            _ => {
                if let Some((_, tracker)) = &s.running {
                    tracker.finish();
                }
                std::process::exit(exit::INTERRUPTED);
            }
        }
    }
}

fn main() {
    let args = match args::parse(std::env::args().collect()) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { exit::USAGE } else { 0 });
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chn: cannot start the runtime: {e}");
            std::process::exit(exit::ERROR);
        }
    };
    let code = rt.block_on(run(args));
    // Whatever is still running (a cancelled query draining) is not waited for.
    rt.shutdown_background();
    std::process::exit(code);
}

async fn run(args: args::Args) -> i32 {
    let args::Args { cli, params, settings } = args;
    let mut format_settings = FormatSettings::default();
    for (k, v) in &settings {
        if let Err(e) = format_settings.apply(k, v) {
            eprintln!("chn: {e}");
            return exit::USAGE;
        }
    }
    let format = if cli.vertical {
        Some(Format::Vertical)
    } else {
        match &cli.format {
            Some(f) => match Format::parse(f) {
                Some(f) => Some(f),
                None => {
                    eprintln!("chn: --format {f}: not one of {}", Format::NAMES);
                    return exit::USAGE;
                }
            },
            None => None,
        }
    };
    let config = match connect::config(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("chn: {e}");
            return exit::USAGE;
        }
    };
    let stdin_terminal = std::io::stdin().is_terminal();
    let has_queries = cli.query.is_some() || !cli.queries_file.is_empty();
    // The prompt comes (after --query with -i, or alone): its line editor is
    // made first, so that chn's Ctrl-C listener is registered after
    // rustyline's handler and sees every press (see interactive::LineEditor).
    let prompt_follows = stdin_terminal && (!has_queries || cli.interactive);
    let editor = if prompt_follows {
        match interactive::editor() {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("chn: {e}");
                return exit::ERROR;
            }
        }
    } else {
        None
    };
    let signals = Arc::new(Mutex::new(SignalState::default()));
    let listener = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("chn: Ctrl-C will not cancel queries: {e}");
            None
        }
    };
    if let Some(l) = listener {
        tokio::spawn(watch_signals(l, signals.clone()));
    }
    let mut app = App {
        conn: None,
        config,
        settings,
        params,
        format_settings,
        format,
        interactive: false,
        time: cli.time,
        show_progress: !cli.no_progress && std::io::stderr().is_terminal(),
        pager: cli.pager.clone().or_else(|| std::env::var("CHN_PAGER").ok()).filter(|p| !p.trim().is_empty()),
        batch_rows: cli.insert_batch_rows,
        stdin_is_data: has_queries && !stdin_terminal,
        signals,
        connected_once: false,
        session_formats: None,
        ignore_error: cli.ignore_error,
        echo: cli.echo,
    };
    if has_queries {
        let mut texts = Vec::new();
        if let Some(q) = &cli.query {
            texts.push(q.clone());
        }
        for f in &cli.queries_file {
            match std::fs::read_to_string(f) {
                Ok(t) => texts.push(t),
                Err(e) => {
                    eprintln!("chn: --queries-file {f}: {e}");
                    return exit::USAGE;
                }
            }
        }
        for text in texts {
            if let Err(code) = run_text(&mut app, &text).await {
                return code;
            }
        }
        if !cli.interactive || !stdin_terminal {
            return 0;
        }
    } else if !stdin_terminal {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("chn: reading queries from standard input: {e}");
            return exit::ERROR;
        }
        return match run_text(&mut app, &text).await {
            Ok(()) => 0,
            Err(code) => code,
        };
    }
    app.interactive = true;
    app.show_progress = !cli.no_progress && std::io::stderr().is_terminal();
    let Some(editor) = editor else {
        eprintln!("chn: the prompt needs a terminal on standard input");
        return exit::USAGE;
    };
    interactive::run(&mut app, editor, cli.history_file.as_deref()).await
}

/// Runs the statements of a text in turn, stopping at the first failure
/// (its exit code).
async fn run_text(app: &mut App, text: &str) -> Result<(), i32> {
    let (mut stmts, rest) = split::split(text);
    if !split::is_blank(rest) {
        stmts.push(Statement { sql: rest.trim().to_string(), vertical: false });
    }
    let mut failed = None;
    for stmt in &stmts {
        if app.echo {
            let mut out = std::io::stdout();
            if let Err(e) = out.write_all(format!("{}\n", stmt.sql).as_bytes()).and_then(|()| out.flush()) {
                let f = Failure::from(e);
                report(&f);
                return Err(f.exit_code());
            }
        }
        if let Err(f) = app.run(stmt).await {
            report(&f);
            if !app.ignore_error || matches!(f, Failure::Cancelled | Failure::BrokenPipe) {
                return Err(f.exit_code());
            }
            failed = Some(f.exit_code());
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Prints a failure on stderr (a closed output is not worth a message).
fn report(f: &Failure) {
    match f {
        Failure::BrokenPipe | Failure::Cancelled => {}
        f => eprintln!("chn: {}", f.message()),
    }
}
