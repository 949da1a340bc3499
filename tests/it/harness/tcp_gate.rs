//! A loopback TCP forwarder a test can shut: a session made through it reaches the
//! database until [`TcpGate::shut`] cuts every connection it carries and refuses new
//! ones. It takes one connection's path away (the listener's, given its own URL) and
//! leaves every other, the server's pool among them, as it was.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// A forwarder from a loopback port of its own to the database's address.
pub struct TcpGate {
    addr: SocketAddr,
    state: Arc<Mutex<GateState>>,
}

struct GateState {
    open: bool,
    /// The forwarding task of each connection carried so far (aborting one closes both
    /// of its sockets).
    links: Vec<tokio::task::AbortHandle>,
}

impl TcpGate {
    /// Starts forwarding to the host and port of the PostgreSQL URL `url`.
    pub async fn to_database_of(url: &str) -> TcpGate {
        let parsed = url::Url::parse(url).unwrap_or_else(|e| panic!("the test database URL is not a URL: {e}"));
        let target = parsed.socket_addrs(|| Some(5432)).expect("the database's address")[0];
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new(Mutex::new(GateState { open: true, links: Vec::new() }));
        let shared = state.clone();
        actix_rt::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut state = shared.lock().expect("gate state");
                if !state.open {
                    // Refused: the socket is closed before a byte of the handshake.
                    continue;
                }
                let link = actix_rt::spawn(async move {
                    match tokio::net::TcpStream::connect(target).await {
                        Ok(mut outbound) => {
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                        // Said, or a test waiting on this connection would only time out.
                        Err(e) => eprintln!("tcp gate: cannot reach the database at {target}: {e}"),
                    }
                });
                state.links.retain(|l| !l.is_finished());
                state.links.push(link.abort_handle());
            }
        });
        TcpGate { addr, state }
    }

    /// `url` (a PostgreSQL URL) with its host and port replaced by this gate's.
    pub fn url_through(&self, url: &str) -> String {
        let mut through = url::Url::parse(url).expect("a URL");
        through.set_ip_host(self.addr.ip()).expect("an IP host");
        through.set_port(Some(self.addr.port())).expect("a port");
        through.into()
    }

    /// Cuts every connection made through the gate and refuses new ones until
    /// [`TcpGate::open`].
    pub fn shut(&self) {
        let mut state = self.state.lock().expect("gate state");
        state.open = false;
        for link in state.links.drain(..) {
            link.abort();
        }
    }

    /// Lets connections through again.
    pub fn open(&self) {
        self.state.lock().expect("gate state").open = true;
    }
}
