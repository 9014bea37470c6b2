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
use std::task::Poll;
use std::time::Duration;

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
}

impl Client {
    /// Connects within `connect_timeout` (TCP, TLS, authentication and startup together);
    /// later calls each get `deadline`.
    pub fn connect(
        config: &tokio_postgres::Config,
        tls: MakeRustlsConnect,
        connect_timeout: Duration,
        deadline: Duration,
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
        Ok(Client { inner: Some(inner), connection: Some(Box::pin(connection)), runtime, deadline })
    }

    /// Runs `call` on the client under the deadline, driving the connection meanwhile.
    fn run<'a, T, F>(&'a mut self, call: impl FnOnce(&'a tokio_postgres::Client) -> F) -> Result<T, Failure>
    where
        F: Future<Output = Result<T, postgres::Error>> + 'a,
    {
        let Client { inner, connection, runtime, deadline } = self;
        let Some(client) = inner.as_ref() else { return Err(Failure::TimedOut) };
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
            Ok(r) => r.map_err(Failure::Pg),
            Err(_) => Err(Failure::TimedOut),
        }
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

    pub fn simple_query(&mut self, query: &str) -> Result<Vec<SimpleQueryMessage>, Failure> {
        self.run(|c| c.simple_query(query))
    }

    /// Whether the session is over, after reading what the server already sent (a restart's
    /// "terminating connection" message, or end of file): no round trip, no wait.
    pub fn is_closed(&mut self) -> bool {
        let Client { connection, runtime, .. } = self;
        if connection.is_some() {
            runtime.block_on(poll_fn(|cx| {
                drive(connection, cx);
                Poll::Ready(())
            }));
        }
        self.connection.is_none() || self.inner.as_ref().is_none_or(|c| c.is_closed())
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

/// Lets the connection read and write what it can; drops it once it has finished.
fn drive(connection: &mut Option<Driver>, cx: &mut std::task::Context<'_>) {
    if let Some(c) = connection
        && c.as_mut().poll(cx).is_ready()
    {
        *connection = None;
    }
}
