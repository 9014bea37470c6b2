//! A PostgreSQL store behind the binding: the URL's own options taken out, and a handle that
//! can be closed while handlers still hold it (they then answer `RABOSH_CLOSED`, as over a
//! closed embedded store).
//!
//! Options in the URL's query, besides the server's own (`sslmode`, `sslrootcert`,
//! `connect_timeout` in seconds, `application_name` …):
//!
//! | parameter | meaning | default |
//! | --- | --- | --- |
//! | `schema` | schema holding the table, a lower-case identifier | `rabosh` |
//! | `pool_size` | most connections held open at once | 8 |
//! | `statement_timeout` | server-side bound on one statement, seconds | 30 |
//! | `client_timeout` | client-side bound on every call, COMMIT included, seconds: a stopped or cut-off server fails the call (`RABOSH_PG_TIMEOUT`, or `RABOSH_PG_COMMIT_OUTCOME_UNKNOWN` for an unanswered COMMIT) instead of hanging | `statement_timeout` + 5 |
//! | `max_attempts` | most runs of one command on serialization failures | 64 |

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rabosh_memory::postgres::{PgBackend, PgOptions};
use rabosh_memory::{Backend, Error, ReadView, Result, TxBody};

use crate::fault::Fault;

/// True when `target` names a database rather than a directory.
pub fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// Takes this binding's parameters out of the URL's query; the rest goes to the client.
fn split_options(url: &str) -> std::result::Result<(String, PgOptions), Fault> {
    let mut options = PgOptions::default();
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let count = |option: &'static str| -> std::result::Result<u32, Fault> {
            v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| Fault::invalid_option(option, v))
        };
        match k {
            "schema" => options.schema = v.to_string(),
            "pool_size" => options.pool_size = count("pool_size")?,
            "max_attempts" => options.max_attempts = count("max_attempts")?,
            "statement_timeout" => {
                options.statement_timeout = Duration::from_secs(u64::from(count("statement_timeout")?))
            }
            "client_timeout" => options.client_timeout = Some(Duration::from_secs(u64::from(count("client_timeout")?))),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, options))
}

/// Counters that outlive the connection pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct PgCounters {
    pub commits: u64,
    pub values_read: u64,
}

pub struct PgStore {
    live: Mutex<Option<Arc<PgBackend>>>,
    at_close: Mutex<PgCounters>,
}

impl PgStore {
    /// Connects on the calling thread (a pool thread under the binding). Without `create`, a
    /// schema that holds no store is refused (`RABOSH_NOT_A_STORE`) and nothing is created.
    pub fn open(url: &str, create: bool) -> std::result::Result<PgStore, Fault> {
        let (url, mut options) = split_options(url)?;
        options.create = create;
        let backend = PgBackend::open(&url, options)?;
        Ok(PgStore { live: Mutex::new(Some(Arc::new(backend))), at_close: Mutex::new(PgCounters::default()) })
    }

    fn backend(&self) -> Result<Arc<PgBackend>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).clone().ok_or(Error::Closed)
    }

    /// Ends the handle: later calls answer `Closed`; calls in flight finish, then the pool's
    /// connections close. Idempotent.
    pub fn close(&self) {
        let taken = self.live.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(b) = taken {
            *self.at_close.lock().unwrap_or_else(|p| p.into_inner()) =
                PgCounters { commits: b.commits(), values_read: b.values_read() };
        }
    }

    pub fn counters(&self) -> PgCounters {
        match self.backend() {
            Ok(b) => PgCounters { commits: b.commits(), values_read: b.values_read() },
            Err(_) => *self.at_close.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// Fails with `Closed` once closed, like the embedded store's `sync`.
    pub fn check_open(&self) -> Result<()> {
        self.backend().map(|_| ())
    }
}

impl Backend for PgStore {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        self.backend()?.read()
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.backend()?.transact(body)
    }

    fn reclaim(&self) -> Result<()> {
        self.backend()?.reclaim()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binding_options_leave_the_url_and_the_rest_stays() {
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
            let f = split_options(&format!("postgres://user:secret@host/db?{bad}")).unwrap_err();
            assert_eq!(f.code, "RABOSH_INVALID_OPTION");
            assert!(f.message.contains(bad.split('=').next().unwrap()), "{}", f.message);
            assert!(!f.message.contains("secret") && !f.message.contains("host"), "{}", f.message);
        }
    }

    #[test]
    fn only_postgres_urls_select_the_server() {
        assert!(is_url("postgres://h/db") && is_url("postgresql://h/db"));
        assert!(!is_url("/var/lib/memories") && !is_url("postgres") && !is_url("./postgres://x"));
    }
}
