//! [`PostgresOpener`]: how `rabosh_memory::open_with` opens a `postgres://` / `postgresql://` URL.
//! The URL is parsed here, once (this crate's parameters taken out of its query, every other one
//! known to the client or refused by name); `open_with` has checked every store option against
//! [`CAPABILITIES`] before anything is opened.
//!
//! Parameters of a URL's query, besides the server's own (`sslmode`, `sslrootcert`,
//! `connect_timeout` in seconds, `application_name` …):
//!
//! | parameter | meaning | default |
//! | --- | --- | --- |
//! | `schema` | schema holding the table, a lower-case identifier | `rabosh` |
//! | `pool_size` | most connections held open at once, and the store's worker threads | 8 |
//! | `statement_timeout` | server-side bound on one statement, seconds | 30 |
//! | `client_timeout` | client-side bound on every call, COMMIT included, seconds: a stopped or cut-off server fails the call (`RABOSH_PG_TIMEOUT`, or `RABOSH_PG_COMMIT_OUTCOME_UNKNOWN` for an unanswered COMMIT) instead of hanging | `statement_timeout` + 5 |
//! | `max_attempts` | most runs of one command on serialization failures | 64 |

use std::sync::Arc;

use rabosh_memory::backend_kit::{
    Capabilities, EncryptionKey, Error, Result, Store, StoreOptions, Unsupported, UrlOpener, Workers,
};

use crate::{PgHandle, PgOptions};

/// What a PostgreSQL store can do: the server owns storage, durability and who may connect.
pub const CAPABILITIES: Capabilities = Capabilities {
    backend: "PostgreSQL",
    why: "the server owns storage, durability and who may connect",
    buffered: false,
    exclusive: false,
    snapshots: false,
    maintenance: false,
    reads_in_process: false,
    group_commit: false,
    own_workers: true,
};

/// True when `target` names a PostgreSQL database rather than a directory.
#[must_use]
pub fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// Opens `postgres://` and `postgresql://` URLs (the binding lists it among its openers).
pub struct PostgresOpener;

impl UrlOpener for PostgresOpener {
    fn claims(&self, target: &str) -> bool {
        is_url(target)
    }

    fn capabilities(&self) -> &Capabilities {
        &CAPABILITIES
    }

    fn open(&self, url: &str, options: StoreOptions) -> Result<Store> {
        let (url, mut pg) = split_options(url)?;
        pg.create = options.create;
        pg.encryption = options.encryption;
        let threads = pg.pool_size as usize;
        let handle = Arc::new(PgHandle::open(&url, pg)?);
        Ok(Store::other(handle, CAPABILITIES, Some(Workers::new("rabosh-pg", threads))))
    }

    /// Refused: the rows are sealed from the first encrypted open of an empty schema; a plain
    /// store is moved by export and import.
    fn reencrypt(&self, _url: &str, _from: Option<&EncryptionKey>, _to: Option<&EncryptionKey>) -> Result<()> {
        Err(Error::Unsupported(Unsupported {
            what: "encrypt, decrypt and re-key in place".into(),
            backend: CAPABILITIES.backend,
            why: "export the store and import it into a schema opened with (or without) a key",
        }))
    }
}

/// The client's own URL parameters (libpq's, as far as the client implements them); any other
/// parameter that is not this crate's is refused by name rather than by the client's "could not
/// parse".
const SERVER_PARAMETERS: &[&str] = &[
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslrootcert",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// Takes this crate's parameters out of the URL's query; the rest goes to the client.
fn split_options(url: &str) -> Result<(String, PgOptions)> {
    use std::time::Duration;
    let mut options = PgOptions::default();
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let count = |option: &'static str| -> Result<u32> {
            v.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::InvalidOption { option, value: v.to_string() })
        };
        match k {
            "schema" => options.schema = v.to_string(),
            "pool_size" => options.pool_size = count("pool_size")?,
            "max_attempts" => options.max_attempts = count("max_attempts")?,
            "statement_timeout" => {
                options.statement_timeout = Duration::from_secs(u64::from(count("statement_timeout")?));
            }
            "client_timeout" => options.client_timeout = Some(Duration::from_secs(u64::from(count("client_timeout")?))),
            k if SERVER_PARAMETERS.contains(&k) => kept.push(pair),
            // The name only: a mistyped `password` must not be echoed, and the name is all a
            // caller needs to find the typo.
            k => return Err(Error::UnknownOption(name_only(k))),
        }
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, options))
}

/// A query key as an error may show it: at most 64 characters, nothing but `[A-Za-z0-9_.-]`.
fn name_only(key: &str) -> String {
    key.chars().take(64).map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '?' }).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rabosh_memory::backend_kit::Durability;

    use super::*;

    fn open(url: &str, options: StoreOptions) -> Result<Store> {
        rabosh_memory::open_with(url, options, &[&PostgresOpener])
    }

    #[test]
    fn this_crates_options_leave_the_url_and_the_rest_stays() {
        let (url, o) = split_options(
            "postgres://u:p@h/db?sslmode=require&schema=team_a&pool_size=3&connect_timeout=5&statement_timeout=7&max_attempts=9&client_timeout=11",
        )
        .unwrap();
        assert_eq!(url, "postgres://u:p@h/db?sslmode=require&connect_timeout=5");
        assert_eq!(
            (o.schema.as_str(), o.pool_size, o.statement_timeout, o.max_attempts, o.client_timeout),
            ("team_a", 3, Duration::from_secs(7), 9, Some(Duration::from_secs(11)))
        );
        let (url, o) = split_options("postgresql://h/db").unwrap();
        assert_eq!((url.as_str(), o), ("postgresql://h/db", PgOptions::default()));
    }

    #[test]
    fn a_bad_count_names_the_parameter_and_not_the_url() {
        for bad in ["pool_size=0", "pool_size=x", "max_attempts=-1", "statement_timeout=", "client_timeout=0"] {
            let e = split_options(&format!("postgres://user:secret@host/db?{bad}")).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, Error::InvalidOption { .. }), "{m}");
            assert!(m.contains(bad.split('=').next().unwrap()), "{m}");
            assert!(!m.contains("secret") && !m.contains("host"), "{m}");
        }
    }

    #[test]
    fn only_postgres_urls_select_the_server() {
        assert!(is_url("postgres://h/db") && is_url("postgresql://h/db"));
        assert!(!is_url("/var/lib/memories") && !is_url("postgres") && !is_url("./postgres://x"));
    }

    #[test]
    fn options_the_server_lacks_are_refused_before_connecting() {
        // Nothing listens at this address: a refusal that names the option came before any
        // connection was tried.
        let url = "postgres://u:secret@127.0.0.1:1/db";
        let buffered = StoreOptions { durability: Durability::Buffered, ..Default::default() };
        let exclusive = StoreOptions { exclusive: true, ..Default::default() };
        for (options, option) in [(buffered, "durability"), (exclusive, "exclusive")] {
            let e = open(url, options).err().expect("refused");
            assert!(matches!(e, Error::OptionUnsupported { option: o, .. } if o == option), "{e}");
            assert!(e.to_string().contains("is not supported by PostgreSQL stores"), "{e}");
        }
    }

    proptest::proptest! {
        /// The URL is parsed once, here: a misspelt parameter is refused naming it (and not
        /// the URL's secrets), before the client sees it.
        #[test]
        fn a_misspelt_parameter_is_refused_by_name(
            known in proptest::sample::select(
                ["schema", "pool_size", "statement_timeout", "max_attempts", "sslmode", "connect_timeout"].as_slice()
            ),
            at in 0usize..32,
            extra in "[a-z_]",
        ) {
            let mut typo = known.to_string();
            let at = at % (typo.len() + 1);
            typo.insert_str(at, &extra);
            proptest::prop_assume!(!SERVER_PARAMETERS.contains(&typo.as_str())
                && !["schema", "pool_size", "statement_timeout", "max_attempts"].contains(&typo.as_str()));
            let e = open(&format!("postgres://u:secret@127.0.0.1:1/db?{typo}=3"), StoreOptions::default())
                .err()
                .expect("refused");
            proptest::prop_assert!(matches!(&e, Error::UnknownOption(name) if *name == typo), "{}", e);
            let m = e.to_string();
            proptest::prop_assert!(m.contains(&typo) && !m.contains("secret") && !m.contains("127.0.0.1"), "{}", m);
        }
    }
}
