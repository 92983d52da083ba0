//! Real TLS 1.3 for the simulated endpoints: a deterministic Ed25519 certificate and rustls
//! configurations (ring provider) with the `perf` ALPN.
//!
//! Ed25519 matters: its signatures have a fixed length, so handshake packet sizes — and with
//! them every later packet boundary — are the same in every run. The key is derived from a fixed
//! seed (RFC 8410 PKCS#8 v1 layout), the serial number is fixed, and the validity dates are
//! rcgen's fixed defaults.

use std::sync::Arc;

use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The name in the simulated server's certificate.
pub const SERVER_NAME: &str = "server.sim.satquic";

/// Errors while building the TLS identity; none are expected with the fixed inputs.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Certificate generation failed.
    #[error("certificate generation: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// quinn refused the rustls configuration (e.g. no TLS 1.3 suite).
    #[error("QUIC TLS configuration: {0}")]
    Quic(String),
}

/// A self-signed Ed25519 certificate and its key.
#[derive(Debug)]
pub struct Identity {
    /// DER certificate.
    pub cert: CertificateDer<'static>,
    /// PKCS#8 private key.
    pub key: PrivatePkcs8KeyDer<'static>,
}

/// PKCS#8 v1 prefix of an Ed25519 private key (RFC 8410 §7), followed by the 32-byte seed.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

impl Identity {
    /// The simulation's server identity, the same in every run.
    pub fn deterministic() -> Result<Self, TlsError> {
        let mut pkcs8 = ED25519_PKCS8_PREFIX.to_vec();
        pkcs8.extend_from_slice(&crate::determinism::seed_bytes(0x5A7_0C1C, 0));
        let key_der = PrivatePkcs8KeyDer::from(pkcs8);
        let key_pair =
            rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&key_der, &rcgen::PKCS_ED25519)?;
        let mut params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_owned()])?;
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x01, 0x5a]));
        let cert = params.self_signed(&key_pair)?;
        Ok(Self {
            cert: cert.der().clone(),
            key: key_der,
        })
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Server-side QUIC crypto configuration for `identity`.
pub fn server_crypto(identity: &Identity) -> Result<Arc<QuicServerConfig>, TlsError> {
    let mut tls = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(
            vec![identity.cert.clone()],
            PrivateKeyDer::Pkcs8(identity.key.clone_key()),
        )?;
    tls.alpn_protocols = vec![perfwire::ALPN.to_vec()];
    tls.max_early_data_size = 0;
    let quic = QuicServerConfig::try_from(tls).map_err(|e| TlsError::Quic(e.to_string()))?;
    Ok(Arc::new(quic))
}

/// Client-side QUIC crypto configuration that trusts exactly `identity`'s certificate.
pub fn client_crypto(identity: &Identity) -> Result<Arc<QuicClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(identity.cert.clone())?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![perfwire::ALPN.to_vec()];
    let quic = QuicClientConfig::try_from(tls).map_err(|e| TlsError::Quic(e.to_string()))?;
    Ok(Arc::new(quic))
}
