//! The connection settings from the URL and the flags, and the password from
//! the environment or the terminal (never needed on the command line).

use chnative::{Compression, Config};

use crate::args::Cli;

/// The environment variable the password is read from.
pub const PASSWORD_ENV: &str = "CLICKHOUSE_PASSWORD";

/// `host[:port]`, `[v6]:port` or a bare IPv6 address.
fn host_port(s: &str) -> Result<(String, Option<u16>), String> {
    let bad_port = |p: &str| format!("--host: `{p}` in `{s}` is not a port number");
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| format!("--host: `{s}` lacks its closing `]`"))?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((host.to_string(), Some(p.parse().map_err(|_| bad_port(p))?))),
            None if after.is_empty() => Ok((host.to_string(), None)),
            None => Err(format!("--host: unexpected `{after}` after `[{host}]`")),
        };
    }
    match s.matches(':').count() {
        0 => Ok((s.to_string(), None)),
        1 => {
            let (h, p) = s.split_once(':').unwrap_or((s, ""));
            Ok((h.to_string(), Some(p.parse().map_err(|_| bad_port(p))?)))
        }
        // A bare IPv6 address has no port.
        _ => Ok((s.to_string(), None)),
    }
}

/// The connection's [`Config`] from the command line; warnings go to stderr.
pub fn config(cli: &Cli) -> Result<Config, String> {
    let url = cli.url.as_deref().or(cli.url_arg.as_deref());
    let mut c = match url {
        Some(u) => {
            if cli.host.is_some() {
                return Err("give the host either in the URL or with --host, not both".into());
            }
            if url_has_password(u) {
                warn_visible_password("the URL");
            }
            Config::from_url(u).map_err(|e| e.to_string())?
        }
        None => Config::new(),
    };
    c = c.client_name("chn");
    if let Some(hosts) = &cli.host {
        for (k, h) in hosts.split(',').enumerate() {
            let (host, port) = host_port(h.trim())?;
            if host.is_empty() {
                return Err(format!("--host: an empty host in `{hosts}`"));
            }
            if k == 0 {
                c = c.host(host);
                if let Some(p) = port {
                    c = c.port(p);
                }
            } else {
                c = c.add_host(host, port.or(cli.port));
            }
        }
    }
    if let Some(p) = cli.port {
        c = c.port(p);
    }
    if let Some(u) = &cli.user {
        c = c.user(u);
    }
    if let Some(d) = &cli.database {
        c = c.database(d);
    }
    if cli.secure {
        c = c.secure(true);
    }
    if let Some(f) = &cli.tls_ca_file {
        c = c.tls_ca_file(f);
    }
    if let (Some(cert), Some(key)) = (&cli.tls_cert_file, &cli.tls_key_file) {
        c = c.tls_client_cert(cert, key);
    }
    if let Some(n) = &cli.tls_server_name {
        c = c.tls_server_name(n);
    }
    if let Some(m) = &cli.compression {
        c = c.compression(match m.to_ascii_lowercase().as_str() {
            "auto" => Compression::Auto,
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd(1),
            _ => return Err(format!("--compression `{m}`: not one of auto, none, lz4, zstd")),
        });
    }
    if let Some(p) = &cli.password {
        warn_visible_password("--password");
        c = c.password(p);
    } else if let Ok(p) = std::env::var(PASSWORD_ENV) {
        c = c.password(p);
    }
    if cli.ask_password {
        let p = rpassword::prompt_password("Password: ").map_err(|e| format!("--ask-password: {e}"))?;
        c = c.password(p);
    }
    Ok(c)
}

fn url_has_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let userinfo_password = authority.rsplit_once('@').is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let option_password = rest
        .split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|kv| kv.starts_with("password=") && kv.len() > "password=".len()));
    userinfo_password || option_password
}

fn warn_visible_password(place: &str) {
    eprintln!(
        "chn: warning: a password in {place} is visible to every user of this machine in the process list; \
         set {PASSWORD_ENV} or use --ask-password instead"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(host_port("a:9000").unwrap(), ("a".into(), Some(9000)));
        assert_eq!(host_port("[::1]:9001").unwrap(), ("::1".into(), Some(9001)));
        assert_eq!(host_port("::1").unwrap(), ("::1".into(), None));
        assert!(host_port("a:x").is_err());
    }

    #[test]
    fn passwords_in_urls() {
        assert!(url_has_password("clickhouse://u:p@h/db"));
        assert!(url_has_password("clickhouse://h/db?password=x"));
        assert!(!url_has_password("clickhouse://u@h/db"));
        assert!(!url_has_password("clickhouse://h/db?password="));
    }
}
