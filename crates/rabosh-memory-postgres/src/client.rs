//! A synchronous client with a client-side deadline on connecting and on every call.
//!
//! The server's `statement_timeout` cannot fire in a server that does not run (SIGSTOPped, a
//! frozen VM, a network that drops packets while the kernel still ACKs), and TCP keepalives and
//! `tcp_user_timeout` do not fire either while the peer's kernel answers. So each call runs
//! under `tokio::time::timeout` on the connection's own current-thread runtime, which the
//! calling thread drives together with the connection (the `postgres` crate's model, which
//! exposes no deadline). A call that times out leaves the session in an unknown state: the
//! connection is marked broken and discarded by the pool.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Row, SimpleQueryMessage, Socket, Statement, ToStatement};
use tokio::runtime::Runtime;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Why a call failed: the client library's error, or no answer within the deadline.
#[derive(Debug)]
pub enum Failure {
    Pg(postgres::Error),
    TimedOut,
}

type Driver = Pin<Box<dyn Future<Output = Result<(), postgres::Error>> + Send>>;

pub struct Client {
    inner: Option<tokio_postgres::Client>,
    /// Reads and writes the socket; polled whenever a call runs (and at checkout). None once it
    /// finished: dropping it fails the requests still queued for it instead of leaving them
    /// waiting for a connection that will never read them.
    connection: Option<Driver>,
    runtime: Runtime,
    deadline: Duration,
    /// Calls made, each one round trip (a pipelined flight counts once); shared by the pool.
    round_trips: Arc<AtomicU64>,
    /// When the server last answered a call.
    answered_at: Instant,
}

/// What BEGIN answered, and what the statement sent with it did.
pub type BegunAndRows = (Result<(), Failure>, Result<Vec<Row>, Failure>);

/// One statement of a pipelined flight and its parameters.
pub type Planned<'a> = (Statement, Vec<&'a (dyn ToSql + Sync)>);

impl Client {
    /// Connects within `connect_timeout` (TCP, TLS, authentication and startup together);
    /// later calls each get `deadline`.
    pub fn connect(
        config: &tokio_postgres::Config,
        tls: MakeRustlsConnect,
        connect_timeout: Duration,
        deadline: Duration,
        round_trips: Arc<AtomicU64>,
    ) -> Result<Client, Failure> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|_| Failure::TimedOut)?;
        let connected = runtime.block_on(async { tokio::time::timeout(connect_timeout, config.connect(tls)).await });
        let (inner, connection) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(Failure::Pg(e)),
            Err(_) => return Err(Failure::TimedOut),
        };
        let connection: tokio_postgres::Connection<Socket, _> = connection;
        Ok(Client {
            inner: Some(inner),
            connection: Some(Box::pin(connection)),
            runtime,
            deadline,
            round_trips,
            answered_at: Instant::now(),
        })
    }

    /// Runs `call` on the client under the deadline, driving the connection meanwhile.
    fn run<'a, T, F>(&'a mut self, call: impl FnOnce(&'a tokio_postgres::Client) -> F) -> Result<T, Failure>
    where
        F: Future<Output = Result<T, postgres::Error>> + 'a,
    {
        let Client { inner, connection, runtime, deadline, round_trips, answered_at } = self;
        let Some(client) = inner.as_ref() else { return Err(Failure::TimedOut) };
        round_trips.fetch_add(1, Ordering::Relaxed);
        let call = call(client);
        let deadline = *deadline;
        // The timer is made inside the runtime, which it needs.
        let answer = runtime.block_on(async move {
            let mut call = pin!(tokio::time::timeout(deadline, call));
            poll_fn(|cx| {
                drive(connection, cx);
                call.as_mut().poll(cx)
            })
            .await
        });
        match answer {
            Ok(r) => {
                *answered_at = Instant::now();
                r.map_err(Failure::Pg)
            }
            Err(_) => Err(Failure::TimedOut),
        }
    }

    /// How long since the server last answered on this connection.
    pub fn idle_for(&self) -> Duration {
        self.answered_at.elapsed()
    }

    pub fn prepare(&mut self, query: &str) -> Result<Statement, Failure> {
        self.run(|c| c.prepare(query))
    }

    pub fn query<T: ?Sized + ToStatement + Sync>(
        &mut self,
        query: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Failure> {
        self.run(|c| c.query(query, params))
    }

    pub fn query_opt<T: ?Sized + ToStatement + Sync>(
        &mut self,
        query: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Failure> {
        self.run(|c| c.query_opt(query, params))
    }

    pub fn query_one<T: ?Sized + ToStatement + Sync>(
        &mut self,
        query: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, Failure> {
        self.run(|c| c.query_one(query, params))
    }

    pub fn execute<T: ?Sized + ToStatement + Sync>(
        &mut self,
        query: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Failure> {
        self.run(|c| c.execute(query, params))
    }

    pub fn batch_execute(&mut self, query: &str) -> Result<(), Failure> {
        self.run(|c| c.batch_execute(query))
    }

    /// Sends `first` (a simple query: BEGIN) if any, every statement and then `last` (a simple
    /// query: COMMIT) at once, and waits for all the answers: one round trip
    /// instead of one per statement. The server runs them in order, each to its own Sync, so a
    /// failed statement fails the ones after it in the transaction (25P02) and turns a trailing
    /// COMMIT into a rollback. `first`'s result, each statement's, then `last`'s; `Err` only when
    /// the flight as a whole timed out.
    pub fn flight(
        &mut self,
        first: Option<&str>,
        statements: &[Planned<'_>],
        last: &str,
    ) -> Result<Vec<Result<u64, Failure>>, Failure> {
        type Call<'c> = Pin<Box<dyn Future<Output = Result<u64, postgres::Error>> + 'c>>;
        let answers = self.run(|c| async move {
            let mut calls: Vec<Call<'_>> = Vec::with_capacity(statements.len() + 2);
            if let Some(first) = first {
                calls.push(Box::pin(async move { c.batch_execute(first).await.map(|()| 0) }));
            }
            calls.extend(statements.iter().map(|(s, params)| Box::pin(c.execute(s, params)) as Call<'_>));
            calls.push(Box::pin(async move { c.batch_execute(last).await.map(|()| 0) }));
            Ok(join_in_order(calls).await)
        })?;
        Ok(answers.into_iter().map(|r| r.map_err(Failure::Pg)).collect())
    }

    /// `first` (a simple query: BEGIN) and then `statement`, sent at once: one round trip.
    pub fn query_after(
        &mut self,
        first: &str,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<BegunAndRows, Failure> {
        let (begun, rows) = self.run(|c| async move {
            let mut begin = pin!(c.batch_execute(first));
            let mut query = pin!(c.query(statement, params));
            let (mut begun, mut rows) = (None, None);
            // BEGIN is polled first, so it is queued (and sent) first.
            poll_fn(|cx| {
                if begun.is_none()
                    && let Poll::Ready(r) = begin.as_mut().poll(cx)
                {
                    begun = Some(r);
                }
                if rows.is_none()
                    && let Poll::Ready(r) = query.as_mut().poll(cx)
                {
                    rows = Some(r);
                }
                if begun.is_some() && rows.is_some() { Poll::Ready(()) } else { Poll::Pending }
            })
            .await;
            Ok((begun.expect("ready"), rows.expect("ready")))
        })?;
        Ok((begun.map_err(Failure::Pg), rows.map_err(Failure::Pg)))
    }

    /// Sends `query` (a simple query) and returns without waiting for its answer, which the
    /// connection reads and discards on its next call (the server answers in order). For a
    /// statement whose outcome does not matter to the caller: the COMMIT that ends a read-only
    /// snapshot. A failure shows at the connection's next use, as a connection gone stale does.
    /// Not a round trip.
    pub fn send_without_waiting(&mut self, query: &str) {
        let Client { inner, connection, runtime, .. } = self;
        let Some(client) = inner.as_ref() else { return };
        runtime.block_on(poll_fn(|cx| {
            // The first poll queues the request; dropping the call then leaves its answer
            // unclaimed, and the connection reads past it.
            let _ = pin!(client.batch_execute(query)).poll(cx);
            // Writes and flushes what is queued (and reads what already arrived).
            drive(connection, cx);
            Poll::Ready(())
        }));
    }

    pub fn simple_query(&mut self, query: &str) -> Result<Vec<SimpleQueryMessage>, Failure> {
        self.run(|c| c.simple_query(query))
    }

    /// Whether the session is over, after reading what the server already sent (a restart's
    /// "terminating connection" message, or end of file): no round trip, no wait.
    pub fn is_closed(&mut self) -> bool {
        let Client { connection, runtime, .. } = self;
        if connection.is_some() {
            runtime.block_on(async {
                // What arrived since the last call is seen only once the runtime has polled the
                // socket's readiness (its reactor remembers "would block" until then): the yield
                // lets it, without waiting (measured: without it, a session the server ended
                // at a restart looked open here, and its next flight failed).
                tokio::task::yield_now().await;
                poll_fn(|cx| {
                    drive(connection, cx);
                    Poll::Ready(())
                })
                .await;
            });
        }
        self.connection.is_none() || self.inner.as_ref().is_none_or(tokio_postgres::Client::is_closed)
    }

    /// Ends the session politely (a Terminate message) within a short bound; a broken one is
    /// just dropped with its socket.
    pub fn close(&mut self, politely: bool) {
        let Some(client) = self.inner.take() else { return };
        drop(client);
        if let Some(connection) = self.connection.take()
            && politely
        {
            let _ = self.runtime.block_on(async { tokio::time::timeout(Duration::from_secs(1), connection).await });
        }
    }
}

/// Polls every call until all have answered, each first in the order given (so their requests
/// are queued, and sent, in that order); their results in the same order.
async fn join_in_order<T>(mut calls: Vec<Pin<Box<dyn Future<Output = T> + '_>>>) -> Vec<T> {
    let mut out: Vec<Option<T>> = calls.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut pending = false;
        for (call, slot) in calls.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match call.as_mut().poll(cx) {
                    Poll::Ready(r) => *slot = Some(r),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    out.into_iter().map(|r| r.expect("every call answered")).collect()
}

/// Lets the connection read and write what it can; drops it once it has finished.
fn drive(connection: &mut Option<Driver>, cx: &mut std::task::Context<'_>) {
    if let Some(c) = connection
        && c.as_mut().poll(cx).is_ready()
    {
        *connection = None;
    }
}
