//! Command-line arguments: clap for the client's own options; `--param_NAME=value`
//! and any other `--name=value` (a server setting) are taken out first.

use clap::{CommandFactory, Parser};

/// chn: a ClickHouse client over the native TCP protocol.
///
/// Runs `--query` (or the queries of `--queries-file`, or of standard input)
/// and prints the results; with no query and a terminal, starts an
/// interactive prompt. Any other `--name=value` is sent as a server setting
/// with each query (`--max_threads=4`), and `--param_NAME=value` fills the
/// `{NAME:Type}` placeholders.
#[derive(Parser, Debug, Default)]
#[command(name = "chn", version, about, long_about = None, disable_help_flag = true)]
pub struct Cli {
    /// Connection URL: clickhouse://user@host:port/database?option=value (clickhouses:// for TLS).
    #[arg(value_name = "URL")]
    pub url_arg: Option<String>,
    /// Connection URL (same as the positional URL).
    #[arg(long = "url", value_name = "URL", conflicts_with = "url_arg")]
    pub url: Option<String>,
    /// Server host, or several for failover: `a:9000,b:9000`.
    #[arg(long, value_name = "HOST[:PORT][,…]")]
    pub host: Option<String>,
    /// Native protocol port (9000, or 9440 with --secure).
    #[arg(long)]
    pub port: Option<u16>,
    /// User name.
    #[arg(long, short = 'u')]
    pub user: Option<String>,
    /// Password. Visible to everyone in the process list: prefer the
    /// CLICKHOUSE_PASSWORD environment variable or --ask-password.
    #[arg(long)]
    pub password: Option<String>,
    /// Ask for the password on the terminal.
    #[arg(long)]
    pub ask_password: bool,
    /// Default database.
    #[arg(long, short = 'd')]
    pub database: Option<String>,
    /// Connect over TLS.
    #[arg(long, short = 's')]
    pub secure: bool,
    /// Extra trusted CA certificate (PEM) for TLS.
    #[arg(long, value_name = "FILE")]
    pub tls_ca_file: Option<String>,
    /// Client certificate (PEM) for mutual TLS (with --tls-key-file).
    #[arg(long, value_name = "FILE", requires = "tls_key_file")]
    pub tls_cert_file: Option<String>,
    /// Client private key (PEM) for mutual TLS (with --tls-cert-file).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_key_file: Option<String>,
    /// The name to verify in the server's certificate (default: the host).
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// Wire compression: auto (the default: chosen per query from the link), none, lz4, zstd.
    #[arg(long, value_name = "METHOD")]
    pub compression: Option<String>,
    /// The query to run (several statements separated by `;` are run in turn).
    #[arg(long, short = 'q')]
    pub query: Option<String>,
    /// Files of queries separated by `;` (may be given several times).
    #[arg(long, value_name = "FILE")]
    pub queries_file: Vec<String>,
    /// Output format: TSV (default without a terminal prompt), CSV, JSONEachRow,
    /// Vertical, Pretty (default at the interactive prompt), PrettyCompact,
    /// TSVWithNames, CSVWithNames, Null.
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,
    /// Vertical output (same as --format Vertical).
    #[arg(long = "vertical", short = 'E')]
    pub vertical: bool,
    /// Print each statement (and a line end) on standard output before its result.
    #[arg(long)]
    pub echo: bool,
    /// Run every statement even when some fail (the exit code is then that of
    /// the last failure).
    #[arg(long)]
    pub ignore_error: bool,
    /// Print each query's elapsed time (seconds) to stderr.
    #[arg(long, short = 't')]
    pub time: bool,
    /// Do not show the progress line on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Pipe each result through this command (run by `sh -c`) when standard
    /// output is a terminal, e.g. `--pager 'less -SR'` for wide results; also
    /// taken from `CHN_PAGER`. The progress line is not drawn while paging;
    /// quitting the pager early cancels the query.
    #[arg(long, value_name = "COMMAND")]
    pub pager: Option<String>,
    /// Run --query / --queries-file first, then start the interactive prompt.
    #[arg(long, short = 'i')]
    pub interactive: bool,
    /// History file of the interactive prompt (default ~/.chn_history).
    #[arg(long, value_name = "FILE")]
    pub history_file: Option<String>,
    /// Rows per INSERT block when inserting from standard input.
    #[arg(long, value_name = "ROWS", default_value_t = 65_536)]
    pub insert_batch_rows: usize,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

/// Everything from the command line.
#[derive(Debug, Default)]
pub struct Args {
    /// The client's own options.
    pub cli: Cli,
    /// `--param_NAME=value`.
    pub params: Vec<(String, String)>,
    /// Any other `--name=value`: server settings.
    pub settings: Vec<(String, String)>,
}

/// Whether `name` can be a setting or parameter name (an identifier).
fn is_identifier(name: &str) -> bool {
    let mut b = name.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Parses the command line (`argv` without the program name is `args[1..]`).
pub fn parse(args: Vec<String>) -> Result<Args, clap::Error> {
    let cmd = Cli::command();
    let known: Vec<String> = cmd.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
    // Options of ours that take a value (for `--opt value` with the value next).
    let takes_value: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.get_action().takes_values())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut params = Vec::new();
    let mut settings = Vec::new();
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    if let Some(program) = it.next() {
        rest.push(program);
    }
    while let Some(arg) = it.next() {
        if arg == "--" {
            rest.push(arg);
            rest.extend(it.by_ref());
            break;
        }
        let Some(long) = arg.strip_prefix("--") else {
            rest.push(arg);
            continue;
        };
        let (name, value) = match long.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (long.to_string(), None),
        };
        let option = name.replace('_', "-");
        if known.contains(&name) || known.contains(&option) && !name.starts_with("param_") {
            // Ours (with `_` or `-`): clap parses it.
            let takes = takes_value.contains(&option);
            rest.push(match value {
                Some(v) => format!("--{option}={v}"),
                None => format!("--{option}"),
            });
            if takes && !long.contains('=') {
                if let Some(v) = it.next() {
                    rest.push(v);
                }
            }
            continue;
        }
        let mut value_or_next = |what: &str| -> Result<String, clap::Error> {
            match value.clone() {
                Some(v) => Ok(v),
                None => it.next().ok_or_else(|| {
                    Cli::command()
                        .error(clap::error::ErrorKind::InvalidValue, format!("--{name}: the {what} needs a value"))
                }),
            }
        };
        if let Some(p) = name.strip_prefix("param_") {
            if !is_identifier(p) {
                return Err(Cli::command().error(
                    clap::error::ErrorKind::InvalidValue,
                    format!("--{name}: `{p}` is not a parameter name (letters, digits and _)"),
                ));
            }
            let v = value_or_next("parameter")?;
            params.push((p.to_string(), v));
        } else if is_identifier(&name) && name.contains('_') || value.is_some() && is_identifier(&name) {
            let v = value_or_next("setting")?;
            settings.push((name, v));
        } else {
            rest.push(arg);
        }
    }
    let cli = Cli::try_parse_from(rest)?;
    Ok(Args { cli, params, settings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Args {
        parse(std::iter::once("chn").chain(args.iter().copied()).map(String::from).collect()).unwrap()
    }

    #[test]
    fn params_settings_and_options() {
        let a = p(&[
            "--query",
            "SELECT {x:UInt8}",
            "--param_x=5",
            "--param_y",
            "a b",
            "--max_threads=2",
            "--max_block_size",
            "10",
            "--queries_file=f.sql",
            "--format=CSV",
            "--time",
        ]);
        assert_eq!(a.cli.query.as_deref(), Some("SELECT {x:UInt8}"));
        assert_eq!(a.params, [("x".to_string(), "5".to_string()), ("y".to_string(), "a b".to_string())]);
        assert_eq!(
            a.settings,
            [("max_threads".to_string(), "2".to_string()), ("max_block_size".to_string(), "10".to_string())]
        );
        assert_eq!(a.cli.queries_file, ["f.sql"]);
        assert_eq!(a.cli.format.as_deref(), Some("CSV"));
        assert!(a.cli.time);
    }

    #[test]
    fn url_positional() {
        let a = p(&["clickhouse://u@h:9000/db", "-q", "SELECT 1"]);
        assert_eq!(a.cli.url_arg.as_deref(), Some("clickhouse://u@h:9000/db"));
    }

    #[test]
    fn unknown_flag_without_value_is_an_error() {
        assert!(parse(vec!["chn".into(), "--bogus".into()]).is_err());
    }
}
