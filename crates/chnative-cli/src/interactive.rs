//! The interactive prompt: rustyline for editing, multi-line statements (one
//! ends at `;` or `\G`), a history file (`~/.chn_history`) and Ctrl-R search.

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{FileHistory, History};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Config, Editor, Helper};

use crate::split;
use crate::App;

/// Client commands that need no `;`.
fn is_command(line: &str) -> bool {
    matches!(line.trim().to_ascii_lowercase().as_str(), "exit" | "quit" | "q" | "\\q" | "logout" | "bye")
}

/// Accepts the input when it ends a statement (`;` or `\G` outside quotes and
/// comments), is a client command, or is empty; otherwise Enter adds a line.
pub struct StatementEnd;

impl Helper for StatementEnd {}
impl Completer for StatementEnd {
    type Candidate = String;
}
impl Hinter for StatementEnd {
    type Hint = String;
}
impl Highlighter for StatementEnd {}

impl Validator for StatementEnd {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        let input = ctx.input();
        if split::is_blank(input) || is_command(input) {
            return Ok(ValidationResult::Valid(None));
        }
        let (stmts, rest) = split::split(input);
        if !stmts.is_empty() && split::is_blank(rest) {
            Ok(ValidationResult::Valid(None))
        } else {
            Ok(ValidationResult::Incomplete)
        }
    }
}

fn history_path(given: Option<&str>) -> Option<std::path::PathBuf> {
    if let Some(p) = given {
        return Some(p.into());
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| std::path::Path::new(&h).join(".chn_history"))
}

/// The prompt's line editor. Made before chn listens for Ctrl-C: creating it
/// installs rustyline's own SIGINT handler for its whole life (without
/// chaining to an earlier one), so chn's listener must be registered after it
/// (tokio's handler chains to the one it finds).
pub type LineEditor = Editor<StatementEnd, FileHistory>;

/// Makes the prompt's line editor (see [`LineEditor`]).
pub fn editor() -> Result<LineEditor, String> {
    let config = Config::builder()
        .max_history_size(10_000)
        .map(|b| b.auto_add_history(false).build())
        .map_err(|e| e.to_string())?;
    Editor::with_config(config).map_err(|e| format!("cannot start the prompt: {e}"))
}

/// Runs the prompt until `exit` or Ctrl-D; returns the exit code.
pub async fn run(app: &mut App, mut rl: LineEditor, history_file: Option<&str>) -> i32 {
    rl.set_helper(Some(StatementEnd));
    let history = history_path(history_file);
    if let Some(h) = &history {
        // A missing file is a first run.
        let _ = rl.load_history(h);
    }
    match app.conn().await {
        Ok(c) => {
            let i = c.server_info();
            eprintln!(
                "Connected to {} server version {}.{}.{} ({}). Statements end with ; (or \\G for vertical output); exit or Ctrl-D quits.",
                i.name, i.version.0, i.version.1, i.version.2, i.display_name
            );
        }
        Err(f) => {
            eprintln!("chn: {}", f.message());
            return f.exit_code();
        }
    }
    let mut last_failed = false;
    loop {
        let prompt = "chn :) ";
        match rl.readline(prompt) {
            Ok(input) => {
                if split::is_blank(&input) {
                    continue;
                }
                let _ = rl.history_mut().add(input.trim());
                if let Some(h) = &history {
                    if let Err(e) = rl.save_history(h) {
                        eprintln!("chn: warning: cannot save the history to {}: {e}", h.display());
                    }
                }
                if is_command(&input) {
                    break;
                }
                let (stmts, _) = split::split(&input);
                for stmt in &stmts {
                    match app.run(stmt).await {
                        Ok(()) => last_failed = false,
                        Err(crate::Failure::Cancelled) => last_failed = false,
                        Err(f) => {
                            eprintln!("chn: {}", f.message());
                            last_failed = true;
                            break;
                        }
                    }
                }
                println!();
            }
            // Ctrl-C at the prompt clears the line.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("chn: the prompt failed: {e}");
                return crate::exit::ERROR;
            }
        }
    }
    eprintln!("Bye.");
    if last_failed {
        crate::exit::ERROR
    } else {
        0
    }
}
