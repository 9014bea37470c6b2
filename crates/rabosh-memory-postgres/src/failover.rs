//! Riding a failover: which of the URL's hosts a new connection goes to, and which servers a
//! handle refuses.
//!
//! A multi-host URL (`postgres://u@a:5432,b:5432/db?target_session_attrs=read-write`) names every
//! node; the client tries them in order and takes the first that accepts (and, with
//! `read-write`, takes writes). Two things are added here:
//!
//! - **The host that worked last is tried first.** After a failover the old primary is gone or
//!   refuses; the new one is found once and then used directly (`Hosts`).
//! - **A stale primary is refused.** A failed primary that comes back as a primary of its own
//!   (restarted by mistake, or not yet fenced) takes writes as readily as the promoted standby,
//!   and the URL lists it first. Every new connection reads the server's system identifier and
//!   the timeline of its WAL; the handle remembers the newest timeline it connected to, and
//!   refuses a server of the same cluster on an older one: that node was left behind by a
//!   promotion this handle has already followed, and what it would commit would be lost (or
//!   fork the history). A server of another cluster (another system identifier) is refused as
//!   well: it does not hold the rows this handle wrote. A server that does not answer the
//!   query (no such function: a PostgreSQL-wire database that is not PostgreSQL; or no
//!   privilege) is not checked. What this cannot see: a stale node reached before the handle
//!   ever connected to the promoted one, which only fencing (the cluster manager's job) stops.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use postgres::SimpleQueryMessage;

use super::client::{Client, Failure};
use super::error::{PgError, PgErrorKind};

/// The URL's hosts, one configuration each, and the one that accepted last.
pub struct Hosts {
    configs: Vec<tokio_postgres::Config>,
    preferred: AtomicUsize,
}

impl Hosts {
    pub fn new(config: &tokio_postgres::Config) -> Hosts {
        Hosts { configs: split(config), preferred: AtomicUsize::new(0) }
    }

    /// Every host's configuration, the one that accepted last first, then the rest in the URL's
    /// order after it.
    pub fn in_order(&self) -> impl Iterator<Item = (usize, &tokio_postgres::Config)> {
        let n = self.configs.len();
        let first = self.preferred.load(Ordering::Relaxed) % n;
        (0..n).map(move |k| {
            let i = (first + k) % n;
            (i, &self.configs[i])
        })
    }

    pub fn accepted(&self, i: usize) {
        self.preferred.store(i, Ordering::Relaxed);
    }
}

/// One configuration per host of a multi-host configuration (its own port and `hostaddr`, every
/// other setting shared), so a host the handle refuses can be passed over for the next one: the
/// client would stop at the first that accepts. A single host is kept as it is, and so is a URL
/// with `load_balance_hosts=random`, whose connections the client spreads (a refused node is then
/// passed over by the next try, `Manager::open_patiently`).
fn split(config: &tokio_postgres::Config) -> Vec<tokio_postgres::Config> {
    let (hosts, addrs, ports) = (config.get_hosts(), config.get_hostaddrs(), config.get_ports());
    let n = hosts.len().max(addrs.len());
    let random = config.get_load_balance_hosts() == tokio_postgres::config::LoadBalanceHosts::Random;
    if n <= 1
        || random
        || (ports.len() > 1 && ports.len() != n)
        || (!hosts.is_empty() && !addrs.is_empty() && hosts.len() != n)
    {
        // The client refuses mismatched lists with its own error; let it.
        return vec![config.clone()];
    }
    (0..n)
        .map(|i| {
            let mut c = tokio_postgres::Config::new();
            if let Some(user) = config.get_user() {
                c.user(user);
            }
            if let Some(password) = config.get_password() {
                c.password(password);
            }
            if let Some(dbname) = config.get_dbname() {
                c.dbname(dbname);
            }
            if let Some(options) = config.get_options() {
                c.options(options);
            }
            if let Some(name) = config.get_application_name() {
                c.application_name(name);
            }
            c.ssl_mode(config.get_ssl_mode()).ssl_negotiation(config.get_ssl_negotiation());
            match hosts.get(i) {
                Some(tokio_postgres::config::Host::Tcp(h)) => {
                    c.host(h);
                }
                #[cfg(unix)]
                Some(tokio_postgres::config::Host::Unix(p)) => {
                    c.host_path(p);
                }
                None => {}
            }
            if let Some(addr) = addrs.get(i) {
                c.hostaddr(*addr);
            }
            if let Some(port) = ports.get(i).or(ports.first()) {
                c.port(*port);
            }
            if let Some(t) = config.get_connect_timeout() {
                c.connect_timeout(*t);
            }
            if let Some(t) = config.get_tcp_user_timeout() {
                c.tcp_user_timeout(*t);
            }
            c.keepalives(config.get_keepalives()).keepalives_idle(config.get_keepalives_idle());
            if let Some(t) = config.get_keepalives_interval() {
                c.keepalives_interval(t);
            }
            if let Some(r) = config.get_keepalives_retries() {
                c.keepalives_retries(r);
            }
            c.target_session_attrs(config.get_target_session_attrs())
                .channel_binding(config.get_channel_binding())
                .load_balance_hosts(config.get_load_balance_hosts());
            c
        })
        .collect()
}

/// Which cluster a server belongs to and how far its history has gone.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    system: String,
    /// The timeline of the server's WAL; None on a standby (it follows its primary's).
    timeline: Option<u32>,
}

/// Read at every new connection: one round trip.
const IDENTITY: &str = "SELECT system_identifier::text, CASE WHEN pg_is_in_recovery() THEN '' \
                        ELSE pg_walfile_name(pg_current_wal_lsn()) END FROM pg_control_system()";

/// The newest identity the handle's connections saw.
#[derive(Default)]
pub struct Guard {
    seen: Mutex<Option<Identity>>,
}

impl Guard {
    /// Reads the server's identity on `client` and refuses a server behind the newest one seen
    /// (see the module's doc); a failure of the connection itself is the caller's to classify.
    pub fn check(&self, client: &mut Client) -> Result<(), Result<PgError, Failure>> {
        let identity = match client.simple_query(IDENTITY) {
            Ok(messages) => messages.iter().find_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some(Identity {
                    system: row.get(0).unwrap_or_default().to_string(),
                    // A WAL file's name: timeline, log and segment, 8 hex digits each.
                    timeline: row.get(1).and_then(|w| u32::from_str_radix(w.get(..8)?, 16).ok()),
                }),
                _ => None,
            }),
            // The server refused the query: it cannot be checked.
            Err(Failure::Pg(e)) if e.as_db_error().is_some() => None,
            Err(e) => return Err(Err(e)),
        };
        let Some(identity) = identity else { return Ok(()) };
        self.admit(identity).map_err(Ok)
    }

    /// Admits a server of `identity` unless it is behind the newest one seen, and remembers it
    /// when it is newer (a standby, on no timeline of its own, changes nothing).
    fn admit(&self, identity: Identity) -> Result<(), PgError> {
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match seen.as_ref() {
            Some(s) if s.system != identity.system => Err(PgError::new(
                PgErrorKind::Unreachable,
                "refused a server of another database cluster than the one this handle opened \
                 (its system identifier differs)",
            )),
            Some(Identity { timeline: Some(newest), .. }) if identity.timeline.is_some_and(|t| t < *newest) => {
                Err(PgError::new(
                    PgErrorKind::Unreachable,
                    format!(
                        "refused a stale server: its timeline {} is older than timeline {newest}, which this \
                         handle already used (a failed primary back as a primary of its own?)",
                        identity.timeline.unwrap_or_default()
                    ),
                ))
            }
            Some(Identity { timeline: Some(_), .. }) if identity.timeline.is_none() => Ok(()),
            _ => {
                *seen = Some(identity);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_host_url_splits_into_one_configuration_per_host() {
        let config: tokio_postgres::Config =
            "postgres://u:pw@a:1,b:2/db?target_session_attrs=read-write&connect_timeout=3".parse().unwrap();
        let hosts = split(&config);
        assert_eq!(hosts.len(), 2);
        for (c, (host, port)) in hosts.iter().zip([("a", 1), ("b", 2)]) {
            assert_eq!(c.get_hosts(), [tokio_postgres::config::Host::Tcp(host.into())]);
            assert_eq!(c.get_ports(), [port]);
            assert_eq!((c.get_user(), c.get_password(), c.get_dbname()), (Some("u"), Some(&b"pw"[..]), Some("db")));
            assert_eq!(c.get_target_session_attrs(), tokio_postgres::config::TargetSessionAttrs::ReadWrite);
            assert_eq!(c.get_connect_timeout(), Some(&std::time::Duration::from_secs(3)));
        }
        let one: tokio_postgres::Config = "postgres://u@a/db".parse().unwrap();
        assert_eq!(split(&one).len(), 1);
        let spread: tokio_postgres::Config = "postgres://u@a:1,b:2/db?load_balance_hosts=random".parse().unwrap();
        assert_eq!(split(&spread).len(), 1);
    }

    #[test]
    fn a_server_behind_the_newest_timeline_or_of_another_cluster_is_refused() {
        let id = |system: &str, timeline: Option<u32>| Identity { system: system.into(), timeline };
        let guard = Guard::default();
        guard.admit(id("7", Some(1))).unwrap();
        guard.admit(id("7", Some(1))).unwrap();
        // The promoted standby: newer, remembered.
        guard.admit(id("7", Some(2))).unwrap();
        let stale = guard.admit(id("7", Some(1))).unwrap_err();
        assert_eq!(stale.kind(), PgErrorKind::Unreachable);
        assert!(stale.message().contains("stale server: its timeline 1 is older than timeline 2"), "{stale}");
        // A standby follows its primary's timeline: admitted, and the newest stays 2.
        guard.admit(id("7", None)).unwrap();
        assert!(guard.admit(id("7", Some(1))).is_err());
        let other = guard.admit(id("8", Some(3))).unwrap_err();
        assert!(other.message().contains("another database cluster"), "{other}");
        guard.admit(id("7", Some(3))).unwrap();
        assert!(guard.admit(id("7", Some(2))).is_err());
    }

    #[test]
    fn the_host_that_accepted_last_goes_first() {
        let hosts = Hosts::new(&"postgres://u@a:1,b:2,c:3/db".parse().unwrap());
        let order = |h: &Hosts| h.in_order().map(|(i, _)| i).collect::<Vec<_>>();
        assert_eq!(order(&hosts), [0, 1, 2]);
        hosts.accepted(1);
        assert_eq!(order(&hosts), [1, 2, 0]);
    }
}
