//! What every real-time endpoint is made of, perf or media/bulk session, server or client:
//! the TLS identity and trust, the client's QUIC configuration for one ALPN, the UDP endpoint,
//! and the transport settings as a [`TransportRecipe`] (one fresh `TransportConfig` per
//! connection when qlog is on), every controller probed ([`probed`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use quinn::congestion::ControllerFactory;
use quinn::crypto::rustls::QuicClientConfig;
use quinn::{Endpoint, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::qlog::{ConnectionQlog, QlogDir};
use crate::resume::ResumeKeeper;

/// Why a real-time endpoint (perf or media/bulk session, server or client) failed.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// TLS configuration (certificates, keys).
    #[error("TLS: {0}")]
    Tls(String),
    /// Socket or file error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// Connecting failed.
    #[error("connect: {0}")]
    Connect(String),
    /// The connection failed during the transfer.
    #[error("connection: {0}")]
    Connection(String),
    /// Received data differs from what the protocol promises.
    #[error("data mismatch at offset {offset} ({len} bytes)")]
    Corrupt {
        /// Offset of the bad chunk.
        offset: u64,
        /// Its length.
        len: usize,
    },
    /// A media/bulk session was refused or broke its protocol ([`crate::session`]).
    #[error("session: {0}")]
    Session(String),
    /// A qlog file could not be written.
    #[error(transparent)]
    Qlog(#[from] crate::qlog::QlogError),
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EndpointError {
    let context = context.into();
    move |source| EndpointError::Io { context, source }
}

pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// `controller` wrapped so that each connection's bytes in flight can be read
/// ([`probe::readings_of`]): what a media/bulk session's scheduler needs. Every transport
/// satquic builds for quinn goes through this.
pub fn probed(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
) -> Arc<dyn ControllerFactory + Send + Sync> {
    Arc::new(probe::ProbedFactory::per_connection(controller))
}

/// How an endpoint makes each connection's transport settings. quinn's `TransportConfig`
/// cannot be cloned and carries the connection's qlog stream, so an endpoint writing one qlog
/// file per connection ([`crate::qlog`]) needs a fresh one for every connection; without qlog
/// one is built per endpoint and shared as before. A recipe made with
/// [`TransportRecipe::resuming`] also builds each connection's controller from the saved
/// parameters of its path (Careful Resume, [`crate::resume`]): then every connection gets its
/// own transport too.
#[derive(Clone)]
pub struct TransportRecipe {
    make: Arc<dyn Fn(Option<hybla::ResumeParams>) -> TransportConfig + Send + Sync>,
    resume: Option<Arc<ResumeKeeper>>,
}

impl TransportRecipe {
    /// `make` builds the settings; it runs once per endpoint, and once per connection with qlog.
    pub fn new(make: impl Fn() -> TransportConfig + Send + Sync + 'static) -> TransportRecipe {
        TransportRecipe {
            make: Arc::new(move |_| make()),
            resume: None,
        }
    }

    /// A recipe whose connections resume from `keeper`'s store: `make` gets the saved
    /// parameters of the connection's path, if the store has some, and builds a transport
    /// whose controller resumes from them (e.g. `HyblaConfig::careful_resume`). Use it only
    /// for a controller that implements Careful Resume: a connection takes its path's entry
    /// out of the store (RFC 9959 §4.2) and leaves what it measured at close.
    pub fn resuming(
        make: impl Fn(Option<hybla::ResumeParams>) -> TransportConfig + Send + Sync + 'static,
        keeper: Arc<ResumeKeeper>,
    ) -> TransportRecipe {
        TransportRecipe {
            make: Arc::new(make),
            resume: Some(keeper),
        }
    }

    /// A fresh `TransportConfig` (not resuming).
    pub fn build(&self) -> TransportConfig {
        (self.make)(None)
    }

    /// A fresh `TransportConfig` resuming from `resume` (if the recipe's controller can).
    pub fn build_resumed(&self, resume: Option<hybla::ResumeParams>) -> TransportConfig {
        (self.make)(resume)
    }

    /// The store its connections resume from, if any.
    pub fn resume(&self) -> Option<&Arc<ResumeKeeper>> {
        self.resume.as_ref()
    }
}

impl std::fmt::Debug for TransportRecipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.build(), f)
    }
}

/// Transport settings shared by both ends: the controller (probed, see [`probed`]) and
/// flow-control windows large enough for satellite BDPs.
pub fn transport(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
    window_bytes: u64,
) -> TransportConfig {
    let mut t = TransportConfig::default();
    let window = VarInt::from_u64(window_bytes.min(VarInt::MAX.into_inner())).expect("clamped");
    t.stream_receive_window(window)
        .receive_window(window)
        .send_window(window_bytes)
        .max_idle_timeout(Some(
            Duration::from_secs(30)
                .try_into()
                .expect("30 s is a valid idle timeout"),
        ))
        .congestion_controller_factory(probed(controller));
    t
}

/// [`transport`] as a recipe (a fresh `TransportConfig` per connection when qlog is on).
pub fn transport_recipe(
    controller: Arc<dyn ControllerFactory + Send + Sync>,
    window_bytes: u64,
) -> TransportRecipe {
    TransportRecipe::new(move || transport(controller.clone(), window_bytes))
}

/// A self-signed certificate for `names` (when no certificate is given), as PEM strings.
pub fn self_signed(names: Vec<String>) -> Result<(String, String), EndpointError> {
    let cert =
        rcgen::generate_simple_self_signed(names).map_err(|e| EndpointError::Tls(e.to_string()))?;
    Ok((cert.cert.pem(), cert.signing_key.serialize_pem()))
}

/// Parses a PEM certificate chain and key.
pub fn parse_identity(
    cert_pem: &str,
    key_pem: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), EndpointError> {
    use rustls::pki_types::pem::PemObject;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| EndpointError::Tls(format!("certificate: {e}")))?;
    if chain.is_empty() {
        return Err(EndpointError::Tls(
            "certificate file holds no certificate".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| EndpointError::Tls(format!("key: {e}")))?;
    Ok((chain, key))
}

/// How the client checks the server's certificate.
pub enum Trust {
    /// Only certificates chaining to these roots.
    Roots(Vec<CertificateDer<'static>>),
    /// Anything (self-signed test peers). Never for real servers.
    InsecureAcceptAnything,
}

#[derive(Debug)]
struct AcceptAnything(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnything {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A client configuration offering `alpn` (public so that tests can speak raw perf, e.g.
/// malformed requests, to the server).
pub fn client_config(
    trust: &Trust,
    transport: Arc<TransportConfig>,
    alpn: &[u8],
) -> Result<quinn::ClientConfig, EndpointError> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| EndpointError::Tls(e.to_string()))?;
    let mut tls = match trust {
        Trust::Roots(roots) => {
            let mut store = rustls::RootCertStore::empty();
            for r in roots {
                store
                    .add(r.clone())
                    .map_err(|e| EndpointError::Tls(format!("CA certificate: {e}")))?;
            }
            builder.with_root_certificates(store).with_no_client_auth()
        }
        Trust::InsecureAcceptAnything => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnything(provider())))
            .with_no_client_auth(),
    };
    tls.alpn_protocols = vec![alpn.to_vec()];
    let crypto = QuicClientConfig::try_from(tls).map_err(|e| EndpointError::Tls(e.to_string()))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport);
    Ok(config)
}

/// A client's transport for its one connection to `server`, resuming from `resume` if given
/// (see [`TransportRecipe::resuming`]), with the connection's qlog stream attached when `qlog`
/// is given.
pub(crate) fn client_transport(
    recipe: &TransportRecipe,
    qlog: Option<&QlogDir>,
    server: SocketAddr,
    resume: Option<hybla::ResumeParams>,
) -> Result<(Arc<TransportConfig>, Option<ConnectionQlog>), EndpointError> {
    let mut transport = recipe.build_resumed(resume);
    let qlog = qlog
        .map(|dir| dir.attach(&mut transport, quinn::Side::Client, server, None))
        .transpose()?;
    Ok((Arc::new(transport), qlog))
}

/// A client endpoint on `socket`, or on a fresh UDP socket of `server`'s address family.
pub fn client_endpoint(
    server: SocketAddr,
    socket: Option<std::net::UdpSocket>,
    socket_buffer_bytes: usize,
    config: quinn::ClientConfig,
) -> Result<Endpoint, EndpointError> {
    let socket = match socket {
        Some(socket) => socket,
        None => {
            let bind: SocketAddr = if server.is_ipv4() {
                "0.0.0.0:0"
            } else {
                "[::]:0"
            }
            .parse()
            .expect("valid");
            std::net::UdpSocket::bind(bind).map_err(io("binding the client socket"))?
        }
    };
    crate::sockbuf::size_or_warn(&socket, socket_buffer_bytes, "perf client socket");
    let mut endpoint = Endpoint::new(
        endpoint_config(),
        None,
        socket,
        quinn_satellite::PreciseTimerRuntime::shared(),
    )
    .map_err(io("binding the client socket"))?;
    endpoint.set_default_client_config(config);
    Ok(endpoint)
}

/// The largest UDP payload the real-time endpoints accept: a 9 000 B jumbo frame's.
pub const MAX_UDP_PAYLOAD_BYTES: u16 = 9_000 - 28;

/// quinn's endpoint settings, except the largest UDP payload it accepts: quinn's default
/// (1 472 B) caps every datagram at an Ethernet MTU whatever the transport's `initial_mtu`
/// says, so a path with jumbo frames would carry 1 500 B packets. Up to a 9 000 B MTU the
/// transport's (the scenario's, through `quinn_satellite`) is what the connection sends. Not
/// UDP's 65 527 B: quinn sizes each endpoint's receive buffers from this (64 segments × 32
/// datagrams), 134 MB at UDP's limit against 18 MB here.
pub fn endpoint_config() -> quinn::EndpointConfig {
    let mut config = quinn::EndpointConfig::default();
    config
        .max_udp_payload_size(MAX_UDP_PAYLOAD_BYTES)
        .expect("a jumbo frame's payload is within quinn's bounds");
    config
}
